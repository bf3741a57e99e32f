// The tree of the open session as outline rows in columns (typed arrays, cheap to send),
// made by the package (`Session.outline`: the order, the previews and each row's totals
// digest are the core's), and what the worker keeps of them to mark a branch and sum its
// totals (`v.rows`: ids, parent rows, digests, the row of each id).
import { checkpoint, progress } from './reply.js';

/** Rows the package describes between two progress reports (about 20 ms at 100 MB). */
const ROWS_PER_STEP = 2000;
/** How long the worker builds before it lets waiting messages in (each wait costs a few ms). */
const SLICE_MS = 100;

/**
 * The tree as outline rows in columns, depth first: ids, parent row, depth, flags (1 fork,
 * 2 first of siblings' branch, 4 last sibling), children count, end (the row after the
 * entry's subtree), kind (tag/class), preview text, labels.
 */
export async function buildRows(v, reqId) {
  progress(reqId, 'tree', 0, 0);
  // A piece at a time: the page shows "n of m entries" meanwhile.
  const b = v.session.outlineBuilder();
  let slice = performance.now();
  while (!b.step(v.session, ROWS_PER_STEP)) {
    progress(reqId, 'tree', b.done, b.rows); // posted at once, without a wait
    if (performance.now() - slice > SLICE_MS) {
      await checkpoint(reqId, 'The tree was stopped.');
      slice = performance.now();
    }
  }
  const o = b.finish();
  const { ids, parent, digests } = o;
  v.rows = { ids, parent, digests, index: new Map(ids.map((id, i) => [id, i])) };
  return {
    ids,
    texts: o.texts,
    parent: parent.slice(), // the page's copy (sent arrays are transferred)
    depth: o.depth,
    flags: o.flags,
    kids: o.kids,
    end: o.end,
    kind: o.kind,
    kindTable: o.kindTable,
    labels: o.labels,
  };
}
