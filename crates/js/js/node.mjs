// The package's entry for Node, Deno and Bun (`import ... from 'xcsh-session'`): the
// WebAssembly module is read from beside this file and instantiated synchronously, so
// every export is ready once the import returns (no init call; `ready` is resolved
// already). Also the ready storages for these runtimes: `nodeStorage()` over node:fs and
// `memoryStorage()`.
import { readFileSync } from 'node:fs';
import { initSync } from './xcsh_session.js';

initSync({ module: readFileSync(new URL('./xcsh_session_bg.wasm', import.meta.url)) });

export * from './xcsh_session.js';
export { nodeStorage, nodeAsyncStorage } from './node-storage.mjs';
export { AsyncSession } from './async-session.mjs';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';

/** Resolved: the module is instantiated once the import returns. */
export const ready = Promise.resolve();
