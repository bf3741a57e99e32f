// The viewer's worker: runs the xcsh-session wasm package off the main thread, owns the
// storages, and answers the page (app.js) with small, ready-to-render pieces. This module
// takes the requests and dispatches them; each concern is a module of worker/:
//   reply.js    answers, errors, progress reports, the cancel of a load
//   sources.js  the storages: samples, opened folder, browser storage (OPFS), memory
//   folder.js   an opened folder read into its source
//   listing.js  the session picker's lists
//   view.js     the open session
//   open.js     opening a session (sample, file, path) and what the page needs to show it
//   rows.js     the tree as outline rows in columns
//   tree.js     the tree request: the rows, asked for once the session is shown
//   context.js  the shown branch: its context, header, totals and windows of messages
//   entries.js  one entry, a link's target, the branch for an export
//   edits.js    label, branch with summary, fork, new session from a branch
//   copies.js   imports into the browser storage or memory, deletion
//   find.js     the search over the branch, its outline
//   history.js  the prompt history (SQLite on OPFS, or in memory)
//
// Protocol: the page posts {id, op, args}; the worker answers {id, ok, result} or
// {id, ok: false, error: {message, kind, code}}, and may post {type: 'progress', id, ...}
// before. Requests run one at a time, in order; for opfs, each request's writes are on
// disk (journal committed) before its answer is posted, and a request that only reads and
// needed something not loaded yet is run again once that is loaded.
import init, * as pkg from './pkg/xcsh_session.js';
import { answer, answerError, cancelLoad, trackLoad, untrackLoad } from './worker/reply.js';
import { commit, listSources, sources, startSources } from './worker/sources.js';
import { loadFolder } from './worker/folder.js';
import { list } from './worker/listing.js';
import { openFile, openPath, openSample } from './worker/open.js';
import { messages, selectBranch, showHistory } from './worker/context.js';
import { tree } from './worker/tree.js';
import { entry, exportBranch, resolveUrl } from './worker/entries.js';
import { branchWithSummary, fork, label, newSessionFromBranch } from './worker/edits.js';
import { deleteSession, importAll, importCurrent } from './worker/copies.js';
import { branchTools, outline, search } from './worker/find.js';
import { historyAdd, historyImport, historyInfo, historyQuery, promptSessions, startHistory } from './worker/history.js';

let queue = Promise.resolve();
self.onmessage = (ev) => {
  const { id, op, args } = ev.data ?? {};
  if (op === 'cancel') {
    // Not queued: the load it stops is running (see checkpoint in worker/reply.js).
    cancelLoad(args?.loadId);
    answer(id, { cancelled: true });
    return;
  }
  trackLoad(id, args?.loadId);
  queue = queue.then(() => run(id, op, args ?? {})).finally(() => untrackLoad(id));
};

/** Requests that write nothing: run again when they needed browser storage not loaded yet. */
const RERUNNABLE = new Set(['sources', 'list', 'openPath', 'resolveUrl', 'entry', 'select', 'messages', 'history']);

async function run(id, op, args) {
  const handler = HANDLERS[op];
  try {
    if (!handler) throw new Error(`unknown operation ${op}`);
    let out;
    for (let pass = 0; ; pass++) {
      const opfs = sources.get('opfs').storage;
      opfs?.begin();
      await opfs?.openReaders(); // of the files read in large pieces (the open session's)
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
    answer(id, out);
  } catch (e) {
    answerError(id, e);
  }
}

/**
 * The package and the sources, started as the worker starts (the page is still loading
 * its modules: a session of the browser storage can be opened as soon as it asks).
 */
const started = (async () => {
  await init({ module_or_path: new URL('./pkg/xcsh_session_bg.wasm', import.meta.url) });
  await startSources();
})();
started.catch(() => {}); // reported to the page by its `init` request

/** The package and the sources started, then the prompt history (`history: 'memory'` keeps it in memory). */
async function start({ history } = {}) {
  await started;
  startHistory(history);
  return { version: pkg.version() };
}

/** Each request's handler: `(args, requestId) → result`. */
const HANDLERS = {
  init: start,
  sources: listSources,
  openSample,
  openFile,
  openPath,
  loadFolder,
  list,
  tree,
  select: selectBranch,
  messages,
  history: showHistory,
  search,
  outline,
  tools: branchTools,
  exportBranch,
  entry,
  resolveUrl,
  label,
  branchWithSummary,
  fork,
  newSessionFromBranch,
  importCurrent,
  importAll,
  deleteSession,
  historyInfo,
  historyAdd,
  historyQuery,
  historyImport,
  promptSessions,
};
