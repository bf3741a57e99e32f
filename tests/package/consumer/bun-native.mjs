// Bun's own file API where it has one (Bun.file for reading, Bun.write for whole-file
// writes) over the package's nodeAsyncStorage() for what it lacks (append, rename,
// directories, stat, fsync), as an async storage for AsyncSession.
import fsp from 'node:fs/promises';
import * as pkg from 'xcsh-session';
import { scenario } from './scenario.mjs';

const missing = (p) => Object.assign(new Error(`ENOENT: no such file '${p}'`), { code: 'ENOENT' });
const bunStorage = {
  ...pkg.nodeAsyncStorage(),
  async read(p) {
    const f = Bun.file(p);
    if (!(await f.exists())) throw missing(p);
    return new Uint8Array(await f.arrayBuffer());
  },
  async readPrefix(p, max) {
    const f = Bun.file(p);
    if (!(await f.exists())) throw missing(p);
    return new Uint8Array(await f.slice(0, max).arrayBuffer());
  },
  write: async (p, d) => {
    await Bun.write(p, d);
  },
};

const dir = await fsp.mkdtemp('/tmp/xcsh-bun-');
const native = await scenario(pkg, pkg.AsyncSession, bunStorage, `${dir}/agent`);
await fsp.rm(dir, { recursive: true, force: true });
console.log(JSON.stringify({ native }));
