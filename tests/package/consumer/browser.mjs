// A page's script, bundled by esbuild for the browser: memory storage (nothing on disk).
import * as pkg from 'xcsh-session';
import { scenario } from './scenario.mjs';

try {
  window.__result = { inMemory: scenario(pkg, pkg.memoryStorage(), '/agent') };
} catch (e) {
  window.__result = { error: String(e?.stack ?? e) };
}
