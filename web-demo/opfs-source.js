// The browser-storage backend: the Origin Private File System through the package's
// async `opfsStorage()`, under a `StagedStorage` (both from pkg/), so the worker's calls
// into the package stay synchronous without a mirror of OPFS in memory:
//   - at start-up, `load()` reads the tree's shape under `root`: every directory's
//     names, every file's size and the first 4 KiB of each session file (what the
//     listings read). No file is read whole.
//   - before a request the worker loads what it knows the request reads whole (the
//     session it opens, the sessions it searches); a request that still reads something
//     not loaded is answered after that is loaded and the request is run again (the
//     worker does that only for requests that write nothing);
//   - after each request the worker awaits `commit()`: its writes, replayed on OPFS in
//     order, before the page gets its answer. A large file's bytes are dropped then.
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
  const storage = new StagedStorage(backend);
  return {
    storage,
    disk,
    state,
    /** Reads the tree's shape (not its files): {files, bytes}. */
    load: () => storage.loadTree(root, { head: (path) => path.endsWith('.jsonl') }),
  };
}
