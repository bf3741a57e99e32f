// Declarations of `xcsh-session` in browsers and bundlers (browser.mjs).
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
