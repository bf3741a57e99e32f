// What both apps do once the module is ready: open the sample session and show its context
// (in the page's <output>, and as window.__result for the test).
import { sample } from './sample.mjs';

export function show(ready, Session) {
  ready.then(() => {
    const context = Session.fromText(sample).context();
    document.querySelector('output').textContent = JSON.stringify(context);
    window.__result = context;
  }).catch((e) => {
    window.__result = { error: String(e?.stack ?? e) };
  });
}
