// The `tree` request: the open session's tree rows, built after the session is shown (the
// first screen does not wait for them), with what they say of the branch shown then (its
// rows, their number, its totals).
import { buildRows } from './rows.js';
import { branchMarks } from './context.js';
import { needView } from './view.js';
import { readFacts } from './open.js';

/**
 * The tree rows of view `gen` (the page's `view.gen`), with progress reports; `stale` when
 * another view is open now (the page has moved on and drops the answer).
 */
export async function tree({ gen }, reqId) {
  const v = needView();
  if (v.gen !== gen) return { gen: v.gen, stale: true };
  const t0 = performance.now();
  const rows = await buildRows(v, reqId);
  v.timings.tree = performance.now() - t0;
  const leafId = v.session.leafId ?? null;
  // A lazy session's entries were read for the tree: what the page shows of it now.
  return { gen, ms: v.timings.tree, rows, leafId, facts: readFacts(v), ...branchMarks(v, leafId) };
}
