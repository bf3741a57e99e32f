// Deno's own file API (Deno.readFile, Deno.open, Deno.rename, ...; no node:fs) as an async
// storage for AsyncSession: any storage whose methods return Promises works.
import * as pkg from 'xcsh-session';
import { scenario } from './scenario.mjs';

const code = (e) => (e instanceof Deno.errors.NotFound ? 'ENOENT' : e instanceof Deno.errors.AlreadyExists ? 'EEXIST' : e instanceof Deno.errors.PermissionDenied ? 'EACCES' : undefined);
const mapped = (f) => async (...args) => {
  try {
    return await f(...args);
  } catch (e) {
    if (code(e)) e.code = code(e);
    throw e;
  }
};
const denoStorage = {
  read: mapped((p) => Deno.readFile(p)),
  readPrefix: mapped(async (p, max) => {
    const f = await Deno.open(p, { read: true });
    try {
      const buf = new Uint8Array(max);
      let n = 0;
      for (let got; n < max && (got = await f.read(buf.subarray(n))) !== null;) n += got;
      return buf.subarray(0, n);
    } finally {
      f.close();
    }
  }),
  write: mapped((p, d) => Deno.writeFile(p, d)),
  append: mapped((p, d) => Deno.writeFile(p, d, { append: true })),
  rename: mapped((a, b) => Deno.rename(a, b)),
  unlink: mapped((p) => Deno.remove(p)),
  listDir: mapped(async (p) => {
    const out = [];
    for await (const e of Deno.readDir(p)) out.push({ name: e.name, isDir: e.isDirectory });
    return out;
  }),
  stat: mapped(async (p) => {
    const s = await Deno.stat(p);
    return { size: s.size, mtimeMs: s.mtime?.getTime() ?? 0, isDir: s.isDirectory };
  }),
  mkdirAll: mapped((p) => Deno.mkdir(p, { recursive: true })),
  fsync: mapped(async (p) => {
    const f = await Deno.open(p, { read: true });
    try {
      await f.sync();
    } finally {
      f.close();
    }
  }),
  rmdir: mapped((p) => Deno.remove(p)),
  createNew: mapped((p, d) => Deno.writeFile(p, d, { createNew: true })),
};

const dir = await Deno.makeTempDir({ prefix: 'xcsh-deno-' });
const native = await scenario(pkg, pkg.AsyncSession, denoStorage, `${dir}/agent`);
await Deno.remove(dir, { recursive: true });
console.log(JSON.stringify({ native }));
