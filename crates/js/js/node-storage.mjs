// `nodeStorage()`: a JsStorage over Node's synchronous `node:fs` API, shipped in the Node
// build of the package as `node-storage.mjs`. fs errors are thrown as they are: their
// `code` ('ENOENT', 'EEXIST', 'EACCES') is what the package looks at. Large sessions are
// read straight into wasm memory (`readInto`); writer locks use exclusive create.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';

function syncPath(path) {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

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
    // The file, then its directory: only the directory's sync makes a rename, or a new
    // file, durable (as the native core's FsStorage does).
    fsync(path) {
      syncPath(path);
      const i = path.lastIndexOf('/');
      try {
        syncPath(i > 0 ? path.slice(0, i) : '/');
      } catch {
        // a directory that cannot be opened or synced: nothing more this host can do
      }
    },
    rmdir: (path) => fs.rmdirSync(path),
    createNew: (path, data) => fs.writeFileSync(path, data, { flag: 'wx' }),
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
}

/**
 * `nodeAsyncStorage()`: the same storage over `node:fs/promises` (Node, Deno, Bun), for
 * `AsyncSession`: no call blocks the event loop. `fsync` syncs the file, then its
 * directory (which makes a rename or a new file durable).
 */
export function nodeAsyncStorage() {
  const sync = async (path) => {
    const fh = await fsp.open(path, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  };
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
      await sync(path);
      const i = path.lastIndexOf('/');
      try {
        await sync(i > 0 ? path.slice(0, i) : '/');
      } catch {
        // a directory that cannot be opened or synced: nothing more this host can do
      }
    },
    rmdir: (path) => fsp.rmdir(path),
    createNew: (path, data) => fsp.writeFile(path, data, { flag: 'wx' }),
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
}
