// Opening sessions: samples, files and paths of a source (folders: open-folder.js), Cancel
// of a load in progress, and applying what the worker answers.

import { DEFAULT_SAMPLE, events, state } from './state.js';
import { call } from './rpc.js';
import { $, clearBanner, errMsg, fmtCount, hideProgress, setProgress, showBanner, showProgress, toast } from './dom.js';
import { applySelection, showTreeProgress } from './tree.js';
import { setUrl } from './session-url.js';

let nextLoadId = 1;

/**
 * Runs an opening operation with the progress bar and its Cancel button; applies its answer
 * if still wanted. Opening something else stops a load still running.
 */
async function load(op, args, label) {
  if (state.loading) stopLoad({ quiet: true });
  const gen = ++state.loadGen;
  const loading = { gen, loadId: nextLoadId++, label, cancelled: false };
  state.loading = loading;
  showProgress(label);
  const cancel = $('progress-cancel');
  cancel.hidden = false;
  cancel.textContent = 'Cancel';
  cancel.setAttribute('aria-label', `Stop opening ${label}`);
  try {
    const out = await call(op, { ...args, loadId: loading.loadId }, { onProgress: (p) => gen === state.loadGen && !loading.cancelled && setProgress(p) });
    if (gen !== state.loadGen) return null;
    applyOpen(out);
    // Done before the worker saw the cancel: it is open there, so it is shown.
    if (loading.cancelled) toast(`${label} finished opening before it could be stopped`, 'ok', 'load-status');
    return out;
  } catch (e) {
    if (e?.kind === 'cancelled') return null;
    if (gen === state.loadGen) throw e;
    return null;
  } finally {
    if (state.loading === loading) state.loading = null;
    if (gen === state.loadGen) {
      hideProgress();
      cancel.hidden = true;
      events.dispatchEvent(new Event('load-end')); // the picker fills its cache while the worker is idle
    }
  }
}

/**
 * Stops the load in progress: the page goes back to the open session at once; the worker
 * drops the new one at its next step (the parse itself runs to its end).
 */
export function stopLoad({ quiet = false } = {}) {
  const loading = state.loading;
  if (!loading || loading.cancelled) return;
  loading.cancelled = true;
  call('cancel', { loadId: loading.loadId }).catch(() => {});
  state.loading = null;
  if (quiet) return;
  hideProgress();
  $('progress-cancel').hidden = true;
  toast(`Stopped opening ${loading.label}`, 'ok', 'load-status');
}

export function wireLoad() {
  $('progress-cancel').addEventListener('click', () => stopLoad());
}

export async function openSample(file) {
  try {
    if (await load('openSample', { file }, file)) {
      $('sample-select').value = file;
      setUrl(file === DEFAULT_SAMPLE ? {} : { sample: file });
    }
  } catch (e) {
    showBanner('error', `Cannot load sample ${file}: ${errMsg(e)}`);
  }
}

export async function openFile(file) {
  try {
    if (await load('openFile', { file, name: file.name }, file.name)) {
      $('sample-select').value = '';
      setUrl({ opened: file.name });
    }
  } catch (e) {
    showBanner('error', `Cannot open ${file.name}: ${errMsg(e)}`);
  }
}

export async function openPath(source, path, { quietFail = false } = {}) {
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

/**
 * Shows what the worker answered for an open (or an edit). An open's answer has no tree
 * rows (`rows` null): the conversation is shown at once and the tree is asked for after.
 */
export function applyOpen(out, { keepScroll = false } = {}) {
  const { view, rows, sel } = out;
  state.view = view;
  setRows(rows);
  const report = view.report ?? {};
  if (!sel.leafId && view.size === 0) showBanner('warn', `${view.name} is empty: there is no session in it.`);
  else if (!sel.leafId && report.issues?.length) showBanner('warn', `No session could be read from ${view.name}: none of its lines is a session record.`);
  else clearBanner();
  events.dispatchEvent(new Event('session'));
  if (!keepScroll) $('tree').scrollTop = 0;
  applySelection(sel, { conv: keepScroll ? 'end' : 'start', scrollTree: keepScroll });
  document.title = `${view.header?.title || view.name} · xcsh session viewer`;
  if (rows) events.dispatchEvent(new Event('tree'));
  else loadTree(view.gen);
}

/** Makes `rows` the open session's tree rows (null: not built yet). */
function setRows(rows) {
  state.rows = rows;
  state.labels = new Map(rows?.labels ?? []);
  state.rowIndex = new Map();
  if (!rows) {
    $('tree-meta').textContent = 'building…';
    return;
  }
  for (let i = 0; i < rows.ids.length; i++) state.rowIndex.set(rows.ids[i], i);
  $('tree-meta').textContent = fmtCount(rows.ids.length, 'entry', 'entries');
}

/**
 * Asks the worker for the tree rows of view `gen` (the session just shown; its progress in
 * the tree pane) and shows them, with what they say of the branch shown (its rows, totals).
 */
async function loadTree(gen) {
  const stillShown = () => state.view?.gen === gen && !state.rows;
  let out;
  try {
    out = await call('tree', { gen }, { onProgress: (p) => stillShown() && p.total && showTreeProgress(p.done, p.total) });
  } catch (e) {
    if (!stillShown()) return;
    $('tree-meta').textContent = '';
    showBanner('error', `Cannot build the tree of ${state.view.name}: ${errMsg(e)}`);
    events.dispatchEvent(new Event('tree'));
    return;
  }
  if (out.stale || !stillShown()) return;
  state.view.timings = { ...state.view.timings, tree: out.ms };
  // A lazy open's load report and warnings come with the tree (its entries read then).
  if (out.facts) {
    Object.assign(state.view, out.facts);
    events.dispatchEvent(new Event('session'));
  }
  setRows(out.rows);
  if (out.leafId === state.selected) {
    state.pathMask = out.pathMask;
    state.onPath = out.onPath;
    state.meta = { ...state.meta, totals: out.totals };
  }
  events.dispatchEvent(new Event('tree'));
}
