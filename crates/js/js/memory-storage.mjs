// `memoryStorage()`: a synchronous, Map-based storage (`JsStorage` in xcsh_session.d.ts),
// shipped by the package for every runtime: tests, a browser tab that keeps nothing, the
// mirror under a storage of your own. Paths are absolute and `/`-separated. Errors carry a
// Node-style `code` (`ENOENT`, `EEXIST`, `EACCES`, ...), which the package maps to its
// error kinds.
//
// `readOnly: true` refuses every write (EACCES) while the loaders (`put`, `putDir`) still
// fill it: the viewer shows files opened from disk and its samples that way. Files grow by
// doubling, so appending to a large session does not copy it each time.

export function storageError(code, message) {
  const e = new Error(`${code}: ${message}`);
  e.code = code;
  return e;
}

export function parentOf(path) {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

export function baseName(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function joinPath(dir, name) {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

/** `/a//b/` → `/a/b`; relative paths are taken from the root. */
export function normPath(path) {
  const parts = String(path).split('/').filter((p) => p && p !== '.');
  if (parts.includes('..')) throw storageError('EACCES', `'..' is not allowed in ${path}`);
  return `/${parts.join('/')}`;
}

const EMPTY = new Uint8Array(0);

/**
 * `readRange`'s `offset` and `length` as given, once both are non-negative integers
 * (numbers or bigints); anything else throws a RangeError (code 'EINVAL') naming the
 * argument, before any file is touched.
 */
export function rangeArgs(offset, length) {
  const check = (name, v) => {
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      const got = typeof v === 'string' ? JSON.stringify(v) : String(v);
      const e = new RangeError(`readRange(path, offset, length): ${name} must be a non-negative integer, got ${got}`);
      e.code = 'EINVAL';
      throw e;
    }
    return n;
  };
  return [check('offset', offset), check('length', length)];
}

/** A new, empty memory storage (`options`: `readOnly`, `clock`). */
export function memoryStorage(options = {}) {
  return new MemoryStorage(options);
}

export class MemoryStorage {
  /**
   * @param {{readOnly?: boolean, clock?: () => number}} options
   */
  constructor({ readOnly = false, clock = () => Date.now() } = {}) {
    this.readOnly = readOnly;
    this.clock = clock;
    /** path → {buf: Uint8Array, size: number, mtimeMs: number} */
    this.files = new Map();
    /** path → mtimeMs */
    this.dirs = new Map([['/', 0]]);
    this.pid = 1 + (crypto.getRandomValues(new Uint32Array(1))[0] % 0x7ffffffe);
    this.host = 'browser-memory';
  }

  // ------------------------------------------------------------ loading (bypasses readOnly)

  /** Stores a file (creating its directories), as a loader does. */
  put(path, data, mtimeMs = this.clock()) {
    path = normPath(path);
    this.#mkdirs(parentOf(path), mtimeMs);
    const bytes = data instanceof Uint8Array ? data : new TextEncoder().encode(String(data));
    this.files.set(path, { buf: bytes, size: bytes.length, mtimeMs });
  }

  putDir(path, mtimeMs = this.clock()) {
    this.#mkdirs(normPath(path), mtimeMs);
  }

  /** The bytes of a file (a view, valid until the next change of that file), or undefined. */
  bytes(path) {
    const f = this.files.get(path);
    return f ? f.buf.subarray(0, f.size) : undefined;
  }

  text(path) {
    const b = this.bytes(path);
    return b === undefined ? undefined : new TextDecoder().decode(b);
  }

  exists(path) {
    return this.files.has(path) || this.dirs.has(path);
  }

  /** Every file path under `dir` (recursively), sorted. */
  filesUnder(dir) {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    return [...this.files.keys()].filter((k) => k.startsWith(prefix)).sort();
  }

  totalBytes() {
    let n = 0;
    for (const f of this.files.values()) n += f.size;
    return n;
  }

  // ------------------------------------------------------------ the storage port

  read(path) {
    const f = this.files.get(path);
    if (!f) throw storageError(this.dirs.has(path) ? 'EISDIR' : 'ENOENT', `open '${path}'`);
    return f.buf.subarray(0, f.size);
  }

  readPrefix(path, maxBytes) {
    return this.read(path).subarray(0, Math.max(0, Number(maxBytes) || 0));
  }

  /** At most `length` bytes from `offset` (a view, as `read` gives): fewer at the end, none past it. */
  readRange(path, offset, length) {
    [offset, length] = rangeArgs(offset, length);
    const bytes = this.read(path);
    return bytes.subarray(Math.min(offset, bytes.length), Math.min(offset + length, bytes.length));
  }

  write(path, data) {
    this.#writable('open', path);
    this.#needParent('open', path);
    if (this.dirs.has(path)) throw storageError('EISDIR', `open '${path}'`);
    this.files.set(path, { buf: data, size: data.length, mtimeMs: this.clock() });
  }

  append(path, data) {
    this.#writable('open', path);
    this.#needParent('open', path);
    if (this.dirs.has(path)) throw storageError('EISDIR', `open '${path}'`);
    const f = this.files.get(path) ?? { buf: EMPTY, size: 0, mtimeMs: 0 };
    const need = f.size + data.length;
    if (need > f.buf.length) {
      const grown = new Uint8Array(Math.max(need, Math.min(f.size * 2, f.size + 64 * 1024 * 1024), 4096));
      grown.set(f.buf.subarray(0, f.size));
      f.buf = grown;
    }
    f.buf.set(data, f.size);
    f.size = need;
    f.mtimeMs = this.clock();
    this.files.set(path, f);
  }

  rename(from, to) {
    this.#writable('rename', from);
    this.#needParent('rename', to);
    if (this.dirs.has(from)) {
      if (this.files.has(to)) throw storageError('ENOTDIR', `rename '${from}' -> '${to}'`);
      if (this.dirs.has(to) && this.listDir(to).length) throw storageError('ENOTEMPTY', `rename '${from}' -> '${to}'`);
      if (to.startsWith(`${from}/`)) throw storageError('EINVAL', `rename '${from}' -> '${to}'`);
      const under = (k) => k === from || k.startsWith(`${from}/`);
      for (const [d, t] of [...this.dirs].filter(([d]) => under(d))) {
        this.dirs.delete(d);
        this.dirs.set(to + d.slice(from.length), t);
      }
      for (const [k, v] of [...this.files].filter(([k]) => under(k))) {
        this.files.delete(k);
        this.files.set(to + k.slice(from.length), v);
      }
      return;
    }
    const f = this.files.get(from);
    if (!f) throw storageError('ENOENT', `rename '${from}' -> '${to}'`);
    if (this.dirs.has(to)) throw storageError('EISDIR', `rename '${from}' -> '${to}'`);
    this.files.delete(from);
    this.files.set(to, f);
  }

  unlink(path) {
    this.#writable('unlink', path);
    if (this.dirs.has(path)) throw storageError('EISDIR', `unlink '${path}'`);
    if (!this.files.delete(path)) throw storageError('ENOENT', `unlink '${path}'`);
  }

  listDir(path) {
    if (!this.dirs.has(path)) throw storageError(this.files.has(path) ? 'ENOTDIR' : 'ENOENT', `scandir '${path}'`);
    const prefix = path === '/' ? '/' : `${path}/`;
    const out = [];
    for (const [map, isDir] of [[this.dirs, true], [this.files, false]]) {
      for (const key of map.keys()) {
        if (key.length > prefix.length && key.startsWith(prefix) && !key.includes('/', prefix.length)) {
          out.push({ name: key.slice(prefix.length), isDir });
        }
      }
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  stat(path) {
    if (this.dirs.has(path)) return { size: 0, mtimeMs: this.dirs.get(path), isDir: true };
    const f = this.files.get(path);
    if (!f) throw storageError('ENOENT', `stat '${path}'`);
    return { size: f.size, mtimeMs: f.mtimeMs, isDir: false };
  }

  mkdirAll(path) {
    this.#writable('mkdir', path);
    this.#mkdirs(path, this.clock());
  }

  fsync(path) {
    if (!this.files.has(path) && !this.dirs.has(path)) throw storageError('ENOENT', `fsync '${path}'`);
  }

  rmdir(path) {
    this.#writable('rmdir', path);
    if (path === '/') throw storageError('EBUSY', 'rmdir /');
    if (this.listDir(path).length > 0) throw storageError('ENOTEMPTY', `rmdir '${path}'`);
    this.dirs.delete(path);
  }

  /** Exclusive create (session writer locks): EEXIST when the path exists. */
  createNew(path, data) {
    if (this.files.has(path) || this.dirs.has(path)) throw storageError('EEXIST', `open '${path}'`);
    this.write(path, data);
  }

  /** This "process" (the worker that owns the storage), recorded in writer locks. */
  processIdentity() {
    return { pid: this.pid, host: this.host };
  }

  /**
   * Whether the writer `pid` is alive. Only this worker writes a memory storage, so any
   * other writer is gone; subclasses that can share their files say otherwise.
   */
  processAlive(pid) {
    return pid === this.pid;
  }

  nowMs() {
    return this.clock();
  }

  randomU64() {
    const w = new Uint32Array(2);
    crypto.getRandomValues(w);
    return (BigInt(w[0]) << 32n) | BigInt(w[1]);
  }

  // ------------------------------------------------------------ helpers

  #writable(op, path) {
    if (this.readOnly) throw storageError('EACCES', `${op} '${path}': read-only (the viewer never rewrites a file it only shows)`);
  }

  #needParent(op, path) {
    if (!this.dirs.has(parentOf(path))) throw storageError('ENOENT', `${op} '${path}'`);
  }

  #mkdirs(path, mtimeMs) {
    let acc = '';
    for (const part of path.split('/').filter(Boolean)) {
      acc += `/${part}`;
      if (this.files.has(acc)) throw storageError('ENOTDIR', `mkdir '${acc}'`);
      if (!this.dirs.has(acc)) this.dirs.set(acc, mtimeMs);
    }
  }
}
