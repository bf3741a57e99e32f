// Declarations of `xcsh-session` in Node, Deno and Bun (node.mjs).
export * from './xcsh_session.js';
export { nodeStorage, nodeAsyncStorage } from './node-storage.mjs';
export { AsyncSession, type AsyncStorage } from './async-session.mjs';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';

/** Resolved: in Node, Deno and Bun the module is instantiated once the import returns. */
export declare const ready: Promise<void>;
