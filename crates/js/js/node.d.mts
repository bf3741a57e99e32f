// Declarations of `xcsh-session` in Node, Deno and Bun (node.mjs).
export * from './xcsh_session.js';
export { nodeStorage } from './node-storage.mjs';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
