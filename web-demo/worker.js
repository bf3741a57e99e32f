// The viewer's worker: runs the xcsh-session wasm package off the main thread, owns the
// storages, and answers the page (app.js) with small, ready-to-render pieces.
//
// Storages ("sources"), each an agent directory (`<agentDir>/sessions/--<cwd>--/*.jsonl`):
//   samples  the bundled samples/agent directory, read-only
//   opened   a folder the user opened (directory picker, <input webkitdirectory>, drop), read-only
//   opfs     the browser storage: OPFS through the package's async opfsStorage() under a
//            StagedStorage (opfs-source.js): kept, and never mirrored in memory
//   memory   a writable in-memory directory, gone on reload ("don't keep")
// Sessions of read-only sources are opened with Session.fromText (never written); edits
// happen on copies imported into opfs or memory, opened with Session.open.
//
// The prompt history: the package's PromptHistory over SQLite (wasm) on OPFS
// (history-store.js), or over the same database in memory where that cannot start
// (history* operations).
//
// Protocol: the page posts {id, op, args}; the worker answers {id, ok, result} or
// {id, ok: false, error: {message, kind, code}}, and may post {type: 'progress', id, ...}
// before. Requests run one at a time, in order; for opfs, each request's writes are on
// disk (journal committed) before its answer is posted, and a request that only reads and
// needed something not loaded yet is run again once that is loaded.
import init, * as pkg from './pkg/xcsh_session.js';
import { MemoryStorage, baseName, normPath } from './pkg/memory-storage.mjs';
import { openOpfsSource } from './opfs-source.js';
import { describeEntry, PREVIEW_CHARS } from './describe.js';
import { entryDigest, sumDigests } from './totals.js';
import { errMsg } from './errors.js';
import { openMemoryHistory, openSqliteHistory } from './history-store.js';

const MSG_CHUNK = 40;
const OPFS_ROOT = '/xcsh';
const LOCK_NAME = 'xcsh-session-viewer-opfs';
const enc = new TextEncoder();
const dec = new TextDecoder();

/** key → {key, label, storage, agentDir, writable, persistent, available, note} */
const sources = new Map([
  ['samples', { key: 'samples', label: 'Samples', storage: new MemoryStorage({ readOnly: true }), agentDir: '/samples/agent', writable: false, persistent: false, available: false }],
  ['opened', { key: 'opened', label: 'Opened folder', storage: null, agentDir: '/opened/agent', writable: false, persistent: false, available: false, note: 'Open a folder: your agent directory (~/.xcsh/agent), its sessions/ directory or one project directory.' }],
  ['opfs', { key: 'opfs', label: 'Browser storage', storage: null, agentDir: `${OPFS_ROOT}/agent`, writable: true, persistent: true, available: false }],
  ['memory', { key: 'memory', label: 'Memory (not kept)', storage: new MemoryStorage(), agentDir: '/memory/agent', writable: true, persistent: false, available: true }],
]);
let opfsReady = null;
/** The prompt history: {history: PromptHistory, store, info}; see openHistory(). */
let historyReady = null;

/** The open session and what the page has been told about it. */
let view = null;

// ---------------------------------------------------------------- messaging

let queue = Promise.resolve();
self.onmessage = (ev) => {
  const { id, op, args } = ev.data ?? {};
  if (op === 'cancel') {
    // Not queued: the load it stops is running (see checkpoint).
    cancelled.add(args?.loadId);
    self.postMessage({ id, ok: true, result: { cancelled: true } });
    return;
  }
  if (args?.loadId !== undefined) loadOf.set(id, args.loadId);
  queue = queue.then(() => run(id, op, args ?? {})).finally(() => {
    cancelled.delete(loadOf.get(id));
    loadOf.delete(id);
  });
};

/** Requests that write nothing: run again when they needed browser storage not loaded yet. */
const RERUNNABLE = new Set(['sources', 'list', 'openPath', 'resolveUrl', 'entry', 'select', 'messages']);

async function run(id, op, args) {
  const handler = HANDLERS[op];
  try {
    if (!handler) throw new Error(`unknown operation ${op}`);
    let out;
    for (let pass = 0; ; pass++) {
      const opfs = sources.get('opfs').storage;
      opfs?.begin();
      let error;
      try {
        out = await handler(args, id);
      } catch (e) {
        error = e;
      }
      const missed = opfs ? [...opfs.misses] : [];
      // Whatever the call wrote (including a released writer lock) is on disk before the answer.
      await commit(sources.get('opfs'));
      if (missed.length && RERUNNABLE.has(op) && pass < 8) {
        await opfs.load(missed);
        continue;
      }
      if (error) throw error;
      break;
    }
    const transfer = [];
    collectTransfer(out, transfer, 0);
    self.postMessage({ id, ok: true, result: out }, transfer);
  } catch (e) {
    self.postMessage({ id, ok: false, error: { message: errMsg(e), kind: e?.kind, code: e?.code } });
  }
}

function collectTransfer(value, out, depth) {
  if (!value || typeof value !== 'object' || depth > 3) return;
  if (ArrayBuffer.isView(value)) {
    if (!out.includes(value.buffer)) out.push(value.buffer);
    return;
  }
  if (Array.isArray(value)) return;
  for (const v of Object.values(value)) collectTransfer(v, out, depth + 1);
}

function fail(message, kind) {
  const e = new Error(message);
  if (kind) e.kind = kind;
  return e;
}

/** Progress reports for request `id`, at most every 40 ms (and always the last). */
function progress(id, phase, done = 0, total = 0) {
  const now = performance.now();
  const p = progress.last ?? (progress.last = { t: 0, phase: '' });
  if (phase === p.phase && now - p.t < 40 && done < total) return;
  p.t = now;
  p.phase = phase;
  self.postMessage({ type: 'progress', id, phase, done, total });
}

// ---------------------------------------------------------------- start-up

async function loadSamples() {
  const src = sources.get('samples');
  try {
    const res = await fetch(new URL('./samples/index.json', import.meta.url));
    if (!res.ok) throw new Error(`samples/index.json: HTTP ${res.status}`);
    const list = await res.json();
    const agent = list.find((s) => s && typeof s.agentDir === 'string' && Array.isArray(s.files));
    if (!agent) return;
    src.label = agent.title ?? src.label;
    await Promise.all(
      agent.files.map(async (f) => {
        const rel = normPath(f.path);
        const url = new URL(`./samples/${agent.agentDir}${rel.split('/').map(encodeURIComponent).join('/')}`, import.meta.url);
        const r = await fetch(url);
        if (!r.ok) throw new Error(`${url.pathname}: HTTP ${r.status}`);
        src.storage.put(`${src.agentDir}${rel}`, new Uint8Array(await r.arrayBuffer()), Date.parse(f.mtime) || 0);
      }),
    );
    src.available = true;
  } catch (e) {
    src.note = `cannot load the sample agent directory: ${errMsg(e)}`;
  }
}

/** Holds the OPFS lock for the worker's lifetime; false when another tab keeps it. */
function acquireLock() {
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve) => {
    navigator.locks
      .request(LOCK_NAME, { signal: AbortSignal.timeout(4000) }, () => {
        resolve(true);
        return new Promise(() => {});
      })
      .catch(() => resolve(false));
  });
}

async function loadOpfs() {
  const src = sources.get('opfs');
  try {
    if (!navigator.storage?.getDirectory) throw new Error('this browser has no Origin Private File System');
    const locked = await acquireLock();
    const opfs = openOpfsSource({ root: OPFS_ROOT });
    await opfs.disk.mkdirAll(OPFS_ROOT);
    src.loaded = await opfs.load();
    src.storage = opfs.storage;
    src.disk = opfs.disk;
    opfs.state.exclusive = locked;
    if (!locked) {
      opfs.state.readOnly = true;
      src.writable = false;
      src.note = 'Another tab of the viewer is using the browser storage: read-only here.';
    }
    src.available = true;
  } catch (e) {
    src.available = false;
    src.writable = false;
    src.note = `Browser storage unavailable: ${errMsg(e)}`;
  }
}

async function source(key) {
  const src = sources.get(key);
  if (!src) throw fail(`unknown source ${key}`, 'invalidInput');
  if (key === 'opfs') await opfsReady;
  if (!src.available || !src.storage) throw fail(src.note ?? `${src.label} is not available`, 'notFound');
  return src;
}

function sourceInfo(src) {
  const sessions = src.available && src.storage ? pkg.sessionFilePaths(src.storage, src.agentDir).length : 0;
  return {
    key: src.key,
    label: src.label,
    writable: src.writable,
    persistent: src.persistent,
    available: src.available,
    note: src.note ?? null,
    sessions,
    bytes: src.available && src.storage ? src.storage.totalBytes() : 0,
  };
}

async function commit(src) {
  if (src.disk && src.storage) await src.storage.commit();
}

/** Loads what a request reads whole from the browser storage (elsewhere it is all in memory). */
async function prepare(src, wanted) {
  if (src.disk) await src.storage.load(src.storage.unloaded(wanted));
}

// ---------------------------------------------------------------- opening sessions

/** The page's ids of the loads it cancelled, and the load id of each request; a load looks between its phases. */
const cancelled = new Set();
const loadOf = new Map();

/**
 * Lets waiting messages in (a cancel), then stops load `reqId` if the page cancelled it.
 * The parse itself is one call into the package and cannot be stopped halfway.
 */
async function checkpoint(reqId) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (loadOf.has(reqId) && cancelled.has(loadOf.get(reqId))) throw fail('The opening was cancelled.', 'cancelled');
}

/** Opens a session read-only from its text (samples, opened files, large files). */
async function viewFromText(text, { src = null, path = null, name, size, reqId, t0, origin = 'file' }) {
  const options = { onProgress: (done, total) => progress(reqId, 'parse', done, total) };
  if (src) {
    options.storage = src.storage;
    options.agentDir = src.agentDir;
  }
  await checkpoint(reqId); // cancelled while the file was read
  const tParse = performance.now();
  const session = pkg.Session.fromText(text, options);
  const parse = performance.now() - tParse;
  // Nothing read as a header and no entry at all: not a session file (a plain text file,
  // say). Shown as an error, not as a session with an invented id and date.
  const headerProblem = session.leafId == null ? session.report().headerProblem : null;
  if (headerProblem) {
    session.free();
    throw fail(`${name} is not a session file: ${headerProblem}`, 'invalidInput');
  }
  return setView({ session, src, path, name, size, t0, reqId, text: src ? null : text, origin, timings: { parse } });
}

/** Opens a session of a writable source for editing (migrates an old file: it is a copy). */
async function viewWritable(src, path, reqId, t0 = performance.now()) {
  progress(reqId, 'open', 0, 0);
  await prepare(src, [{ op: 'read', path }, { op: 'read', path: `${path}.lock` }]);
  const session = pkg.Session.open(src.storage, path, { agentDir: src.agentDir });
  session.close(); // release the writer lock between requests (a migration may have taken it)
  await commit(src);
  return setView({ session, src, path, name: baseName(path), size: src.storage.stat(path).size, t0, reqId, timings: { parse: performance.now() - t0 } });
}

/**
 * Makes `session` the open view once its tree and context are built; until then (and when
 * the load is cancelled) the previous view stays open and usable.
 */
async function setView({ session, src, path, name, size, t0, reqId, text = null, origin = null, timings = {} }) {
  const loadMs = performance.now() - t0;
  const next = { session, src, path, name, size, loadMs, text, origin: origin ?? src?.key ?? 'file', rows: null, messages: [], ctxIds: [], bases: [], timings };
  let out;
  try {
    out = await openPayload(next, reqId, 'start');
  } catch (e) {
    if (view?.session !== session) session.free();
    throw e;
  }
  if (view && view.session !== session) {
    try {
      view.session.free();
    } catch {
      /* already freed */
    }
  }
  view = next;
  return out;
}

/** Everything the page needs to show view `v`, with the leaf's branch selected. */
async function openPayload(v, reqId, where = 'start', leafId = undefined) {
  progress(reqId, 'tree', 0, 0);
  let t = performance.now();
  const rows = await buildRows(v, reqId);
  v.timings.tree = performance.now() - t;
  await checkpoint(reqId);
  progress(reqId, 'context', 0, 0);
  t = performance.now();
  const leaf = leafId !== undefined ? leafId : v.session.leafId ?? (rows.ids.length ? rows.ids[rows.ids.length - 1] : null);
  const sel = select(v, leaf, where);
  v.timings.context = performance.now() - t;
  const s = v.session;
  const header = s.header();
  const report = s.report();
  const warnings = s.warnings();
  return {
    view: {
      source: v.src?.key ?? null,
      origin: v.origin,
      sourceLabel: v.src?.label ?? null,
      writable: Boolean(v.src?.writable),
      persistent: Boolean(v.src?.persistent),
      path: v.path,
      relPath: v.src && v.path ? v.path.slice(v.src.agentDir.length + 1) : null,
      name: v.name,
      size: v.size,
      loadMs: v.loadMs,
      timings: { ...v.timings },
      header,
      version: s.versionOnDisk,
      title: s.displayTitle(80),
      report,
      warnings,
      sessionId: s.sessionId,
      file: s.file ?? null,
    },
    rows,
    sel,
  };
}

/** Subtree sizes (entries), bottom-up without recursion: a fork lists its smaller branches first. */
function subtreeSizes(roots) {
  const order = [];
  const stack = [...roots];
  while (stack.length) {
    const node = stack.pop();
    if (!node?.entry) continue;
    order.push(node);
    if (Array.isArray(node.children)) for (const c of node.children) stack.push(c);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i];
    let size = 1;
    if (Array.isArray(node.children)) for (const c of node.children) size += c?.size ?? 0;
    node.size = size;
  }
}

const bySize = (a, b) => (a?.size ?? 0) - (b?.size ?? 0);

/**
 * The tree as outline rows in columns (cheap to send), depth first: ids, parent row, depth,
 * flags (1 fork, 2 first of siblings' branch, 4 last sibling), children count, end (the row
 * after the entry's subtree), kind (tag/class), preview text, labels. At a fork the smaller
 * branches come first, so a side branch is listed right under its branch point and the
 * longest line goes on below it. Iterative: linear sessions nest thousands deep.
 */
async function buildRows(v, reqId) {
  // Previews and totals read no string past its first PREVIEW_CHARS characters: the
  // outline cuts the rest (a real 100 MB session: 104 MB of tree JSON → 47 MB).
  const json = v.session.treeJson(PREVIEW_CHARS);
  await checkpoint(reqId);
  const roots = JSON.parse(json);
  await checkpoint(reqId);
  subtreeSizes(roots);
  const ids = [];
  const texts = [];
  const kindsOf = new Map();
  const kindTable = [];
  const parent = [];
  const depth = [];
  const flags = [];
  const kids = [];
  const end = [];
  const kind = [];
  const labels = [];
  const digests = []; // per row: what the session totals need (totals.js)
  const stack = [];
  const pushKids = (list, d, fork, parentRow) => {
    const sorted = list.length > 1 ? list.slice().sort(bySize) : list;
    for (let i = sorted.length - 1; i >= 0; i--) stack.push({ node: sorted[i], depth: d, branchStart: fork, last: i === sorted.length - 1, parentRow });
  };
  pushKids(roots, 0, roots.length > 1, -1);
  while (stack.length) {
    const { node, depth: d, branchStart, last, parentRow } = stack.pop();
    if (!node || !node.entry) continue;
    const children = Array.isArray(node.children) ? node.children : [];
    const fork = children.length > 1;
    const row = ids.length;
    if ((row & 32767) === 32767) await checkpoint(reqId);
    const { tag, cls, text } = describeEntry(node.entry);
    const k = `${tag}\u0000${cls}`;
    let ki = kindsOf.get(k);
    if (ki === undefined) {
      ki = kindTable.length;
      kindsOf.set(k, ki);
      kindTable.push([tag, cls]);
    }
    ids.push(String(node.entry.id));
    texts.push(text);
    parent.push(parentRow);
    depth.push(d);
    flags.push((fork ? 1 : 0) | (branchStart ? 2 : 0) | (last ? 4 : 0));
    kids.push(children.length);
    end.push(row + node.size);
    kind.push(ki);
    digests.push(entryDigest(node.entry));
    if (node.label !== undefined && node.label !== null) labels.push([row, String(node.label)]);
    node.entry = null; // let the big tree go as we walk it
    pushKids(children, fork ? d + 1 : d, fork, row);
  }
  const kindArr = Uint16Array.from(kind);
  v.rows = { ids, digests, parent: Int32Array.from(parent), kind: kindArr, tags: kindTable.map(([tag]) => tag), index: new Map(ids.map((id, i) => [id, i])) };
  v.bases = []; // contexts of the old rows no longer apply
  return {
    ids,
    texts,
    parent: Int32Array.from(parent),
    depth: Uint16Array.from(depth, (d) => Math.min(d, 65535)),
    flags: Uint8Array.from(flags),
    kids: Uint32Array.from(kids),
    end: Uint32Array.from(end),
    kind: Uint16Array.from(kindArr),
    kindTable,
    labels,
  };
}

/** Moves the leaf to `leafId` and builds that branch's context; the first window of messages. */
function select(v, leafId, where = 'start') {
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
    win: { start: win[0], end: win[1], items: slice(win[0], win[1], v) },
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

function slice(start, end, v = view) {
  const out = [];
  for (let i = Math.max(0, start); i < Math.min(end, v.messages.length); i++) out.push({ m: v.messages[i], id: v.ctxIds[i] ?? null });
  return out;
}

function needView() {
  if (!view) throw fail('no session is open', 'notFound');
  return view;
}

function needWritable() {
  const v = needView();
  if (!v.src?.writable || !v.session.file) {
    throw fail('This session is read-only: import it into the browser storage (or memory) to edit a copy.', 'readOnly');
  }
  return v;
}

// ---------------------------------------------------------------- finding (search, outline)

const SEARCH_MAX_HITS = 5000;
const SNIPPET_BEFORE = 48;
const SNIPPET_AFTER = 90;

/** Tool arguments as the conversation shows them (content.js renderToolCall): pretty JSON. */
function toolArgsText(args) {
  let v = args;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return v;
    }
  }
  return typeof v === 'string' ? v : JSON.stringify(v ?? {}, null, 2);
}

/**
 * What search reads of one message: its parts `{kind, text, tool}` (text, thinking, tool
 * calls with their arguments, tool results, summaries, shell command and output).
 */
function searchParts(m) {
  const parts = [];
  if (!m || typeof m !== 'object') return parts;
  const add = (kind, text, tool = null) => {
    if (text !== undefined && text !== null && text !== '') parts.push({ kind, text: String(text), tool });
  };
  const tool = m.role === 'toolResult' ? String(m.toolName ?? 'tool') : null;
  const blocks = (content, kind) => {
    if (typeof content === 'string') add(kind, content, tool);
    else if (Array.isArray(content)) {
      for (const b of content) {
        if (!b || typeof b !== 'object') continue;
        if (b.type === 'text') add(kind, b.text, tool);
        else if (b.type === 'thinking') add('thinking', b.thinking);
        else if (b.type === 'toolCall') add('tool call', `${b.name ?? 'tool'}\n${toolArgsText(b.arguments)}`, String(b.name ?? 'tool'));
      }
    }
  };
  switch (m.role) {
    case 'toolResult':
      blocks(m.content, 'tool result');
      break;
    case 'bashExecution':
      add('shell', m.command);
      add('shell output', m.output);
      break;
    case 'branchSummary':
    case 'compactionSummary':
      add('summary', m.shortSummary);
      add('summary', m.summary);
      break;
    default:
      blocks(m.content, 'text');
      add('error', m.errorMessage);
  }
  return parts;
}

/** The filter group of a role: user, assistant, toolResult or other. */
const roleGroup = (role) => (role === 'user' || role === 'assistant' || role === 'toolResult' ? role : 'other');

function findIndex() {
  if (!view.find) view.find = view.messages.map((m) => ({ role: typeof m?.role === 'string' ? m.role : 'unknown', parts: searchParts(m) }));
  return view.find;
}

function oneLine(text, max) {
  const s = String(text).replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** The text around a match, in three pieces (the page shows the match marked, as text). */
function snippet(text, at, len) {
  const from = Math.max(0, at - SNIPPET_BEFORE);
  const to = Math.min(text.length, at + len + SNIPPET_AFTER);
  const clean = (s) => s.replace(/\s+/g, ' ');
  return {
    before: (from > 0 ? '…' : '') + clean(text.slice(from, at)).trimStart(),
    match: clean(text.slice(at, at + len)),
    after: clean(text.slice(at + len, to)).trimEnd() + (to < text.length ? '…' : ''),
  };
}

/**
 * Searches every message of the shown branch, case-insensitively: hits (one per message,
 * in order) with the number of matches and a snippet of the first. `role` keeps one group
 * (user, assistant, toolResult, other); `tool` keeps the calls of that tool and their
 * results (with no query: every one of them).
 */
function search({ query = '', role = '', tool = '' }) {
  needView();
  const t0 = performance.now();
  const q = String(query ?? '');
  if (!q.trim() && !tool) return { query: q, hits: [], messages: 0, matches: 0, capped: false, ms: 0 };
  const re = q.trim() ? new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'giu') : null;
  const hits = [];
  let messages = 0;
  let matches = 0;
  for (const [index, { role: r, parts }] of findIndex().entries()) {
    if (role && roleGroup(r) !== role) continue;
    let count = 0;
    let first = null;
    for (const part of parts) {
      if (tool && part.tool !== tool) continue;
      if (!re) {
        count++;
        first ??= { part, at: 0, len: 0 };
        continue;
      }
      re.lastIndex = 0;
      for (let m = re.exec(part.text); m; m = re.exec(part.text)) {
        if (!m[0].length) {
          re.lastIndex++;
          continue;
        }
        count++;
        first ??= { part, at: m.index, len: m[0].length };
      }
    }
    if (!count) continue;
    messages++;
    matches += count;
    if (hits.length < SEARCH_MAX_HITS) {
      const s = re ? snippet(first.part.text, first.at, first.len) : { before: '', match: '', after: oneLine(first.part.text, SNIPPET_BEFORE + SNIPPET_AFTER) };
      hits.push({ index, role: r, kind: first.part.kind, tool: first.part.tool, count, ...s });
    }
  }
  return { query: q, hits, messages, matches, capped: messages > hits.length, ms: performance.now() - t0 };
}

/** The user prompts of the shown branch (message index, first line) and its tools (name, calls). */
function outline() {
  needView();
  const prompts = [];
  const tools = new Map();
  for (const [index, { role, parts }] of findIndex().entries()) {
    if (role === 'user') {
      const text = parts.find((p) => p.kind === 'text')?.text;
      const m = view.messages[index];
      const images = Array.isArray(m?.content) ? m.content.filter((b) => b?.type === 'image').length : 0;
      prompts.push({ index, text: text ? oneLine(text, 160) : images ? `(${images === 1 ? 'an image' : `${images} images`})` : '(empty)' });
    }
    for (const p of parts) if (p.kind === 'tool call') tools.set(p.tool, (tools.get(p.tool) ?? 0) + 1);
  }
  return { count: view.messages.length, prompts, tools: [...tools].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([name, calls]) => ({ name, calls })) };
}

// ---------------------------------------------------------------- folders

async function filesOfHandle(handle, prefix = '') {
  const out = [];
  for await (const [name, child] of handle.entries()) {
    if (child.kind === 'directory') out.push(...(await filesOfHandle(child, `${prefix}${name}/`)));
    else out.push({ rel: `${prefix}${name}`, file: await child.getFile() });
  }
  return out;
}

async function loadFolder({ handle, files, name }, reqId) {
  const t0 = performance.now();
  let list;
  let rootName = name ?? 'folder';
  if (handle) {
    rootName = handle.name;
    progress(reqId, 'scan', 0, 0);
    list = await filesOfHandle(handle);
  } else {
    // <input webkitdirectory> and drops give paths that start with the folder's name.
    list = (files ?? []).map(({ path, file }) => {
      const parts = String(path || file.name).split('/').filter(Boolean);
      if (parts.length > 1) rootName = parts[0];
      return { rel: parts.length > 1 ? parts.slice(1).join('/') : parts[0], file };
    });
  }
  const storage = new MemoryStorage({ readOnly: true });
  const A = sources.get('opened').agentDir;
  storage.putDir(`${A}/sessions`, 0);
  // Which files are kept (the package knows the layouts), then read those; a loose folder's
  // sessions are placed by their header, so the files are placed again with their start.
  const kept = pkg.openedFolderTargets(A, rootName, list.map((f) => ({ rel: f.rel })));
  const total = list.reduce((n, f, i) => n + (kept[i].length ? f.file.size : 0), 0);
  let done = 0;
  const data = [];
  for (const [i, f] of list.entries()) {
    if (!kept[i].length) continue;
    data[i] = new Uint8Array(await f.file.arrayBuffer());
    done += f.file.size;
    progress(reqId, 'read', done, total);
  }
  const targets = pkg.openedFolderTargets(A, rootName, list.map((f, i) => ({ rel: f.rel, start: data[i]?.subarray(0, 65536) ?? null })));
  let placed = 0;
  for (const [i, f] of list.entries()) {
    for (const target of targets[i]) {
      storage.put(target, data[i], f.file.lastModified);
      placed++;
    }
  }
  const src = sources.get('opened');
  src.storage = storage;
  src.available = true;
  src.label = `Opened: ${rootName}`;
  src.note = null;
  const info = sourceInfo(src);
  if (!info.sessions) {
    src.note = `No session files (.jsonl) found in ${rootName}.`;
  }
  return { ...info, note: src.note, files: placed, ms: performance.now() - t0 };
}

// ---------------------------------------------------------------- listing

function plainInfo(item) {
  const { allMessagesText, ...rest } = item; // never sent: it can be huge
  return { ...rest, name: pkg.sessionDisplayName(rest) };
}

async function list({ source: key, scope = 'project', cwd = null, query = '' }) {
  const src = await source(key);
  const { storage, agentDir } = src;
  let project = cwd;
  if (!project || !storage.exists(pkg.sessionDirForCwd(agentDir, project))) project = pkg.newestSessionCwd(storage, agentDir) ?? cwd;
  const q = String(query ?? '').trim();
  let items;
  let how;
  if (q) {
    await prepare(src, pkg.sessionFilePaths(storage, agentDir).map((path) => ({ op: 'read', path })));
    items = pkg.searchSessions(storage, scope === 'project' && project ? { agentDir, cwd: project, query: q } : { agentDir, query: q });
    how = 'search';
  } else if (scope === 'project' && project) {
    items = pkg.recentSessions(storage, { agentDir, cwd: project, limit: 200 });
    how = 'recent';
  } else {
    items = pkg.listSessions(storage, { agentDir });
    how = 'all';
  }
  return { source: sourceInfo(src), scope, cwd: project, query: q, how, items: items.map(plainInfo) };
}

// ---------------------------------------------------------------- copying (import)

async function importCurrent({ target }, reqId) {
  const v = needView();
  const tgt = await source(target);
  if (!tgt.writable) throw fail(`${tgt.label} is read-only here`, 'readOnly');
  if (v.src === tgt) throw fail(`This session is already in ${tgt.label}.`, 'invalidInput');
  // A session of a source: its files at the same place; a single file: by its header.
  const copy = v.src && v.path
    ? pkg.copySession(v.src.storage, v.src.agentDir, v.path, tgt.storage, tgt.agentDir)
    : pkg.importSessionText(tgt.storage, tgt.agentDir, v.text ?? v.session.toJsonl(), v.name ?? '');
  await commit(tgt);
  const out = await viewWritable(tgt, copy.path, reqId);
  out.imported = { path: copy.path, already: copy.already, target: tgt.key };
  return out;
}

async function importAll({ source: from, target }, reqId) {
  const src = await source(from);
  const tgt = await source(target);
  if (!tgt.writable) throw fail(`${tgt.label} is read-only here`, 'readOnly');
  const sessions = pkg.sessionFilePaths(src.storage, src.agentDir);
  let imported = 0;
  let skipped = 0;
  for (const [i, path] of sessions.entries()) {
    progress(reqId, 'import', i, sessions.length);
    if (pkg.copySession(src.storage, src.agentDir, path, tgt.storage, tgt.agentDir).already) skipped++;
    else imported++;
  }
  await commit(tgt);
  return { imported, skipped, source: sourceInfo(tgt) };
}

async function deleteSession({ source: key, path }) {
  const src = await source(key);
  if (!src.writable) throw fail(`${src.label} is read-only`, 'readOnly');
  // The delete takes the session's writer lock first: a session another process writes
  // is refused (conflict) and stays open here. The open view holds no lock between requests.
  await prepare(src, [{ op: 'stat', path }, { op: 'read', path: `${path}.lock` }]);
  pkg.deleteSession(src.storage, src.agentDir, path); // the file, its artifacts, a stale lock
  await commit(src);
  const closed = Boolean(view && view.src === src && view.session.file === path);
  if (closed) {
    view.session.free();
    view = null;
  }
  return { closed, source: sourceInfo(src) };
}

// ---------------------------------------------------------------- edits

/** Reloads the written file the way the agent would (Session.open) and compares. */
async function verify(src, file, expect = {}) {
  // The browser storage's file as OPFS holds it now, not as the worker last saw it.
  const text = src.disk ? dec.decode(await src.disk.read(file)) : src.storage.text(file);
  const tmp = new MemoryStorage({ readOnly: true });
  tmp.put(file, enc.encode(text));
  const check = pkg.Session.open(tmp, file, { readOnly: true, agentDir: src.agentDir });
  try {
    const report = check.report();
    const problems = [];
    if (report.issues?.length) problems.push(`${report.issues.length} unreadable line(s)`);
    if (report.headerProblem) problems.push(`header: ${report.headerProblem}`);
    if (check.sessionId !== view.session.sessionId) problems.push('another session id');
    if (expect.leaf && check.leafId !== view.session.leafId) problems.push(`leaf ${check.leafId} instead of ${view.session.leafId}`);
    if (expect.label) {
      const got = check.label(expect.label.id) ?? null;
      if (got !== expect.label.value) problems.push(`label ${JSON.stringify(got)} instead of ${JSON.stringify(expect.label.value)}`);
    }
    return { ok: problems.length === 0, problems, file, bytes: enc.encode(text).length, onDisk: Boolean(src.disk) };
  } finally {
    check.free();
  }
}

async function edit(reqId, what, fn, expect = {}) {
  const v = needWritable();
  const file0 = v.session.file;
  await prepare(v.src, [{ op: 'stat', path: file0 }, { op: 'read', path: `${file0}.lock` }]);
  const result = fn(v.session);
  v.session.close(); // fsync, release the writer lock until the next edit
  await commit(v.src);
  const file = v.session.file;
  v.path = file;
  v.name = baseName(file);
  v.size = v.src.storage.stat(file).size;
  const check = await verify(v.src, file, expect);
  if (!check.ok) throw fail(`The written file did not reload as expected: ${check.problems.join('; ')}`, 'persistence');
  const out = await openPayload(v, reqId, 'end');
  out.saved = { what, result, check };
  return out;
}

// ---------------------------------------------------------------- prompt history

/**
 * `PromptHistory` over SQLite (wasm) on OPFS; where that cannot start, over the same
 * database in memory, with the reason (the page says so). Without sqlite-wasm at all
 * there is no history (`history: null`; the history operations fail with the reasons).
 */
async function openHistory(mode) {
  let reason;
  if (mode === 'memory') {
    reason = 'asked for by ?history=memory in the address';
  } else {
    try {
      const { store, info } = await openSqliteHistory();
      return { history: new pkg.PromptHistory(store), store, info: { ...info, persistent: true, fallback: null } };
    } catch (e) {
      reason = errMsg(e);
    }
  }
  try {
    const { store, info } = await openMemoryHistory();
    return { history: new pkg.PromptHistory(store), store, info: { ...info, persistent: false, fallback: reason } };
  } catch (e) {
    return { history: null, store: null, info: { backend: 'unavailable', persistent: false, fallback: `${reason}; ${errMsg(e)}` } };
  }
}

async function historyState() {
  if (!historyReady) historyReady = openHistory();
  const h = await historyReady;
  if (!h.history) throw fail(`The prompt history is unavailable: ${h.info.fallback}`, 'notFound');
  return h;
}

function historyInfo(h) {
  let rows = null;
  try {
    rows = h.store ? h.store.count() : null;
  } catch {
    /* only shown */
  }
  return { ...h.info, backend: h.history?.backend ?? h.info.backend, rows };
}

const HISTORY_LIMIT = 100;

/** FTS5 syntax in a query: quotes, `*`, parentheses, `col:`, `^`, or an operator word. */
const FTS_SYNTAX = /["*():^]|(^|\s)(AND|OR|NOT|NEAR)(\s|$)/;

/**
 * Search or, for an empty field, recent. A query of plain words (no FTS5 syntax) is made a
 * prefix query, each word a prefix (`pars` finds "parser"); "plain words" takes any text
 * that way; anything else is FTS5 syntax as typed.
 */
async function historyQuery({ query = '', plain = false, cwd = null, limit = HISTORY_LIMIT }) {
  const h = await historyState();
  const text = String(query ?? '').trim();
  const options = { limit, ...(cwd ? { cwd } : {}) };
  if (!text) return { how: 'recent', query: '', items: h.history.recent(options), info: historyInfo(h) };
  const words = plain || !FTS_SYNTAX.test(text);
  const fts = words ? pkg.PromptHistory.prefixQuery(text) : text;
  const items = fts ? h.history.search(fts, options) : [];
  return { how: 'search', query: fts, words, items, info: historyInfo(h) };
}

/**
 * Adds the user prompts of the sessions a picker list shows (same arguments as `list`),
 * all branches, in time order, each with its session's cwd.
 */
async function historyImport(args, reqId) {
  const h = await historyState();
  const listed = await list(args);
  const src = await source(args.source);
  const sessions = listed.items.map((item) => ({ path: item.path, cwd: item.cwd || null }));
  await prepare(src, sessions.map(({ path }) => ({ op: 'read', path })));
  const { prompts, unreadable } = pkg.sessionPrompts(src.storage, sessions, (done, total) => progress(reqId, 'import', done, total));
  let added = 0;
  let duplicates = 0;
  for (const p of prompts) {
    const r = h.history.add(p.text, p.cwd);
    if (r.added) added++;
    else if (r.reason === 'duplicate') duplicates++;
  }
  return { sessions: listed.items.length, prompts: prompts.length, added, duplicates, unreadable, source: listed.source.label, scope: listed.scope, cwd: listed.cwd, info: historyInfo(h) };
}

/**
 * The sessions, in every source, where `prompt` was typed as a user message (any branch):
 * those of its project when it has a cwd, else all. Newest first, at most `limit`.
 */
async function promptSessions({ prompt, cwd = null, limit = 20 }) {
  await opfsReady;
  const text = String(prompt ?? '');
  const found = [];
  for (const src of sources.values()) {
    if (!src.available || !src.storage) continue;
    const { storage, agentDir } = src;
    let items;
    if (!cwd) items = pkg.listSessions(storage, { agentDir });
    else if (storage.exists(pkg.sessionDirForCwd(agentDir, cwd))) items = pkg.recentSessions(storage, { agentDir, cwd, limit: 200 });
    else continue;
    await prepare(src, items.map((item) => ({ op: 'read', path: item.path })));
    for (const item of items) {
      const { prompts } = pkg.sessionPrompts(storage, [{ path: item.path, cwd: item.cwd || null }]);
      if (prompts.some((p) => p.text === text)) found.push({ source: src.key, sourceLabel: src.label, ...plainInfo(item) });
    }
  }
  found.sort((a, b) => String(b.modified ?? '').localeCompare(String(a.modified ?? '')));
  return { items: found.slice(0, limit), total: found.length };
}

// ---------------------------------------------------------------- handlers

const HANDLERS = {
  async init({ history } = {}) {
    await init({ module_or_path: new URL('./pkg/xcsh_session_bg.wasm', import.meta.url) });
    await loadSamples();
    opfsReady = loadOpfs();
    historyReady = openHistory(history);
    return { version: pkg.version() };
  },

  async sources() {
    await opfsReady;
    return [...sources.values()].map(sourceInfo);
  },

  async openSample({ file }, reqId) {
    const t0 = performance.now();
    progress(reqId, 'read', 0, 0);
    const res = await fetch(new URL(`./samples/${encodeURIComponent(file)}`, import.meta.url));
    if (!res.ok) throw fail(`samples/${file}: HTTP ${res.status}`, 'notFound');
    const text = await res.text();
    return viewFromText(text, { name: file, size: enc.encode(text).length, reqId, t0, origin: 'sample' });
  },

  async openFile({ file, name }, reqId) {
    const t0 = performance.now();
    progress(reqId, 'read', 0, file.size);
    const text = await file.text();
    return viewFromText(text, { name: name ?? file.name, size: file.size, reqId, t0 });
  },

  async openPath({ source: key, path }, reqId) {
    const t0 = performance.now();
    const src = await source(key);
    if (!src.storage.exists(path)) throw fail(`${path} is not in ${src.label}`, 'notFound');
    if (src.writable) return viewWritable(src, path, reqId, t0);
    const text = dec.decode(src.storage.read(path));
    return viewFromText(text, { src, path, name: baseName(path), size: src.storage.stat(path).size, reqId, t0 });
  },

  loadFolder: (args, reqId) => loadFolder(args, reqId),
  list: (args) => list(args),

  select({ id, where }) {
    return select(needView(), id, where ?? 'end');
  },

  messages({ start, end }) {
    needView();
    return { start, end: Math.min(end, view.messages.length), items: slice(start, end) };
  },

  search: (args) => search(args),
  outline: () => outline(),
  /** The whole shown branch for an export: the package's context JSON, untouched, and names. */
  exportBranch() {
    const v = needView();
    const s = v.session;
    return { json: s.contextJson(), name: v.name, title: s.displayTitle(80), sessionId: s.sessionId, leafId: s.leafId ?? null, cwd: s.header()?.cwd ?? null };
  },

  entry({ id }) {
    const v = needView();
    return { entry: v.session.entry(id), label: v.session.label(id) ?? null };
  },

  resolveUrl({ url }) {
    const v = needView();
    if (v.src && v.path) return pkg.resolveUrl(v.src.storage, v.path, url);
    // A single file has no artifacts directory beside it: the package says so.
    return pkg.resolveUrl(new MemoryStorage({ readOnly: true }), `/single/${v.name || 'session.jsonl'}`, url);
  },

  label({ id, label }, reqId) {
    const value = label === undefined || label === null || String(label).trim() === '' ? null : String(label).trim();
    return edit(reqId, 'label', (s) => s.appendLabelChange(id, value ?? undefined), { leaf: true, label: { id, value } });
  },

  branchWithSummary({ id, summary }, reqId) {
    return edit(reqId, 'branchWithSummary', (s) => s.branchWithSummary(id ?? null, String(summary ?? '')), { leaf: true });
  },

  fork(_args, reqId) {
    return edit(reqId, 'fork', (s) => s.fork());
  },

  newSessionFromBranch({ id }, reqId) {
    return edit(reqId, 'newSessionFromBranch', (s) => {
      const file = s.createBranchedSession(id);
      s.ensureOnDisk(); // a branch without an assistant message is not written otherwise
      return file ?? s.file;
    });
  },

  importCurrent: (args, reqId) => importCurrent(args, reqId),
  importAll: (args, reqId) => importAll(args, reqId),
  deleteSession: (args) => deleteSession(args),

  async historyInfo() {
    if (!historyReady) historyReady = openHistory();
    return historyInfo(await historyReady); // also when there is none: the page says why
  },

  async historyAdd({ prompt, cwd }) {
    const h = await historyState();
    const result = h.history.add(String(prompt ?? ''), cwd ? String(cwd) : null);
    return { ...result, info: historyInfo(h) };
  },

  historyQuery: (args) => historyQuery(args),
  historyImport: (args, reqId) => historyImport(args, reqId),
  promptSessions: (args) => promptSessions(args),
};
