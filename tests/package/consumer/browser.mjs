// A page's script, bundled by esbuild for the browser: memory storage (nothing on disk).
import * as pkg from 'xcsh-session';
import { scenario } from './scenario.mjs';
import { ranges } from './ranges.mjs';

try {
  await pkg.ready;
  const inMemory = await scenario(pkg, pkg.Session, pkg.memoryStorage(), '/agent');
  // OPFS through its async API on the page's main thread: no worker, no mirror.
  const opfs = await scenario(pkg, pkg.AsyncSession, pkg.opfsStorage(), '/consumer/agent');
  const opfsRanges = await ranges(pkg.opfsStorage(), '/consumer/ranges');
  const memoryRanges = await ranges(pkg.memoryStorage(), '/ranges');
  // The names of every condition's entry are the same; node:fs is not here.
  const names = Object.keys(pkg).sort();
  let nodeStorage;
  try {
    pkg.nodeStorage();
  } catch (e) {
    nodeStorage = e.message;
  }
  window.__result = { inMemory, opfs, ranges: { inMemory: memoryRanges, opfs: opfsRanges }, names, nodeStorage };
} catch (e) {
  window.__result = { error: String(e?.stack ?? e) };
}
