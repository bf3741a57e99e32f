// Copies between sources and deletion: importing the open session (or every session of a
// source) into the browser storage or memory, where it can be edited, and deleting one.
// The package copies a session's files (`copySession`, `importSessionText`) and deletes them.
import * as pkg from '../pkg/xcsh_session.js';
import { commit, prepare, source, sourceInfo } from './sources.js';
import { closeViewOf, needView } from './view.js';
import { viewWritable } from './open.js';
import { fail, progress } from './reply.js';

/** The `importCurrent` request: copies the open session into source `target` and opens the copy there. */
export async function importCurrent({ target }, reqId) {
  const v = needView();
  const tgt = await source(target);
  if (!tgt.writable) throw fail(`${tgt.label} is read-only here`, 'readOnly');
  if (v.src === tgt) throw fail(`This session is already in ${tgt.label}.`, 'invalidInput');
  // A session of a source: its files at the same place; a single file: by its header.
  const copy = v.src && v.path
    ? pkg.copySession(v.src.storage, v.src.agentDir, v.path, tgt.storage, tgt.agentDir)
    : pkg.importSessionText(tgt.storage, tgt.agentDir, v.text ?? v.readText?.() ?? v.session.toJsonl(), v.name ?? '');
  await commit(tgt);
  const out = await viewWritable(tgt, copy.path, reqId);
  out.imported = { path: copy.path, already: copy.already, target: tgt.key };
  return out;
}

/** The `importAll` request: copies every session of source `from` into `target` (those there already are skipped). */
export async function importAll({ source: from, target }, reqId) {
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

/** The `deleteSession` request: deletes a session of a writable source (its file, artifacts and a stale lock). */
export async function deleteSession({ source: key, path }) {
  const src = await source(key);
  if (!src.writable) throw fail(`${src.label} is read-only`, 'readOnly');
  // The delete takes the session's writer lock first: a session another process writes
  // is refused (conflict) and stays open here. The open view holds no lock between requests.
  await prepare(src, [{ op: 'stat', path }, { op: 'read', path: `${path}.lock` }]);
  pkg.deleteSession(src.storage, src.agentDir, path); // the file, its artifacts, a stale lock
  await commit(src);
  const closed = closeViewOf(src, path);
  return { closed, source: sourceInfo(src) };
}
