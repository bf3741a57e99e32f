// Opening sessions: samples, files and paths of a source (folders: open-folder.js), Cancel
// of a load in progress, and applying what the worker answers.

import { DEFAULT_SAMPLE, events, state } from './state.js';
import { call } from './rpc.js';
import { $, clearBanner, errMsg, fmtCount, hideProgress, setProgress, showBanner, showProgress, toast } from './dom.js';
import { applySelection } from './tree.js';
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

/** Shows what the worker answered for an open (or an edit). */
export function applyOpen(out, { keepScroll = false } = {}) {
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
  events.dispatchEvent(new Event('session'));
  $('tree-meta').textContent = fmtCount(n, 'entry', 'entries');
  if (!keepScroll) $('tree').scrollTop = 0;
  applySelection(sel, { conv: keepScroll ? 'end' : 'start', scrollTree: keepScroll });
  document.title = `${view.header?.title || view.name} · xcsh session viewer`;
}
