// `opfsStorage()`: an async storage over the browser's Origin Private File System, for
// `AsyncSession`, on the page's main thread or in any worker (only the async OPFS API:
// no sync access handles, no mirror). Paths are absolute and `/`-separated from the
// OPFS root. A file is written through `createWritable()`, whose `close()` commits it:
// when an `AsyncSession` call resolves, its bytes are in OPFS (`fsync` has nothing left
// to do). `readRange` reads only its range (`File.slice`). `rename` uses
// `FileSystemHandle.move` (Chromium, Firefox, Safari 16.4+). `snapshot(path)` is the
// file as a `File` (what `StagedStorage` reads synchronously in a worker).
// Exclusive create is a check then a write: two tabs racing for one lock may both win,
// so keep one writer per session with the Web Locks API if tabs share sessions.

import { codeOf } from './staged-storage.mjs';
import { rangeArgs } from './memory-storage.mjs';

function error(code, op, path, cause) {
  const e = new Error(`${code}: ${op} '${path}'${cause ? ` (${cause.message})` : ''}`);
  e.code = code;
  return e;
}

/** A DOMException as the errno-like code the package reads. */
function mapped(e, op, path) {
  const code = codeOf(e);
  return code ? error(code, op, path, e) : e;
}

function parts(path) {
  const names = String(path).split('/').filter((p) => p && p !== '.');
  if (names.includes('..')) throw error('EACCES', 'resolve', path);
  return names;
}

export function opfsStorage() {
  const root = () => navigator.storage.getDirectory();

  async function dir(names, op, path, create = false) {
    let d = await root();
    for (const name of names) d = await d.getDirectoryHandle(name, { create });
    return d;
  }

  /** The handle of `path` (a file or a directory) and its parent's. */
  async function entry(path, op) {
    const names = parts(path);
    if (names.length === 0) return { parent: null, handle: await root(), name: '' };
    const name = names.pop();
    const parent = await dir(names, op, path);
    try {
      return { parent, handle: await parent.getFileHandle(name), name };
    } catch (e) {
      if (e?.name !== 'TypeMismatchError') throw e;
      return { parent, handle: await parent.getDirectoryHandle(name), name };
    }
  }

  async function file(path, op, create = false) {
    const names = parts(path);
    const name = names.pop();
    const parent = await dir(names, op, path);
    return parent.getFileHandle(name, { create });
  }

  const guard = (op, f) => async (path, ...rest) => {
    try {
      return await f(path, ...rest);
    } catch (e) {
      throw mapped(e, op, path);
    }
  };

  async function writeAll(handle, data, keep) {
    const w = await handle.createWritable({ keepExistingData: keep });
    try {
      if (keep) await w.seek((await handle.getFile()).size);
      await w.write(data);
      await w.close();
    } catch (e) {
      await w.abort().catch(() => {});
      throw e;
    }
  }

  return {
    read: guard('open', async (path) => new Uint8Array(await (await (await file(path, 'open')).getFile()).arrayBuffer())),
    readPrefix: guard('open', async (path, maxBytes) => {
      const f = await (await file(path, 'open')).getFile();
      return new Uint8Array(await f.slice(0, maxBytes).arrayBuffer());
    }),
    readRange: async (path, offset, length) => {
      [offset, length] = rangeArgs(offset, length);
      return guard('open', async () => {
        const f = await (await file(path, 'open')).getFile();
        return new Uint8Array(await f.slice(Math.min(offset, f.size), Math.min(offset + length, f.size)).arrayBuffer());
      })(path);
    },
    write: guard('open', async (path, data) => writeAll(await file(path, 'open', true), data, false)),
    append: guard('open', async (path, data) => writeAll(await file(path, 'open', true), data, true)),
    rename: guard('rename', async (from, to) => {
      const { handle } = await entry(from, 'rename');
      const names = parts(to);
      const name = names.pop();
      const target = await dir(names, 'rename', to);
      await target.removeEntry(name).catch((e) => {
        if (e?.name !== 'NotFoundError') throw e;
      });
      await handle.move(target, name);
    }),
    unlink: guard('unlink', async (path) => {
      const { parent, name, handle } = await entry(path, 'unlink');
      if (handle.kind === 'directory') throw error('EISDIR', 'unlink', path);
      await parent.removeEntry(name);
    }),
    listDir: guard('scandir', async (path) => {
      const d = await dir(parts(path), 'scandir', path);
      const out = [];
      for await (const [name, h] of d.entries()) out.push({ name, isDir: h.kind === 'directory' });
      return out;
    }),
    /** A snapshot of the file (a `File`: read it synchronously in a worker with FileReaderSync); stale once the file is written. */
    snapshot: guard('open', async (path) => (await file(path, 'open')).getFile()),
    stat: guard('stat', async (path) => {
      const { handle } = await entry(path, 'stat');
      if (handle.kind === 'directory') return { size: 0, mtimeMs: 0, isDir: true };
      const f = await handle.getFile();
      return { size: f.size, mtimeMs: f.lastModified, isDir: false };
    }),
    mkdirAll: guard('mkdir', async (path) => {
      await dir(parts(path), 'mkdir', path, true);
    }),
    // A writable's close() has committed the bytes already.
    fsync: async () => {},
    rmdir: guard('rmdir', async (path) => {
      const { parent, name, handle } = await entry(path, 'rmdir');
      if (handle.kind !== 'directory') throw error('ENOTDIR', 'rmdir', path);
      await parent.removeEntry(name);
    }),
    createNew: guard('open', async (path, data) => {
      const names = parts(path);
      const name = names.pop();
      const parent = await dir(names, 'open', path);
      const exists = await parent.getFileHandle(name).then(() => true, (e) => {
        if (e?.name === 'NotFoundError') return false;
        if (e?.name === 'TypeMismatchError') return true;
        throw e;
      });
      if (exists) throw error('EEXIST', 'open', path);
      await writeAll(await parent.getFileHandle(name, { create: true }), data, false);
    }),
  };
}
