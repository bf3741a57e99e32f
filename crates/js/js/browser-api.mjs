// What the browser entries (browser.mjs, inline.mjs) export besides `ready`: the
// wasm-bindgen API, the storages that work in a browser, and `nodeStorage` /
// `nodeAsyncStorage`, which throw here, so that every condition of `xcsh-session` exports
// the same names (a project type-checked against the `node` condition, as `module:
// nodenext` does, still builds for the browser). Nothing here loads the module.
export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession } from './async-session.mjs';

function needsNodeFs(name) {
  return () => {
    throw new Error(`xcsh-session: ${name}() needs node:fs, which a browser has not; use opfsStorage() (with AsyncSession) or memoryStorage()`);
  };
}

export const nodeStorage = needsNodeFs('nodeStorage');
export const nodeAsyncStorage = needsNodeFs('nodeAsyncStorage');
