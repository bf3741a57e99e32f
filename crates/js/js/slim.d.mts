// Declarations of `xcsh-session/slim` (slim.mjs): call `init` or `initSync` first.
import type { InitInput, InitOutput, SyncInitInput } from './xcsh_session.js';
export type { InitInput, InitOutput, SyncInitInput } from './xcsh_session.js';
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession, type AsyncStorage } from './async-session.mjs';

/**
 * Loads and instantiates the module: `init()` fetches the .wasm beside the package,
 * `init({ module_or_path })` takes a URL, a Request, a Response (or a Promise of one),
 * bytes or a compiled `WebAssembly.Module`. The bare `init(source)` works too.
 */
export function init(input?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;

/** Instantiates the module synchronously: `initSync({ module: bytesOrModule })` (or `initSync(bytesOrModule)`). */
export function initSync(input: { module: SyncInitInput } | SyncInitInput): InitOutput;
