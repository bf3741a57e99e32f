// The shown branch of the open session: its number of messages, its header (thinking
// level, models, mode, service tier), its totals, and the windows of its messages the page
// asks for as the reader scrolls, each made by the package when asked (nothing holds the
// branch's messages in JavaScript). The messages shown are the model's context, or the
// branch's whole history (`v.history`: every message from the root, each compaction where
// it happened, the messages it replaced included).
import { digestOf, sumDigests } from '../totals.js';
import { needView } from './view.js';

const MSG_CHUNK = 40;

/**
 * Moves the leaf to `leafId`; the branch's message count, header and first window of
 * messages. Nothing holds the branch's messages: the package counts them (walking the
 * path) and makes each window the page asks for.
 */
export function select(v, leafId, where = 'start') {
  const s = v.session;
  // The leaf it is at already: no branch() (a lazily opened session would read its file).
  if (leafId && leafId !== s.leafId) s.branch(leafId);
  const leaf = s.leafId ?? null;
  const t0 = performance.now();
  const count = countOf(v);
  v.outline = null; // the outline of the branch shown before
  v.tools = null;
  const { pathMask, onPath, totals } = branchMarks(v, leaf);
  const win = where === 'end' ? [Math.max(0, count - MSG_CHUNK), count] : [0, Math.min(count, MSG_CHUNK)];
  return {
    leafId: leaf,
    count,
    onPath,
    meta: { ...metaOf(s.contextState()), totals },
    how: 'window',
    history: Boolean(v.history),
    ms: performance.now() - t0,
    pathMask,
    win: { start: win[0], end: win[1], items: windowOf(v, win[0], win[1]) },
  };
}

/**
 * What the tree rows say of the branch ending at `leaf`: its rows (`pathMask`, 1 for each
 * row on it), their number and its totals; nothing (an empty mask, null totals) while the
 * tree is not built yet (`v.rows` null, see worker/tree.js).
 */
export function branchMarks(v, leaf) {
  if (!v.rows) return { pathMask: new Uint8Array(0), onPath: 0, totals: null };
  const n = v.rows.ids.length;
  const row = leaf === null ? -1 : v.rows.index.get(leaf) ?? -1;
  const pathMask = new Uint8Array(n);
  let onPath = 0;
  const path = [];
  for (let i = row; i >= 0 && onPath <= n; i = v.rows.parent[i]) {
    pathMask[i] = 1;
    onPath++;
    path.push(digestOf(v.rows.digests, i));
  }
  return { pathMask, onPath, totals: sumDigests(path.reverse()) };
}

const metaOf = (ctx) => ({ thinkingLevel: ctx.thinkingLevel, models: ctx.models, mode: ctx.mode, serviceTier: ctx.serviceTier });

/** How many messages view `v` shows of its branch (its context, or its whole history). */
export function countOf(v) {
  return v.history ? v.session.historyMessageCount() : v.session.contextMessageCount();
}

/** Messages `start`..`end` of what view `v` shows, each with its entry id, made by the package. */
export function windowOf(v, start, end) {
  const [a, b] = [Math.max(0, start), Math.max(0, end)];
  const w = v.history ? v.session.historyWindow(a, b) : v.session.contextWindow(a, b);
  return w.messages.map((m, i) => ({ m, id: w.ids[i] ?? null }));
}

/**
 * The `history` request: shows the branch's whole history (`on`) or the model's context
 * again; `index` is where entry `at` (a compaction) is in the new list (null: not in it).
 */
export function showHistory({ on, at = null }) {
  const v = needView();
  v.history = Boolean(on);
  const sel = select(v, null, 'end');
  let index = null;
  if (at && v.history) {
    // The history before the compaction is the history of the branch ending at its parent.
    const parent = v.session.entry(at)?.parentId ?? null;
    index = parent === null ? 0 : v.session.historyMessageCount(parent);
  } else if (at) {
    index = v.session.contextWindow(0, 1).ids[0] === at ? 0 : null;
  }
  return { ...sel, index };
}

/** The `select` request: shows the branch ending at entry `id`, its last window of messages by default. */
export function selectBranch({ id, where }) {
  return select(needView(), id, where ?? 'end');
}

/** The `messages` request: a window of the shown branch's messages. */
export function messages({ start, end }) {
  const items = windowOf(needView(), start, end);
  return { start, end: Math.max(0, start) + items.length, items };
}
