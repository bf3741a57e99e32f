// The session picker's lists of a source: the recent sessions of a project, all of them,
// or a search (the package's listings; the browser storage's files are loaded first). A
// search streams over the sessions' text (the package's SessionSearch, a few MiB a step),
// reports its progress and stops when the page cancels it (a newer query).
import * as pkg from '../pkg/xcsh_session.js';
import { prepare, source, sourceInfo } from './sources.js';
import { checkpoint, progress } from './reply.js';

/** How much text a search step reads before it lets a cancel in. */
const SEARCH_STEP = 4 << 20;

/** A listed session as sent to the page: its display name, without its messages' text. */
export function plainInfo(item) {
  const { allMessagesText, ...rest } = item; // never sent: it can be huge
  return { ...rest, name: pkg.sessionDisplayName(rest) };
}

/**
 * The `list` request: the sessions of source `key`, in `scope` ('project': the project of
 * `cwd`, else the newest one; 'all'), or those matching `query`.
 */
export async function list({ source: key, scope = 'project', cwd = null, query = '' }, reqId) {
  const src = await source(key);
  const { storage, agentDir } = src;
  let project = cwd;
  if (!project || !storage.exists(pkg.sessionDirForCwd(agentDir, project))) project = pkg.newestSessionCwd(storage, agentDir) ?? cwd;
  const q = String(query ?? '').trim();
  let items;
  let how;
  if (q) {
    await prepare(src, pkg.sessionFilePaths(storage, agentDir).map((path) => ({ op: 'read', path })));
    items = await searchStreamed(storage, scope === 'project' && project ? { agentDir, cwd: project, query: q } : { agentDir, query: q }, reqId);
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

/** The hits of a search, best first, stepped with progress; a cancelled search throws. */
async function searchStreamed(storage, options, reqId) {
  const search = new pkg.SessionSearch(storage, options);
  try {
    for (;;) {
      const p = search.step(SEARCH_STEP);
      progress(reqId, 'search', p.bytesDone, p.bytes);
      if (search.done) return search.hits();
      await checkpoint(reqId, 'The search was stopped.');
    }
  } finally {
    search.free();
  }
}
