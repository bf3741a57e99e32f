// `nodeStorage()`: a JsStorage over Node's synchronous `node:fs` API, shipped in the Node
// build of the package as `node-storage.mjs`. fs errors are thrown as they are: their
// `code` ('ENOENT', 'EEXIST', 'EACCES') is what the package looks at. Large sessions are
// read straight into wasm memory (`readInto`); writer locks use exclusive create.
import fs from 'node:fs';
import os from 'node:os';

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
      const fd = fs.openSync(path, 'r');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
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
