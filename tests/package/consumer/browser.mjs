// A page's script, bundled by esbuild for the browser: memory storage (nothing on disk).
import * as pkg from 'xcsh-session';
import { asyncScenario, scenario } from './scenario.mjs';

try {
  const inMemory = scenario(pkg, pkg.memoryStorage(), '/agent');
  // OPFS through its async API on the page's main thread: no worker, no mirror.
  const opfs = await asyncScenario(pkg, pkg.opfsStorage(), '/consumer/agent');
  window.__result = { inMemory, opfs };
} catch (e) {
  window.__result = { error: String(e?.stack ?? e) };
}
