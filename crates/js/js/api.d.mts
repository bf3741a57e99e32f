// The names `xcsh-session` exports under every condition (node.d.mts, browser.d.mts,
// inline.d.mts point here): a project type-checks the same whichever condition its
// resolution picks (`module: nodenext` picks `node` even for a browser build). A storage
// the host cannot have throws when called there: `nodeStorage` in a browser,
// `opfsStorage` in Node.
export * from './xcsh_session.js';
export { nodeStorage, nodeAsyncStorage } from './node-storage.mjs';
export { AsyncSession, type AsyncStorage } from './async-session.mjs';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';

/**
 * Resolves once the WebAssembly module is instantiated; in a browser, `await ready`
 * before the first call (the .wasm is fetched when the package is imported). In Node,
 * Deno and Bun it is resolved already: the module is ready once the import returns.
 */
export declare const ready: Promise<void>;
