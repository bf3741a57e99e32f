// `xcsh-session/inline`: the browser entry with the WebAssembly module inside the
// JavaScript (gzipped, base64: about 460 kB), for bundlers that emit no asset for
// `new URL(..., import.meta.url)` (esbuild, Rollup without a plugin) and hosts that serve
// no .wasm file. The same API as `xcsh-session` in a browser: `await ready` first.
import init from './xcsh_session.js';
import { wasmGzipBase64 } from './inline-wasm.mjs';

export * from './browser-api.mjs';

/** Resolves once the WebAssembly module is instantiated. */
export const ready = load();

async function load() {
  const gzipped = Uint8Array.from(atob(wasmGzipBase64), (c) => c.charCodeAt(0));
  const wasm = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream('gzip'));
  // A Response typed application/wasm compiles while it is decompressed.
  await init({ module_or_path: new Response(wasm, { headers: { 'content-type': 'application/wasm' } }) });
}
