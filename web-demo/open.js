// Opening sessions: samples, files, folders (picker, <input>, drop) and paths of a source, and applying what the worker answers.

import { DEFAULT_SAMPLE, state } from './state.js';
import { call } from './rpc.js';
import { $, clearBanner, errMsg, fmtBytes, fmtCount, fmtNum, hideProgress, setProgress, showBanner, showProgress, toast } from './dom.js';
import { applySelection } from './tree.js';
import { renderSessionBar } from './sessionbar.js';
import { openPicker, prefetchPicker } from './picker.js';

export function wireDrop() {
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
      prefetchPicker(); // so the picker opens at once while a later load keeps the worker busy
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

/**
 * The address of what is shown. Opening another session is a new history entry (so Back
 * returns to the one before, in the app); anything else replaces the current one.
 */
export function setUrl(params) {
  const url = new URL(location.href);
  for (const k of ['sample', 'source', 'path', 'opened']) url.searchParams.delete(k);
  for (const [k, v] of Object.entries(params)) if (v) url.searchParams.set(k, v);
  if (url.href === location.href) return;
  const other = ['sample', 'source', 'path', 'opened'].some((k) => url.searchParams.get(k) !== new URL(location.href).searchParams.get(k));
  if (other) url.hash = ''; // the place (location.js) was in the other session
  if (other && !state.restoring) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
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

export async function openFolder(args, name) {
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
  renderSessionBar();
  $('tree-meta').textContent = fmtCount(n, 'entry', 'entries');
  if (!keepScroll) $('tree').scrollTop = 0;
  applySelection(sel, { conv: keepScroll ? 'end' : 'start', scrollTree: keepScroll });
  document.title = `${view.header?.title || view.name} · xcsh session viewer`;
}
