// The session picker's lists of a source: the recent sessions of a project, all of them,
// or a search (the package's listings; the browser storage's files are loaded first).
import * as pkg from '../pkg/xcsh_session.js';
import { prepare, source, sourceInfo } from './sources.js';

/** A listed session as sent to the page: its display name, without its messages' text. */
export function plainInfo(item) {
  const { allMessagesText, ...rest } = item; // never sent: it can be huge
  return { ...rest, name: pkg.sessionDisplayName(rest) };
}

/**
 * The `list` request: the sessions of source `key`, in `scope` ('project': the project of
 * `cwd`, else the newest one; 'all'), or those matching `query`.
 */
export async function list({ source: key, scope = 'project', cwd = null, query = '' }) {
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
