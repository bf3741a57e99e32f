// Declarations of `xcsh-session` in browsers and bundlers (browser.mjs).
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession, type AsyncStorage } from './async-session.mjs';

/**
 * Resolves once the WebAssembly module is instantiated (the .wasm is fetched when the
 * package is imported): `await ready` before the first call.
 */
export declare const ready: Promise<void>;
