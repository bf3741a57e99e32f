// Declarations of `xcsh-session` in browsers and bundlers (browser.mjs).
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession, type AsyncStorage } from './async-session.mjs';
