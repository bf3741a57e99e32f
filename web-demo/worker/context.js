// The shown branch of the open session: its context (the package's, or a prefix of one
// built before), its header (thinking level, models, mode, service tier), its totals, and
// the windows of its messages the page asks for as the reader scrolls.
import * as pkg from '../pkg/xcsh_session.js';
import { sumDigests } from '../totals.js';
import { needView } from './view.js';

const MSG_CHUNK = 40;
const dec = new TextDecoder();

/** Moves the leaf to `leafId` and builds that branch's context; the first window of messages. */
export function select(v, leafId, where = 'start') {
  const s = v.session;
  if (leafId) s.branch(leafId);
  const leaf = s.leafId ?? null;
  const t0 = performance.now();
  const ctx = contextOf(v, leaf);
  v.messages = ctx.messages;
  v.ctxIds = ctx.ids;
  v.find = null; // the search's per-message parts, built again for this context
  const n = v.rows.ids.length;
  const mask = new Uint8Array(n);
  let onPath = 0;
  const path = [];
  for (let i = leaf === null ? -1 : v.rows.index.get(leaf) ?? -1; i >= 0 && onPath <= n; i = v.rows.parent[i]) {
    mask[i] = 1;
    onPath++;
    path.push(v.rows.digests[i]);
  }
  const count = v.messages.length;
  const win = where === 'end' ? [Math.max(0, count - MSG_CHUNK), count] : [0, Math.min(count, MSG_CHUNK)];
  return {
    leafId: leaf,
    count,
    onPath,
    meta: { ...ctx.meta, totals: sumDigests(path.reverse()) },
    how: ctx.how,
    ms: performance.now() - t0,
    pathMask: mask,
    win: { start: win[0], end: win[1], items: slice(v, win[0], win[1]) },
  };
}

const metaOf = (ctx) => ({ thinkingLevel: ctx.thinkingLevel, models: ctx.models, mode: ctx.mode, serviceTier: ctx.serviceTier });

/**
 * The context at `leaf` as {messages, ids, meta, how}. The package builds it (`exact`); a
 * context it built before (a "base", at most two are kept) is reused when `leaf` is on the
 * base's path with no compaction after it (`prefix`): the context is then the base's minus
 * the messages of the entries after `leaf` (a message depends on its entry only). That
 * keeps a click on a 100 MB session's main line from rebuilding (and re-sending to
 * JavaScript) a context of tens of megabytes.
 */
function contextOf(v, leaf) {
  const row = leaf === null ? -1 : v.rows.index.get(leaf) ?? -1;
  if (row >= 0) {
    for (const base of v.bases) {
      const ctx = prefixOf(v, base, row);
      if (ctx) return ctx;
    }
  }
  const s = v.session;
  // As bytes, decoded here: faster than the package's string for a context of tens of MB.
  const raw = JSON.parse(dec.decode(s.contextJsonBytes()));
  const messages = Array.isArray(raw.messages) ? raw.messages : [];
  const ids = s.contextEntryIds();
  const base = { row, messages, ids };
  // The first context (the session's leaf) stays; the latest other one is kept beside it.
  if (row >= 0) v.bases = [v.bases[0], base].filter(Boolean).slice(0, 2);
  return { messages, ids, meta: metaOf(raw), how: 'exact' };
}

function prefixOf(v, base, row) {
  const { parent, kind, tags, index } = v.rows;
  if (base.row < 0) return null;
  const after = new Uint8Array(parent.length);
  let r = base.row;
  while (r >= 0 && r !== row) {
    if (tags[kind[r]] === COMPACTION_TAG) return null;
    after[r] = 1;
    r = parent[r];
  }
  if (r !== row) return null; // not on the base's path
  let k = base.ids.length;
  while (k > 0 && after[index.get(base.ids[k - 1]) ?? 0]) k--;
  return { messages: base.messages.slice(0, k), ids: base.ids.slice(0, k), meta: metaAt(v, row), how: 'prefix' };
}

/** describe.js's tags of the entries the conversation header reads (see metaAt). */
const COMPACTION_TAG = 'compact';
const LAST_ONE_TAGS = new Set(['think', 'tier', 'mode', 'asst']);
const EVERY_TAGS = new Set(['model']);

/**
 * The header of the conversation at `row` (thinking level, models, mode, service tier), by
 * the package: the context of a small session made of the entries on the path that set
 * them (the last thinking, tier and mode change and assistant message, every model change),
 * in path order.
 */
function metaAt(v, row) {
  const { parent, kind, tags, ids } = v.rows;
  const seen = new Set();
  const keep = [];
  for (let r = row; r >= 0; r = parent[r]) {
    const tag = tags[kind[r]];
    if (EVERY_TAGS.has(tag)) keep.push(r);
    else if (LAST_ONE_TAGS.has(tag) && !seen.has(tag)) {
      seen.add(tag);
      keep.push(r);
    }
  }
  const s = v.session;
  const lines = [JSON.stringify({ ...s.header(), version: 3 })];
  let prev = null;
  for (let i = keep.length - 1; i >= 0; i--) {
    const e = s.entry(ids[keep[i]]);
    e.parentId = prev;
    prev = e.id;
    lines.push(JSON.stringify(e));
  }
  return metaOf(JSON.parse(pkg.buildSessionContextJson(lines.join('\n'))));
}

/** Messages `start`..`end` of view `v`'s context, each with its entry id. */
function slice(v, start, end) {
  const out = [];
  for (let i = Math.max(0, start); i < Math.min(end, v.messages.length); i++) out.push({ m: v.messages[i], id: v.ctxIds[i] ?? null });
  return out;
}

/** The `select` request: shows the branch ending at entry `id`, its last window of messages by default. */
export function selectBranch({ id, where }) {
  return select(needView(), id, where ?? 'end');
}

/** The `messages` request: a window of the shown branch's messages. */
export function messages({ start, end }) {
  const v = needView();
  return { start, end: Math.min(end, v.messages.length), items: slice(v, start, end) };
}
