// `xcsh-session/slim`: the package without automatic initialization, for hosts that load
// the WebAssembly module themselves: `await init()` (fetches the .wasm beside this file),
// `await init({ module_or_path: urlOrResponseOrBytes })`, or `initSync({ module: bytes })`
// (a worker, or bytes inlined by a bundler). Call one of them before anything else.
export { default as init, initSync } from './xcsh_session.js';
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession } from './async-session.mjs';
