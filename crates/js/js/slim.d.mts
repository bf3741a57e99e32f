// Declarations of `xcsh-session/slim` (slim.mjs): call `init` or `initSync` first.
export { default as init, initSync } from './xcsh_session.js';
export type { InitInput, InitOutput, SyncInitInput } from './xcsh_session.js';
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession, type AsyncStorage } from './async-session.mjs';
