// A FIFO (or socket, device) named like a session, through the package's Node storages: as
// in the native core, every call refuses it as "<path> is not a regular file" instead of
// blocking, and listings leave it out (a symlink to one too). The calls run in a child
// process (tests/node/fifo-ops.mjs): one that blocks fails its test, naming the call, and
// is killed, instead of hanging the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const OPS = new URL('./fifo-ops.mjs', import.meta.url);
/** How long the child may take for everything (it loads the package once): a limit, not a wait. */
const LIMIT_MS = 60_000;

/**
 * Runs group `group` of fifo-ops.mjs; resolves to {setup, results: {op: outcome}} once the
 * child is done, or fails naming the call that did not return within LIMIT_MS.
 */
async function runOps(t, group) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-fifo-')));
  const child = spawn(process.execPath, [OPS.pathname, root, group], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => {
    child.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  });
  const out = { setup: null, results: {}, started: null, done: false };
  const finished = (async () => {
    for await (const line of readline.createInterface({ input: child.stdout })) {
      const r = JSON.parse(line);
      if (r.setup) out.setup = r.setup;
      else if (r.done) out.done = true;
      else if (r.started) out.started = r.op;
      else out.results[r.op] = r;
    }
  })();
  let timer;
  const limit = new Promise((resolve) => {
    timer = setTimeout(resolve, LIMIT_MS);
  });
  await Promise.race([finished, limit]);
  clearTimeout(timer);
  assert.ok(out.done, `${group}: ${out.started ?? 'the setup'} did not return within ${LIMIT_MS / 1000} s: it blocks on the FIFO`);
  return out;
}

/**
 * A refused call on `fifo`, in the native core's words: the storage's error (its `code`),
 * or the package's (kind `storage`).
 */
function assertRefused(r, fifo, { code, kind } = { code: 'EXCSH_NOT_REGULAR' }) {
  assert.equal(r.ok, false, `${r.op} must fail: ${JSON.stringify(r)}`);
  assert.equal(r.message, `${fifo} is not a regular file`, r.op);
  assert.equal(r.code, code, r.op);
  assert.equal(r.kind, kind, r.op);
}

test('nodeStorage refuses a FIFO named like a session as not a regular file instead of blocking, and lists it not', { timeout: 120_000 }, async (t) => {
  const { setup, results } = await runOps(t, 'sync');
  for (const op of ['read', 'readPrefix', 'readInto', 'readRange', 'write', 'append']) assertRefused(results[op], setup.fifo);
  assert.deepEqual(results.listDir.value, [path.basename(setup.session)], 'the FIFO and the symlink to one left out');
  assertRefused(results['Session.open'], setup.fifo, { kind: 'storage' });
});

test('nodeAsyncStorage refuses a FIFO named like a session as not a regular file instead of blocking, and lists it not', { timeout: 120_000 }, async (t) => {
  const { setup, results } = await runOps(t, 'async');
  for (const op of ['read', 'readPrefix', 'readRange', 'write', 'append']) assertRefused(results[op], setup.fifo);
  assert.deepEqual(results.listDir.value, [path.basename(setup.session)], 'the FIFO and the symlink to one left out');
  // The storage's own error: the async storage's reads happen before the core runs.
  assertRefused(results['AsyncSession.open'], setup.fifo);
});

test("the agent's listAll, list and continueRecent skip a FIFO named like a session and open refuses it, none blocking", { timeout: 120_000 }, async (t) => {
  const { setup, results } = await runOps(t, 'agent');
  assert.deepEqual(results.listAll.value, [setup.session]);
  assert.deepEqual(results.list.value, [setup.session]);
  assert.equal(results.continueRecent.value, setup.session);
  assertRefused(results.open, setup.fifo, { kind: 'storage' });
});
