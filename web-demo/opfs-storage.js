// The browser-storage backend: the Origin Private File System (OPFS) behind the package's
// synchronous storage port. Only usable inside a dedicated Worker (createSyncAccessHandle).
//
// The port is synchronous, OPFS directory operations are not. So:
//   1. `load()` (async, at worker start) copies the OPFS tree under `root` into a
//      synchronous in-memory mirror (a MemoryStorage);
//   2. the package reads and writes the mirror; every mutation is recorded in a journal;
//   3. after each package call the worker awaits `commit()`, which replays the journal on
//      OPFS in order (file data through a sync access handle + flush(); mkdir, rename and
//      remove through the async directory API) before the page gets its answer. So an
//      edit the page has seen acknowledged is on disk.
// A failed commit poisons the backend: later writes throw until the page is reloaded
// (the mirror may then be ahead of the disk; reloading re-reads the disk).
import { MemoryStorage, baseName, joinPath, parentOf, storageError } from './pkg/memory-storage.mjs';

export class OpfsStorage extends MemoryStorage {
  /** @param {{root: string}} options  the mirrored subtree, e.g. `/xcsh` */
  constructor({ root }) {
    super({ readOnly: false });
    this.root = root;
    this.journal = [];
    this.failure = null;
    this.handles = new Map(); // directory path → FileSystemDirectoryHandle
    this.opfsRoot = null;
    this.host = 'browser-opfs';
    /** Set by the worker while it holds the viewer's Web Lock on the browser storage. */
    this.exclusive = false;
  }

  /**
   * A writer lock left in OPFS by another pid is a leftover of a closed tab when this
   * worker holds the Web Lock that only one viewer worker at a time can hold.
   */
  processAlive(pid) {
    if (pid === this.pid) return true;
    return this.exclusive ? false : undefined;
  }

  // ------------------------------------------------------------ start-up

  /** Reads the OPFS subtree into the mirror. Returns {files, bytes}. */
  async load() {
    this.opfsRoot = await navigator.storage.getDirectory();
    this.handles.set('/', this.opfsRoot);
    const top = await this.#dir(this.root, true);
    let files = 0;
    let bytes = 0;
    const walk = async (dirPath, handle) => {
      this.putDir(dirPath, 0);
      for await (const [name, child] of handle.entries()) {
        const path = joinPath(dirPath, name);
        if (child.kind === 'directory') {
          this.handles.set(path, child);
          await walk(path, child);
        } else {
          const file = await child.getFile();
          this.put(path, new Uint8Array(await file.arrayBuffer()), file.lastModified);
          files++;
          bytes += file.size;
        }
      }
    };
    await walk(this.root, top);
    this.journal = [];
    return { files, bytes };
  }

  // ------------------------------------------------------------ recording

  #check(op, path) {
    if (this.failure) throw storageError('EIO', `${op} '${path}': browser storage failed earlier (${this.failure.message}); reload the page`);
    if (path !== this.root && !path.startsWith(`${this.root}/`)) throw storageError('EACCES', `${op} '${path}': outside the browser storage (${this.root})`);
  }

  write(path, data) {
    this.#check('write', path);
    super.write(path, data);
    this.journal.push({ op: 'write', path, data });
  }

  append(path, data) {
    this.#check('append', path);
    super.append(path, data);
    this.journal.push({ op: 'append', path, data });
  }

  rename(from, to) {
    this.#check('rename', from);
    this.#check('rename', to);
    const isDir = this.dirs.has(from);
    super.rename(from, to);
    this.journal.push({ op: 'rename', from, to, isDir });
  }

  unlink(path) {
    this.#check('unlink', path);
    super.unlink(path);
    this.journal.push({ op: 'unlink', path });
  }

  mkdirAll(path) {
    this.#check('mkdir', path);
    super.mkdirAll(path);
    this.journal.push({ op: 'mkdir', path });
  }

  rmdir(path) {
    this.#check('rmdir', path);
    super.rmdir(path);
    this.journal.push({ op: 'rmdir', path });
  }

  /** Whether mutations wait for `commit()`. */
  get pending() {
    return this.journal.length;
  }

  // ------------------------------------------------------------ replay on OPFS

  /** Applies the journal to OPFS, in order. Returns the number of operations applied. */
  async commit() {
    const ops = this.journal;
    this.journal = [];
    try {
      for (const j of ops) await this.#apply(j);
    } catch (e) {
      this.failure = e instanceof Error ? e : new Error(String(e));
      throw storageError('EIO', `saving to browser storage failed: ${this.failure.message}`);
    }
    return ops.length;
  }

  async #apply(j) {
    switch (j.op) {
      case 'mkdir':
        await this.#dir(j.path, true);
        return;
      case 'write':
      case 'append': {
        const dir = await this.#dir(parentOf(j.path), true);
        const fh = await dir.getFileHandle(baseName(j.path), { create: true });
        const h = await fh.createSyncAccessHandle();
        try {
          if (j.op === 'write') h.truncate(0);
          const at = j.op === 'write' ? 0 : h.getSize();
          let done = 0;
          while (done < j.data.length) {
            const n = h.write(j.data.subarray(done), { at: at + done });
            if (n <= 0) throw new Error(`short write to ${j.path}`);
            done += n;
          }
          h.flush();
        } finally {
          h.close();
        }
        return;
      }
      case 'rename': {
        const fromDir = await this.#dir(parentOf(j.from), false);
        const toDir = await this.#dir(parentOf(j.to), true);
        if (!j.isDir) {
          // FileSystemFileHandle.move replaces an existing target file.
          const fh = await fromDir.getFileHandle(baseName(j.from));
          await fh.move(toDir, baseName(j.to));
          return;
        }
        // Directory handles cannot move: write the moved subtree (now in the mirror under
        // `to`) to OPFS, then remove the old one.
        await this.#dir(j.to, true);
        for (const d of [...this.dirs.keys()].filter((k) => k.startsWith(`${j.to}/`)).sort()) await this.#dir(d, true);
        for (const f of this.filesUnder(j.to)) await this.#writeWhole(f, this.bytes(f));
        await fromDir.removeEntry(baseName(j.from), { recursive: true });
        this.#forget(j.from);
        return;
      }
      case 'unlink': {
        const dir = await this.#dir(parentOf(j.path), false);
        await dir.removeEntry(baseName(j.path));
        return;
      }
      case 'rmdir': {
        const dir = await this.#dir(parentOf(j.path), false);
        await dir.removeEntry(baseName(j.path));
        this.#forget(j.path);
        return;
      }
      default:
        throw new Error(`unknown journal operation ${j.op}`);
    }
  }

  async #writeWhole(path, data) {
    const dir = await this.#dir(parentOf(path), true);
    const fh = await dir.getFileHandle(baseName(path), { create: true });
    const h = await fh.createSyncAccessHandle();
    try {
      h.truncate(0);
      h.write(data, { at: 0 });
      h.flush();
    } finally {
      h.close();
    }
  }

  /** The OPFS handle of a directory path, walking (and creating) from the root. */
  async #dir(path, create) {
    let handle = this.handles.get(path);
    if (handle) return handle;
    const parent = await this.#dir(parentOf(path), create);
    handle = await parent.getDirectoryHandle(baseName(path), { create });
    this.handles.set(path, handle);
    return handle;
  }

  #forget(dir) {
    for (const k of [...this.handles.keys()]) if (k === dir || k.startsWith(`${dir}/`)) this.handles.delete(k);
  }

  /** The text of a file as OPFS holds it now (not the mirror): to check what is on disk. */
  async readFromDisk(path) {
    const dir = await this.#dir(parentOf(path), false);
    const fh = await dir.getFileHandle(baseName(path));
    return (await fh.getFile()).text();
  }
}
