// Opening a session (a sample, a file, a path of a source) and making it the open view
// once its context is built, with everything the page needs to show it. Its tree comes
// after (the page asks for it: worker/tree.js), so the first screen does not wait for it.
import * as pkg from '../pkg/xcsh_session.js';
import { baseName } from '../pkg/memory-storage.mjs';
import { commit, prepare, source } from './sources.js';
import { isOpen, nextViewGen, replaceView } from './view.js';
import { buildRows } from './rows.js';
import { select } from './context.js';
import { checkpoint, fail, progress } from './reply.js';
import { FileStorage } from './file-storage.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Nothing read as a header and no entry at all: not a session file (a plain text file,
 * say). Shown as an error, not as a session with an invented id and date.
 */
function refuseNonSession(session, name) {
  const headerProblem = session.leafId == null ? session.report().headerProblem : null;
  if (headerProblem) {
    session.free();
    throw fail(`${name} is not a session file: ${headerProblem}`, 'invalidInput');
  }
}

/** Opens a sample read-only from its text (kept: an import copies it). */
async function viewFromText(text, { name, size, reqId, t0, origin }) {
  const options = { onProgress: (done, total) => progress(reqId, 'parse', done, total) };
  await checkpoint(reqId); // cancelled while the file was read
  const tParse = performance.now();
  const session = pkg.Session.fromText(text, options);
  const parse = performance.now() - tParse;
  refuseNonSession(session, name);
  return setView({ session, src: null, path: null, name, size, t0, reqId, text, origin, timings: { parse } });
}

/**
 * Opens a session read-only through `storage` (an opened file or folder: FileReaderSync
 * over the `File`, the bytes read when the package asks): the file goes to the package as
 * bytes, never as one JavaScript string, and nothing of it is kept in JavaScript after
 * (a 100 MB file opened this way: first screen ~0.9 s and a renderer of ~400 MB, against
 * ~1.5–2 s and ~600 MB through `file.text()` and `Session.fromText`, which kept the text).
 */
async function viewReadOnly(storage, path, { src = null, viewPath = path, name, size, reqId, t0, origin = 'file' }) {
  await checkpoint(reqId); // cancelled before the open
  const tParse = performance.now();
  const onProgress = (done, total) => progress(reqId, 'parse', done, total);
  // An opened folder's session (or the browser storage's, read-only here): through its
  // index, kept in the browser storage (folder-cache.js) or its own.
  const lazy = src?.key === 'opened' || src?.key === 'opfs';
  const read0 = storage.bytesRead ?? null;
  const session = pkg.Session.open(storage, path, { readOnly: true, agentDir: src?.agentDir ?? '', lazy, onProgress });
  const parse = performance.now() - tParse;
  refuseNonSession(session, name);
  // A file of no source is imported into a writable one as its very bytes.
  const readText = src ? null : () => dec.decode(storage.read(path));
  return setView({ session, src, path: viewPath, name, size, t0, reqId, origin, readText, read0, timings: { parse } });
}

/**
 * Opens a session of a writable source for editing (migrates an old file: it is a copy),
 * lazily: through its index (the one cached under the agent directory, else one pass
 * over the file that writes it), reading only the lines the first screen shows; its
 * entries are read when something needs them (the tree, asked for after).
 */
export async function viewWritable(src, path, reqId, t0 = performance.now()) {
  progress(reqId, 'open', 0, 0);
  await prepare(src, [{ op: 'stat', path }, { op: 'read', path: `${path}.lock` }]);
  await src.storage.openReaders?.([path]);
  const read0 = src.storage.bytesRead ?? 0;
  const session = pkg.Session.open(src.storage, path, { agentDir: src.agentDir, lazy: true });
  session.close(); // release the writer lock between requests (a migration may have taken it)
  await commit(src);
  await src.storage.openReaders?.([path]); // the commit closed them: the first screen reads on
  return setView({ session, src, path, name: baseName(path), size: src.storage.stat(path).size, t0, reqId, read0, timings: { parse: performance.now() - t0 } });
}

/**
 * Makes `session` the open view once its context is built (its tree is built when the page
 * asks: worker/tree.js); until then (and when the load is cancelled) the previous view
 * stays open and usable.
 */
async function setView({ session, src, path, name, size, t0, reqId, text = null, readText = null, origin = null, read0 = null, timings = {} }) {
  const loadMs = performance.now() - t0;
  // How it was opened: through its index (`lazy`, its entries still in the file) or read whole.
  const opened = { lazy: session.deferred, readBytes: null };
  const next = { session, src, path, name, size, loadMs, text, readText, origin: origin ?? src?.key ?? 'file', rows: null, outline: null, tools: null, timings, opened, gen: nextViewGen() };
  let out;
  try {
    out = await openPayload(next, reqId, 'start', undefined, { tree: false });
  } catch (e) {
    if (!isOpen(session)) session.free();
    throw e;
  }
  // The bytes the open and the first screen read of the storage.
  if (read0 !== null && src?.storage?.bytesRead !== undefined) out.view.opened.readBytes = opened.readBytes = src.storage.bytesRead - read0;
  replaceView(next);
  return out;
}

/**
 * Everything the page needs to show view `v`, with the leaf's branch selected; its tree
 * rows too unless `tree` is false (then `rows` is null, and the page asks for them).
 */
export async function openPayload(v, reqId, where = 'start', leafId = undefined, { tree = true } = {}) {
  let rows = null;
  if (tree) {
    progress(reqId, 'tree', 0, 0);
    const t = performance.now();
    rows = await buildRows(v, reqId);
    v.timings.tree = performance.now() - t;
  }
  await checkpoint(reqId); // cancelled during the parse (or the tree)
  progress(reqId, 'context', 0, 0);
  const t = performance.now();
  const leaf = leafId !== undefined ? leafId : v.session.leafId ?? null;
  const sel = select(v, leaf, where);
  v.timings.context = performance.now() - t;
  return { view: viewOf(v), rows, sel };
}

/**
 * What the page shows of view `v`'s session. A lazy session's entries are not read yet:
 * its load report and warnings are those of a file its index describes (a current one,
 * nothing found), until the tree has read it (see `readFacts`).
 */
export function viewOf(v) {
  const s = v.session;
  const header = s.header();
  const lazy = s.deferred;
  const report = lazy ? null : s.report();
  const warnings = lazy ? [] : s.warnings();
  return {
    gen: v.gen,
    source: v.src?.key ?? null,
    origin: v.origin,
    sourceLabel: v.src?.label ?? null,
    writable: Boolean(v.src?.writable),
    persistent: Boolean(v.src?.persistent),
    path: v.path,
    relPath: v.src && v.path ? v.path.slice(v.src.agentDir.length + 1) : null,
    name: v.name,
    size: v.size,
    loadMs: v.loadMs,
    timings: { ...v.timings },
    header,
    version: lazy ? header.version : s.versionOnDisk,
    title: s.displayTitle(80),
    report,
    warnings,
    sessionId: s.sessionId,
    file: s.file ?? null,
    opened: v.opened ? { ...v.opened } : null,
  };
}

/**
 * What a lazy session's page does not know until its entries are read (by the tree): its
 * load report, warnings, version and title, once read; null when there was nothing to read.
 */
export function readFacts(v) {
  if (!v.opened?.lazy || v.session.deferred) return null;
  const { report, warnings, version, title } = viewOf(v);
  return { report, warnings, version, title };
}

/** The `openSample` request: a single-file sample, read-only. */
export async function openSample({ file }, reqId) {
  const t0 = performance.now();
  progress(reqId, 'read', 0, 0);
  const res = await fetch(new URL(`../samples/${encodeURIComponent(file)}`, import.meta.url));
  if (!res.ok) throw fail(`samples/${file}: HTTP ${res.status}`, 'notFound');
  const text = await res.text();
  return viewFromText(text, { name: file, size: enc.encode(text).length, reqId, t0, origin: 'sample' });
}

/** The `openFile` request: a file the page picked from the disk, read-only (read as needed). */
export async function openFile({ file, name }, reqId) {
  const t0 = performance.now();
  progress(reqId, 'read', 0, file.size);
  const storage = new FileStorage();
  const path = `/opened-file/${file.name || 'session.jsonl'}`;
  storage.putFile(path, file);
  return viewReadOnly(storage, path, { viewPath: null, name: name ?? file.name, size: file.size, reqId, t0 });
}

/** The `openPath` request: a session of a source, for editing when the source is writable. */
export async function openPath({ source: key, path }, reqId) {
  const t0 = performance.now();
  const src = await source(key);
  if (!src.storage.exists(path)) throw fail(`${path} is not in ${src.label}`, 'notFound');
  if (src.writable) return viewWritable(src, path, reqId, t0);
  return viewReadOnly(src.storage, path, { src, path, name: baseName(path), size: src.storage.stat(path).size, reqId, t0 });
}
