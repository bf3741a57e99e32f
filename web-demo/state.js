// Shared state of the page: the open session as the worker described it, and the viewer's constants.

export const DEFAULT_SAMPLE = 'demo-branches.jsonl';
export const TREE_ROW_H = 26; // px; keep in sync with --tree-row-h in style.css
export const TREE_OVERSCAN = 12;
export const MSG_CHUNK = 40; // messages per window step (the worker's first window has the same size)
export const CLAMP_LINES = 24; // long text blocks show this many lines until expanded
export const CLAMP_CHARS = 4000;
export const HIGHLIGHT_MAX = 400_000; // raw JSON above this size is shown without colours
export const SOURCE_NAMES = { samples: 'sample', opened: 'opened folder', opfs: 'browser storage', memory: 'memory' };

/** Everything about the open session, as the worker described it. */
export const state = {
  view: null, // {source, writable, persistent, path, name, size, loadMs, header, version, report, warnings, sessionId, file}
  rows: null, // columns: ids, texts, parent, depth, flags, kids, kind, kindTable; null while the tree is built
  labels: new Map(), // row index → label
  rowIndex: new Map(), // entry id → row index
  selected: null, // the leaf of the shown branch (the session's leaf)
  pending: null, // a clicked entry whose branch is on its way
  inspected: null, // the entry shown in the inspector
  pathMask: new Uint8Array(0), // 1 for rows on the root..selected path
  onPath: 0,
  count: 0, // messages shown of the branch (its context, or its whole history)
  history: false, // showing the branch's whole history (compactions inline), not the model's context
  meta: {},
  win: { start: 0, end: 0 }, // rendered message window [start, end)
  selGen: 0, // bumps on each selection, so late answers are dropped
  loadGen: 0,
  sources: [],
};

/**
 * The page's events, so that a view follows another without importing it (the modules'
 * imports make no circle, tests/node/web-demo-modules.test.mjs):
 * - `session` when a session is shown, or its new version after an edit (`state.view`,
 *   `state.rows`); the session bar follows it.
 * - `tree` when the open session's tree rows are there (`state.rows`; a session is shown
 *   before its tree is built, see `whenTree`), or could not be built (`state.rows` still
 *   null); the tree and the branch's totals follow it.
 * - `selection` when a branch is shown (`state.selected`, `count`, `meta`; `detail`:
 *   `{leafId, win, conv}`, the worker's first window of messages and where the conversation
 *   starts); the conversation's header line and the branch's totals (sessionbar.js), the
 *   conversation and the inspector follow it, in that order (app.js wires them so).
 * - `inspect` when an entry is shown in the inspector without changing the branch
 *   (`detail`: `{id}`).
 * - `window` after the conversation shows a new window of messages (a branch opened or
 *   selected, a jump); find.js, outline.js, position.js, tabs.js and location.js follow it.
 * - `load-end` when the last opening asked for is over (shown, failed or cancelled); the
 *   picker fills its cache then.
 */
export const events = new EventTarget();

/**
 * Resolves once the open session's tree rows are there (`state.rows`), or its building
 * failed (then `state.rows` is still null): what needs the rows waits for them.
 */
export function whenTree() {
  if (state.rows) return Promise.resolve();
  return new Promise((resolve) => events.addEventListener('tree', () => resolve(), { once: true }));
}

/** Whether entry `id` is in the open session's tree (yes for now while it is being built). */
export function inTree(id) {
  return Boolean(id) && (!state.rows || state.rowIndex.has(id));
}
