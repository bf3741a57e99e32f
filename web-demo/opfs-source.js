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
  const reader = new FileReaderSync();
  const readSnapshot = (file, offset, length) => new Uint8Array(reader.readAsArrayBuffer(file.slice(offset, offset + length)));
  const storage = new StagedStorage(backend, { readSnapshot });
  return {
    storage,
    disk,
    state,
    /** Reads the tree's shape (not its files): {files, bytes}. */
    load: () => storage.loadTree(root, { head: (path) => path.endsWith('.jsonl') }),
  };
}
