// `xcsh-session/slim`: the package without automatic initialization, for hosts that load
// the WebAssembly module themselves: `await init()` (fetches the .wasm beside this file),
// `await init({ module_or_path: urlOrResponseOrBytes })`, or `initSync({ module: bytes })`
// (a worker, or bytes inlined by a bundler). Call one of them before anything else.
// The bare forms `init(urlOrBytes)` and `initSync(bytes)`, which wasm-bindgen warns are
// deprecated, still work, without the warning.
import wasmInit, { initSync as wasmInitSync } from './xcsh_session.js';

export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession } from './async-session.mjs';

const isOptions = (input) => input != null && Object.getPrototypeOf(input) === Object.prototype;

/** Fetches (a URL, a Request) or compiles (a Response, bytes, a Module) and instantiates the module. */
export function init(input) {
  return wasmInit(input === undefined || isOptions(input) ? input : { module_or_path: input });
}

/** Instantiates the module from bytes or a compiled `WebAssembly.Module`, synchronously. */
export function initSync(input) {
  return wasmInitSync(isOptions(input) ? input : { module: input });
}
