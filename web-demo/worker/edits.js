// The edits of the open session (a copy in the browser storage or memory): label, branch
// with a summary, fork, new session from a branch. Each is written (writer lock taken and
// released), the file read back and reopened to check it, then the session shown again.
import * as pkg from '../pkg/xcsh_session.js';
import { MemoryStorage, baseName } from '../pkg/memory-storage.mjs';
import { commit, prepare } from './sources.js';
import { needWritable } from './view.js';
import { openPayload } from './open.js';
import { fail } from './reply.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Reloads the written file of view `v` the way the agent would (Session.open) and compares. */
async function verify(v, file, expect = {}) {
  const { src } = v;
  // The browser storage's file as OPFS holds it now, not as the worker last saw it.
  const text = src.disk ? dec.decode(await src.disk.read(file)) : src.storage.text(file);
  const tmp = new MemoryStorage({ readOnly: true });
  tmp.put(file, enc.encode(text));
  const check = pkg.Session.open(tmp, file, { readOnly: true, agentDir: src.agentDir });
  try {
    const report = check.report();
    const problems = [];
    if (report.issues?.length) problems.push(`${report.issues.length} unreadable line(s)`);
    if (report.headerProblem) problems.push(`header: ${report.headerProblem}`);
    if (check.sessionId !== v.session.sessionId) problems.push('another session id');
    if (expect.leaf && check.leafId !== v.session.leafId) problems.push(`leaf ${check.leafId} instead of ${v.session.leafId}`);
    if (expect.label) {
      const got = check.label(expect.label.id) ?? null;
      if (got !== expect.label.value) problems.push(`label ${JSON.stringify(got)} instead of ${JSON.stringify(expect.label.value)}`);
    }
    return { ok: problems.length === 0, problems, file, bytes: enc.encode(text).length, onDisk: Boolean(src.disk) };
  } finally {
    check.free();
  }
}

/**
 * Runs `fn` on the open session (writable), writes it, checks the file reloads as
 * `expect` says and answers with the session shown again (its last messages).
 */
async function edit(reqId, what, fn, expect = {}) {
  const v = needWritable();
  const file0 = v.session.file;
  await prepare(v.src, [{ op: 'stat', path: file0 }, { op: 'read', path: `${file0}.lock` }]);
  const result = fn(v.session);
  v.session.close(); // fsync, release the writer lock until the next edit
  await commit(v.src);
  const file = v.session.file;
  v.path = file;
  v.name = baseName(file);
  v.size = v.src.storage.stat(file).size;
  const check = await verify(v, file, expect);
  if (!check.ok) throw fail(`The written file did not reload as expected: ${check.problems.join('; ')}`, 'persistence');
  const out = await openPayload(v, reqId, 'end');
  out.saved = { what, result, check };
  return out;
}

/** The `label` request: sets (or, empty, clears) the label of entry `id`. */
export function label({ id, label }, reqId) {
  const value = label === undefined || label === null || String(label).trim() === '' ? null : String(label).trim();
  return edit(reqId, 'label', (s) => s.appendLabelChange(id, value ?? undefined), { leaf: true, label: { id, value } });
}

/** The `branchWithSummary` request: continues from entry `id`, summarizing the branch left. */
export function branchWithSummary({ id, summary }, reqId) {
  return edit(reqId, 'branchWithSummary', (s) => s.branchWithSummary(id ?? null, String(summary ?? '')), { leaf: true });
}

/** The `fork` request: continues in a copy of the session under a new id. */
export function fork(_args, reqId) {
  return edit(reqId, 'fork', (s) => s.fork());
}

/** The `newSessionFromBranch` request: a new session file holding the path root → `id`. */
export function newSessionFromBranch({ id }, reqId) {
  return edit(reqId, 'newSessionFromBranch', (s) => {
    const file = s.createBranchedSession(id);
    s.ensureOnDisk(); // a branch without an assistant message is not written otherwise
    return file ?? s.file;
  });
}
