// xcsh-session/slim in Node: `node slim.mjs <form>` initializes the module one way
// (object forms as documented; the bare forms wasm-bindgen calls deprecated) and prints
// what wasm-bindgen warned and whether a session then works.
import { readFileSync } from 'node:fs';

const warnings = [];
console.warn = (...args) => warnings.push(args.join(' '));
const slim = await import('xcsh-session/slim');
const bytes = readFileSync(new URL(import.meta.resolve('xcsh-session/xcsh_session_bg.wasm')));
const form = process.argv[2];
if (form === 'init') await slim.init({ module_or_path: bytes });
else if (form === 'init-bare') await slim.init(bytes);
else if (form === 'initSync') slim.initSync({ module: bytes });
else if (form === 'initSync-bare') slim.initSync(bytes);
else throw new Error(`unknown form ${form}`);
const messages = slim.Session.inMemory('/w').context().messages.length;
console.log(JSON.stringify({ warnings, messages }));
