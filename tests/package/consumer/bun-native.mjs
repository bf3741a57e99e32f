// Bun's own file API where it has one (Bun.file for reading and stat, Bun.write for
// whole-file writes), node:fs/promises for what it lacks (append, rename, directories),
// as an async storage for AsyncSession.
import fsp from 'node:fs/promises';
import * as pkg from 'xcsh-session';
import { asyncScenario } from './scenario.mjs';

const missing = (p) => Object.assign(new Error(`ENOENT: no such file '${p}'`), { code: 'ENOENT' });
const bunStorage = {
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
  append: (p, d) => fsp.appendFile(p, d),
  rename: (a, b) => fsp.rename(a, b),
  unlink: (p) => fsp.unlink(p),
  listDir: async (p) => (await fsp.readdir(p, { withFileTypes: true })).map((d) => ({ name: d.name, isDir: d.isDirectory() })),
  async stat(p) {
    const s = await fsp.stat(p);
    return { size: s.size, mtimeMs: s.mtimeMs, isDir: s.isDirectory() };
  },
  mkdirAll: async (p) => {
    await fsp.mkdir(p, { recursive: true });
  },
  async fsync(p) {
    const fh = await fsp.open(p, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
  rmdir: (p) => fsp.rmdir(p),
  createNew: (p, d) => fsp.writeFile(p, d, { flag: 'wx' }),
};

const dir = await fsp.mkdtemp('/tmp/xcsh-bun-');
const native = await asyncScenario(pkg, bunStorage, `${dir}/agent`);
await fsp.rm(dir, { recursive: true, force: true });
console.log(JSON.stringify({ native }));
