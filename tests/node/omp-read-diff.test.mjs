// The oh-my-pi read differential test: sessions oh-my-pi's own SessionManager writes
// (the published @oh-my-pi/pi-coding-agent under Bun, driven by the agent differential
// test's seeded scripts, tests/agent-diff/run.mjs), opened by oh-my-pi
// (tests/omp-diff/read.mjs, under Bun) and by this package's `Session` (under Node), and
// compared: entries, leaf, tree with labels, the context of every entry as the leaf
// (messages, thinking level, models by role) and the name. Accepted disagreements:
// tests/omp-diff/differences.mjs. The agent differential test compares what oh-my-pi and
// `xcsh-session/agent` write; this one is what `Session` reads of oh-my-pi's files.
//
// Knobs: XCSH_OMP_READ_N (scripts, default 60), XCSH_OMP_READ_SEED (first seed, default 1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Session, nodeStorage } from './helpers.mjs';
import { generateScript } from '../agent-diff/generate.mjs';
import { KNOWN } from '../omp-diff/differences.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOOLS = process.env.XCSH_TOOLS_DIR || path.join(os.homedir(), '.cache', 'xcsh-session', 'tools');
const BUN = path.join(TOOLS, 'pkgtest', 'node_modules', '.bin', 'bun');
const MODULE = path.join(TOOLS, 'omp', 'node_modules', '@oh-my-pi', 'pi-coding-agent', 'src', 'session', 'session-manager.ts');
const N = Number(process.env.XCSH_OMP_READ_N || 60);
const SEED = Number(process.env.XCSH_OMP_READ_SEED || 1);

/** Entry ids named by first appearance (in place), so that a migrated file's ids, random
 * in oh-my-pi, compare. */
function renumber(view) {
  const ids = new Map();
  const name = (v) => {
    if (!ids.has(v)) ids.set(v, `#${ids.size}`);
    return ids.get(v);
  };
  const keys = new Set(['id', 'parentId', 'targetId', 'firstKeptEntryId', 'fromId', 'leaf']);
  const walk = (v, key) => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) v[k] = walk(v[k], k);
      return v;
    }
    return typeof v === 'string' && keys.has(key) ? name(v) : v;
  };
  for (const k of ['leaf', 'entries', 'tree']) view[k] = walk(view[k], k);
}

function bun(args, { input, agentDir }) {
  const r = spawnSync(BUN, args, {
    input, env: { ...process.env, PI_CODING_AGENT_DIR: agentDir }, maxBuffer: 1 << 30, encoding: 'utf8',
  });
  assert.equal(r.status, 0, `bun ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

test('sessions oh-my-pi writes read the same through this package as through oh-my-pi', async (t) => {
  assert.ok(fs.existsSync(BUN), `bun is missing (${BUN}): run scripts/setup test`);
  assert.ok(fs.existsSync(MODULE), `oh-my-pi's session manager is missing (${MODULE}): run scripts/setup test`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-omp-read-'));
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  const agentDir = path.join(work, 'agent');
  const scripts = Array.from({ length: N }, (_, i) => JSON.stringify(generateScript(SEED + i))).join('\n') + '\n';
  bun([path.join(ROOT, 'tests', 'agent-diff', 'run.mjs'), MODULE], { input: scripts, agentDir });
  const views = bun([path.join(ROOT, 'tests', 'omp-diff', 'read.mjs'), MODULE, agentDir], { input: '', agentDir })
    .trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  // Not every script leaves a file (some delete theirs, some never write one).
  assert.ok(views.length >= N / 2, `oh-my-pi left ${views.length} session files of ${N} scripts`);
  const seen = new Map();
  const failures = [];
  for (const omp of views) {
    const session = Session.open(nodeStorage(), omp.file, { readOnly: true, agentDir });
    // By position: a v1 file's migration gives its entries ids, oh-my-pi's random ones.
    const leaves = [undefined, ...session.entries().map((e) => e.id)];
    const contexts = leaves.map((l) => session.context(l));
    const shape = (node) => ({ id: node.entry.id, label: node.label ?? null, children: node.children.map(shape) });
    const ours = {
      file: omp.file,
      entries: session.entries(),
      leaf: session.leafId ?? null,
      tree: session.tree().map(shape),
      messages: contexts.map((c) => c.messages),
      thinkingLevel: contexts.map((c) => c.thinkingLevel),
      models: contexts.map((c) => c.models),
      name: session.sessionName() ?? null,
    };
    session.free();
    renumber(omp);
    renumber(ours);
    for (const field of Object.keys(omp)) {
      if (JSON.stringify(omp[field]) === JSON.stringify(ours[field])) continue;
      const known = KNOWN.find((k) => k.field === field && k.matches(omp[field], ours[field], omp));
      if (known) seen.set(known.key, (seen.get(known.key) ?? 0) + 1);
      else failures.push(`${path.relative(agentDir, omp.file)}, ${field}:\n  omp:  ${JSON.stringify(omp[field]).slice(0, 600)}\n  ours: ${JSON.stringify(ours[field]).slice(0, 600)}`);
    }
  }
  t.diagnostic(`${views.length} files of ${N} scripts; accepted differences: ${[...seen].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}`);
  assert.deepEqual(failures.slice(0, 5), [], `${failures.length} disagreements`);
  for (const k of KNOWN) assert.ok(seen.has(k.key), `KNOWN ${k.key} never met: remove it`);
});
