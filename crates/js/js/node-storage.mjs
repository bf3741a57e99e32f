// `nodeStorage()`: a JsStorage over Node's synchronous `node:fs` API, and
// `nodeAsyncStorage()`, the same over `node:fs/promises` for `AsyncSession` (Node, Deno,
// Bun). fs errors are thrown as they are: their `code` ('ENOENT', 'EEXIST', 'EACCES') is
// what the package looks at. Large sessions are read straight into wasm memory
// (`readInto`); writer locks use exclusive create; `fsync` syncs the file, then its
// directory: only the directory's sync makes a rename, or a new file, durable (as the
// native core's FsStorage does).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import { parentOf } from './memory-storage.mjs';

function syncPath(path) {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function syncPathAsync(path) {
  const fh = await fsp.open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}


/** The writer identity both storages record in locks, and whether a writer still runs. */
const identity = {
  processIdentity: () => ({ pid: process.pid, host: os.hostname() }),
  processAlive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return e.code === 'EPERM';
    }
  },
};

export function nodeStorage() {
  return {
    read: (path) => fs.readFileSync(path),
    readInto(path, dest, position) {
      const fd = fs.openSync(path, 'r');
      try {
        let n = 0;
        while (n < dest.length) {
          const got = fs.readSync(fd, dest, n, dest.length - n, position + n);
          if (got === 0) break;
          n += got;
        }
        return n;
      } finally {
        fs.closeSync(fd);
      }
    },
    readPrefix(path, maxBytes) {
      const fd = fs.openSync(path, 'r');
      try {
        const buf = Buffer.alloc(Math.min(maxBytes, fs.fstatSync(fd).size));
        return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
      } finally {
        fs.closeSync(fd);
      }
    },
    write: (path, data) => fs.writeFileSync(path, data),
    append: (path, data) => fs.appendFileSync(path, data),
    rename: (from, to) => fs.renameSync(from, to),
    unlink: (path) => fs.unlinkSync(path),
    listDir: (path) => fs.readdirSync(path, { withFileTypes: true }).map((d) => ({ name: d.name, isDir: d.isDirectory() })),
    stat(path) {
      const s = fs.statSync(path);
      return { size: s.size, mtimeMs: s.mtimeMs, isDir: s.isDirectory() };
    },
    mkdirAll: (path) => fs.mkdirSync(path, { recursive: true }),
    fsync(path) {
      syncPath(path);
      try {
        syncPath(parentOf(path));
      } catch {
        // a directory that cannot be opened or synced: nothing more this host can do
      }
    },
    rmdir: (path) => fs.rmdirSync(path),
    createNew: (path, data) => fs.writeFileSync(path, data, { flag: 'wx' }),
    ...identity,
  };
}

/** `nodeAsyncStorage()`: the same storage over `node:fs/promises`; no call blocks the event loop. */
export function nodeAsyncStorage() {
  return {
    read: (path) => fsp.readFile(path),
    async readPrefix(path, maxBytes) {
      const fh = await fsp.open(path, 'r');
      try {
        const buf = Buffer.alloc(Math.min(maxBytes, (await fh.stat()).size));
        const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
        return buf.subarray(0, bytesRead);
      } finally {
        await fh.close();
      }
    },
    write: (path, data) => fsp.writeFile(path, data),
    append: (path, data) => fsp.appendFile(path, data),
    rename: (from, to) => fsp.rename(from, to),
    unlink: (path) => fsp.unlink(path),
    listDir: async (path) => (await fsp.readdir(path, { withFileTypes: true })).map((d) => ({ name: d.name, isDir: d.isDirectory() })),
    async stat(path) {
      const s = await fsp.stat(path);
      return { size: s.size, mtimeMs: s.mtimeMs, isDir: s.isDirectory() };
    },
    mkdirAll: async (path) => {
      await fsp.mkdir(path, { recursive: true });
    },
    async fsync(path) {
      await syncPathAsync(path);
      await syncPathAsync(parentOf(path)).catch(() => {
        // a directory that cannot be opened or synced: nothing more this host can do
      });
    },
    rmdir: (path) => fsp.rmdir(path),
    createNew: (path, data) => fsp.writeFile(path, data, { flag: 'wx' }),
    ...identity,
  };
}
