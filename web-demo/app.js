// The in-browser session viewer: a thin shell over the xcsh-session wasm package.
//
// All session logic (lenient JSONL, migration, tree, context build) lives in the Rust core
// behind `./pkg/xcsh_session.js`; this file only renders what the package returns. The
// session is opened read-only with `Session.fromText`: nothing is ever written.
//
// Safety: session content is untrusted. It only reaches the DOM through text nodes and
// element properties (never innerHTML), and images only as `data:image/...;base64` URLs.

const PKG_URL = './pkg/xcsh_session.js';
const DEFAULT_SAMPLE = 'demo-branches.jsonl';
const TREE_ROW_H = 26; // px; keep in sync with --tree-row-h in style.css
const TREE_OVERSCAN = 12;
const MSG_CHUNK = 40; // messages rendered per window step
const CLAMP_LINES = 24; // long text blocks show this many lines until expanded
const CLAMP_CHARS = 4000;
const HIGHLIGHT_MAX = 400_000; // raw JSON above this size is shown without colours

let api = null;

/** Everything about the open session. */
const state = {
  session: null, // the wasm Session
  summary: null, // parseSession() result
  name: '',
  size: 0,
  entries: [],
  byId: new Map(),
  rows: [], // flattened tree: {entry, label, depth, fork, branchStart, lastSibling}
  rowIndex: new Map(), // entry id -> row index
  selected: null, // selected entry id (= the leaf of the shown branch)
  path: new Set(), // ids on the root..selected path
  ctx: null,
  messages: [],
  win: { start: 0, end: 0 }, // rendered message window [start, end)
};

// ---------------------------------------------------------------- small DOM helpers

const $ = (id) => document.getElementById(id);

/** Creates an element. Strings among `kids` become text nodes (never parsed as HTML). */
function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'style') Object.assign(el.style, v);
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, kids);
  return el;
}

function append(el, kids) {
  for (const kid of kids) {
    if (kid === undefined || kid === null || kid === false) continue;
    if (Array.isArray(kid)) append(el, kid);
    else el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
}

/** The package may hand back JSON text or plain objects; accept both. */
function js(value) {
  if (typeof value === 'string') {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

/** `fn()`, or undefined when it throws (for optional extras of the API). */
function attempt(fn) {
  try {
    return fn();
  } catch (e) {
    console.warn(e);
    return undefined;
  }
}

function errMsg(e) {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}

const nf = new Intl.NumberFormat('en-US');
const fmtNum = (n) => (typeof n === 'number' && Number.isFinite(n) ? nf.format(n) : String(n ?? ''));

const nfCompact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const fmtTok = (n) => (typeof n === 'number' && Number.isFinite(n) ? nfCompact.format(n) : String(n ?? ''));

function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Epoch ms or ISO string -> "2026-02-16 10:21:04" (UTC, so every viewer sees the same). */
function fmtTime(t, withDate = true) {
  if (t === undefined || t === null || t === '') return '';
  const d = new Date(typeof t === 'number' ? t : String(t));
  if (Number.isNaN(d.getTime())) return String(t);
  const iso = d.toISOString();
  return withDate ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : iso.slice(11, 19);
}

function shortId(id) {
  const s = String(id);
  return s.length <= 12 ? s : `…${s.slice(-8)}`;
}

function firstLine(s, max = 120) {
  const str = String(s ?? '').trim();
  const nl = str.indexOf('\n');
  const line = (nl >= 0 ? str.slice(0, nl) : str).trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function oneLine(s, max = 140) {
  const str = String(s ?? '').replace(/\s+/g, ' ').trim();
  return str.length > max ? `${str.slice(0, max - 1)}…` : str;
}

// ---------------------------------------------------------------- banner

function showBanner(kind, text) {
  const b = $('banner');
  b.className = `banner banner-${kind}`;
  b.replaceChildren(h('span', null, text), h('button', { type: 'button', class: 'banner-close', 'aria-label': 'Dismiss', onclick: clearBanner }, '×'));
  b.hidden = false;
}

function clearBanner() {
  $('banner').hidden = true;
}

// ---------------------------------------------------------------- start-up

async function main() {
  wireUi();
  try {
    api = await import(PKG_URL);
    await api.default();
  } catch (e) {
    $('session-bar').replaceChildren(h('span', { class: 'muted' }, 'No session loaded.'));
    showBanner('error', `Cannot load the WebAssembly package (${PKG_URL}): ${errMsg(e)}. Build it with scripts/build-js.`);
    return;
  }
  const samples = await loadSampleList();
  const wanted = new URLSearchParams(location.search).get('sample');
  const file = samples.some((s) => s.file === wanted) ? wanted : DEFAULT_SAMPLE;
  await openSample(file);
}

function wireUi() {
  $('file-input').addEventListener('change', async (ev) => {
    const file = ev.target.files?.[0];
    if (file) await openFile(file);
    ev.target.value = '';
  });
  $('sample-select').addEventListener('change', (ev) => {
    if (ev.target.value) openSample(ev.target.value);
  });

  // Drag and drop anywhere on the page.
  let depth = 0;
  const overlay = $('drop-overlay');
  const hasFiles = (ev) => [...(ev.dataTransfer?.types ?? [])].includes('Files');
  window.addEventListener('dragenter', (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    depth++;
    overlay.hidden = false;
  });
  window.addEventListener('dragover', (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = 'copy';
  });
  window.addEventListener('dragleave', (ev) => {
    if (!hasFiles(ev)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) overlay.hidden = true;
  });
  window.addEventListener('drop', async (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    depth = 0;
    overlay.hidden = true;
    const file = ev.dataTransfer.files?.[0];
    if (file) await openFile(file);
  });

  const tree = $('tree');
  tree.addEventListener('scroll', () => scheduleTreeRender());
  tree.addEventListener('click', (ev) => {
    const row = ev.target.closest('.node');
    if (row) selectEntry(row.dataset.id, { conv: 'end' });
  });
  tree.addEventListener('keydown', onTreeKey);
  new ResizeObserver(() => scheduleTreeRender()).observe(tree);

  $('jump-start').addEventListener('click', () => showWindow('start'));
  $('jump-end').addEventListener('click', () => showWindow('end'));
  $('copy-json').addEventListener('click', async () => {
    const e = state.selected && state.byId.get(state.selected);
    if (!e) return;
    try {
      await navigator.clipboard.writeText(JSON.stringify(e, null, 2));
      flash($('copy-json'), 'Copied');
    } catch {
      flash($('copy-json'), 'Not allowed');
    }
  });
}

function flash(button, text) {
  const old = button.textContent;
  button.textContent = text;
  setTimeout(() => (button.textContent = old), 1200);
}

async function loadSampleList() {
  const select = $('sample-select');
  let samples = [];
  try {
    const res = await fetch('samples/index.json');
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    samples = (await res.json()).filter((s) => s && typeof s.file === 'string');
  } catch (e) {
    showBanner('warn', `Cannot read the sample list: ${errMsg(e)}`);
  }
  select.replaceChildren(
    h('option', { value: '', disabled: true }, 'Local file'),
    ...samples.map((s) => h('option', { value: s.file, title: s.description ?? '' }, s.title ?? s.file)),
  );
  return samples;
}

async function openSample(file) {
  try {
    const res = await fetch(`samples/${encodeURIComponent(file)}`);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const text = await res.text();
    if (openText(text, file, new Blob([text]).size)) {
      $('sample-select').value = file;
      const url = new URL(location.href);
      if (file === DEFAULT_SAMPLE) url.searchParams.delete('sample');
      else url.searchParams.set('sample', file);
      history.replaceState(null, '', url);
    }
  } catch (e) {
    showBanner('error', `Cannot load sample ${file}: ${errMsg(e)}`);
  }
}

async function openFile(file) {
  let text;
  try {
    text = await file.text();
  } catch (e) {
    showBanner('error', `Cannot read ${file.name}: ${errMsg(e)}`);
    return;
  }
  if (openText(text, file.name, file.size)) {
    $('sample-select').value = '';
    const url = new URL(location.href);
    url.searchParams.delete('sample');
    history.replaceState(null, '', url);
  }
}

// ---------------------------------------------------------------- opening a session

/** Parses `text` with the wasm package and renders it. Returns false if it cannot be read. */
function openText(text, name, size) {
  let summary;
  let session;
  const t0 = performance.now();
  try {
    summary = js(api.parseSession(text));
    session = api.Session.fromText(text);
  } catch (e) {
    showBanner('error', `Cannot open ${name}: ${errMsg(e)}`);
    return false;
  }
  const entryCount = summary?.entryCount ?? 0;
  if (!text.trim()) showBanner('warn', `${name} is empty: there is no session in it.`);
  else if (entryCount === 0 && summary?.report?.issues?.length) showBanner('warn', `No session could be read from ${name}: none of its lines is a session record.`);
  else clearBanner();
  try {
    state.session?.free?.();
  } catch {
    /* already freed */
  }
  const entries = js(session.entries()) ?? [];
  Object.assign(state, {
    session,
    summary,
    name,
    size,
    loadMs: performance.now() - t0,
    entries,
    byId: new Map(entries.map((e) => [e.id, e])),
    selected: null,
  });
  state.rows = flattenTree(js(session.tree()) ?? []);
  state.rowIndex = new Map(state.rows.map((r, i) => [r.entry.id, i]));

  renderSessionBar();
  $('tree-meta').textContent = `${fmtNum(entries.length)} entries`;
  $('tree').scrollTop = 0;
  const leaf = leafIdOf(session) ?? entries.at(-1)?.id ?? null;
  // Start reading at the top of both the tree and the conversation.
  selectEntry(leaf, { conv: 'start' });
  document.title = `${summary?.header?.title || name} · xcsh session viewer`;
  return true;
}

function leafIdOf(session) {
  const v = typeof session.leafId === 'function' ? session.leafId() : session.leafId;
  return v ?? null;
}

/**
 * Flattens the tree (roots with children ordered by time) into outline rows, iteratively:
 * linear sessions nest thousands deep. Depth only grows below a fork, so a linear chain
 * stays flat and each side branch is indented one step.
 */
function flattenTree(roots) {
  const rows = [];
  const stack = [];
  const pushKids = (kids, depth, fork) => {
    for (let i = kids.length - 1; i >= 0; i--) {
      stack.push({ node: kids[i], depth, branchStart: fork, lastSibling: i === kids.length - 1 });
    }
  };
  pushKids(roots, 0, roots.length > 1);
  while (stack.length) {
    const { node, depth, branchStart, lastSibling } = stack.pop();
    if (!node || !node.entry) continue;
    const kids = Array.isArray(node.children) ? node.children : [];
    const fork = kids.length > 1;
    rows.push({ entry: node.entry, label: node.label, depth, fork, branchStart, lastSibling, kids: kids.length });
    pushKids(kids, fork ? depth + 1 : depth, fork);
  }
  return rows;
}

/** Ids on the path root..id, following parentId (guarded against cycles). */
function pathTo(id) {
  const path = new Set();
  let cur = id && state.byId.get(id);
  while (cur && !path.has(cur.id)) {
    path.add(cur.id);
    cur = cur.parentId ? state.byId.get(cur.parentId) : null;
  }
  return path;
}

/** Shows the branch ending at `id`: conversation, highlighted path, inspector. */
function selectEntry(id, { conv = 'end', scrollTree = false } = {}) {
  const s = state.session;
  if (!s) return;
  let ctx;
  try {
    ctx = js(id ? s.context(id) : s.context());
  } catch (e) {
    showBanner('error', `Cannot build the context for ${id}: ${errMsg(e)}`);
    return;
  }
  state.selected = id;
  state.path = pathTo(id);
  state.ctx = ctx ?? {};
  state.messages = Array.isArray(ctx?.messages) ? ctx.messages : [];
  renderConvMeta();
  showWindow(conv);
  renderTree();
  if (scrollTree) scrollTreeTo(id);
  renderInspector(id);
}

// ---------------------------------------------------------------- session bar

function renderSessionBar() {
  const { summary, session, name, size } = state;
  const header = attempt(() => js(session.header())) ?? summary?.header ?? {};
  const report = attempt(() => js(session.report())) ?? summary?.report ?? {};
  const version = summary?.version ?? header.version ?? 1;
  const migration = summary?.migrationNeeded || report.migration;

  const chip = (label, value, cls = '') =>
    value === undefined || value === null || value === ''
      ? null
      : h('span', { class: `chip ${cls}`, title: `${label}: ${value}`, dataset: { testid: `chip-${label}` } }, h('span', { class: 'chip-k' }, label), h('span', { class: 'chip-v' }, String(value)));

  const title = header.title ? String(header.title) : null;
  const top = h(
    'div',
    { class: 'sb-row' },
    h('h1', { class: `sb-title${title ? '' : ' muted'}`, title: title ?? name }, title ?? name),
    chip('id', header.id, 'mono'),
    chip('cwd', header.cwd, 'mono'),
    chip('created', fmtTime(header.timestamp)),
    h(
      'span',
      { class: `chip ${migration ? 'chip-warn' : 'chip-ok'}`, title: migration ? 'The file is in an older format; the viewer migrated it in memory (the file is not changed).' : 'Current format' },
      h('span', { class: 'chip-k' }, 'version'),
      h('span', { class: 'chip-v' }, migration ? `v${version} → v${report.migration?.toVersion ?? 3} migrated in memory` : `v${version}`),
    ),
    migration ? h('span', { class: 'badge badge-warn', dataset: { testid: 'migration-needed' } }, 'migration needed') : null,
    chip('file', size ? `${name} · ${fmtBytes(size)}` : name),
    chip('parsed', `${Math.round(state.loadMs)} ms`),
    header.parentSession ? chip('parent', header.parentSession, 'mono') : null,
  );

  const warnings = collectWarnings(report);
  const rows = [top];
  if (warnings.length) {
    rows.push(
      h(
        'details',
        { class: 'sb-warnings', open: Boolean(report.headerProblem), dataset: { testid: 'load-warnings' } },
        h('summary', null, `⚠ ${warnings.length} load warning${warnings.length === 1 ? '' : 's'}`),
        h('ul', null, warnings.map((w) => h('li', null, w))),
      ),
    );
  } else {
    rows.push(h('div', { class: 'sb-clean' }, '✓ loaded cleanly'));
  }
  $('session-bar').replaceChildren(...rows);
}

const ISSUE_NAMES = { unparsable: 'unparsable line skipped', tornTail: 'torn last line dropped', gluedRecord: 'glued records split' };

function collectWarnings(report) {
  const out = [];
  for (const i of report.issues ?? []) {
    out.push(`line ${i.line}: ${ISSUE_NAMES[i.kind] ?? i.kind}${i.detail ? ` — ${oneLine(i.detail, 200)}` : ''}`);
  }
  if (report.headerProblem) out.push(`header: ${report.headerProblem}`);
  if (report.invalidUtf8) out.push('the file is not valid UTF-8 (bad bytes replaced)');
  if (report.nonEntries) out.push(`${report.nonEntries} record(s) that are not entries were kept aside`);
  if (report.duplicateIds) out.push(`${report.duplicateIds} duplicate entry id(s)`);
  if (report.backupPath) out.push(`original bytes kept in ${report.backupPath}`);
  for (const b of report.missingBlobs ?? []) out.push(`blob ${b} not found`);
  const extra = attempt(() => js(state.session.warnings())) ?? [];
  for (const w of extra) if (!out.includes(String(w))) out.push(String(w));
  return out;
}

function renderConvMeta() {
  const ctx = state.ctx ?? {};
  const parts = [`${fmtNum(state.messages.length)} messages`];
  if (ctx.thinkingLevel) parts.push(`thinking ${ctx.thinkingLevel}`);
  const model = ctx.models?.default ?? Object.values(ctx.models ?? {})[0];
  if (model) parts.push(String(model));
  if (ctx.mode && ctx.mode !== 'none') parts.push(`mode ${ctx.mode}`);
  $('conv-meta').textContent = parts.join(' · ');
}

// ---------------------------------------------------------------- tree (virtual list)

let treeFrame = 0;
function scheduleTreeRender() {
  if (treeFrame) return;
  treeFrame = requestAnimationFrame(() => {
    treeFrame = 0;
    renderTree();
  });
}

function scrollTreeTo(id) {
  const i = state.rowIndex.get(id);
  if (i === undefined) return;
  const tree = $('tree');
  const top = i * TREE_ROW_H;
  if (top < tree.scrollTop || top + TREE_ROW_H > tree.scrollTop + tree.clientHeight) {
    tree.scrollTop = Math.max(0, top - tree.clientHeight / 2);
    renderTree();
  }
}

function renderTree() {
  const tree = $('tree');
  const rows = state.rows;
  let canvas = tree.firstElementChild;
  if (!canvas) {
    canvas = h('div', { class: 'tree-canvas' });
    tree.append(canvas);
  }
  canvas.style.height = `${rows.length * TREE_ROW_H}px`;
  const first = Math.max(0, Math.floor(tree.scrollTop / TREE_ROW_H) - TREE_OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((tree.scrollTop + (tree.clientHeight || 600)) / TREE_ROW_H) + TREE_OVERSCAN);
  const nodes = [];
  for (let i = first; i < last; i++) nodes.push(treeRow(rows[i], i));
  canvas.replaceChildren(...nodes);
  tree.setAttribute('aria-activedescendant', state.selected ? `node-${state.selected}` : '');
}

const TYPE_TAGS = {
  user: ['user', 'user'],
  assistant: ['asst', 'assistant'],
  toolResult: ['tool', 'tool'],
  bashExecution: ['bash', 'bash'],
  custom: ['ext', 'custom'],
  hookMessage: ['ext', 'custom'],
  model_change: ['model', 'meta'],
  thinking_level_change: ['think', 'meta'],
  compaction: ['compact', 'compaction'],
  branch_summary: ['branch', 'branch'],
  custom_message: ['ext', 'custom'],
  custom_entry: ['state', 'meta'],
  label: ['label', 'meta'],
  ttsr_injection: ['ttsr', 'meta'],
  session_init: ['init', 'meta'],
  mode_change: ['mode', 'meta'],
};

function treeRow(row, index) {
  const e = row.entry;
  const { tag, cls, text } = describeEntry(e);
  const classes = ['node', `t-${cls}`];
  if (state.path.has(e.id)) classes.push('on-path');
  if (e.id === state.selected) classes.push('selected');
  const guide = row.branchStart ? (row.lastSibling ? '└' : '├') : row.fork ? '◆' : '';
  return h(
    'div',
    {
      class: classes.join(' '),
      id: `node-${e.id}`,
      role: 'treeitem',
      'aria-selected': e.id === state.selected ? 'true' : 'false',
      'aria-level': String(row.depth + 1),
      dataset: { id: e.id, index: String(index) },
      title: `${e.type} ${e.id}${row.kids > 1 ? ` · ${row.kids} branches` : ''}\n${fmtTime(e.timestamp)}`,
      style: { top: `${index * TREE_ROW_H}px`, paddingLeft: `${6 + Math.min(row.depth, 16) * 14}px` },
    },
    h('span', { class: 'guide' }, guide),
    h('span', { class: 'tag' }, tag),
    h('span', { class: 'preview' }, text || '\u00a0'),
    row.label ? h('span', { class: 'label-pill', title: `label: ${row.label}` }, row.label) : null,
    h('span', { class: 'nid' }, String(e.id).slice(0, 8)),
  );
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts = [];
  for (const b of content) {
    if (b?.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    else if (b?.type === 'image') parts.push('[image]');
  }
  return parts.join(' ');
}

/** A short tag, a style class and one line of text for a tree row. */
function describeEntry(e) {
  const type = e.type === 'custom' ? 'custom_entry' : e.type;
  if (e.type === 'message') {
    const m = e.message ?? {};
    const [tag, cls] = TYPE_TAGS[m.role] ?? [String(m.role ?? 'msg').slice(0, 6), 'other'];
    let text = oneLine(textOf(m.content));
    if (m.role === 'assistant') {
      const calls = (Array.isArray(m.content) ? m.content : []).filter((b) => b?.type === 'toolCall').map((b) => b.name);
      if (calls.length) text = `${text ? `${text} ` : ''}→ ${calls.join(', ')}`;
      if (!text && m.errorMessage) text = `⚠ ${oneLine(m.errorMessage)}`;
      if (!text && Array.isArray(m.content) && m.content.some((b) => b?.type === 'thinking')) text = '(thinking)';
    } else if (m.role === 'toolResult') {
      text = `${m.toolName ?? 'tool'}${m.isError ? ' ✗' : ''}: ${text}`;
    } else if (m.role === 'bashExecution') {
      text = `$ ${oneLine(m.command)}`;
    }
    return { tag, cls, text };
  }
  const [tag, cls] = TYPE_TAGS[type] ?? [String(e.type ?? '?').slice(0, 7), 'other'];
  let text = '';
  switch (e.type) {
    case 'model_change':
      text = e.model ?? [e.provider, e.modelId].filter(Boolean).join('/');
      if (e.role && e.role !== 'default') text += ` (${e.role})`;
      break;
    case 'thinking_level_change':
      text = `thinking ${e.thinkingLevel ?? 'off'}`;
      break;
    case 'compaction':
      text = e.shortSummary ? oneLine(e.shortSummary) : firstLine(e.summary);
      if (e.tokensBefore) text += ` · ${fmtNum(e.tokensBefore)} tok`;
      break;
    case 'branch_summary':
      text = oneLine(e.summary);
      break;
    case 'custom':
      text = e.customType ?? '';
      break;
    case 'custom_message':
      text = `${e.customType ?? ''}: ${oneLine(textOf(e.content))}`;
      break;
    case 'label':
      text = e.label === undefined || e.label === null ? `clear label on ${e.targetId}` : `“${e.label}” → ${e.targetId}`;
      break;
    case 'ttsr_injection':
      text = (e.injectedRules ?? []).join(', ');
      break;
    case 'session_init':
      text = oneLine(e.task ?? e.systemPrompt ?? '');
      break;
    case 'mode_change':
      text = e.mode ?? '';
      break;
    default:
      text = e.type ?? '';
  }
  return { tag, cls, text };
}

function onTreeKey(ev) {
  const n = state.rows.length;
  if (!n) return;
  const cur = state.rowIndex.get(state.selected) ?? -1;
  let next = null;
  const page = Math.max(1, Math.floor($('tree').clientHeight / TREE_ROW_H) - 1);
  switch (ev.key) {
    case 'ArrowDown':
      next = Math.min(n - 1, cur + 1);
      break;
    case 'ArrowUp':
      next = Math.max(0, cur - 1);
      break;
    case 'PageDown':
      next = Math.min(n - 1, cur + page);
      break;
    case 'PageUp':
      next = Math.max(0, cur - page);
      break;
    case 'Home':
      next = 0;
      break;
    case 'End':
      next = n - 1;
      break;
    default:
      return;
  }
  ev.preventDefault();
  if (next !== cur) selectEntry(state.rows[next].entry.id, { conv: 'end', scrollTree: true });
}

// ---------------------------------------------------------------- conversation (windowed)

let convObserver = null;

/** Renders a window of MSG_CHUNK messages at the start or the end of the branch. */
function showWindow(where) {
  const n = state.messages.length;
  state.win = where === 'end' ? { start: Math.max(0, n - MSG_CHUNK), end: n } : { start: 0, end: Math.min(n, MSG_CHUNK) };
  const conv = $('conversation');
  convObserver?.disconnect();
  const list = h('div', { class: 'msg-list' });
  for (let i = state.win.start; i < state.win.end; i++) list.append(renderMessage(state.messages[i], i));
  const parts = [h('div', { class: 'sentinel sentinel-top' }), list, h('div', { class: 'sentinel sentinel-bottom' })];
  if (!n) parts.splice(1, 1, h('div', { class: 'empty' }, state.selected ? 'This branch has no messages yet (only settings entries).' : 'Empty session.'));
  conv.replaceChildren(...parts);
  updateSentinels();
  conv.scrollTop = where === 'end' ? conv.scrollHeight : 0;

  convObserver = new IntersectionObserver(
    (items) => {
      for (const it of items) {
        if (!it.isIntersecting) continue;
        if (it.target.classList.contains('sentinel-top')) loadEarlier();
        else loadLater();
      }
    },
    { root: conv, rootMargin: '800px 0px' },
  );
  // Observe after the scroll position is set, so the far end does not load at once.
  requestAnimationFrame(() => {
    for (const s of conv.querySelectorAll('.sentinel')) convObserver?.observe(s);
  });
}

function updateSentinels() {
  const conv = $('conversation');
  const n = state.messages.length;
  const top = conv.querySelector('.sentinel-top');
  const bottom = conv.querySelector('.sentinel-bottom');
  if (top) {
    top.replaceChildren(state.win.start > 0 ? h('button', { type: 'button', class: 'btn btn-small', onclick: loadEarlier }, `Show ${fmtNum(state.win.start)} earlier messages`) : '');
  }
  if (bottom) {
    const rest = n - state.win.end;
    bottom.replaceChildren(rest > 0 ? h('button', { type: 'button', class: 'btn btn-small', onclick: loadLater }, `Show ${fmtNum(rest)} more messages`) : '');
  }
}

function loadEarlier() {
  const { start } = state.win;
  if (start <= 0) return;
  const conv = $('conversation');
  const list = conv.querySelector('.msg-list');
  const newStart = Math.max(0, start - MSG_CHUNK);
  const frag = document.createDocumentFragment();
  for (let i = newStart; i < start; i++) frag.append(renderMessage(state.messages[i], i));
  // Keep the reader's place: whatever the browser's scroll anchoring did, the message that
  // was first must stay where it was on screen.
  const anchor = list.firstElementChild;
  const before = anchor?.getBoundingClientRect().top ?? 0;
  list.prepend(frag);
  state.win.start = newStart;
  updateSentinels();
  if (anchor) conv.scrollTop += anchor.getBoundingClientRect().top - before;
}

function loadLater() {
  const { end } = state.win;
  const n = state.messages.length;
  if (end >= n) return;
  const list = $('conversation').querySelector('.msg-list');
  const newEnd = Math.min(n, end + MSG_CHUNK);
  const frag = document.createDocumentFragment();
  for (let i = end; i < newEnd; i++) frag.append(renderMessage(state.messages[i], i));
  list.append(frag);
  state.win.end = newEnd;
  updateSentinels();
}

const ROLE_TITLES = {
  user: 'User',
  assistant: 'Assistant',
  toolResult: 'Tool result',
  custom: 'Extension message',
  branchSummary: 'Branch summary',
  compactionSummary: 'Compaction summary',
  bashExecution: 'Shell',
};

function renderMessage(m, index) {
  if (!m || typeof m !== 'object') {
    return h('article', { class: 'msg role-other' }, h('header', { class: 'msg-head' }, h('span', { class: 'role' }, 'Invalid message')), h('pre', { class: 'code' }, String(m)));
  }
  const role = typeof m.role === 'string' ? m.role : 'unknown';
  const known = Object.hasOwn(ROLE_TITLES, role);
  const head = h('header', { class: 'msg-head' }, h('span', { class: 'role' }, known ? ROLE_TITLES[role] : role));
  const meta = h('span', { class: 'msg-meta' });
  const body = h('div', { class: 'msg-body' });
  const classes = ['msg', `role-${known ? role : 'other'}`];

  switch (role) {
    case 'user':
      renderContent(body, m.content);
      break;
    case 'assistant': {
      const model = [m.provider, m.model].filter(Boolean).join('/');
      if (model) meta.append(h('span', { class: 'model' }, model));
      const u = m.usage;
      if (u && typeof u === 'object') {
        const bits = [`↑${fmtTok(u.input ?? 0)}`, `↓${fmtTok(u.output ?? 0)}`];
        if (u.cacheRead) bits.push(`cache ${fmtTok(u.cacheRead)}`);
        if (u.cost?.total) bits.push(`$${Number(u.cost.total).toFixed(4)}`);
        meta.append(h('span', { class: 'usage', title: `usage ${JSON.stringify(u)}` }, bits.join(' ')));
      }
      if (m.stopReason && m.stopReason !== 'stop' && m.stopReason !== 'toolUse') meta.append(h('span', { class: 'badge badge-warn' }, m.stopReason));
      renderContent(body, m.content);
      if (m.errorMessage) body.append(h('div', { class: 'error-box' }, String(m.errorMessage)));
      if (!body.childNodes.length) body.append(h('div', { class: 'muted' }, '(empty response)'));
      break;
    }
    case 'toolResult':
      head.firstChild.textContent = `Tool result · ${m.toolName ?? 'tool'}`;
      if (m.isError) {
        classes.push('is-error');
        meta.append(h('span', { class: 'badge badge-error' }, 'error'));
      }
      if (m.toolCallId) meta.append(h('span', { class: 'mono muted', title: `toolCallId ${m.toolCallId}` }, shortId(m.toolCallId)));
      renderContent(body, m.content, { monospace: true });
      if (m.details !== undefined) body.append(jsonDetails('details', m.details));
      break;
    case 'custom':
      head.firstChild.textContent = `Extension · ${m.customType ?? 'custom'}`;
      if (m.display === false) meta.append(h('span', { class: 'badge' }, 'hidden in the agent UI'));
      if (m.attribution && m.attribution !== 'agent') meta.append(h('span', { class: 'badge' }, `by ${m.attribution}`));
      renderContent(body, m.content);
      if (m.details !== undefined && m.details !== null) body.append(jsonDetails('details', m.details));
      break;
    case 'branchSummary': {
      const from = m.fromId && state.byId.has(m.fromId)
        ? h('button', { type: 'button', class: 'link mono', title: 'Show the abandoned branch', onclick: () => selectEntry(m.fromId, { conv: 'end', scrollTree: true }) }, String(m.fromId))
        : h('span', { class: 'mono' }, String(m.fromId ?? '?'));
      meta.append(h('span', null, 'summary of the branch ending at '), from);
      body.append(renderText(m.summary ?? ''));
      break;
    }
    case 'compactionSummary':
      if (m.tokensBefore) meta.append(h('span', null, `${fmtNum(m.tokensBefore)} tokens compacted`));
      if (m.shortSummary) body.append(h('div', { class: 'short-summary' }, String(m.shortSummary)));
      body.append(h('div', { class: 'compaction-note' }, 'Earlier messages were replaced by this summary in the model’s context.'));
      body.append(clampBlock(String(m.summary ?? ''), { markdown: true }));
      if (m.providerPayload) body.append(jsonDetails('provider payload', m.providerPayload));
      break;
    case 'bashExecution': {
      if (m.exitCode !== undefined && m.exitCode !== null) meta.append(h('span', { class: `badge ${m.exitCode === 0 ? 'badge-ok' : 'badge-error'}` }, `exit ${m.exitCode}`));
      if (m.cancelled) meta.append(h('span', { class: 'badge badge-warn' }, 'cancelled'));
      if (m.truncated) meta.append(h('span', { class: 'badge' }, 'truncated'));
      body.append(h('div', { class: 'bash-command' }, h('span', { class: 'prompt' }, '$ '), String(m.command ?? '')));
      if (m.output) body.append(clampBlock(String(m.output), { monospace: true }));
      break;
    }
    default: {
      if (m.content !== undefined) renderContent(body, m.content);
      const rest = { ...m };
      delete rest.content;
      body.append(jsonDetails('fields', rest, true));
    }
  }
  if (m.timestamp !== undefined) meta.append(h('time', { title: fmtTime(m.timestamp) }, fmtTime(m.timestamp, false)));
  head.append(h('span', { class: 'idx' }, `#${index + 1}`), meta);
  return h('article', { class: classes.join(' '), dataset: { index: String(index), role } }, head, body);
}

/** Renders a content string or an array of blocks into `body`. */
function renderContent(body, content, { monospace = false } = {}) {
  if (content === undefined || content === null) return;
  if (typeof content === 'string') {
    body.append(monospace ? clampBlock(content, { monospace }) : clampBlock(content, { markdown: true }));
    return;
  }
  if (!Array.isArray(content)) {
    body.append(jsonDetails('content', content, true));
    return;
  }
  for (const b of content) {
    if (!b || typeof b !== 'object') continue;
    switch (b.type) {
      case 'text':
        if (String(b.text ?? '').length) body.append(clampBlock(String(b.text), monospace ? { monospace } : { markdown: true }));
        break;
      case 'thinking': {
        const text = String(b.thinking ?? '');
        body.append(
          h(
            'details',
            { class: 'thinking' },
            h('summary', null, h('span', null, 'Thinking'), h('span', { class: 'muted' }, ` · ${fmtNum(text.length)} chars${b.redacted ? ' · redacted' : ''}`)),
            clampBlock(text, { markdown: true }),
          ),
        );
        break;
      }
      case 'toolCall':
        body.append(renderToolCall(b));
        break;
      case 'image':
        body.append(renderImage(b));
        break;
      default:
        body.append(jsonDetails(`${b.type ?? 'unknown'} block`, b, true));
    }
  }
}

function renderToolCall(b) {
  let args = b.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      /* keep the raw string */
    }
  }
  const json = typeof args === 'string' ? args : JSON.stringify(args ?? {}, null, 2);
  return h(
    'div',
    { class: 'tool-call', title: b.id ? `toolCallId ${b.id}` : undefined },
    h('div', { class: 'tool-call-head' }, h('span', { class: 'arrow' }, '→'), h('span', { class: 'tool-name' }, String(b.name ?? 'tool')), b.id ? h('span', { class: 'mono muted' }, shortId(b.id)) : null),
    clampBlock(json, { monospace: true, lines: 16 }),
  );
}

const MIME_RE = /^image\/[a-z0-9.+-]+$/i;

function renderImage(b) {
  const data = typeof b.data === 'string' ? b.data : '';
  const mime = typeof b.mimeType === 'string' && MIME_RE.test(b.mimeType) ? b.mimeType : 'image/png';
  if (!data || data.startsWith('blob:') || !/^[A-Za-z0-9+/=\s_-]+$/.test(data)) {
    return h('div', { class: 'image-missing' }, data.startsWith('blob:') ? `image kept in the blob store (${data.slice(0, 24)}…), not available in the browser` : 'image without data');
  }
  const img = h('img', { alt: `image (${mime})`, loading: 'lazy', decoding: 'async', title: `${mime} · ${fmtBytes(Math.floor((data.length * 3) / 4))} · click to zoom` });
  img.src = `data:${mime};base64,${data.replace(/\s+/g, '')}`;
  img.addEventListener('click', () => img.classList.toggle('zoomed'));
  return h('figure', { class: 'image' }, img, h('figcaption', null, mime));
}

function jsonDetails(title, value, open = false) {
  let text;
  try {
    text = JSON.stringify(value, null, 2);
  } catch {
    text = String(value);
  }
  return h('details', { class: 'json-details', open }, h('summary', null, title), clampBlock(text ?? 'undefined', { monospace: true, lines: 30 }));
}

/**
 * A text block that shows the first lines of long content with a button to expand. Only
 * the visible part is put in the DOM until the reader asks for more.
 */
function clampBlock(text, { monospace = false, markdown = false, lines = CLAMP_LINES } = {}) {
  const wrap = h('div', { class: monospace ? 'block mono-block' : 'block' });
  const make = (t) => (monospace ? h('pre', { class: 'code' }, t) : markdown ? renderText(t) : h('div', { class: 'text' }, t));
  let cut = -1;
  let count = 0;
  for (let i = 0; i < text.length && i < CLAMP_CHARS * 4; i++) {
    if (text.charCodeAt(i) === 10 && ++count >= lines) {
      cut = i;
      break;
    }
  }
  if (cut < 0 && text.length > CLAMP_CHARS) cut = CLAMP_CHARS;
  if (cut > CLAMP_CHARS) cut = CLAMP_CHARS;
  if (cut < 0) {
    wrap.append(make(text));
    return wrap;
  }
  const totalLines = countLines(text);
  const more = h(
    'button',
    {
      type: 'button',
      class: 'btn btn-small expand',
      onclick: () => {
        wrap.replaceChildren(make(text));
      },
    },
    `Show all · ${fmtNum(totalLines)} lines, ${fmtNum(text.length)} chars`,
  );
  wrap.classList.add('clamped');
  wrap.append(make(text.slice(0, cut)), more);
  return wrap;
}

function countLines(text) {
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Plain text with a little markdown: fenced code, `inline code`, **bold**, # headings. No HTML. */
function renderText(text) {
  const out = h('div', { class: 'text' });
  const fence = /```([^\n`]*)\n([\s\S]*?)(?:```|$)/g;
  let last = 0;
  let m;
  while ((m = fence.exec(text))) {
    if (m.index > last) out.append(prose(text.slice(last, m.index)));
    out.append(h('pre', { class: 'code', title: m[1] || undefined }, m[2].replace(/\n$/, '')));
    last = fence.lastIndex;
    if (m[0].length === 0) break;
  }
  if (last < text.length) out.append(prose(text.slice(last)));
  return out;
}

/** Markdown headings become bold lines; the rest goes through inlineCode. */
function prose(text) {
  const frag = document.createDocumentFragment();
  const heading = /^#{1,6}[ \t]+(.+)$/gm;
  let last = 0;
  let m;
  while ((m = heading.exec(text))) {
    if (m.index > last) frag.append(inlineCode(text.slice(last, m.index)));
    frag.append(h('span', { class: 'md-h' }, inlineCode(m[1])));
    last = heading.lastIndex;
  }
  if (last < text.length) frag.append(inlineCode(text.slice(last)));
  return frag;
}

function inlineCode(text) {
  const frag = document.createDocumentFragment();
  const parts = text.split(/(`[^`\n]+`|\*\*[^*\n]+\*\*)/g);
  for (const p of parts) {
    if (p.length > 2 && p.startsWith('`') && p.endsWith('`')) frag.append(h('code', null, p.slice(1, -1)));
    else if (p.length > 4 && p.startsWith('**') && p.endsWith('**')) frag.append(h('strong', null, p.slice(2, -2)));
    else if (p) frag.append(p);
  }
  return frag;
}

// ---------------------------------------------------------------- inspector

function renderInspector(id) {
  const box = $('inspector');
  const e = id ? state.byId.get(id) : null;
  if (!e) {
    $('inspector-meta').textContent = '';
    box.replaceChildren(h('div', { class: 'muted pad' }, 'Select an entry in the tree.'));
    return;
  }
  $('inspector-meta').textContent = `${e.type} · ${e.id}`;
  const row = state.rows[state.rowIndex.get(id)];
  const parent = e.parentId && state.byId.has(e.parentId)
    ? h('button', { type: 'button', class: 'link mono', onclick: () => selectEntry(e.parentId, { conv: 'end', scrollTree: true }) }, e.parentId)
    : h('span', { class: 'mono' }, e.parentId ?? 'null (root)');
  const label = attempt(() => state.session.label(id)) ?? row?.label ?? null;
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', null, 'parent'),
    h('dd', null, parent),
    h('dt', null, 'time'),
    h('dd', null, fmtTime(e.timestamp) || '—'),
    h('dt', null, 'children'),
    h('dd', null, String(row?.kids ?? 0)),
    h('dt', null, 'depth'),
    h('dd', null, `${fmtNum(state.path.size)} entries on this path`),
    label ? [h('dt', null, 'label'), h('dd', null, h('span', { class: 'label-pill' }, String(label)))] : null,
  );
  box.replaceChildren(facts, highlightJson(JSON.stringify(e, null, 2)));
  box.scrollTop = 0;
}

const JSON_TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** Pretty JSON with coloured tokens, built from text nodes only. */
function highlightJson(text) {
  const pre = h('pre', { class: 'code json', dataset: { testid: 'raw-json' } });
  if (text.length > HIGHLIGHT_MAX) {
    pre.textContent = text;
    return pre;
  }
  let last = 0;
  let m;
  JSON_TOKEN.lastIndex = 0;
  while ((m = JSON_TOKEN.exec(text))) {
    if (m.index > last) pre.append(text.slice(last, m.index));
    const cls = m[1] ? (m[2] ? 'j-key' : 'j-str') : m[3] ? 'j-lit' : 'j-num';
    pre.append(h('span', { class: cls }, m[1] ?? m[0]));
    if (m[2]) pre.append(m[2]);
    last = JSON_TOKEN.lastIndex;
  }
  if (last < text.length) pre.append(text.slice(last));
  return pre;
}

main();
