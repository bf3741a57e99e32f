// The bridge from an async storage (methods returning Promises: fs/promises, OPFS, a
// server) to the package's synchronous storage port, without mirroring the storage.
//
// The core decides what to read and write; this shell awaits the I/O around it:
//   1. before an operation, `load()` awaits what it will read (the session file, its
//      lock) and `refresh()` re-reads what may have changed on disk since (the lock, the
//      file's size), so the core's checks (writer fence, outside changes) see the disk;
//   2. the operation runs synchronously against what was loaded: reads answer from it,
//      writes are applied to it and recorded in a journal, in order;
//   3. `commit()` replays the journal on the storage, awaiting each call, before the
//      caller's Promise resolves: an acknowledged append is on disk.
// A read of something not loaded fails the operation with a `miss`; the caller loads
// what was missed and runs it again (only where nothing has changed yet: opening, or a
// listing), or reports it. A large file's bytes are dropped once it is open (the session
// holds its own copy), so memory is the session's, not a second copy of the storage.
// A ranged read of a large file loads that range only (the storage's `readRange`, else
// its `read`), held until the operation is committed.
// With snapshots (a storage's `snapshot(path)`, a `Blob` of the file as it is, and the
// `readSnapshot` option, a synchronous read of a Blob's range: FileReaderSync in a
// worker), what was loaded is each file's snapshot, not its bytes: reads take what they
// ask from it when asked, synchronously, and nothing is read before an operation. A file
// written since its snapshot was taken is read from it only up to the snapshot's end
// (an append keeps the bytes before), and gets a new one once the journal is committed.
// A storage may also open synchronous readers of files (`openReader(path)`: an OPFS sync
// access handle, some twenty times faster than reading a snapshot, but exclusive: no write
// to the file while it is open); `openReaders()` opens them for the files read in large
// pieces, for an operation, and `commit()` closes them before it writes.

import { baseName as nameOf, joinPath, parentOf, rangeArgs, storageError } from './memory-storage.mjs';

/** Files up to this size keep their bytes after an operation (locks, small records). */
const SMALL = 64 * 1024;
/** How much of a file `readPrefix` loads at once. */
const PREFIX = 4096;
/** A file read this much at once gets a reader (see `openReaders`). */
const HOT = 1 << 20;

/** The error a read of something not loaded throws (its `code` is no errno). */
export class StagedMiss extends Error {
  constructor(op, path, range) {
    super(`${op} ${path}${range ? ` [${range.offset}, +${range.length}]` : ''}: not loaded from the async storage yet`);
    this.code = 'EXCSH_NOT_LOADED';
    this.op = op;
    this.path = path;
    if (range) Object.assign(this, range);
  }
}

const fsError = (code, op, path) => storageError(code, `${op} '${path}'`);

/** The errno-like codes of the DOMExceptions browser storages (OPFS) throw. */
const DOM_ERRNO = {
  NotFoundError: 'ENOENT',
  TypeMismatchError: 'ENOTDIR',
  InvalidModificationError: 'ENOTEMPTY',
  NotAllowedError: 'EACCES',
  SecurityError: 'EACCES',
  QuotaExceededError: 'ENOSPC',
};

/** An error's errno-like code: Node's `code`, or a DOMException's name mapped. */
export function codeOf(e) {
  if (e && typeof e.code === 'string') return e.code;
  return DOM_ERRNO[e?.name];
}

const isMissing = (e) => ['ENOENT', 'ENOTDIR'].includes(codeOf(e));

function copy(bytes) {
  return bytes instanceof Uint8Array ? bytes.slice() : new TextEncoder().encode(String(bytes));
}

function equal(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `length` bytes at `offset` of the file entry `e` from what is loaded (a copy), or
 * `undefined` when that is not loaded. Past the end (the size known) it is empty.
 */
function rangeIn(e, offset, length) {
  const end = Math.min(offset + length, e.size);
  if (e.bytes) return e.bytes.slice(Math.min(offset, e.bytes.length), Math.min(offset + length, e.bytes.length));
  if (offset >= end) return new Uint8Array(0);
  if (e.prefix && end <= e.prefix.length) return e.prefix.slice(offset, end);
  const r = e.ranges?.find((r) => r.offset <= offset && end <= r.end);
  return r?.bytes.slice(offset - r.offset, end - r.offset);
}

/**
 * `length` bytes at `offset` of the file entry `e` read from its snapshot (`e.snap`, a
 * Blob of its first `e.snap.size` bytes), or from `reader` (the file read as it is on
 * the storage, which is what the snapshot holds until the journal is committed), or
 * `undefined` without one, or past it, or when the snapshot cannot be read any more (the
 * file changed since).
 */
function snapRange(e, offset, length, readSnapshot, reader) {
  if (!e.snap || !readSnapshot) return undefined;
  const end = Math.min(offset + length, e.size);
  if (offset >= end) return new Uint8Array(0);
  if (end > e.snap.size) return undefined;
  if (reader) {
    try {
      const bytes = reader.read(offset, end - offset);
      if (bytes.length === end - offset) return bytes;
    } catch {
      // the snapshot answers
    }
  }
  try {
    return readSnapshot(e.snap, offset, end - offset);
  } catch {
    delete e.snap;
    return undefined;
  }
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * `journal` without the files created and removed again with nothing written in between
 * but syncs (a writer lock taken and released by an open that wrote nothing): replaying
 * them would leave the storage as it is without them, in two more round trips.
 */
function withoutPassingLocks(journal) {
  const drop = new Set();
  for (let i = 0; i < journal.length; i++) {
    if (journal[i][0] !== 'createNew') continue;
    let j = i + 1;
    while (j < journal.length && journal[j][0] === 'fsync') j++;
    if (j < journal.length && journal[j][0] === 'unlink' && journal[j][1] === journal[i][1]) drop.add(i).add(j);
  }
  return drop.size ? journal.filter((_, k) => !drop.has(k)) : journal;
}

/**
 * A synchronous storage (the `JsStorage` shape) over `backend`, whose methods may return
 * Promises or values. What the core may see is what was loaded; see the file's head.
 */
export class StagedStorage {
  #backend;
  /**
   * path → {kind: 'file', size, mtimeMs, bytes?, prefix?, ranges?} | {kind: 'dir', names?: Map} | {kind: 'absent'};
   * `ranges`: [{offset, end, bytes}], what `readRange` loaded ([offset, end) asked for; bytes short: the file ended).
   */
  #entries = new Map();
  #journal = [];
  #misses = [];
  #saved = null;
  /** `(blob, offset, length) → Uint8Array`, synchronous; null: no snapshots. */
  #readSnapshot = null;
  #bytesRead = 0;
  /** path → {read(offset, length), close()}: the storage's synchronous readers open now. */
  #readers = new Map();
  /** Files read in large pieces: `openReaders()` opens theirs. */
  #hot = new Set();

  /**
   * `options.readSnapshot`: reads of files answered from snapshots of them (the backend's
   * `snapshot(path)`), see the file's head.
   */
  constructor(backend, { readSnapshot = null } = {}) {
    this.#backend = backend;
    if (readSnapshot && typeof backend.snapshot === 'function') this.#readSnapshot = readSnapshot;
    for (const name of ['processIdentity', 'processAlive', 'nowMs', 'randomU64']) {
      if (typeof backend[name] === 'function' && backend[name].constructor.name !== 'AsyncFunction') {
        this[name] = (...args) => backend[name](...args);
      }
    }
  }

  // ------------------------------------------------------------ the shell's side (async)

  /** Start an operation: what it changes can be undone by `rollback()`. */
  begin() {
    this.#saved = new Map([...this.#entries].map(([k, v]) => [k, { ...v, names: v.names && new Map(v.names) }]));
    this.#journal = [];
    this.#misses = [];
  }

  /** Undo the operation's changes to what was loaded and forget its journal. */
  rollback() {
    if (this.#saved) this.#entries = this.#saved;
    this.#saved = null;
    this.#journal = [];
  }

  /** How many bytes the core has read through this storage so far (all operations). */
  get bytesRead() {
    return this.#bytesRead;
  }

  /** `bytes`, counted as read by the core. */
  #counted(bytes) {
    this.#bytesRead += bytes.length;
    return bytes;
  }

  /**
   * Opens the storage's synchronous readers (`openReader(path)`, when it has one; it may
   * answer null) of `paths` and of the files read in large pieces before, for reads up to
   * the next `commit()` (which closes them: they may keep the file from being written).
   */
  async openReaders(paths = []) {
    if (typeof this.#backend.openReader !== 'function' || !this.#readSnapshot) return;
    for (const path of new Set([...paths, ...this.#hot])) {
      const e = this.#entries.get(path);
      if (this.#readers.has(path) || !e || e.kind !== 'file' || !this.#snapped(e)) continue;
      try {
        const reader = await this.#backend.openReader(path);
        if (reader) this.#readers.set(path, reader);
      } catch {
        // read from its snapshot
      }
    }
  }

  /** Closes the readers `openReaders()` opened. */
  closeReaders() {
    for (const r of this.#readers.values()) {
      try {
        r.close();
      } catch {
        // closed already
      }
    }
    this.#readers.clear();
  }

  /** `length` bytes at `offset` of file `path` (entry `e`) from its snapshot or reader. */
  #fromSnapshot(path, e, offset, length) {
    if (length >= HOT) this.#hot.add(path);
    return snapRange(e, offset, length, this.#readSnapshot, this.#readers.get(path));
  }

  /** What the operation read without it being loaded. */
  get misses() {
    return this.#misses;
  }

  /** Bytes held for files (after an open: the lock and other small files only). */
  heldBytes() {
    let n = 0;
    for (const e of this.#entries.values()) {
      n += (e.bytes?.length ?? 0) + (e.prefix?.length ?? 0);
      for (const r of e.ranges ?? []) n += r.bytes.length;
    }
    return n;
  }

  /**
   * Load a whole tree's shape: every directory listed, every file's size, and the first
   * 4 KiB of the files `head(path)` picks (what listings read). No file is read whole.
   * Returns {files, bytes} (their count and total size).
   */
  async loadTree(dir, { head = () => false } = {}) {
    let files = 0;
    let bytes = 0;
    const walk = async (path) => {
      await this.#loadDir(path);
      const e = this.#entries.get(path);
      if (e?.kind !== 'dir' || !e.names) return;
      const jobs = [];
      for (const [name, isDir] of e.names) {
        const child = joinPath(path, name);
        if (isDir) jobs.push(walk(child));
        else {
          jobs.push(this.#loadFile(child, { prefix: head(child) }).then(() => {
            files++;
            bytes += this.#entries.get(child)?.size ?? 0;
          }));
        }
      }
      await Promise.all(jobs);
    };
    await walk(dir);
    return { files, bytes };
  }

  /** Whether `path` is there, as far as what was loaded says (`undefined`: not loaded). */
  exists(path) {
    const e = this.#known(path);
    return e ? e.kind !== 'absent' : undefined;
  }

  /** The total size of the files known under `dir` (all by default). */
  totalBytes(dir = '/') {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    let n = 0;
    for (const [path, e] of this.#entries) if (e.kind === 'file' && path.startsWith(prefix)) n += e.size;
    return n;
  }

  /** Those of `wanted` ({op, path}) that a read would miss now. */
  unloaded(wanted) {
    return wanted.filter(({ op, path, offset, length }) => {
      const e = this.#known(path);
      if (!e) return true;
      if (e.kind !== 'file') return op === 'list' && e.kind === 'dir' && !e.names;
      if (this.#snapped(e)) return false;
      if (op === 'readRange') return !rangeIn(e, offset, length);
      return op === 'read' ? !e.bytes : op === 'readPrefix' ? !e.bytes && !e.prefix : false;
    });
  }

  /** Load what the last operation missed (and anything else asked for). */
  async load(wanted = this.#misses) {
    const seen = new Set();
    const key = ({ op, path, offset, length }) => (op === 'readRange' ? `${op} ${path} ${offset} ${length}` : `${op} ${path}`);
    const todo = wanted.filter((w) => !seen.has(key(w)) && seen.add(key(w)));
    this.#misses = [];
    const one = ({ op, path, offset, length }) => {
      if (op === 'list') return this.#loadDir(path);
      if (op === 'readRange') return this.#loadRange(path, offset, length);
      if (op === 'readPrefix') return this.#loadFile(path, { prefix: true });
      if (op === 'read') return this.#loadFile(path, { bytes: true });
      return this.#loadFile(path, {});
    };
    // A few at a time: a listing may miss thousands of heads at once.
    for (let i = 0; i < todo.length; i += 32) await Promise.all(todo.slice(i, i + 32).map(one));
  }

  /**
   * Re-read what the disk may have changed since the last operation: small files' bytes,
   * large files' sizes (a size other than the one our own writes left means someone
   * else wrote: the real size and mtime are shown, so the core notices).
   */
  async refresh() {
    const jobs = [];
    for (const [path, e] of this.#entries) {
      if (e.kind !== 'file') continue;
      jobs.push((async () => {
        const st = await this.#statOrAbsent(path);
        if (!st) return;
        const size = Number(st.size);
        if (e.bytes || e.prefix) {
          const fresh = { kind: 'file', size, mtimeMs: Number(st.mtimeMs) };
          if (e.bytes) fresh.bytes = copy(await this.#backend.read(path));
          else fresh.prefix = copy(await this.#backend.readPrefix(path, PREFIX));
          if (fresh.bytes) fresh.size = fresh.bytes.length;
          // The same bytes: what our own writes left, with the times the core saw.
          const same = fresh.size === e.size && equal(fresh.bytes ?? fresh.prefix, e.bytes ?? e.prefix);
          if (!same) this.#entries.set(path, fresh);
        } else if (size !== e.size) {
          this.#entries.set(path, { kind: 'file', size, mtimeMs: Number(st.mtimeMs) });
        }
      })());
    }
    await Promise.all(jobs);
  }

  /** Whether file entry `e` can be read whole from its snapshot. */
  #snapped(e) {
    return Boolean(this.#readSnapshot && e.snap && e.snap.size === e.size);
  }

  /** A snapshot of file `path` as it is now for entry `e` (when snapshots are taken and it fits). */
  async #takeSnapshot(path, e) {
    if (!this.#readSnapshot || e?.kind !== 'file') return;
    try {
      const snap = await this.#backend.snapshot(path);
      if (snap.size === e.size) e.snap = snap;
      else delete e.snap;
    } catch (err) {
      if (!isMissing(err)) throw err;
      delete e.snap;
    }
  }

  /** Replay the journal on the storage, in order, each call awaited. */
  async commit() {
    this.closeReaders(); // they may keep the files from being written
    const journal = withoutPassingLocks(this.#journal);
    this.#journal = [];
    this.#saved = null;
    for (const [op, ...args] of journal) {
      const f = this.#backend[op];
      if (op === 'createNew' && typeof f !== 'function') {
        await this.#createNewChecked(...args);
        continue;
      }
      await f.apply(this.#backend, args);
    }
    // Large files keep their size only: the session holds their text. Those written
    // get a snapshot of what is on the storage now (the one before went stale).
    const written = new Set(journal.flatMap(([op, ...args]) => (op === 'rename' ? [args[1]] : ['write', 'append', 'createNew'].includes(op) ? [args[0]] : [])));
    const jobs = [];
    for (const [path, e] of this.#entries) {
      if (e.kind !== 'file') continue;
      if (written.has(path) || (e.snap && e.snap.size !== e.size)) {
        delete e.snap;
        jobs.push(this.#takeSnapshot(path, e));
      }
    }
    await Promise.all(jobs);
    for (const e of this.#entries.values()) {
      if (e.kind === 'file' && e.bytes && e.bytes.length > SMALL && (!this.#readSnapshot || this.#snapped(e))) delete e.bytes;
      if (e.kind === 'file') delete e.ranges;
    }
  }

  async #createNewChecked(path, data) {
    try {
      await this.#backend.stat(path);
      throw fsError('EEXIST', 'open', path);
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
    await this.#backend.write(path, data);
  }

  /** The storage's stat of `path`, or `null` (and `path` known absent) when it is not there. */
  async #statOrAbsent(path) {
    try {
      return await this.#backend.stat(path);
    } catch (e) {
      if (!isMissing(e)) throw e;
      this.#entries.set(path, { kind: 'absent' });
      return null;
    }
  }

  async #loadFile(path, { bytes = false, prefix = false }) {
    const st = await this.#statOrAbsent(path);
    if (!st) return;
    if (st.isDir) {
      const old = this.#entries.get(path);
      this.#entries.set(path, { kind: 'dir', names: old?.kind === 'dir' ? old.names : undefined });
      return;
    }
    const entry = { kind: 'file', size: Number(st.size), mtimeMs: Number(st.mtimeMs) };
    const old = this.#entries.get(path);
    if (this.#readSnapshot) {
      await this.#takeSnapshot(path, entry);
      if (this.#snapped(entry)) {
        this.#entries.set(path, entry);
        return;
      }
    }
    if (bytes || (prefix && entry.size <= PREFIX)) {
      entry.bytes = copy(await this.#backend.read(path));
      entry.size = entry.bytes.length;
    } else if (prefix) {
      entry.prefix = copy(await this.#backend.readPrefix(path, PREFIX));
    } else if (old?.kind === 'file' && old.size === entry.size) {
      if (old.bytes) entry.bytes = old.bytes;
      if (old.prefix) entry.prefix = old.prefix;
      if (old.ranges) entry.ranges = old.ranges;
    }
    this.#entries.set(path, entry);
  }

  /**
   * Load `length` bytes at `offset` of `path`: a small file whole, a larger one's range
   * only, through the storage's `readRange` (without one, its `read`, kept whole until
   * the commit).
   */
  async #loadRange(path, offset, length) {
    await this.#loadFile(path, {});
    const e = this.#entries.get(path);
    if (e?.kind !== 'file' || e.bytes || rangeIn(e, offset, length)) return;
    if (e.size <= PREFIX || typeof this.#backend.readRange !== 'function') {
      await this.#loadFile(path, { bytes: true });
      return;
    }
    const end = Math.min(offset + length, e.size);
    const bytes = copy(await this.#backend.readRange(path, offset, end - offset));
    (e.ranges ??= []).push({ offset, end, bytes });
  }

  async #loadDir(path) {
    let list;
    try {
      list = await this.#backend.listDir(path);
    } catch (e) {
      if (isMissing(e)) {
        this.#entries.set(path, { kind: 'absent' });
        return;
      }
      throw e;
    }
    const names = new Map(list.map((d) => [d.name, Boolean(d.isDir)]));
    this.#entries.set(path, { kind: 'dir', names });
    // A name not listed is known not to be there.
    for (const [name, isDir] of names) {
      const child = joinPath(path, name);
      if (isDir && !this.#entries.has(child)) this.#entries.set(child, { kind: 'dir' });
    }
  }

  // ------------------------------------------------------------ the core's side (sync)

  #miss(op, path, range) {
    this.#misses.push({ op, path, ...range });
    return new StagedMiss(op, path, range);
  }

  /** What is known of `path`: an entry, or `absent` when a directory above it was listed without it. */
  #known(path) {
    const e = this.#entries.get(path);
    if (e) return e;
    // Absent when a directory above it is, or was listed without the next name down.
    for (let child = path, dir = parentOf(path); child !== dir; child = dir, dir = parentOf(dir)) {
      const d = this.#entries.get(dir);
      if (d?.kind === 'absent' || d?.kind === 'file') return { kind: 'absent' };
      if (d?.kind === 'dir' && d.names) return d.names.has(nameOf(child)) ? undefined : { kind: 'absent' };
    }
    return undefined;
  }

  #file(op, path, want, range) {
    const e = this.#known(path);
    if (!e) throw this.#miss(want, path, range);
    if (e.kind === 'absent') throw fsError('ENOENT', op, path);
    if (e.kind === 'dir') throw fsError('EISDIR', op, path);
    return e;
  }

  #touch(path, isDir) {
    const dir = this.#entries.get(parentOf(path));
    if (dir?.kind === 'dir' && dir.names) dir.names.set(nameOf(path), isDir);
  }

  #untouch(path) {
    const dir = this.#entries.get(parentOf(path));
    if (dir?.kind === 'dir' && dir.names) dir.names.delete(nameOf(path));
  }

  read(path) {
    const e = this.#file('open', path, 'read');
    if (e.bytes) return this.#counted(e.bytes.slice());
    const bytes = this.#fromSnapshot(path, e, 0, e.size);
    if (!bytes) throw this.#miss('read', path);
    return this.#counted(bytes);
  }

  readPrefix(path, maxBytes) {
    const e = this.#file('open', path, 'readPrefix');
    if (e.bytes) return this.#counted(e.bytes.slice(0, maxBytes));
    const snapped = this.#fromSnapshot(path, e, 0, Math.max(0, Number(maxBytes) || 0));
    if (snapped) return this.#counted(snapped);
    if (e.prefix && (maxBytes <= e.prefix.length || e.prefix.length >= e.size)) return this.#counted(e.prefix.slice(0, maxBytes));
    throw this.#miss('readPrefix', path);
  }

  readRange(path, offset, length) {
    [offset, length] = rangeArgs(offset, length);
    const e = this.#file('open', path, 'readRange', { offset, length });
    const bytes = rangeIn(e, offset, length) ?? this.#fromSnapshot(path, e, offset, length);
    if (!bytes) throw this.#miss('readRange', path, { offset, length });
    return this.#counted(bytes);
  }

  stat(path) {
    const e = this.#known(path);
    if (!e) throw this.#miss('stat', path);
    if (e.kind === 'absent') throw fsError('ENOENT', 'stat', path);
    if (e.kind === 'dir') return { size: 0, mtimeMs: 0, isDir: true };
    return { size: e.size, mtimeMs: e.mtimeMs, isDir: false };
  }

  listDir(path) {
    const e = this.#known(path);
    if (e?.kind === 'absent') throw fsError('ENOENT', 'scandir', path);
    if (!e || e.kind !== 'dir' || !e.names) throw this.#miss('list', path);
    return [...e.names].map(([name, isDir]) => ({ name, isDir }));
  }

  write(path, data) {
    const bytes = copy(data);
    this.#entries.set(path, { kind: 'file', size: bytes.length, mtimeMs: Date.now(), bytes });
    this.#touch(path, false);
    this.#journal.push(['write', path, bytes]);
  }

  append(path, data) {
    const e = this.#file('open', path, 'stat');
    const bytes = copy(data);
    const next = { kind: 'file', size: e.size + bytes.length, mtimeMs: Math.max(Date.now(), e.mtimeMs + 1) };
    if (e.bytes) next.bytes = concat(e.bytes, bytes);
    // The bytes before are those of the snapshot still (read up to its end).
    else if (e.snap) next.snap = e.snap;
    this.#entries.set(path, next);
    this.#journal.push(['append', path, bytes]);
  }

  createNew(path, data) {
    const e = this.#known(path);
    if (!e) throw this.#miss('stat', path);
    if (e.kind !== 'absent') throw fsError('EEXIST', 'open', path);
    const bytes = copy(data);
    this.#entries.set(path, { kind: 'file', size: bytes.length, mtimeMs: Date.now(), bytes });
    this.#touch(path, false);
    this.#journal.push(['createNew', path, bytes]);
  }

  rename(from, to) {
    const e = this.#file('rename', from, 'stat');
    this.#entries.set(to, e);
    this.#entries.set(from, { kind: 'absent' });
    this.#untouch(from);
    this.#touch(to, e.kind === 'dir');
    this.#journal.push(['rename', from, to]);
  }

  unlink(path) {
    this.#file('unlink', path, 'stat');
    this.#entries.set(path, { kind: 'absent' });
    this.#untouch(path);
    this.#journal.push(['unlink', path]);
  }

  mkdirAll(path) {
    for (let p = path; ; p = parentOf(p)) {
      const e = this.#entries.get(p);
      if (e?.kind === 'dir') break;
      if (e?.kind === 'file') throw fsError('EEXIST', 'mkdir', p);
      // Made now (known empty) or there already (unknown contents).
      this.#entries.set(p, e?.kind === 'absent' ? { kind: 'dir', names: new Map() } : { kind: 'dir' });
      this.#touch(p, true);
      if (p === '/') break;
    }
    this.#journal.push(['mkdirAll', path]);
  }

  fsync(path) {
    this.#journal.push(['fsync', path]);
  }

  rmdir(path) {
    const e = this.#known(path);
    if (!e) throw this.#miss('list', path);
    if (e.kind === 'absent') throw fsError('ENOENT', 'rmdir', path);
    if (e.names && e.names.size > 0) throw fsError('ENOTEMPTY', 'rmdir', path);
    this.#entries.set(path, { kind: 'absent' });
    this.#untouch(path);
    this.#journal.push(['rmdir', path]);
  }
}
