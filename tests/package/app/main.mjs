// A browser app as a user writes it: the default entry, no bundler configuration. It opens
// a sample session and prints its context. No top-level await here either: Vite 5 and 6
// refuse it in their default build target.
import { ready, Session } from 'xcsh-session';
import { sample } from './sample.mjs';

ready.then(() => {
  const context = Session.fromText(sample).context();
  document.querySelector('output').textContent = JSON.stringify(context);
  window.__result = context;
}).catch((e) => {
  window.__result = { error: String(e?.stack ?? e) };
});
