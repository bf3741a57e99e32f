// Declarations of `xcsh-session/node-storage` (node-storage.mjs).
import type { JsStorage } from './xcsh_session.js';
import type { AsyncStorage } from './async-session.mjs';

/** A storage over Node's synchronous `node:fs` (also Deno's and Bun's): files and
 * directories as they are on disk, writer locks by exclusive create, `fsync` for real. */
export function nodeStorage(): JsStorage & Required<Pick<JsStorage, 'readRange'>>;

/** The same over `node:fs/promises`, for `AsyncSession`: nothing blocks the event loop. */
export function nodeAsyncStorage(): AsyncStorage & Required<Pick<AsyncStorage, 'readRange'>>;
