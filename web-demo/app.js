// The in-browser session viewer: the page. It renders what the worker (worker.js) answers;
// the worker runs the xcsh-session wasm package and owns the storages (samples, opened
// folder, browser storage = OPFS, memory). The page never holds a whole large session: it
// gets the tree as compact columns and the conversation in windows of messages.
//
// Safety: session content is untrusted. It only reaches the DOM through text nodes and
// element properties (never innerHTML), and images only as `data:image/...;base64` URLs.

const DEFAULT_SAMPLE = 'demo-branches.jsonl';
const TREE_ROW_H = 26; // px; keep in sync with --tree-row-h in style.css
const TREE_OVERSCAN = 12;
const MSG_CHUNK = 40; // messages per window step (the worker's first window has the same size)
const CLAMP_LINES = 24; // long text blocks show this many lines until expanded
const CLAMP_CHARS = 4000;
const HIGHLIGHT_MAX = 400_000; // raw JSON above this size is shown without colours
const SOURCE_NAMES = { samples: 'sample', opened: 'opened folder', opfs: 'browser storage', memory: 'memory' };

/** Everything about the open session, as the worker described it. */
const state = {
  view: null, // {source, writable, persistent, path, name, size, loadMs, header, version, report, warnings, sessionId, file}
  rows: null, // columns: ids, texts, parent, depth, flags, kids, kind, kindTable
  labels: new Map(), // row index → label
  rowIndex: new Map(), // entry id → row index
  selected: null, // the leaf of the shown branch (the session's leaf)
  pending: null, // a clicked entry whose branch is on its way
  inspected: null, // the entry shown in the inspector
  pathMask: new Uint8Array(0), // 1 for rows on the root..selected path
  onPath: 0,
  count: 0, // messages in the shown context
  meta: {},
  win: { start: 0, end: 0 }, // rendered message window [start, end)
  selGen: 0, // bumps on each selection, so late answers are dropped
  loadGen: 0,
  sources: [],
};

// ---------------------------------------------------------------- the worker

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const pending = new Map();
let nextId = 1;

worker.addEventListener('message', (ev) => {
  const d = ev.data;
  const p = pending.get(d?.id);
  if (!p) return;
  if (d.type === 'progress') {
    p.onProgress?.(d);
    return;
  }
  pending.delete(d.id);
  if (d.ok) p.resolve(d.result);
  else p.reject(Object.assign(new Error(d.error?.message ?? 'worker error'), { kind: d.error?.kind, code: d.error?.code }));
});
worker.addEventListener('error', (ev) => {
  ev.preventDefault();
  const msg = `The viewer's worker stopped: ${ev.message || 'it could not start (is web-demo/pkg built? run scripts/build-js)'}`;
  for (const p of pending.values()) p.reject(new Error(msg));
  pending.clear();
  showBanner('error', msg);
});

/** Calls an operation of the worker; `onProgress` receives its progress reports. */
function call(op, args = {}, { onProgress } = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    worker.postMessage({ id, op, args });
  });
}

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

function oneLine(s, max = 140) {
  const str = String(s ?? '').replace(/\s+/g, ' ').trim();
  return str.length > max ? `${str.slice(0, max - 1)}…` : str;
}

// ---------------------------------------------------------------- banner, toast, progress

function showBanner(kind, text) {
  const b = $('banner');
  b.className = `banner banner-${kind}`;
  b.replaceChildren(h('span', null, text), h('button', { type: 'button', class: 'banner-close', 'aria-label': 'Dismiss', onclick: clearBanner }, '×'));
  b.hidden = false;
}

function clearBanner() {
  $('banner').hidden = true;
}

let toastTimer = 0;
function toast(text, kind = 'ok', testid = 'toast') {
  const t = $('toast');
  t.className = `toast toast-${kind}`;
  t.dataset.testid = testid;
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.hidden = true), 6000);
}

const PHASES = {
  read: ['Reading', 0, 10],
  scan: ['Scanning the folder', 0, 5],
  parse: ['Parsing', 10, 75],
  open: ['Opening', 10, 75],
  tree: ['Building the tree', 75, 88],
  context: ['Building the context', 88, 99],
  import: ['Importing', 0, 100],
};

function showProgress(label) {
  const p = $('progress');
  p.hidden = false;
  p.dataset.label = label;
  setProgress({ phase: 'read', done: 0, total: 0 });
}

function setProgress({ phase, done, total }) {
  const p = $('progress');
  const [verb, from, to] = PHASES[phase] ?? ['Working', 0, 100];
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  const pct = Math.round(from + (to - from) * frac);
  p.setAttribute('aria-valuenow', String(pct));
  p.querySelector('.progress-fill').style.width = `${pct}%`;
  const amount = total > 0 ? ` · ${fmtBytes(done)} of ${fmtBytes(total)}` : '…';
  p.querySelector('.progress-text').textContent = `${verb} ${p.dataset.label ?? ''}${amount}`;
}

function hideProgress() {
  $('progress').hidden = true;
}

// ---------------------------------------------------------------- start-up

async function main() {
  wireUi();
  $('edit-target').value = localStorage.getItem('xcsh-viewer-edit-target') === 'memory' ? 'memory' : 'opfs';
  try {
    await call('init', { history: new URLSearchParams(location.search).get('history') === 'memory' ? 'memory' : undefined });
  } catch (e) {
    $('session-bar').replaceChildren(h('span', { class: 'muted' }, 'No session loaded.'));
    showBanner('error', `Cannot load the WebAssembly package (./pkg/xcsh_session.js): ${errMsg(e)}. Build it with scripts/build-js.`);
    return;
  }
  const samples = await loadSampleList();
  const params = new URLSearchParams(location.search);
  const source = params.get('source');
  const path = params.get('path');
  let note = null;
  if (source && path) {
    if (await openPath(source, path, { quietFail: true })) return;
    note = source === 'memory' ? 'The session you had open was kept in memory only: it is gone after a reload.' : `Cannot reopen ${path} from the ${SOURCE_NAMES[source] ?? source}: ${state.lastError ?? 'not found'}.`;
  }
  const wanted = params.get('sample');
  const file = samples.some((s) => s.file === wanted) ? wanted : DEFAULT_SAMPLE;
  await openSample(file);
  if (note) showBanner('warn', note);
}

function wireUi() {
  $('file-input').addEventListener('change', async (ev) => {
    const file = ev.target.files?.[0];
    ev.target.value = '';
    if (file) await openFile(file);
  });
  $('open-folder').addEventListener('click', async () => {
    if (typeof window.showDirectoryPicker === 'function') {
      let handle;
      try {
        handle = await window.showDirectoryPicker({ id: 'xcsh-agent', mode: 'read' });
      } catch (e) {
        if (e?.name !== 'AbortError') $('folder-input').click();
        return;
      }
      await openFolder({ handle }, handle.name);
    } else {
      $('folder-input').click();
    }
  });
  $('folder-input').addEventListener('change', async (ev) => {
    const files = [...(ev.target.files ?? [])].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
    ev.target.value = '';
    if (files.length) await openFolder({ files }, files[0].path.split('/')[0]);
  });
  $('sample-select').addEventListener('change', (ev) => {
    if (ev.target.value) openSample(ev.target.value);
  });
  $('edit-target').addEventListener('change', (ev) => {
    localStorage.setItem('xcsh-viewer-edit-target', ev.target.value);
    if (state.view) renderSessionBar();
    if (state.inspected) renderInspector(state.inspected);
  });
  $('open-picker').addEventListener('click', () => openPicker());
  $('open-history').addEventListener('click', () => openHistory());
  window.addEventListener('keydown', (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 'k') {
      ev.preventDefault();
      openPicker();
    } else if ((ev.ctrlKey || ev.metaKey) && ev.shiftKey && ev.key.toLowerCase() === 'h') {
      ev.preventDefault();
      openHistory();
    } else if (ev.key === 'Escape' && !$('url-panel').hidden && !$('picker').open) {
      closeUrlPanel();
    }
  });
  wirePicker();
  wireHistory();
  wireDrop();

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
    const json = $('inspector').querySelector('[data-testid=raw-json]')?.textContent;
    if (!json) return;
    try {
      await navigator.clipboard.writeText(json);
      flash($('copy-json'), 'Copied');
    } catch {
      flash($('copy-json'), 'Not allowed');
    }
  });
  $('url-close').addEventListener('click', closeUrlPanel);
  // artifact:// and agent:// links anywhere in the conversation or the inspector.
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest?.('.int-link');
    if (a) {
      ev.preventDefault();
      openUrl(a.dataset.url);
    }
  });
}

function wireDrop() {
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
    // Folders (and several files) go through the folder path; entries must be taken now.
    const entries = [...(ev.dataTransfer.items ?? [])].map((i) => (i.kind === 'file' ? i.webkitGetAsEntry?.() : null)).filter(Boolean);
    const files = [...(ev.dataTransfer.files ?? [])];
    if (entries.some((e) => e.isDirectory) || files.length > 1) {
      const collected = [];
      for (const e of entries) await collectEntry(e, '', collected);
      if (!entries.length) for (const f of files) collected.push({ path: f.name, file: f });
      const root = entries.length === 1 && entries[0].isDirectory ? entries[0].name : 'dropped';
      const list = entries.length === 1 && entries[0].isDirectory ? collected : collected.map((c) => ({ ...c, path: `${root}/${c.path}` }));
      if (list.length) await openFolder({ files: list }, root);
      return;
    }
    if (files[0]) await openFile(files[0]);
  });
}

/** Files under a dropped FileSystemEntry, with paths relative to the drop. */
async function collectEntry(entry, prefix, out) {
  if (entry.isFile) {
    const file = await new Promise((res, rej) => entry.file(res, rej));
    out.push({ path: `${prefix}${entry.name}`, file });
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const e of batch) await collectEntry(e, `${prefix}${entry.name}/`, out);
    }
  }
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
    h('option', { value: '', disabled: true }, 'Other session'),
    ...samples.map((s) => h('option', { value: s.file, title: s.description ?? '' }, s.title ?? s.file)),
  );
  return samples;
}

// ---------------------------------------------------------------- opening

/** Runs an opening operation with the progress bar; applies its answer if still wanted. */
async function load(op, args, label) {
  const gen = ++state.loadGen;
  showProgress(label);
  try {
    const out = await call(op, args, { onProgress: (p) => gen === state.loadGen && setProgress(p) });
    if (gen !== state.loadGen) return null;
    applyOpen(out);
    return out;
  } catch (e) {
    if (gen === state.loadGen) throw e;
    return null;
  } finally {
    if (gen === state.loadGen) hideProgress();
  }
}

function setUrl(params) {
  const url = new URL(location.href);
  for (const k of ['sample', 'source', 'path']) url.searchParams.delete(k);
  for (const [k, v] of Object.entries(params)) if (v) url.searchParams.set(k, v);
  history.replaceState(null, '', url);
}

async function openSample(file) {
  try {
    if (await load('openSample', { file }, file)) {
      $('sample-select').value = file;
      setUrl(file === DEFAULT_SAMPLE ? {} : { sample: file });
    }
  } catch (e) {
    showBanner('error', `Cannot load sample ${file}: ${errMsg(e)}`);
  }
}

async function openFile(file) {
  try {
    if (await load('openFile', { file, name: file.name }, file.name)) {
      $('sample-select').value = '';
      setUrl({});
    }
  } catch (e) {
    showBanner('error', `Cannot open ${file.name}: ${errMsg(e)}`);
  }
}

async function openPath(source, path, { quietFail = false } = {}) {
  const name = path.slice(path.lastIndexOf('/') + 1);
  try {
    if (await load('openPath', { source, path }, name)) {
      $('sample-select').value = '';
      setUrl({ source, path });
      return true;
    }
  } catch (e) {
    state.lastError = errMsg(e);
    if (!quietFail) showBanner('error', `Cannot open ${name}: ${errMsg(e)}`);
  }
  return false;
}

async function openFolder(args, name) {
  const gen = ++state.loadGen;
  showProgress(name);
  try {
    const info = await call('loadFolder', args, { onProgress: (p) => gen === state.loadGen && setProgress(p) });
    if (info.note) showBanner('warn', info.note);
    else toast(`Opened ${name}: ${fmtNum(info.sessions)} session${info.sessions === 1 ? '' : 's'}, ${fmtBytes(info.bytes)} (read-only)`);
    await openPicker('opened');
  } catch (e) {
    showBanner('error', `Cannot open the folder ${name}: ${errMsg(e)}`);
  } finally {
    if (gen === state.loadGen) hideProgress();
  }
}

/** Shows what the worker answered for an open (or an edit). */
function applyOpen(out, { keepScroll = false } = {}) {
  const { view, rows, sel } = out;
  state.view = view;
  state.rows = rows;
  state.labels = new Map(rows.labels);
  state.rowIndex = new Map();
  for (let i = 0; i < rows.ids.length; i++) state.rowIndex.set(rows.ids[i], i);
  const n = rows.ids.length;
  const report = view.report ?? {};
  if (n === 0 && view.size === 0) showBanner('warn', `${view.name} is empty: there is no session in it.`);
  else if (n === 0 && report.issues?.length) showBanner('warn', `No session could be read from ${view.name}: none of its lines is a session record.`);
  else clearBanner();
  renderSessionBar();
  $('tree-meta').textContent = `${fmtNum(n)} entries`;
  if (!keepScroll) $('tree').scrollTop = 0;
  applySelection(sel, { conv: keepScroll ? 'end' : 'start', scrollTree: keepScroll });
  document.title = `${view.header?.title || view.name} · xcsh session viewer`;
}

// ---------------------------------------------------------------- selection

/** Moves the leaf to `id` (the worker builds that branch's context) and shows it. */
async function selectEntry(id, { conv = 'end', scrollTree = false } = {}) {
  if (!id || !state.rows) return;
  const gen = ++state.selGen;
  // Show the click at once (as pending); the context follows.
  state.pending = id;
  renderTree();
  try {
    const sel = await call('select', { id, where: conv });
    if (gen !== state.selGen) return;
    applySelection(sel, { conv, scrollTree, gen });
  } catch (e) {
    if (gen !== state.selGen) return;
    state.pending = null;
    renderTree();
    showBanner('error', `Cannot show the branch of ${id}: ${errMsg(e)}`);
  }
}

function applySelection(sel, { conv = 'start', scrollTree = false, gen = ++state.selGen } = {}) {
  state.selGen = gen;
  state.pending = null;
  state.selected = sel.leafId;
  state.inspected = sel.leafId;
  state.pathMask = sel.pathMask;
  state.onPath = sel.onPath;
  state.count = sel.count;
  state.meta = sel.meta ?? {};
  if (scrollTree && sel.leafId) scrollTreeTo(sel.leafId);
  renderTree();
  renderConvMeta();
  renderWindow(sel.win, conv);
  renderInspector(sel.leafId);
}

/** Shows an entry in the tree and the inspector without changing the branch. */
function inspectEntry(id) {
  if (!state.rowIndex.has(id)) return;
  state.inspected = id;
  scrollTreeTo(id);
  renderTree();
  renderInspector(id);
}

let keyTimer = 0;
function onTreeKey(ev) {
  const n = state.rows?.ids.length ?? 0;
  if (!n) return;
  const cur = state.rowIndex.get(state.pending ?? state.selected) ?? -1;
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
  if (next === cur) return;
  // Move the highlight now; build the context once the keys rest.
  const id = state.rows.ids[next];
  state.pending = id;
  scrollTreeTo(id);
  renderTree();
  clearTimeout(keyTimer);
  keyTimer = setTimeout(() => selectEntry(id, { conv: 'end', scrollTree: true }), 120);
}

// ---------------------------------------------------------------- session bar

/** An untitled session is named by its first user message (as the picker does). */
function firstUserText() {
  const r = state.rows;
  if (!r) return null;
  for (let i = 0; i < r.ids.length && i < 2000; i++) if (r.kindTable[r.kind[i]]?.[1] === 'user' && r.texts[i]) return oneLine(r.texts[i], 80);
  return null;
}

function editTarget() {
  return $('edit-target').value === 'memory' ? 'memory' : 'opfs';
}

function renderSessionBar() {
  const v = state.view;
  const header = v.header ?? {};
  const report = v.report ?? {};
  const version = v.version ?? header.version ?? 1;
  const migration = report.migration;

  const chip = (label, value, cls = '') =>
    value === undefined || value === null || value === ''
      ? null
      : h('span', { class: `chip ${cls}`, title: `${label}: ${value}`, dataset: { testid: `chip-${label}` } }, h('span', { class: 'chip-k' }, label), h('span', { class: 'chip-v' }, String(value)));

  const migratedText = v.writable ? `v${version} → v${migration?.toVersion ?? 3} (copy rewritten)` : `v${version} → v${migration?.toVersion ?? 3} migrated in memory`;
  const title = header.title ? String(header.title) : firstUserText();
  const where = v.source ? SOURCE_NAMES[v.source] ?? v.source : v.origin === 'sample' ? 'sample' : 'file';
  const top = h(
    'div',
    { class: 'sb-row' },
    h('h1', { class: `sb-title${header.title ? '' : ' untitled'}`, title: header.title ? title : `untitled · ${v.name}` }, title ?? v.name),
    chip('id', header.id, 'mono'),
    chip('cwd', header.cwd, 'mono'),
    chip('created', fmtTime(header.timestamp)),
    h(
      'span',
      { class: `chip ${migration ? 'chip-warn' : 'chip-ok'}`, title: migration ? (v.writable ? 'The file was in an older format; this copy was migrated and rewritten.' : 'The file is in an older format; the viewer migrated it in memory (the file is not changed).') : 'Current format' },
      h('span', { class: 'chip-k' }, 'version'),
      h('span', { class: 'chip-v' }, migration ? migratedText : `v${version}`),
    ),
    migration && !v.writable ? h('span', { class: 'badge badge-warn', dataset: { testid: 'migration-needed' } }, 'migration needed') : null,
    chip('file', v.size ? `${v.name} · ${fmtBytes(v.size)}` : v.name),
    chip('parsed', `${Math.round(v.loadMs)} ms`),
    header.parentSession ? chip('parent', header.parentSession, 'mono') : null,
  );

  const source = h(
    'span',
    { class: `chip chip-source src-${v.source ?? v.origin ?? 'file'}`, dataset: { testid: 'chip-source' }, title: v.path ?? v.name },
    h('span', { class: 'chip-k' }, 'in'),
    h('span', { class: 'chip-v' }, v.writable ? `${where} · editable` : `${where} · read-only`),
  );
  const actions = h('span', { class: 'sb-actions' }, source);
  if (v.writable) {
    actions.append(
      h('button', { type: 'button', class: 'btn btn-small', id: 'fork-btn', title: 'Continue in a copy of this session under a new id (artifacts copied)', onclick: forkSession }, 'Fork'),
      h('button', { type: 'button', class: 'btn btn-small btn-danger', id: 'delete-btn', title: `Delete this session from the ${where}`, onclick: (ev) => deleteCurrent(ev.currentTarget) }, 'Delete'),
    );
  } else {
    const target = editTarget();
    actions.append(
      h(
        'button',
        { type: 'button', class: 'btn btn-small btn-accent', id: 'import-btn', title: `Copy this session (and its artifacts) into the ${SOURCE_NAMES[target]} to label, branch and fork it`, onclick: () => importCurrent() },
        target === 'opfs' ? 'Import to browser storage' : 'Copy to memory',
      ),
    );
  }

  const warnings = collectWarnings(report, v.warnings ?? []);
  const rows = [h('div', { class: 'sb-line' }, top, actions)];
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

function collectWarnings(report, extra) {
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
  for (const w of extra) if (!out.includes(String(w))) out.push(String(w));
  return out;
}

function renderConvMeta() {
  const ctx = state.meta ?? {};
  const parts = [`${fmtNum(state.count)} messages`];
  if (ctx.thinkingLevel) parts.push(`thinking ${ctx.thinkingLevel}`);
  const model = ctx.models?.default ?? Object.values(ctx.models ?? {})[0];
  if (model) parts.push(String(model));
  if (ctx.mode && ctx.mode !== 'none') parts.push(`mode ${ctx.mode}`);
  $('conv-meta').textContent = parts.join(' · ');
}

// ---------------------------------------------------------------- edits

/** Runs an edit in the worker (it answers once the change is on disk and reloads cleanly). */
async function runEdit(op, args, done) {
  try {
    const out = await call(op, args);
    applyOpen(out, { keepScroll: true });
    const check = out.saved?.check;
    const where = SOURCE_NAMES[out.view.source] ?? out.view.source;
    toast(`${done} · saved to ${where}${check?.ok ? ` · ${check.onDisk ? 'read back from disk' : 'reloaded'} with Session.open ✓` : ''}`, 'ok', 'save-status');
    return out;
  } catch (e) {
    showBanner('error', `${done.replace(/^[A-Z]/, (c) => c.toLowerCase())} failed: ${errMsg(e)}`);
    return null;
  }
}

async function importCurrent() {
  const target = editTarget();
  const gen = ++state.loadGen;
  showProgress(state.view?.name ?? 'session');
  try {
    const out = await call('importCurrent', { target }, { onProgress: (p) => gen === state.loadGen && setProgress(p) });
    applyOpen(out);
    setUrl({ source: out.view.source, path: out.view.path });
    $('sample-select').value = '';
    toast(out.imported.already ? `Already in the ${SOURCE_NAMES[target]}: opened that copy` : `Imported into the ${SOURCE_NAMES[target]}: this copy can be edited`, 'ok', 'save-status');
  } catch (e) {
    showBanner('error', `Import failed: ${errMsg(e)}`);
  } finally {
    if (gen === state.loadGen) hideProgress();
  }
}

async function forkSession() {
  const out = await runEdit('fork', {}, 'Forked');
  if (out) setUrl({ source: out.view.source, path: out.view.path });
}

async function deleteCurrent(button) {
  if (button.dataset.armed !== '1') {
    button.dataset.armed = '1';
    button.textContent = 'Delete? Click again';
    setTimeout(() => {
      if (button.isConnected) {
        button.dataset.armed = '';
        button.textContent = 'Delete';
      }
    }, 4000);
    return;
  }
  const { source, path, name } = state.view;
  try {
    await call('deleteSession', { source, path });
    toast(`Deleted ${name} from the ${SOURCE_NAMES[source]}`);
    await openSample(DEFAULT_SAMPLE);
  } catch (e) {
    showBanner('error', `Delete failed: ${errMsg(e)}`);
  }
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
  }
}

function renderTree() {
  const tree = $('tree');
  const rows = state.rows;
  if (!rows) return;
  let canvas = tree.firstElementChild;
  if (!canvas) {
    canvas = h('div', { class: 'tree-canvas' });
    tree.append(canvas);
  }
  const n = rows.ids.length;
  canvas.style.height = `${n * TREE_ROW_H}px`;
  const first = Math.max(0, Math.floor(tree.scrollTop / TREE_ROW_H) - TREE_OVERSCAN);
  const last = Math.min(n, Math.ceil((tree.scrollTop + (tree.clientHeight || 600)) / TREE_ROW_H) + TREE_OVERSCAN);
  const nodes = [];
  for (let i = first; i < last; i++) nodes.push(treeRow(i));
  canvas.replaceChildren(...nodes);
  tree.setAttribute('aria-activedescendant', state.selected ? `node-${state.selected}` : '');
}

function treeRow(i) {
  const r = state.rows;
  const id = r.ids[i];
  const [tag, cls] = r.kindTable[r.kind[i]] ?? ['?', 'other'];
  const flags = r.flags[i];
  const fork = flags & 1;
  const branchStart = flags & 2;
  const lastSibling = flags & 4;
  const kids = r.kids[i];
  const label = state.labels.get(i);
  const classes = ['node', `t-${cls}`];
  if (state.pathMask[i] && state.selected && state.rowIndex.get(state.selected) !== undefined) classes.push('on-path');
  if (id === state.selected) classes.push('selected');
  if (id === state.inspected && id !== state.selected) classes.push('inspected');
  if (id === state.pending && id !== state.selected) classes.push('pending');
  const guide = branchStart ? (lastSibling ? '└' : '├') : fork ? '◆' : '';
  return h(
    'div',
    {
      class: classes.join(' '),
      id: `node-${id}`,
      role: 'treeitem',
      'aria-selected': id === state.selected ? 'true' : 'false',
      'aria-level': String(r.depth[i] + 1),
      dataset: { id, index: String(i) },
      title: `${tag} ${id}${kids > 1 ? ` · ${kids} branches` : ''}${label ? ` · label “${label}”` : ''}`,
      style: { top: `${i * TREE_ROW_H}px`, paddingLeft: `${6 + Math.min(r.depth[i], 16) * 14}px` },
    },
    h('span', { class: 'guide' }, guide),
    h('span', { class: 'tag' }, tag),
    h('span', { class: 'preview' }, r.texts[i] || '\u00a0'),
    label ? h('span', { class: 'label-pill', title: `label: ${label}` }, label) : null,
    h('span', { class: 'nid' }, String(id).slice(0, 8)),
  );
}

// ---------------------------------------------------------------- conversation (windowed)

let convObserver = null;
let msgBusy = false;

/** Renders a window of messages the worker sent, at the start or the end of the branch. */
function renderWindow(win, where) {
  const n = state.count;
  state.win = { start: win.start, end: win.end };
  const conv = $('conversation');
  convObserver?.disconnect();
  const list = h('div', { class: 'msg-list' });
  win.items.forEach((it, k) => list.append(renderMessage(it.m, win.start + k, it.id)));
  const parts = [h('div', { class: 'sentinel sentinel-top' }), list, h('div', { class: 'sentinel sentinel-bottom' })];
  if (!n) parts.splice(1, 1, h('div', { class: 'empty' }, state.selected ? 'This branch has no messages yet (only settings entries).' : 'Empty session.'));
  conv.replaceChildren(...parts);
  updateSentinels();
  conv.scrollTop = where === 'end' ? conv.scrollHeight : 0;

  const gen = state.selGen;
  convObserver = new IntersectionObserver(
    (items) => {
      for (const it of items) {
        if (!it.isIntersecting || gen !== state.selGen) continue;
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

async function showWindow(where) {
  const n = state.count;
  const [start, end] = where === 'end' ? [Math.max(0, n - MSG_CHUNK), n] : [0, Math.min(n, MSG_CHUNK)];
  const gen = state.selGen;
  const win = await call('messages', { start, end });
  if (gen === state.selGen) renderWindow(win, where);
}

function updateSentinels() {
  const conv = $('conversation');
  const n = state.count;
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

async function loadEarlier() {
  const { start } = state.win;
  if (start <= 0 || msgBusy) return;
  msgBusy = true;
  const gen = state.selGen;
  try {
    const newStart = Math.max(0, start - MSG_CHUNK);
    const win = await call('messages', { start: newStart, end: start });
    if (gen !== state.selGen) return;
    const conv = $('conversation');
    const list = conv.querySelector('.msg-list');
    if (!list) return;
    const frag = document.createDocumentFragment();
    win.items.forEach((it, k) => frag.append(renderMessage(it.m, newStart + k, it.id)));
    // Keep the reader's place: whatever the browser's scroll anchoring did, the message
    // that was first must stay where it was on screen.
    const anchor = list.firstElementChild;
    const before = anchor?.getBoundingClientRect().top ?? 0;
    list.prepend(frag);
    state.win.start = newStart;
    updateSentinels();
    if (anchor) conv.scrollTop += anchor.getBoundingClientRect().top - before;
  } finally {
    msgBusy = false;
  }
}

async function loadLater() {
  const { end } = state.win;
  if (end >= state.count || msgBusy) return;
  msgBusy = true;
  const gen = state.selGen;
  try {
    const newEnd = Math.min(state.count, end + MSG_CHUNK);
    const win = await call('messages', { start: end, end: newEnd });
    if (gen !== state.selGen) return;
    const list = $('conversation').querySelector('.msg-list');
    if (!list) return;
    const frag = document.createDocumentFragment();
    win.items.forEach((it, k) => frag.append(renderMessage(it.m, end + k, it.id)));
    list.append(frag);
    state.win.end = newEnd;
    updateSentinels();
  } finally {
    msgBusy = false;
  }
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

function renderMessage(m, index, entryId) {
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
      const from = m.fromId && state.rowIndex.has(m.fromId)
        ? h('button', { type: 'button', class: 'link mono', title: `Show the branch ending at ${m.fromId}`, onclick: () => selectEntry(m.fromId, { conv: 'end', scrollTree: true }) }, String(m.fromId))
        : h('span', { class: 'mono' }, String(m.fromId ?? '?'));
      meta.append(h('span', { title: 'fromId: the entry this branch summary was recorded from' }, 'from '), from);
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
  const idx = entryId && state.rowIndex.has(entryId)
    ? h('button', { type: 'button', class: 'idx entry-link', title: `Show entry ${entryId} in the tree`, dataset: { entry: entryId }, onclick: () => inspectEntry(entryId) }, `#${index + 1}`)
    : h('span', { class: 'idx' }, `#${index + 1}`);
  head.append(idx, meta);
  return h('article', { class: classes.join(' '), dataset: { index: String(index), role, entry: entryId ?? '' } }, head, body);
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
    return h('div', { class: 'image-missing' }, data.startsWith('blob:') ? `image kept in the blob store (${data.slice(0, 24)}…), not available here` : 'image without data');
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
  const make = (t) => (monospace ? h('pre', { class: 'code' }, linkify(t)) : markdown ? renderText(t) : h('div', { class: 'text' }, linkify(t)));
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
    out.append(h('pre', { class: 'code', title: m[1] || undefined }, linkify(m[2].replace(/\n$/, ''))));
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
    if (p.length > 2 && p.startsWith('`') && p.endsWith('`')) frag.append(h('code', null, linkify(p.slice(1, -1))));
    else if (p.length > 4 && p.startsWith('**') && p.endsWith('**')) frag.append(h('strong', null, linkify(p.slice(2, -2))));
    else if (p) frag.append(linkify(p));
  }
  return frag;
}

// artifact://<n> and agent://<id>[/path | ?q=...] (brackets allowed for [0] steps).
const INTERNAL_URL = /\b(?:artifact:\/\/[0-9A-Za-z_-]*|agent:\/\/[^\s"'`<>(){},;\\]+)/g;

/** Text with artifact:// and agent:// URLs turned into buttons that open the linked content. */
function linkify(text) {
  if (!text.includes('://')) return text;
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const m of text.matchAll(INTERNAL_URL)) {
    let url = m[0];
    // Trailing punctuation belongs to the prose, and so does an unmatched `]`.
    for (;;) {
      if (/[.,:;!?]$/.test(url)) url = url.slice(0, -1);
      else if (url.endsWith(']') && url.split('[').length < url.split(']').length) url = url.slice(0, -1);
      else break;
    }
    if (!url || url.endsWith('://')) continue;
    if (m.index > last) frag.append(text.slice(last, m.index));
    frag.append(h('a', { href: '#', class: 'int-link', dataset: { url }, title: `Open ${url}` }, url));
    last = m.index + url.length;
  }
  if (last === 0) return text;
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

// ---------------------------------------------------------------- links panel (resolveUrl)

let urlGen = 0;
async function openUrl(url) {
  const gen = ++urlGen;
  const panel = $('url-panel');
  panel.hidden = false;
  panel.dataset.url = url;
  $('url-title').textContent = url;
  $('url-body').replaceChildren(h('div', { class: 'muted pad' }, 'Loading…'));
  try {
    const r = await call('resolveUrl', { url });
    if (gen !== urlGen) return;
    const kind = r.mimeType === 'application/json' ? 'json' : r.mimeType === 'text/markdown' ? 'markdown' : 'text';
    let content;
    if (kind === 'json') content = highlightJson(r.content, 'url-json');
    else if (kind === 'markdown' && /^\s*[[{]/.test(r.content)) content = highlightJson(r.content, 'url-json');
    else if (kind === 'markdown') content = h('div', { class: 'md-body' }, renderText(r.content));
    else content = h('pre', { class: 'code url-text' }, r.content);
    $('url-body').replaceChildren(
      h('div', { class: 'url-meta', dataset: { testid: 'url-meta' } }, h('span', { class: 'badge' }, r.mimeType), h('span', { class: 'muted' }, fmtBytes(r.size))),
      h('div', { class: 'url-content', dataset: { testid: 'url-content' } }, content),
    );
  } catch (e) {
    if (gen !== urlGen) return;
    const single = !state.view?.source;
    $('url-body').replaceChildren(
      h('div', { class: 'error-box', dataset: { testid: 'url-error' } }, errMsg(e)),
      single ? h('p', { class: 'muted pad' }, 'This session was opened as a single file. Open its folder (the agent directory or its sessions directory) to follow artifact:// and agent:// links.') : null,
    );
  }
}

function closeUrlPanel() {
  $('url-panel').hidden = true;
  urlGen++;
}

// ---------------------------------------------------------------- inspector

let inspectGen = 0;
async function renderInspector(id) {
  const box = $('inspector');
  const gen = ++inspectGen;
  const i = id ? state.rowIndex.get(id) : undefined;
  if (i === undefined) {
    $('inspector-meta').textContent = '';
    box.replaceChildren(h('div', { class: 'muted pad' }, 'Select an entry in the tree.'));
    return;
  }
  let e;
  let label;
  try {
    ({ entry: e, label } = await call('entry', { id }));
  } catch (err) {
    if (gen === inspectGen) box.replaceChildren(h('div', { class: 'error-box' }, errMsg(err)));
    return;
  }
  if (gen !== inspectGen) return;
  $('inspector-meta').textContent = `${e.type} · ${e.id}`;
  const r = state.rows;
  const parentId = e.parentId;
  const parent = parentId && state.rowIndex.has(parentId)
    ? h('button', { type: 'button', class: 'link mono', onclick: () => inspectEntry(parentId) }, parentId)
    : h('span', { class: 'mono' }, parentId ?? 'null (root)');
  const onPath = Boolean(state.pathMask[i]);
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', null, 'parent'),
    h('dd', null, parent),
    h('dt', null, 'time'),
    h('dd', null, fmtTime(e.timestamp) || '—'),
    h('dt', null, 'children'),
    h('dd', null, String(r.kids[i] ?? 0)),
    h('dt', null, 'branch'),
    h('dd', null, id === state.selected ? `the leaf · ${fmtNum(state.onPath)} entries on this path` : onPath ? 'on the shown branch' : 'on another branch'),
    label ? [h('dt', null, 'label'), h('dd', null, h('span', { class: 'label-pill', dataset: { testid: 'inspector-label' } }, String(label)))] : null,
  );
  box.replaceChildren(facts, entryActions(e, label), highlightJson(JSON.stringify(e, null, 2)));
  box.scrollTop = 0;
}

/** Label / branch / new-session actions for an editable session, or the import hint. */
function entryActions(e, label) {
  const v = state.view;
  const wrap = h('div', { class: 'actions', dataset: { testid: 'entry-actions' } });
  if (e.id !== state.selected) {
    wrap.append(h('button', { type: 'button', class: 'btn btn-small', onclick: () => selectEntry(e.id, { conv: 'end', scrollTree: true }) }, 'Show this branch'));
  }
  if (!v?.writable) {
    const target = editTarget();
    wrap.append(
      h('p', { class: 'muted small' }, 'Read-only. ', h('button', { type: 'button', class: 'link', onclick: () => importCurrent() }, target === 'opfs' ? 'Import a copy into browser storage' : 'Copy to memory'), ' to label entries, branch and fork.'),
    );
    return wrap;
  }
  const input = h('input', { type: 'text', name: 'label', value: label ?? '', placeholder: 'label', maxlength: 200, 'aria-label': 'Label of this entry', dataset: { testid: 'label-input' } });
  const labelForm = h(
    'form',
    {
      class: 'label-form',
      onsubmit: (ev) => {
        ev.preventDefault();
        runEdit('label', { id: e.id, label: input.value }, input.value.trim() ? `Labelled ${e.id.slice(0, 8)} “${input.value.trim()}”` : `Cleared the label of ${e.id.slice(0, 8)}`);
      },
    },
    input,
    h('button', { type: 'submit', class: 'btn btn-small', dataset: { testid: 'label-save' } }, label ? 'Relabel' : 'Label'),
    label ? h('button', { type: 'button', class: 'btn btn-small', onclick: () => runEdit('label', { id: e.id, label: null }, `Cleared the label of ${e.id.slice(0, 8)}`) }, 'Clear') : null,
  );
  const summary = h('textarea', { rows: 3, placeholder: 'What happened on the branch you leave (it ends at the current leaf)…', 'aria-label': 'Branch summary', dataset: { testid: 'summary-input' } });
  const branchForm = h(
    'details',
    { class: 'branch-form' },
    h('summary', null, 'Branch from here…'),
    h(
      'form',
      {
        onsubmit: (ev) => {
          ev.preventDefault();
          runEdit('branchWithSummary', { id: e.id, summary: summary.value }, `Branched from ${e.id.slice(0, 8)} with a summary`);
        },
      },
      summary,
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'submit', class: 'btn btn-small', dataset: { testid: 'branch-save' } }, 'Branch with summary'),
        h('button', { type: 'button', class: 'btn btn-small', title: 'A new session file holding the path root → this entry', onclick: () => newSessionFromBranch(e.id) }, 'New session from this branch'),
      ),
    ),
  );
  wrap.append(labelForm, branchForm);
  return wrap;
}

async function newSessionFromBranch(id) {
  const out = await runEdit('newSessionFromBranch', { id }, `New session from the branch ending at ${id.slice(0, 8)}`);
  if (out) setUrl({ source: out.view.source, path: out.view.path });
}

const JSON_TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** Pretty JSON with coloured tokens (string values linkified), built from text nodes only. */
function highlightJson(text, testid = 'raw-json') {
  const pre = h('pre', { class: 'code json', dataset: { testid } });
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
    pre.append(h('span', { class: cls }, cls === 'j-str' ? linkify(m[1]) : m[1] ?? m[0]));
    if (m[2]) pre.append(m[2]);
    last = JSON_TOKEN.lastIndex;
  }
  if (last < text.length) pre.append(text.slice(last));
  return pre;
}

// ---------------------------------------------------------------- session picker

const picker = {
  source: 'samples',
  scope: 'project', // 'project' | 'all'
  cwd: null,
  items: [],
  active: 0,
  dirty: false,
  refreshing: Promise.resolve(),
  gen: 0,
  timer: 0,
};

function wirePicker() {
  const dlg = $('picker');
  const q = $('picker-query');
  $('picker-close').addEventListener('click', () => dlg.close());
  $('picker-scope').addEventListener('click', () => toggleScope());
  dlg.addEventListener('click', (ev) => {
    if (ev.target === dlg) dlg.close(); // the backdrop
  });
  q.addEventListener('input', () => {
    clearTimeout(picker.timer);
    picker.dirty = true;
    picker.timer = setTimeout(refreshPicker, 120);
  });
  dlg.addEventListener('keydown', (ev) => {
    const inList = ev.target === q || ev.target.closest?.('#picker-list');
    if (ev.key === 'Tab' && !ev.shiftKey && inList && !ev.ctrlKey && !ev.altKey) {
      ev.preventDefault();
      toggleScope();
      q.focus();
    } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      if (!inList) return;
      ev.preventDefault();
      moveActive(ev.key === 'ArrowDown' ? 1 : -1);
    } else if (ev.key === 'Enter' && ev.target === q) {
      ev.preventDefault();
      chooseActive();
    }
  });
}

async function openPicker(source) {
  const dlg = $('picker');
  state.sources = await call('sources').catch(() => state.sources);
  const current = state.view?.source;
  const byKey = new Map(state.sources.map((s) => [s.key, s]));
  picker.source = source ?? (current && byKey.get(current)?.available ? current : byKey.get('opfs')?.sessions ? 'opfs' : 'samples');
  picker.cwd = state.view?.source === picker.source ? state.view.header?.cwd ?? null : null;
  if (!dlg.open) {
    $('picker-query').value = ''; // a fresh list each time the picker opens
    dlg.showModal();
  }
  $('picker-query').focus();
  await refreshPicker();
}

function renderSources() {
  const box = $('picker-sources');
  box.replaceChildren(
    ...state.sources.map((s) =>
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          class: `src-tab${s.key === picker.source ? ' active' : ''}`,
          'aria-selected': s.key === picker.source ? 'true' : 'false',
          dataset: { source: s.key },
          title: s.note ?? `${s.label}${s.writable ? ' · editable' : ' · read-only'}`,
          onclick: () => {
            picker.source = s.key;
            picker.cwd = state.view?.source === s.key ? state.view.header?.cwd ?? null : null;
            refreshPicker();
            $('picker-query').focus();
          },
        },
        SOURCE_TAB[s.key] ?? s.label,
        h('span', { class: 'count' }, s.available ? fmtNum(s.sessions) : '–'),
      ),
    ),
  );
}

const SOURCE_TAB = { samples: 'Samples', opened: 'Opened folder', opfs: 'Browser storage', memory: 'Memory' };

function toggleScope() {
  picker.scope = picker.scope === 'project' ? 'all' : 'project';
  refreshPicker();
}

/** Enter: the active session of the list for what is typed now (a pending search runs first). */
async function chooseActive() {
  if (picker.dirty) {
    clearTimeout(picker.timer);
    await refreshPicker();
  } else {
    await picker.refreshing;
  }
  const it = picker.items[picker.active];
  if (it) chooseSession(it); // Enter on an empty list does nothing
}

function refreshPicker() {
  picker.dirty = false;
  picker.refreshing = doRefreshPicker();
  return picker.refreshing;
}

async function doRefreshPicker() {
  const gen = ++picker.gen;
  const query = $('picker-query').value;
  renderSources();
  const src = state.sources.find((s) => s.key === picker.source);
  let res = null;
  let error = null;
  if (src?.available) {
    try {
      res = await call('list', { source: picker.source, scope: picker.scope, cwd: picker.cwd, query });
    } catch (e) {
      error = e;
    }
  }
  if (gen !== picker.gen) return;
  if (res) {
    picker.cwd = res.cwd;
    const i = state.sources.findIndex((s) => s.key === res.source.key);
    if (i >= 0) state.sources[i] = res.source;
    renderSources();
  }
  picker.items = res?.items ?? [];
  picker.active = 0;
  const scopeBtn = $('picker-scope');
  scopeBtn.textContent = picker.scope === 'project' ? 'This project' : 'All projects';
  scopeBtn.dataset.scope = picker.scope;
  scopeBtn.setAttribute('aria-pressed', picker.scope === 'all' ? 'true' : 'false');
  const info = $('picker-info');
  const where = picker.scope === 'project' ? h('span', null, 'This project: ', h('code', null, picker.cwd ?? '—')) : h('span', null, 'All projects');
  const how = res?.how === 'search' ? `${fmtNum(picker.items.length)} match${picker.items.length === 1 ? '' : 'es'}, best first` : res?.how === 'recent' ? 'most recent first' : res ? 'newest first' : '';
  info.replaceChildren(...[where, how ? h('span', { class: 'muted' }, ` · ${how}`) : null].filter(Boolean));
  renderPickerList(src, error, query.trim());
  renderPickerActions(src);
}

function renderPickerList(src, error, query) {
  const list = $('picker-list');
  if (!src?.available || error) {
    const text = error ? errMsg(error) : src?.note ?? 'Nothing here yet.';
    const more = picker.source === 'opened' ? h('button', { type: 'button', class: 'btn btn-primary', onclick: () => $('open-folder').click() }, 'Open folder…') : null;
    list.replaceChildren(h('li', { class: 'picker-empty', dataset: { testid: 'picker-empty' } }, h('p', null, text), more));
    return;
  }
  if (!picker.items.length) {
    let text;
    if (query) text = `No session matches “${query}”${picker.scope === 'project' ? ' in this project. Press Tab to search all projects.' : '.'}`;
    else if (picker.scope === 'project' && src.sessions) text = 'No sessions in this project. Press Tab to view all projects.';
    else if (picker.source === 'opfs' || picker.source === 'memory') text = `No sessions in the ${SOURCE_NAMES[picker.source]} yet. Open a session and use “${picker.source === 'opfs' ? 'Import to browser storage' : 'Copy to memory'}” to edit a copy here.`;
    else text = 'No sessions found.';
    list.replaceChildren(h('li', { class: 'picker-empty', dataset: { testid: 'picker-empty' } }, text));
    return;
  }
  list.replaceChildren(
    ...picker.items.map((it, i) => {
      const current = state.view?.source === picker.source && state.view?.path === it.path;
      const bits = [];
      if (picker.scope === 'all' || query) bits.push(h('code', { class: 'cwd' }, it.cwd));
      bits.push(h('span', null, it.timeAgo ?? fmtTime(it.modified)));
      if (typeof it.messageCount === 'number') bits.push(h('span', null, `${fmtNum(it.messageCount)} messages`));
      bits.push(h('span', { class: 'mono' }, String(it.id).slice(0, 8)));
      if (typeof it.score === 'number') bits.push(h('span', { class: 'score', title: 'fuzzy match score' }, `score ${fmtNum(it.score)}`));
      const preview = it.firstMessage && it.title && it.firstMessage !== it.name ? h('div', { class: 'pi-preview' }, oneLine(it.firstMessage, 160)) : null;
      return h(
        'li',
        {
          role: 'option',
          id: `pick-${i}`,
          class: `picker-item${i === picker.active ? ' active' : ''}${current ? ' current' : ''}`,
          'aria-selected': i === picker.active ? 'true' : 'false',
          dataset: { path: it.path, id: it.id },
          tabindex: '-1',
          onclick: () => chooseSession(it),
          onmousemove: () => setActive(i),
        },
        h('div', { class: 'pi-title' }, h('span', { class: 'pi-name', title: it.name }, oneLine(it.name || it.title || it.id, 90)), current ? h('span', { class: 'badge' }, 'open') : null),
        preview,
        h('div', { class: 'pi-meta' }, bits),
      );
    }),
  );
  $('picker-query').setAttribute('aria-activedescendant', 'pick-0');
}

function setActive(i) {
  if (i === picker.active) return;
  const list = $('picker-list');
  list.querySelector('.picker-item.active')?.classList.remove('active');
  const el = list.children[i];
  if (!el?.classList.contains('picker-item')) return;
  picker.active = i;
  el.classList.add('active');
  for (const c of list.children) c.setAttribute('aria-selected', c === el ? 'true' : 'false');
  $('picker-query').setAttribute('aria-activedescendant', el.id);
}

function moveActive(step) {
  const n = picker.items.length;
  if (!n) return;
  setActive((picker.active + step + n) % n);
  $('picker-list').children[picker.active]?.scrollIntoView({ block: 'nearest' });
}

function renderPickerActions(src) {
  const box = $('picker-actions');
  box.replaceChildren();
  if (!src) return;
  const target = editTarget();
  if (!src.writable && src.available && src.sessions) {
    box.append(
      h(
        'button',
        {
          type: 'button',
          class: 'btn btn-small',
          title: `Copy every session of this list's source (with artifacts) into the ${SOURCE_NAMES[target]}`,
          onclick: async () => {
            try {
              const r = await call('importAll', { source: src.key, target });
              toast(`Imported ${r.imported} session${r.imported === 1 ? '' : 's'} into the ${SOURCE_NAMES[target]}${r.skipped ? ` (${r.skipped} already there)` : ''}`, 'ok', 'save-status');
              picker.source = target;
              state.sources = await call('sources');
              refreshPicker();
            } catch (e) {
              showBanner('error', `Import failed: ${errMsg(e)}`);
            }
          },
        },
        target === 'opfs' ? 'Import all into browser storage' : 'Copy all to memory',
      ),
    );
  }
  if (src.key === 'opened' || !state.sources.find((s) => s.key === 'opened')?.available) {
    box.append(h('button', { type: 'button', class: 'btn btn-small', onclick: () => $('open-folder').click() }, 'Open folder…'));
  }
  if (src.key === 'opfs' && src.available) box.append(h('span', { class: 'muted small' }, `${fmtBytes(src.bytes)} in browser storage`));
}

async function chooseSession(it) {
  $('picker').close();
  await openPath(picker.source, it.path);
}

// ---------------------------------------------------------------- prompt history

// The worker keeps a PromptHistory (the package's logic) over SQLite compiled to wasm on
// OPFS (history-store.js), or in memory where that cannot start; the page says which.

const hist = {
  gen: 0,
  timer: 0,
  dirty: false,
  refreshing: Promise.resolve(),
  info: null,
  items: [],
};

/** The project of the open session (else the picker's). */
function projectCwd() {
  return state.view?.header?.cwd || picker.cwd || null;
}

function wireHistory() {
  const dlg = $('history');
  $('history-close').addEventListener('click', () => dlg.close());
  dlg.addEventListener('click', (ev) => {
    if (ev.target === dlg) dlg.close(); // the backdrop
  });
  $('history-query').addEventListener('input', () => {
    clearTimeout(hist.timer);
    hist.dirty = true;
    hist.timer = setTimeout(refreshHistory, 120);
  });
  $('history-query').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      clearTimeout(hist.timer);
      refreshHistory();
    }
  });
  for (const id of ['history-plain', 'history-project']) $(id).addEventListener('change', () => refreshHistory());
  $('history-add').addEventListener('submit', (ev) => {
    ev.preventDefault();
    addPrompt();
  });
  $('history-import').addEventListener('click', () => importPrompts());
}

async function openHistory() {
  const dlg = $('history');
  const cwd = projectCwd();
  $('history-cwd').textContent = cwd ?? '(no project)';
  $('history-project').disabled = !cwd;
  if (!cwd) $('history-project').checked = false;
  if (!dlg.open) {
    $('history-add-cwd').value = cwd ?? '';
    setHistoryStatus('');
    dlg.showModal();
  }
  renderImportHint();
  $('history-query').focus();
  await refreshHistory();
}

function refreshHistory() {
  hist.dirty = false;
  hist.refreshing = doRefreshHistory();
  return hist.refreshing;
}

async function doRefreshHistory() {
  const gen = ++hist.gen;
  const query = $('history-query').value;
  const plain = $('history-plain').checked;
  const cwd = $('history-project').checked ? projectCwd() : null;
  let res = null;
  let error = null;
  try {
    res = await call('historyQuery', { query, plain, cwd });
  } catch (e) {
    error = e;
  }
  if (gen !== hist.gen) return;
  if (res?.info) renderHistoryBackend(res.info);
  else if (!hist.info) call('historyInfo').then(renderHistoryBackend, () => {});
  hist.items = res?.items ?? [];
  const info = $('history-info');
  const where = cwd ? h('span', null, ' · in ', h('code', null, cwd)) : h('span', null, ' · all projects');
  if (error) {
    info.replaceChildren(h('span', { class: 'muted' }, 'Search failed'));
  } else if (res.how === 'recent') {
    info.replaceChildren(h('span', null, 'Recent prompts, newest first'), where);
  } else {
    const n = hist.items.length;
    const parts = [h('span', null, `${fmtNum(n)} match${n === 1 ? '' : 'es'}, best first (bm25)`), where];
    if (plain) parts.push(h('span', { class: 'muted' }, ' · FTS5 query ', h('code', { dataset: { testid: 'history-fts-query' } }, res.query || '(no words)')));
    info.replaceChildren(...parts);
  }
  renderHistoryList(error, query.trim(), res?.how);
}

function renderHistoryBackend(info) {
  hist.info = info;
  const el = $('history-backend');
  const memory = info.backend === 'memory';
  el.className = `history-backend ${memory ? 'mem' : 'ok'}`;
  const bits = [info.backend];
  if (!memory) {
    if (info.sqliteVersion) bits.push(`SQLite ${info.sqliteVersion}`);
    if (info.file) bits.push(info.file.replace(/^\//, ''));
    if (typeof info.rows === 'number') bits.push(`${fmtNum(info.rows)} prompt${info.rows === 1 ? '' : 's'}`);
  } else {
    bits.push('not kept');
  }
  el.textContent = bits.join(' · ');
  el.title = memory
    ? 'The prompt history is in this tab only: it is gone on reload.'
    : `Kept in the browser's Origin Private File System (opfs-sahpool VFS, directory ${info.directory ?? ''}), npm @sqlite.org/sqlite-wasm ${info.packageVersion ?? ''}`;
  const fb = $('history-fallback');
  fb.hidden = !memory;
  fb.textContent = memory ? `History kept in memory only: ${info.fallback ?? 'no persistent store'}` : '';
}

function renderHistoryList(error, query, how) {
  const list = $('history-list');
  if (error) {
    const invalid = error.kind === 'invalidInput' || /invalid history query|fts5|syntax error/i.test(errMsg(error));
    list.replaceChildren(
      h(
        'li',
        { class: 'history-error', role: 'alert', dataset: { testid: 'history-error' } },
        invalid ? h('strong', null, 'Invalid search: ') : h('strong', null, 'The history failed: '),
        errMsg(error).replace(/^invalid history query: /, ''),
        invalid ? h('div', { class: 'small' }, 'FTS5 syntax: ', h('code', null, 'pars*'), ', ', h('code', null, '"exact phrase"'), ', ', h('code', null, 'a OR b'), ', ', h('code', null, 'a NOT b'), ' — or tick “plain words” to search the words as typed.') : null,
      ),
    );
    return;
  }
  if (!hist.items.length) {
    const text = how === 'search' ? `No prompt matches “${query}”.` : 'No prompts yet. Add one below, or import the prompts of the listed sessions.';
    list.replaceChildren(h('li', { class: 'picker-empty', dataset: { testid: 'history-empty' } }, text));
    return;
  }
  list.replaceChildren(
    ...hist.items.map((it, i) =>
      h(
        'li',
        { class: 'history-item', dataset: { id: String(it.id) } },
        how === 'search' ? h('span', { class: 'hi-rank', title: 'rank' }, `${i + 1}.`) : null,
        h(
          'div',
          { class: 'hi-body' },
          h('div', { class: 'hi-prompt', title: it.prompt }, it.prompt),
          h(
            'div',
            { class: 'pi-meta' },
            h('span', { class: 'hi-time', title: it.createdAt }, fmtTime(it.createdAt)),
            it.cwd ? h('code', { class: 'cwd hi-cwd' }, it.cwd) : h('span', { class: 'hi-cwd muted' }, 'no cwd'),
            h('span', { class: 'mono' }, `#${it.id}`),
          ),
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'btn btn-small',
            title: 'Copy this prompt',
            onclick: async (ev) => {
              const btn = ev.currentTarget;
              try {
                await navigator.clipboard.writeText(it.prompt);
                flash(btn, 'Copied');
              } catch {
                flash(btn, 'Not allowed');
              }
            },
          },
          'Copy',
        ),
      ),
    ),
  );
}

function setHistoryStatus(text, kind = 'ok') {
  const el = $('history-status');
  el.className = `history-status ${kind}`;
  el.textContent = text;
  el.dataset.seq = String(Number(el.dataset.seq ?? 0) + 1); // each report, even a repeated one
}

async function addPrompt() {
  const input = $('history-add-text');
  const prompt = input.value;
  const cwd = $('history-add-cwd').value.trim() || null;
  try {
    const r = await call('historyAdd', { prompt, cwd });
    renderHistoryBackend(r.info);
    if (r.added) {
      setHistoryStatus(`Added “${oneLine(prompt, 60)}”${cwd ? ` in ${cwd}` : ''}`);
      input.value = '';
    } else if (r.reason === 'duplicate') {
      setHistoryStatus('Not added: the same as the previous prompt (consecutive duplicates are kept once)', 'warn');
    } else {
      setHistoryStatus('Not added: the prompt is empty', 'warn');
    }
  } catch (e) {
    setHistoryStatus(`Cannot add the prompt: ${errMsg(e)}`, 'error');
  }
  await refreshHistory();
  input.focus();
}

/** Which sessions “Import prompts from sessions” reads: what the session picker lists. */
function importArgs() {
  return { source: picker.source, scope: picker.scope, cwd: picker.cwd ?? projectCwd(), query: $('picker-query').value };
}

function renderImportHint(res) {
  const a = importArgs();
  const src = state.sources.find((s) => s.key === a.source);
  const label = res?.source ?? src?.label ?? SOURCE_TAB[a.source] ?? a.source;
  const scope = a.scope === 'project' ? `this project${(res?.cwd ?? a.cwd) ? ` (${res?.cwd ?? a.cwd})` : ''}` : 'all projects';
  $('history-import-hint').textContent = `from the sessions the picker lists: ${label} · ${scope}${a.query.trim() ? ` · “${a.query.trim()}”` : ''}`;
}

async function importPrompts() {
  const btn = $('history-import');
  btn.disabled = true;
  setHistoryStatus('Importing…');
  try {
    const r = await call('historyImport', importArgs());
    renderHistoryBackend(r.info);
    renderImportHint(r);
    const bits = [`Added ${fmtNum(r.added)} of ${fmtNum(r.prompts)} prompt${r.prompts === 1 ? '' : 's'} from ${fmtNum(r.sessions)} session${r.sessions === 1 ? '' : 's'}`];
    if (r.duplicates) bits.push(`${fmtNum(r.duplicates)} consecutive duplicate${r.duplicates === 1 ? '' : 's'} skipped`);
    if (r.unreadable?.length) bits.push(`${r.unreadable.length} unreadable: ${r.unreadable.join('; ')}`);
    setHistoryStatus(bits.join(' · '), r.unreadable?.length ? 'warn' : 'ok');
  } catch (e) {
    setHistoryStatus(`Import failed: ${errMsg(e)}`, 'error');
  } finally {
    btn.disabled = false;
  }
  await refreshHistory();
}

main();
