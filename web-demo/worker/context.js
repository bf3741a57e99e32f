// The shown branch of the open session: its number of messages, its header (thinking
// level, models, mode, service tier), its totals, and the windows of its messages the page
// asks for as the reader scrolls, each made by the package when asked (nothing holds the
// branch's messages in JavaScript).
import { sumDigests } from '../totals.js';
import { needView } from './view.js';

const MSG_CHUNK = 40;

/**
 * Moves the leaf to `leafId`; the branch's message count, header and first window of
 * messages. Nothing holds the branch's messages: the package counts them (walking the
 * path) and makes each window the page asks for.
 */
export function select(v, leafId, where = 'start') {
  const s = v.session;
  if (leafId) s.branch(leafId);
  const leaf = s.leafId ?? null;
  const t0 = performance.now();
  const count = s.contextMessageCount();
  v.outline = null; // the outline of the branch shown before
  const n = v.rows.ids.length;
  const row = leaf === null ? -1 : v.rows.index.get(leaf) ?? -1;
  const mask = new Uint8Array(n);
  let onPath = 0;
  const path = [];
  for (let i = row; i >= 0 && onPath <= n; i = v.rows.parent[i]) {
    mask[i] = 1;
    onPath++;
    path.push(v.rows.digests[i]);
  }
  const win = where === 'end' ? [Math.max(0, count - MSG_CHUNK), count] : [0, Math.min(count, MSG_CHUNK)];
  return {
    leafId: leaf,
    count,
    onPath,
    meta: { ...metaOf(s.contextState()), totals: sumDigests(path.reverse()) },
    how: 'window',
    ms: performance.now() - t0,
    pathMask: mask,
    win: { start: win[0], end: win[1], items: windowOf(v, win[0], win[1]) },
  };
}

const metaOf = (ctx) => ({ thinkingLevel: ctx.thinkingLevel, models: ctx.models, mode: ctx.mode, serviceTier: ctx.serviceTier });

/** Messages `start`..`end` of view `v`'s branch, each with its entry id, made by the package. */
export function windowOf(v, start, end) {
  const w = v.session.contextWindow(Math.max(0, start), Math.max(0, end));
  return w.messages.map((m, i) => ({ m, id: w.ids[i] ?? null }));
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
