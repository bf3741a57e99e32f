// A host of the component that is not the project's: jco (npm @bytecodealliance/jco)
// transpiles it to JS + core wasm, and this file supplies its two own imports over Node's
// fs, as a host author embedding it would; the clock and entropy are standard WASI, which
// jco's preview2 shim provides. Paths are used as they are: the sandbox, if any, is this
// host's business.
import fs from 'node:fs';
import os from 'node:os';

/** A thrown storage-error variant (jco turns a throw into the `err` of a `result`). */
function storageError(e) {
  const tag = { ENOENT: 'not-found', EEXIST: 'already-exists', EACCES: 'permission-denied', EPERM: 'permission-denied' }[e?.code] ?? 'other';
  return { tag, val: String(e?.message ?? e) };
}

function io(f) {
  try {
    return f();
  } catch (e) {
    throw storageError(e);
  }
}

/** `open-reader`'s resource: one open file read in pieces. */
class Reader {
  #fd;
  #pos = 0;
  constructor(path) { this.#fd = fs.openSync(path, 'r'); }
  read(maxBytes) {
    return io(() => {
      const buf = Buffer.alloc(Number(maxBytes));
      const n = fs.readSync(this.#fd, buf, 0, buf.length, this.#pos);
      this.#pos += n;
      if (n === 0) fs.closeSync(this.#fd);
      return new Uint8Array(buf.buffer, buf.byteOffset, n);
    });
  }
}

/** Scratch space for the small reads of every append (the lock file, 4096 bytes at most). */
const scratch = Buffer.allocUnsafe(4096);

/** Read from offset 0 until `len` bytes or the end of the file; the bytes read. */
function readFull(fd, buf, len) {
  let n = 0;
  for (let r; n < len && (r = fs.readSync(fd, buf, n, len - n, n)) > 0;) n += r;
  return n;
}

/**
 * `read-range`: at most `len` bytes at `offset` (u64s arrive as BigInts), read where they
 * are with positioned reads on one fd, never the whole file; fewer at the end of the
 * file, none past it.
 */
function readRange(path, offset, len) {
  const fd = fs.openSync(path, 'r');
  try {
    const start = BigInt(offset);
    const size = fs.fstatSync(fd, { bigint: true }).size;
    const left = size > start ? size - start : 0n;
    const want = Number(BigInt(len) < left ? BigInt(len) : left);
    const buf = Buffer.allocUnsafe(want);
    let n = 0;
    for (let r; n < want && (r = fs.readSync(fd, buf, n, want - n, start + BigInt(n))) > 0;) n += r;
    return new Uint8Array(buf.buffer, buf.byteOffset, n);
  } finally {
    fs.closeSync(fd);
  }
}

function writeFull(fd, data) {
  for (let off = 0; off < data.length;) off += fs.writeSync(fd, data, off, data.length - off);
}

function parentDir(path) {
  const i = path.lastIndexOf('/');
  return i > 0 ? path.slice(0, i) : i === 0 ? '/' : '.';
}

/** Best effort, as FsStorage's: a directory that cannot be opened or synced is skipped. */
function syncDir(dir) {
  let fd;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // nothing to make durable that this host could reach
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export const storage = {
  Reader,
  read: (path) => io(() => new Uint8Array(fs.readFileSync(path))),
  openReader: (path) => io(() => new Reader(path)),
  // Every append reads the lock file (at most 4096 bytes): into the scratch buffer, no
  // fstat and no zeroed allocation per call; the bytes returned are a copy.
  readPrefix: (path, maxBytes) => io(() => {
    const fd = fs.openSync(path, 'r');
    try {
      const max = Number(maxBytes);
      const buf = max <= scratch.length ? scratch : Buffer.allocUnsafe(Math.min(max, fs.fstatSync(fd).size));
      const n = readFull(fd, buf, Math.min(max, buf.length));
      return Uint8Array.prototype.slice.call(buf, 0, n);
    } finally {
      fs.closeSync(fd);
    }
  }),
  readRange: (path, offset, len) => io(() => readRange(path, offset, len)),
  write: (path, data) => io(() => fs.writeFileSync(path, data)),
  append: (path, data) => io(() => {
    const fd = fs.openSync(path, 'a');
    try { writeFull(fd, data); } finally { fs.closeSync(fd); }
  }),
  rename: (from, to) => io(() => fs.renameSync(from, to)),
  unlink: (path) => io(() => fs.unlinkSync(path)),
  listDir: (path) => io(() => fs.readdirSync(path, { withFileTypes: true }).map((d) => ({ name: d.name, isDir: d.isDirectory() }))),
  stat: (path) => io(() => {
    const s = fs.statSync(path);
    return { size: BigInt(s.size), mtimeMs: BigInt(Math.trunc(s.mtimeMs)), isDir: s.isDirectory() };
  }),
  mkdirAll: (path) => io(() => { fs.mkdirSync(path, { recursive: true }); }),
  // As the native FsStorage: the file, then its directory (the core's atomic write is
  // write + fsync + rename + fsync(path): only the directory's sync makes the rename, or a
  // new file, durable).
  fsync: (path) => io(() => {
    const fd = fs.openSync(path, 'r');
    try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
    syncDir(parentDir(path));
  }),
  rmdir: (path) => io(() => fs.rmdirSync(path)),
  createNew: (path, data) => io(() => fs.writeFileSync(path, data, { flag: 'wx' })),
  processIdentity: () => [process.pid, os.hostname()],
  processAlive: (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return e.code === 'EPERM';
    }
  },
};

/** No prompt history in this host: every call says so. */
const noHistory = () => { throw { tag: 'other', val: 'this host keeps no prompt history' }; };
export const history = { add: noHistory, search: noHistory, recent: noHistory, lastPrompt: noHistory };
