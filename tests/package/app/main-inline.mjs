// The same app over `xcsh-session/inline`: the .wasm inside the JavaScript, for bundlers
// that emit no asset for it (esbuild, Rollup).
import { ready, Session } from 'xcsh-session/inline';
import { sample } from './sample.mjs';

ready.then(() => {
  const context = Session.fromText(sample).context();
  document.querySelector('output').textContent = JSON.stringify(context);
  window.__result = context;
}).catch((e) => {
  window.__result = { error: String(e?.stack ?? e) };
});
