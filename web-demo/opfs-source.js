// The browser-storage backend: the Origin Private File System through the package's
// async `opfsStorage()`, under a `StagedStorage` (both from pkg/), so the worker's calls
// into the package stay synchronous without a mirror of OPFS in memory:
//   - at start-up, `load()` reads the tree's shape under `root`: every directory's
//     names, every file's size, and a snapshot of each file (a `File`, nothing read).
//   - the package's reads are answered from the snapshots, synchronously with
//     FileReaderSync (a dedicated worker's), only what it asks for, when it asks: an
//     open through the session's index reads the index and the lines it shows, not the
//     file; nothing is loaded before a request;
//   - after each request the worker awaits `commit()`: its writes, replayed on OPFS in
//     order, before the page gets its answer; each file written gets a new snapshot then
//     (the one before went stale). A read of something not loaded (a snapshot that could
//     not be read) is answered after it is loaded and the request is run again (only for
//     requests that write nothing).
import { StagedStorage } from './pkg/staged-storage.mjs';
import { opfsStorage } from './pkg/opfs-storage.mjs';

/** Reads smaller than this are answered from a block of this size read around them. */
const BLOCK = 256 * 1024;

/**
 * `(file, offset, length) → Uint8Array`: a range of a `File`, read synchronously. Small
 * reads (an open reads many lines, a few at a time, often near each other) go through
 * the last blocks read (a few, of `BLOCK` bytes, of the snapshot asked: a new snapshot
 * is another File, so a written file is never answered from the blocks of the old one).
 */
export function snapshotReader() {
  const reader = new FileReaderSync();
  const read = (file, a, b) => new Uint8Array(reader.readAsArrayBuffer(file.slice(a, b)));
  const blocks = []; // {file, start, bytes}, the most recent first
  return (file, offset, length) => {
    const end = offset + length;
    if (length > BLOCK / 4) return read(file, offset, end);
    let b = blocks.find((x) => x.file === file && x.start <= offset && end <= x.start + x.bytes.length);
    if (!b) {
      const start = Math.floor(offset / BLOCK) * BLOCK;
      b = { file, start, bytes: read(file, start, Math.max(start + BLOCK, end)) };
      blocks.unshift(b);
      if (blocks.length > 4) blocks.pop();
    }
    return b.bytes.slice(offset - b.start, end - b.start);
  };
}

export function openOpfsSource({ root }) {
  const disk = opfsStorage();
  const pid = 1 + (crypto.getRandomValues(new Uint32Array(1))[0] % 0x7ffffffe);
  const state = { exclusive: false, readOnly: false };
  const refuse = (path) => Promise.reject(Object.assign(new Error(`EACCES: another tab of the viewer writes the browser storage: '${path}'`), { code: 'EACCES' }));
  const backend = {
    ...disk,
    // This worker's writer identity; a lock of another pid is a leftover of a closed tab
    // when this worker holds the Web Lock that only one viewer worker at a time can hold.
    processIdentity: () => ({ pid, host: 'browser-opfs' }),
    processAlive: (other) => (other === pid ? true : state.exclusive ? false : undefined),
  };
  for (const name of ['write', 'append', 'rename', 'unlink', 'mkdirAll', 'rmdir', 'createNew']) {
    backend[name] = (path, ...rest) => (state.readOnly ? refuse(path) : disk[name](path, ...rest));
  }
  // A file's sync access handle, while this worker holds the Web Lock (a handle keeps
  // the file from being written, and other tabs read only): StagedStorage opens them for
  // the files it reads in large pieces, and closes them before it writes.
  backend.openReader = async (path) => {
    if (!state.exclusive) return null;
    let dir = await navigator.storage.getDirectory();
    const names = path.split('/').filter(Boolean);
    const name = names.pop();
    for (const n of names) dir = await dir.getDirectoryHandle(n);
    const handle = await (await dir.getFileHandle(name)).createSyncAccessHandle();
    return {
      read(offset, length) {
        const buf = new Uint8Array(length);
        const n = handle.read(buf, { at: offset });
        return n === length ? buf : buf.subarray(0, n);
      },
      close: () => handle.close(),
    };
  };
  const storage = new StagedStorage(backend, { readSnapshot: snapshotReader() });
  return {
    storage,
    disk,
    state,
    /** Reads the tree's shape (not its files): {files, bytes}. */
    load: () => storage.loadTree(root, { head: (path) => path.endsWith('.jsonl') }),
  };
}
