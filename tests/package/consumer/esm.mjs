// `import` in Node, Deno and Bun: every shipped storage.
import * as pkg from 'xcsh-session';
import { everyStorage } from './every-storage.mjs';

console.log(JSON.stringify(await everyStorage(pkg)));
