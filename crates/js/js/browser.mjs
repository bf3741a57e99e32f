// The package's entry for browsers and bundlers (`import ... from 'xcsh-session'` with the
// `browser` or `default` condition). Importing it starts fetching the WebAssembly module
// from beside this file (`new URL(..., import.meta.url)`, which Vite, webpack 5 and Parcel
// turn into an asset); `ready` resolves once it is instantiated: `await ready` before the
// first call. No top-level await, so bundlers whose default target lacks it (Vite 5 and 6)
// take it as it is. A bundler that leaves that URL alone (esbuild, Rollup) needs the .wasm
// copied beside the bundle, or `xcsh-session/inline`, which carries the module inside.
import init from './xcsh_session.js';

export * from './browser-api.mjs';

/** Resolves once the WebAssembly module is instantiated; rejects, saying why, if it cannot be. */
export const ready = load();

async function load() {
  const url = new URL('./xcsh_session_bg.wasm', import.meta.url);
  let response = await fetch(url);
  // Vite's dev server before Vite 8 copies this file into node_modules/.vite/deps/ when it
  // pre-bundles dependencies, but not the .wasm: it is still served from the package's own
  // directory (Vite 8 rewrites the URL so itself).
  const vite = url.href.replace('/node_modules/.vite/deps/', '/node_modules/xcsh-session/');
  if (!isWasm(response) && vite !== url.href) response = await fetch(vite);
  if (!isWasm(response)) {
    throw new Error(`xcsh-session: no WebAssembly module at ${response.url || url} (HTTP ${response.status}, ${response.headers.get('content-type') || 'no content type'}): `
      + 'copy node_modules/xcsh-session/xcsh_session_bg.wasm beside the bundle, or import xcsh-session/inline');
  }
  await init({ module_or_path: response });
}

/** Not an error page, nor a single-page app's index.html served for any path. */
function isWasm(response) {
  return response.ok && !/^text\//.test(response.headers.get('content-type') ?? '');
}
