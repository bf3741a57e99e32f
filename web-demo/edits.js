// The edits of the open session, run in the worker: a copy to edit (import), label and
// branch (the inspector), fork, new session from a branch, delete. Each answer is the
// session shown again (once the change is on disk and reloads cleanly).

import { DEFAULT_SAMPLE, SOURCE_NAMES, state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, hideProgress, setProgress, showBanner, showProgress, toast } from './dom.js';
import { applyOpen, openSample } from './open.js';
import { setUrl } from './session-url.js';
import { editTarget } from './edit-target.js';

/** Runs an edit in the worker (it answers once the change is on disk and reloads cleanly). */
export async function runEdit(op, args, done) {
  try {
    const out = await call(op, args);
    applyOpen(out, { keepScroll: true });
    const check = out.saved?.check;
    const where = SOURCE_NAMES[out.view.source] ?? out.view.source;
    toast(`${done} · saved to ${where}${check?.ok ? ` · ${check.onDisk ? 'checked on disk' : 'checked'} ✓` : ''}`, 'ok', 'save-status');
    return out;
  } catch (e) {
    showBanner('error', `${done.replace(/^[A-Z]/, (c) => c.toLowerCase())} failed: ${errMsg(e)}`);
    return null;
  }
}

/** Copies the open session into the edit target (`editTarget`) and opens the copy there. */
export async function importCurrent() {
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

/** Continues in a copy of the open session under a new id, and shows it. */
export async function forkSession() {
  const out = await runEdit('fork', {}, 'Forked');
  if (out) setUrl({ source: out.view.source, path: out.view.path });
}

/** A new session file holding the path root → entry `id`, shown. */
export async function newSessionFromBranch(id) {
  const out = await runEdit('newSessionFromBranch', { id }, `New session from the branch ending at ${id.slice(0, 8)}`);
  if (out) setUrl({ source: out.view.source, path: out.view.path });
}

/** Deletes the open session (its file, artifacts, a stale lock), then shows the default sample. */
export async function deleteOpenSession() {
  const { source, path, name } = state.view;
  try {
    await call('deleteSession', { source, path });
    toast(`Deleted ${name} from the ${SOURCE_NAMES[source]}`);
    await openSample(DEFAULT_SAMPLE);
  } catch (e) {
    showBanner('error', `Delete failed: ${errMsg(e)}`);
  }
}
