// The package's entry for browsers and bundlers (`import ... from 'xcsh-session'` with the
// `browser` condition): the WebAssembly module is fetched from beside this file
// (`new URL(..., import.meta.url)`, which Vite, webpack 5, Parcel and Rollup's URL plugin
// turn into an asset) with a top-level await, so every export is ready once the import
// returns. A bundler that leaves that URL alone (esbuild) needs the .wasm copied beside
// the bundle, or `xcsh-session/slim` and an explicit `await init(source)`.
import init from './xcsh_session.js';

await init({ module_or_path: new URL('./xcsh_session_bg.wasm', import.meta.url) });

export * from './xcsh_session.js';
export { memoryStorage, MemoryStorage } from './memory-storage.mjs';
export { opfsStorage } from './opfs-storage.mjs';
export { AsyncSession } from './async-session.mjs';
