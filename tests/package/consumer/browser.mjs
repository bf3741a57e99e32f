// A page's script, bundled by esbuild for the browser: memory storage (nothing on disk).
import * as pkg from 'xcsh-session';
import { scenario } from './scenario.mjs';

try {
  const inMemory = await scenario(pkg, pkg.Session, pkg.memoryStorage(), '/agent');
  // OPFS through its async API on the page's main thread: no worker, no mirror.
  const opfs = await scenario(pkg, pkg.AsyncSession, pkg.opfsStorage(), '/consumer/agent');
  window.__result = { inMemory, opfs };
} catch (e) {
  window.__result = { error: String(e?.stack ?? e) };
}
