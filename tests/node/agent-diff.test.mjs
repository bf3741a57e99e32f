// The agent differential test: the same random operation scripts run through the agent's
// own `SessionManager` (under Bun: oh-my-pi's published package, installed by
// `scripts/setup test`) and through the drop-in `xcsh-session/agent` (under Node), and the
// traces are compared op by op: return values, entries, tree, context, leaf, name, usage,
// then the bytes of every file written. The accepted differences are the tables of
// tests/agent-diff/differences.mjs (KNOWN: where oh-my-pi differs from xcsh, and the
// drop-in's deliberate differences). Any other
// divergence fails, reported as seed, op index, field and both values.
//
// Knobs: XCSH_AGENT_DIFF_N (scripts, default 200), XCSH_AGENT_DIFF_SEED (first seed,
// default 1), XCSH_AGENT_DIFF_MODULE (the agent's session-manager.ts; default the one
// scripts/setup installs), XCSH_AGENT_DIFF_ORACLE (`oh-my-pi`, the default with the default
// module, or `xcsh` when XCSH_AGENT_DIFF_MODULE names another: the entries of kind `agent`,
// where oh-my-pi differs from xcsh, then do not apply), XCSH_AGENT_DIFF_BUN. A full report goes to
// target/agent-diff/report.txt. Missing Bun or the agent's package fails the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generateScript } from '../agent-diff/generate.mjs';
import { describe, renumber, scriptDiff, show } from '../agent-diff/compare.mjs';
import { KNOWN, PENDING } from '../agent-diff/differences.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOOLS = process.env.XCSH_TOOLS_DIR || path.join(os.homedir(), '.cache', 'xcsh-session', 'tools');
const BUN = process.env.XCSH_AGENT_DIFF_BUN || path.join(TOOLS, 'pkgtest', 'node_modules', '.bin', 'bun');
const MODULE = process.env.XCSH_AGENT_DIFF_MODULE
  || path.join(TOOLS, 'omp', 'node_modules', '@oh-my-pi', 'pi-coding-agent', 'src', 'session', 'session-manager.ts');
const ORACLE = process.env.XCSH_AGENT_DIFF_ORACLE || (process.env.XCSH_AGENT_DIFF_MODULE ? 'xcsh' : 'oh-my-pi');
const N = Number(process.env.XCSH_AGENT_DIFF_N || 200);
const SEED = Number(process.env.XCSH_AGENT_DIFF_SEED || 1);
const RUNNER = path.join(ROOT, 'tests', 'agent-diff', 'run.mjs');

/** Run `cmd args` with PI_CODING_AGENT_DIR = a fresh dir, stdin from `input`, stdout to `output`. */
function run(cmd, args, { input, output, agentDir }) {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(output, 'w');
    const child = spawn(cmd, args, {
      stdio: [fs.openSync(input, 'r'), out, 'pipe'],
      env: { ...process.env, PI_CODING_AGENT_DIR: agentDir },
    });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      fs.closeSync(out);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${stderr.slice(-4000)}`));
    });
  });
}

const readTraces = (file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

test('the drop-in and the agent\'s SessionManager agree on random operation scripts', async (t) => {
  assert.ok(fs.existsSync(BUN), `Bun is missing (${BUN}): run scripts/setup test`);
  assert.ok(fs.existsSync(MODULE), `the agent's session manager is missing (${MODULE}): run scripts/setup test`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-agent-diff-'));
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  const scripts = path.join(work, 'scripts.jsonl');
  const generated = Array.from({ length: N }, (_, i) => generateScript(SEED + i));
  fs.writeFileSync(scripts, generated.map((s) => JSON.stringify(s)).join('\n') + '\n');

  const started = Date.now();
  await Promise.all([
    run(BUN, [RUNNER, MODULE], { input: scripts, output: path.join(work, 'agent.jsonl'), agentDir: path.join(work, 'agent') }),
    run(process.execPath, [RUNNER, path.join(ROOT, 'pkg', 'agent.mjs')], { input: scripts, output: path.join(work, 'dropin.jsonl'), agentDir: path.join(work, 'dropin') }),
  ]);
  const ranMs = Date.now() - started;
  const agent = readTraces(path.join(work, 'agent.jsonl'));
  const dropin = readTraces(path.join(work, 'dropin.jsonl'));
  assert.equal(agent.length, N, 'the agent\'s runner printed a trace per script');
  assert.equal(dropin.length, N, 'the drop-in\'s runner printed a trace per script');

  const known = KNOWN.filter((e) => e.kind !== 'agent' || ORACLE === 'oh-my-pi');
  const table = [...known.map((e) => ({ ...e, table: `known (${e.kind})` })), ...PENDING.map((e) => ({ ...e, table: 'pending' }))];
  const hits = new Map(table.map((e) => [e.id, { rewrites: 0, scripts: [] }]));
  const failures = [];
  let identical = 0;
  for (let k = 0; k < N; k++) {
    const a = agent[k], b = dropin[k];
    assert.equal(a.seed, b.seed);
    if (!a.crashed && !b.crashed) {
      for (const e of table) if (e.dropin) e.dropin(b, () => hits.get(e.id).rewrites++, a);
      for (const e of table) if (e.agent) e.agent(a, () => hits.get(e.id).rewrites++, b);
    }
    const d = scriptDiff(renumber(a), renumber(b));
    if (!d) { identical++; continue; }
    const explained = table.find((e) => e.match?.(d, { script: generated[k], agent: a, dropin: b }));
    if (explained) hits.get(explained.id).scripts.push(d);
    else failures.push(d);
  }

  const lines = [`${N} scripts from seed ${SEED} in ${ranMs} ms; agent (${ORACLE}): ${MODULE}`,
    `${identical} identical after the tables, ${N - identical - failures.length} stopped at a listed difference, ${failures.length} unexplained`, ''];
  for (const e of table) {
    const h = hits.get(e.id);
    lines.push(`[${e.table}] ${e.id}: ${h.rewrites} rewrites, ${h.scripts.length} scripts stopped`);
    for (const d of h.scripts) lines.push(`    seed ${d.seed} op ${d.i} (${d.op}) ${d.path}: agent ${show(d.agent, 160)} / drop-in ${show(d.dropin, 160)}`);
  }
  if (failures.length) lines.push('', 'UNEXPLAINED:', ...failures.map((d) => `  ${describe(d)}`));
  const reportDir = path.join(ROOT, 'target', 'agent-diff');
  fs.mkdirSync(reportDir, { recursive: true });
  fs.writeFileSync(path.join(reportDir, 'report.txt'), lines.join('\n') + '\n');
  t.diagnostic(lines.slice(0, 2).join('; '));
  for (const e of PENDING) {
    const h = hits.get(e.id);
    if (h.scripts.length) t.diagnostic(`pending ${e.id}: seeds ${h.scripts.map((d) => `${d.seed}@${d.i}`).join(' ')}`);
  }
  if (failures.length) {
    assert.fail(`${failures.length} of ${N} scripts diverge (report: target/agent-diff/report.txt); the first:\n  `
      + failures.slice(0, 5).map(describe).join('\n  '));
  }
});
