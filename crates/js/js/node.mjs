// The package's entry for Node, Deno and Bun (`import ... from 'xcsh-session'`): the
// WebAssembly module is read from beside this file and instantiated synchronously, so
// every export is ready once the import returns (no init call; `ready` is resolved
// already). Also the ready storages for these runtimes: `nodeStorage()` over node:fs and
// `memoryStorage()`. The names are those of the browser entry (api.d.mts).
import { readFileSync } from 'node:fs';
import { initSync } from './xcsh_session.js';
import { opfsStorage as browserOpfsStorage } from './opfs-storage.mjs';

initSync({ module: readFileSync(new URL('./xcsh_session_bg.wasm', import.meta.url)) });

export * from './xcsh_session.js';
export { nodeStorage, nodeAsyncStorage } from './node-storage.mjs';
export { AsyncSession } from './async-session.mjs';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';

/** Resolved: the module is instantiated once the import returns. */
export const ready = Promise.resolve();

/** OPFS is a browser's; a runtime with `navigator.storage.getDirectory` gets the real one. */
export function opfsStorage() {
  if (typeof globalThis.navigator?.storage?.getDirectory !== 'function') {
    throw new Error('xcsh-session: opfsStorage() needs the browser\'s Origin Private File System (navigator.storage), which this runtime has not; use nodeAsyncStorage() or nodeStorage()');
  }
  return browserOpfsStorage();
}
