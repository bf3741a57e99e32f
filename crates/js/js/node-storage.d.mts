// Declarations of `xcsh-session/node-storage` (node-storage.mjs).
import type { JsStorage } from './xcsh_session.js';

/** A storage over Node's synchronous `node:fs` (also Deno's and Bun's): files and
 * directories as they are on disk, writer locks by exclusive create, `fsync` for real. */
export function nodeStorage(): JsStorage;
