// `xcsh-session sync` against a real distributed store: a 3-node Garage cluster on
// loopback with replication 3 (garage.mjs), machines as agent directories, the CLI as the
// agent's users run it. Converging under random schedules, a node killed mid-sync, the
// whole store stopped mid-upload, corrupt and foreign segments, bad remotes.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gate, startCluster } from '../../scripts/lib/garage.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TARGET = process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target');
const BIN = path.join(TARGET, 'release', 'xcsh-session');
const TOOLS = process.env.XCSH_TOOLS_DIR || path.join(os.homedir(), '.cache', 'xcsh-session', 'tools');
const BUN = path.join(TOOLS, 'pkgtest', 'node_modules', '.bin', 'bun');
const OMP = path.join(TOOLS, 'omp', 'node_modules', '@oh-my-pi', 'pi-coding-agent', 'src', 'session', 'session-manager.ts');
const PROJECT = '-tmp-proj';
const CWD = '/tmp/proj';

let work;
let cluster;
/** Each test its own prefix of the bucket, so that `--all` sees only its sessions. */
let REMOTE = 's3://sync-test/team';

/** Seeded random numbers (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function machine(name) {
  const agent = path.join(work, name);
  fs.mkdirSync(agent, { recursive: true });
  return agent;
}

const cliEnv = (endpoint, extra = {}) => {
  const env = { ...process.env, ...cluster.env, AWS_ENDPOINT_URL: endpoint, XCSH_SESSION_CACHE_DIR: path.join(work, 'aot'), ...extra };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
};

function cli(agent, args, { endpoint = cluster.nodes[0].endpoint, env = {} } = {}) {
  return spawnSync(BIN, ['--agent-dir', agent, ...args], { env: cliEnv(endpoint, env), encoding: 'utf8' });
}

/** `sync --all --json` of `agent`, run to its end; its report. */
function sync(agent, endpoint) {
  const r = cli(agent, ['sync', '--remote', REMOTE, '--all', '--json'], { endpoint });
  assert.equal(r.status, 0, `sync of ${path.basename(agent)} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The same, as a process the test waits for: {code, stdout, stderr}. */
function syncAsync(agent, endpoint) {
  const child = spawn(BIN, ['--agent-dir', agent, 'sync', '--remote', REMOTE, '--all', '--json'], { env: cliEnv(endpoint) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

function sessionFile(agent, id) {
  return path.join(agent, 'sessions', PROJECT, `2026-01-01T00-00-00-000Z_${id}.jsonl`);
}

function newSession(agent, id) {
  const file = sessionFile(agent, id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: CWD }) + '\n');
  append(agent, file, `${id} starts`);
  return file;
}

function append(agent, file, text) {
  const entry = JSON.stringify({ type: 'message', message: { role: 'user', content: text, timestamp: 1 } });
  const r = cli(agent, ['append', '--cwd', CWD, '--json', entry, file]);
  assert.equal(r.status, 0, `append: ${r.stderr}`);
  return JSON.parse(r.stdout).id;
}

/** `id → line` of a session file; every parent before its children, no id twice. */
function entries(file) {
  const seen = new Map();
  for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1).filter(Boolean)) {
    const e = JSON.parse(line);
    if (e.parentId) assert.ok(seen.has(e.parentId), `${file}: ${e.id} before its parent`);
    assert.ok(!seen.has(e.id), `${file}: ${e.id} twice`);
    seen.set(e.id, line);
  }
  return seen;
}

function sessions(agent) {
  const dir = path.join(agent, 'sessions', PROJECT);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort() : [];
}

/** Every session of every machine has the same entries, byte for byte. */
function assertConverged(machines) {
  const names = sessions(machines[0]);
  for (const m of machines) assert.deepEqual(sessions(m), names, `${path.basename(m)} has every session`);
  for (const name of names) {
    const first = entries(path.join(machines[0], 'sessions', PROJECT, name));
    for (const m of machines.slice(1)) {
      assert.deepEqual([...entries(path.join(m, 'sessions', PROJECT, name))].sort(), [...first].sort(), `${name} on ${path.basename(m)}`);
    }
  }
  return names;
}

/** What oh-my-pi's own session manager reads of an agent directory: file → entry ids. */
function readByAgent(agent) {
  const r = spawnSync(BUN, [path.join(ROOT, 'tests', 'omp-diff', 'read.mjs'), OMP, agent], {
    input: '', env: { ...process.env, PI_CODING_AGENT_DIR: agent }, maxBuffer: 1 << 30, encoding: 'utf8',
  });
  assert.equal(r.status, 0, `oh-my-pi could not read ${agent}: ${r.stderr}`);
  return new Map(r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((v) => [path.basename(v.file), v.entries.map((e) => e.id).sort()]));
}

/** Puts `data` at `key` of the bucket, signed (curl's SigV4). */
function put(key, data) {
  const sha = crypto.createHash('sha256').update(data).digest('hex');
  const r = spawnSync('curl', ['-sf', '--aws-sigv4', 'aws:amz:garage:s3', '--user', `${cluster.env.AWS_ACCESS_KEY_ID}:${cluster.env.AWS_SECRET_ACCESS_KEY}`,
    '-X', 'PUT', '-H', `x-amz-content-sha256: ${sha}`, '--data-binary', '@-', `${cluster.nodes[0].endpoint}/sync-test/${key}`], { input: data });
  assert.equal(r.status, 0, `PUT ${key}: ${r.stderr}`);
}

describe('sync through a 3-node Garage cluster', { timeout: 600_000 }, () => {
  before(async () => {
    assert.ok(fs.existsSync(BIN), `${BIN} is missing: cargo build --release -p xcsh-session-host`);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-sync-'));
    cluster = await startCluster({ dir: path.join(work, 'garage') });
  });
  beforeEach((t) => {
    REMOTE = `s3://sync-test/t${crypto.createHash('sha256').update(t.name).digest('hex').slice(0, 8)}`;
  });
  after(async () => {
    await cluster?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  // A few seeded schedules (XCSH_SYNC_SEEDS=first,count to run others or more).
  const [SEED0, SEEDS] = (process.env.XCSH_SYNC_SEEDS ?? '7,3').split(',').map(Number);
  for (let seed = SEED0; seed < SEED0 + SEEDS; seed++) test(`three machines appending and syncing in random orders, some at once, end with the same entries, which oh-my-pi reads (schedule ${seed})`, async () => {
    const ms = ['a', 'b', 'c'].map((n) => machine(`conv${seed}-${n}`));
    const endpoint = (i) => cluster.nodes[i].endpoint; // each machine talks to its own node
    const files = [newSession(ms[0], `conv${seed}s0`)];
    const written = new Set(entries(files[0]).keys());
    const rand = rng(seed);
    for (let step = 0; step < 40; step++) {
      const i = Math.floor(rand() * 3);
      const r = rand();
      if (r < 0.4) {
        const have = sessions(ms[i]);
        if (have.length === 0) continue;
        const name = have[Math.floor(rand() * have.length)];
        written.add(append(ms[i], path.join(ms[i], 'sessions', PROJECT, name), `step ${step} on ${i}`));
      } else if (r < 0.5) {
        const id = `conv${seed}s${step}`;
        for (const id2 of entries(newSession(ms[i], id)).keys()) written.add(id2);
      } else if (r < 0.85) {
        sync(ms[i], endpoint(i));
      } else {
        // Everyone at once: each writes only its own objects.
        const runs = await Promise.all(ms.map((m, k) => syncAsync(m, endpoint(k))));
        for (const run of runs) assert.equal(run.code, 0, run.stderr);
      }
    }
    for (let round = 0; round < 2; round++) for (const [k, m] of ms.entries()) sync(m, endpoint(k));
    const names = assertConverged(ms);
    const all = new Set(names.flatMap((n) => [...entries(path.join(ms[0], 'sessions', PROJECT, n)).keys()]));
    assert.deepEqual([...written].filter((id) => !all.has(id)), [], 'nothing written anywhere is lost');
    // The agent's own code reads every file, entry for entry.
    for (const m of ms) {
      const agent = readByAgent(m);
      for (const n of names) assert.deepEqual(agent.get(n), [...entries(path.join(m, 'sessions', PROJECT, n)).keys()].sort(), `oh-my-pi reads ${n}`);
    }
  });

  test('a node killed mid-sync: the cluster keeps serving and the sync completes', async () => {
    const [a, b] = [machine('kill-a'), machine('kill-b')];
    for (let i = 0; i < 20; i++) newSession(a, `kill${i}`);
    const g = await gate(cluster.nodes[0].s3);
    g.holdAfter(8);
    const run = syncAsync(a, g.endpoint);
    await g.held();
    await cluster.kill(2);
    g.release();
    const done = await run;
    await g.close();
    assert.equal(done.code, 0, done.stderr);
    assert.equal(JSON.parse(done.stdout).sessions.length, 20);
    sync(b, cluster.nodes[1].endpoint);
    assertConverged([a, b]);
    await cluster.start(2);
  });

  test('the store stopped mid-upload and started again: the next sync completes, no entry twice', async () => {
    const [a, b] = [machine('stop-a'), machine('stop-b')];
    const files = Array.from({ length: 10 }, (_, i) => newSession(a, `stop${i}`));
    sync(a, cluster.nodes[0].endpoint);
    sync(b, cluster.nodes[1].endpoint);
    for (const f of files) append(a, f, 'more');
    const g = await gate(cluster.nodes[0].s3);
    g.holdAfter(5);
    const run = syncAsync(a, g.endpoint);
    await g.held();
    await cluster.stopAll();
    g.release();
    const failed = await run;
    await g.close();
    assert.equal(failed.code, 1, 'the sync stops with an error');
    assert.equal(failed.stderr.trim().split('\n').length, 1, `one line: ${failed.stderr}`);
    assert.match(failed.stderr, /cannot be reached|failed/);
    await cluster.startAll();
    sync(a, cluster.nodes[0].endpoint);
    sync(b, cluster.nodes[1].endpoint);
    sync(a, cluster.nodes[0].endpoint);
    assertConverged([a, b]); // entries() refuses an id twice
  });

  test('a corrupt or a foreign segment is refused with why, and nothing of it merged', () => {
    const [a, b] = [machine('bad-a'), machine('bad-b')];
    newSession(a, 'bad1');
    sync(a, cluster.nodes[0].endpoint);
    sync(b, cluster.nodes[0].endpoint);
    const before = fs.readFileSync(sessionFile(b, 'bad1'));
    const good = JSON.stringify({ type: 'message', id: 'feedbeef', parentId: null, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'x', timestamp: 1 } });
    const cases = [
      ['00000000000000aa', `${good}\n{not json\n`, /line 2 is not a session entry/],
      ['00000000000000bb', `${JSON.stringify({ type: 'session', version: 3, id: 'other', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/x' })}\n${good}\n`, /belongs to session other/],
    ];
    for (const [m, data, why] of cases) {
      put(`${REMOTE.slice('s3://sync-test/'.length)}/sessions/${PROJECT}/bad1/${m}/0000000000.jsonl`, data);
      const r = sync(b, cluster.nodes[0].endpoint);
      const s = r.sessions.find((x) => x.session === 'bad1');
      assert.ok(s.refused.some((e) => why.test(e)), `${why}: ${JSON.stringify(s.refused)}`);
      assert.deepEqual(fs.readFileSync(sessionFile(b, 'bad1')), before, 'nothing merged');
    }
  });

  test('a missing bucket, wrong credentials, or an endpoint that does not answer: one clear error, nothing changed locally', () => {
    const a = machine('input-a');
    newSession(a, 'input1');
    const snapshot = () => spawnSync('find', [a, '-type', 'f', '-exec', 'sha256sum', '{}', '+'], { encoding: 'utf8' }).stdout.split('\n').sort().join('\n');
    const before = snapshot();
    const cases = [
      [['sync', '--remote', 's3://no-such-bucket/team', '--all'], {}, /bucket does not exist/],
      [['sync', '--remote', REMOTE, '--all'], { env: { AWS_SECRET_ACCESS_KEY: 'wrong' } }, /refused the credentials/],
      [['sync', '--remote', REMOTE, '--all'], { endpoint: 'http://127.0.0.1:9' }, /cannot be reached/],
    ];
    for (const [args, opts, why] of cases) {
      const r = cli(a, args, opts);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, why);
      assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    }
    assert.equal(snapshot(), before);
  });
});
