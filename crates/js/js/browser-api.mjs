// What the browser entries (browser.mjs, inline.mjs) export besides `ready`: the
// wasm-bindgen API and the storages that work in a browser. Nothing here loads the module.
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession } from './async-session.mjs';
