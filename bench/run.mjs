// The benchmark driver (called by scripts/bench, which builds and generates the data
// first). Runs every measurement in one go, prints the table, writes the JSON results.
//
//   node bench/run.mjs --root DIR --manifest FILE [--real-manifest FILE] --out FILE [--quick]
//
// Each system runs in its own child process. Timed repetitions are spread over rounds
// (every system once per round) so that load changes on a shared machine hit all systems
// alike; the reported value is the median of all timed repetitions.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

// ------------------------------------------------------------------ options

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const QUICK = argv.includes('--quick');
const ROOT = path.resolve(opt('--root', path.join(here, '..')));
const TARGET = path.resolve(opt('--target-dir', process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target')));
const MANIFEST = path.resolve(opt('--manifest', path.join(TARGET, 'bench', 'data', 'manifest.json')));
const OUT = path.resolve(opt('--out', path.join(TARGET, 'bench', 'results.json')));
const REAL_MANIFEST = path.resolve(opt('--real-manifest', path.join(TARGET, 'bench', 'data', 'real-manifest.json')));
const BENCH_DIR = path.join(TARGET, 'bench');
const TMP = path.join(BENCH_DIR, 'tmp');
const AOT_CACHE = path.join(BENCH_DIR, 'aot-cache');
const NATIVE = path.join(TARGET, 'release', 'examples', 'bench_native');
const PROFILE_LOAD = path.join(TARGET, 'release', 'examples', 'profile_load');
const CLI = path.join(TARGET, 'release', 'xcsh-session');
const COMPONENT = path.join(TARGET, 'component', 'xcsh_session_component.wasm');
const PKG_WASM = path.join(ROOT, 'pkg', 'xcsh_session_bg.wasm');

const CFG = QUICK
  ? { session: '1MB', list: '200x10', rounds: 1, reps: 1, warmup: 1, appendReps: 1, recentReps: 1, scaling: [] }
  : { session: '100MB', list: '10000x100', rounds: 3, reps: 2, warmup: 1, appendReps: 15, recentReps: 5, scaling: ['1MB', '10MB'] };
// Real-content sessions (examples/gen_real.rs, real-manifest.json): each open is a first
// open of a fresh copy. `big` stands for the 1 GB tier (a small file in --quick).
// `huge` stands for the 10 GB tier (memory at any size; opened in place, not copied).
const REAL_CFG = QUICK
  ? { sessions: ['5MB-nocompact', '5MB-compact'], big: '10MB-nocompact', huge: '20MB-nocompact', reps: 1, bigReps: 1 }
  : { sessions: ['100MB-nocompact', '100MB-compact'], big: '1GB-nocompact', huge: '10GB-nocompact', reps: 3, bigReps: 1 };
// The store listed whole (the issue "Resume at any size": 200 sessions totalling 5 GB, some
// of 1–2 GB): [real-manifest key, how many], each a hard link (a copy across devices) of
// the generated session under a path of its own. 20 sessions of ~110 MB in --quick.
const STORE_CFG = QUICK
  ? { parts: [['10MB-nocompact', 1], ['5MB-nocompact', 9], ['5MB-compact', 10]], reps: 1 }
  : { parts: [['1GB-nocompact', 2], ['100MB-nocompact', 10], ['100MB-compact', 10], ['5MB-nocompact', 89], ['5MB-compact', 89]], reps: 3 };

const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
const big = manifest.sessions[CFG.session];
const tiny = manifest.sessions['1KB'];
const listing = manifest.lists[CFG.list];
if (!big || !tiny || !listing) {
  console.error(`[bench] the manifest lacks ${CFG.session}, 1KB or ${CFG.list}: run scripts/bench`);
  process.exit(1);
}
const realManifest = JSON.parse(fs.readFileSync(REAL_MANIFEST, 'utf8'));
for (const key of [...REAL_CFG.sessions, REAL_CFG.big, REAL_CFG.huge, ...STORE_CFG.parts.map(([k]) => k)]) {
  if (!realManifest.sessions[key]) {
    console.error(`[bench] ${path.relative(process.cwd(), REAL_MANIFEST)} lacks ${key}: run scripts/bench`);
    process.exit(1);
  }
}
fs.mkdirSync(TMP, { recursive: true });

const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

// ------------------------------------------------------------------ helpers

const median = (xs) => {
  const v = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const min = (xs) => Math.min(...xs);

function run(cmd, args, { env, stdout = 'pipe' } = {}) {
  const r = spawnSync(cmd, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, 'pipe'],
    maxBuffer: 1 << 26,
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`${path.basename(cmd)} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  }
  return r;
}
const json = (cmd, args, o) => JSON.parse(run(cmd, args, o).stdout);

/**
 * Wall time of a whole process (ms), stdout to /dev/null. With `cpu`, the process runs
 * under /usr/bin/time for its user + system CPU time (10 ms resolution; the wrapper adds
 * about a millisecond of wall time).
 */
function timeProcess(cmd, args, env, cpu = false) {
  const wrap = cpu && fs.existsSync('/usr/bin/time');
  const t = process.hrtime.bigint();
  const r = wrap
    ? run('/usr/bin/time', ['-f', 'XCSH_CPU=%U %S', cmd, ...args], { env, stdout: 'ignore' })
    : run(cmd, args, { env, stdout: 'ignore' });
  const wallMs = Number(process.hrtime.bigint() - t) / 1e6;
  const m = wrap ? /XCSH_CPU=([\d.]+) ([\d.]+)/.exec(r.stderr) : null;
  return { wallMs, cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : NaN };
}

/** Peak RSS (bytes) of a process, from /usr/bin/time; null when unavailable. */
function processMaxRss(cmd, args, env) {
  if (!fs.existsSync('/usr/bin/time')) return null;
  const r = spawnSync('/usr/bin/time', ['-f', 'XCSH_MAXRSS_KIB=%M', cmd, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const m = /XCSH_MAXRSS_KIB=(\d+)/.exec(r.stderr ?? '');
  return m ? Number(m[1]) * 1024 : null;
}

const fmtMs = (ms) => (!Number.isFinite(ms) ? 'failed' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(2)} ms`);
const fmtBytes = (b) => (!Number.isFinite(b) ? 'failed' : b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : b >= 1e3 ? `${(b / 1e3).toFixed(1)} kB` : `${Math.round(b)} B`);
const fmtRatio = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '–');
const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);

// ------------------------------------------------------------------ 1. open

const cliEnv = { XCSH_SESSION_CACHE_DIR: AOT_CACHE };
const cliArgs = (file, agentDir) => ['--agent-dir', agentDir, '--component', COMPONENT, 'context', file, '--json'];

// A child system running bench/open.mjs in `mode` (wasm-text, wasm-open, js, js-text).
const openChild = (mode) => (s, warmup, reps) =>
  [process.execPath, [path.join(here, 'open.mjs'), mode, s.path, s.agentDir, warmup, reps]];

const SYSTEMS = {
  cat: {
    label: 'cat file > /dev/null',
    process: (s) => ['cat', [s.path]],
  },
  readFloor: {
    label: 'the same read loop as cat, in process (for CPU time)',
    child: (s, warmup, reps) => [NATIVE, ['cat', s.path, warmup, reps]],
  },
  native: {
    label: 'native core',
    child: (s, warmup, reps) => [NATIVE, ['open', s.path, s.agentDir, warmup, reps]],
  },
  nativeOneCore: {
    label: 'native core pinned to one CPU (taskset -c 0): the single-threaded work wasm does',
    child: (s, warmup, reps) => ['taskset', ['-c', '0', NATIVE, 'open', s.path, s.agentDir, warmup, reps]],
  },
  wasmText: {
    label: 'wasm in Node, Session.fromText(text).contextJson(), text already a JS string',
    child: openChild('wasm-text'),
  },
  wasmOpen: {
    label: 'wasm in Node, Session.open(storage, file).contextJson()',
    child: openChild('wasm-open'),
  },
  js: {
    label: 'plain JavaScript in Node (bench/baseline.mjs)',
    child: openChild('js'),
  },
  jsText: {
    label: 'plain JavaScript in Node from the text already a JS string',
    child: openChild('js-text'),
  },
  wasmtime: {
    label: 'wasm in wasmtime, xcsh-session context (whole process, warm AOT cache)',
    process: (s) => [CLI, cliArgs(s.path, s.agentDir), cliEnv],
    cpu: true,
  },
};

function measureOpen(session, systems, { rounds, reps, warmup, warmupRound = false }) {
  // An untimed round first: every system once, so that the first timed round does not
  // pay for the machine's state after generating the data (page cache, free memory).
  if (warmupRound) {
    for (const key of systems) {
      const sys = SYSTEMS[key];
      if (sys.process) {
        const [cmd, args, env] = sys.process(session);
        timeProcess(cmd, args, env, sys.cpu);
      } else {
        const [cmd, args] = sys.child(session, 0, 1);
        json(cmd, args.map(String));
      }
    }
    log('  warm-up round done');
  }
  const out = Object.fromEntries(systems.map((k) => [k, { wallMs: [], cpuMs: [], info: null }]));
  for (let r = 0; r < rounds; r++) {
    for (const key of systems) {
      const sys = SYSTEMS[key];
      if (sys.process) {
        const [cmd, args, env] = sys.process(session);
        const n = reps + (r === 0 ? warmup : 0);
        for (let i = 0; i < n; i++) {
          const t = timeProcess(cmd, args, env, sys.cpu);
          if (r > 0 || i >= warmup) {
            out[key].wallMs.push(t.wallMs);
            out[key].cpuMs.push(t.cpuMs);
          }
        }
      } else {
        const [cmd, args] = sys.child(session, warmup, reps);
        const res = json(cmd, args.map(String));
        out[key].wallMs.push(...res.wallMs);
        out[key].cpuMs.push(...res.cpuMs);
        out[key].info = res;
      }
    }
    log(`  round ${r + 1}/${rounds}: ${systems.map((k) => `${k} ${median(out[k].wallMs).toFixed(1)} ms`).join(', ')}`);
  }
  for (const key of systems) {
    out[key].medianMs = median(out[key].wallMs);
    out[key].minMs = out[key].wallMs.length ? min(out[key].wallMs) : NaN;
    out[key].medianCpuMs = median(out[key].cpuMs);
  }
  return out;
}

/** The context each host prints for the session, compared byte for byte (by hash). */
function contextHashes(session, open) {
  const file = path.join(TMP, 'wasmtime-context.json');
  const fd = fs.openSync(file, 'w');
  try {
    run(CLI, cliArgs(session.path, session.agentDir), { env: cliEnv, stdout: fd });
  } finally {
    fs.closeSync(fd);
  }
  let text = fs.readFileSync(file);
  if (text.at(-1) === 0x0a) text = text.subarray(0, -1);
  fs.unlinkSync(file);
  const hashes = {
    native: open.native.info.contextSha256,
    wasmText: open.wasmText.info.contextSha256,
    wasmOpen: open.wasmOpen.info.contextSha256,
    wasmtime: sha256(text),
    js: open.js.info.contextSha256,
    jsText: open.jsText.info.contextSha256,
  };
  const hosts = ['native', 'wasmText', 'wasmOpen', 'wasmtime'];
  return {
    hashes,
    contextBytes: open.native.info.contextBytes,
    hostsIdentical: hosts.every((h) => hashes[h] === hashes.native),
    baselineIdentical: hashes.js === hashes.native && hashes.jsText === hashes.native,
  };
}

// ------------------------------------------------------------------ run

const results = {
  meta: {
    quick: QUICK,
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    totalMemBytes: os.totalmem(),
    loadavgStart: loadavg(),
    config: CFG,
    data: { session: big, tiny, listing: { ...listing, projectDirs: undefined } },
  },
};

log(`open: ${CFG.session} session (${(big.bytes / 1e6).toFixed(1)} MB), ${CFG.rounds} round(s) × ${CFG.reps} rep(s)`);
fs.mkdirSync(AOT_CACHE, { recursive: true });
run(CLI, ['--component', COMPONENT, 'precompile'], { env: cliEnv });
const ONE_CORE = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const ALL = ['cat', 'readFloor', 'native', ...(ONE_CORE ? ['nativeOneCore'] : []), 'wasmText', 'wasmOpen', 'js', 'jsText', 'wasmtime'];
if (!ONE_CORE) log('taskset is missing: no native one-core measurement');
const open = measureOpen(big, ALL, { ...CFG, warmupRound: !QUICK });
results.open = open;
results.outputs = contextHashes(big, open);
if (!results.outputs.hostsIdentical) log('WARNING: the hosts printed different contexts');

results.scaling = {};
for (const size of CFG.scaling) {
  const s = manifest.sessions[size];
  if (!s) continue;
  log(`open scaling: ${size}`);
  results.scaling[size] = { bytes: s.bytes, ...measureOpen(s, ['cat', 'readFloor', 'native', 'wasmText', 'wasmOpen', 'js', 'jsText'], { rounds: 1, reps: 3, warmup: 1 }) };
}

log('phases of the native open');
const phaseReps = QUICK ? 1 : 5;
const phaseRun = json(NATIVE, ['phases', big.path, big.agentDir, String(phaseReps)]);
results.phases = {
  medianMs: phaseRun.phasesMs,
  firstRunMs: phaseRun.firstRunPhasesMs,
  reps: phaseReps,
  profileLoad: fs.existsSync(PROFILE_LOAD) ? run(PROFILE_LOAD, [big.path]).stdout.trim().split('\n') : null,
};

log(`append: 1 entry + flush, ${CFG.session} vs 1 KB, ${CFG.appendReps} rep(s)`);
const append = json(NATIVE, ['append', big.path, tiny.path, path.join(TMP, 'append'), String(CFG.appendReps)]);
results.append = {
  ...append,
  medianMs: {
    bigFlush: median(append.big.appendFlushMs),
    smallFlush: median(append.small.appendFlushMs),
    bigAppend: median(append.big.appendMs),
    smallAppend: median(append.small.appendMs),
  },
};

log(`append through the component's session resource (jco in Node): ${CFG.session}, ${CFG.appendReps} rep(s)`);
const JCO_OUT = path.join(BENCH_DIR, 'jco');
const viaResource = json(process.execPath, [path.join(here, 'resource-append.mjs'), JCO_OUT, big.path, path.join(TMP, 'resource-append'), String(CFG.appendReps)]);
results.append.resource = {
  ...viaResource,
  medianMs: { appendFlush: median(viaResource.appendFlushMs), append: median(viaResource.appendMs) },
};
log(`the same with jco's JCO_DEBUG check read once (scripts/bench patches the glue): ${CFG.session}, ${CFG.appendReps} rep(s)`);
const viaPatched = json(process.execPath, [path.join(here, 'resource-append.mjs'), path.join(BENCH_DIR, 'jco-debug-once'), big.path, path.join(TMP, 'resource-append'), String(CFG.appendReps)]);
results.append.resourceDebugOnce = {
  ...viaPatched,
  medianMs: { appendFlush: median(viaPatched.appendFlushMs), append: median(viaPatched.appendMs) },
};

log(`append through the CLI host, xcsh-session session (JSON lines on a pipe): ${CFG.session}, ${CFG.appendReps} rep(s)`);
const viaCli = json(process.execPath, [path.join(here, 'cli-append.mjs'), CLI, COMPONENT, AOT_CACHE, big.path, path.join(TMP, 'cli-append'), String(CFG.appendReps)]);
results.append.cli = {
  ...viaCli,
  medianMs: {
    appendFlush: median(viaCli.appendFlushMs),
    append: median(viaCli.appendMs),
    inHostAppendFlush: median(viaCli.inHostAppendFlushMs),
    inHostAppend: median(viaCli.inHostAppendMs),
  },
};

// serde-wasm-bindgen vs JSON text + JSON.parse for objects crossing into JS (full runs).
const SWB_PKG = path.join(BENCH_DIR, 'pkg-swb');
if (!QUICK && fs.existsSync(path.join(SWB_PKG, 'xcsh_session.js'))) {
  log('context() as JS objects: JSON.parse of the core\'s text vs serde-wasm-bindgen, real fixture and 10 MB');
  results.convert = {};
  for (const [key, file] of [['real', path.join(ROOT, 'tests', 'fixtures', 'real', 'before-compaction.jsonl')], ['10MB', manifest.sessions['10MB'].path]]) {
    const r = json(process.execPath, [path.join(here, 'serde-wasm-bindgen.mjs'), SWB_PKG, file, '5']);
    results.convert[key] = { ...r, medianMs: { jsonParse: median(r.jsonParseMs), serdeWasmBindgen: median(r.serdeWasmBindgenMs) } };
  }
}

// The viewer with the big session opened from its browser storage (OPFS), in Chromium.
if (!QUICK && fs.existsSync('/usr/bin/chromium')) {
  log(`viewer: ${CFG.session} session opened from OPFS in headless Chromium (renderer memory)`);
  results.viewer = json(process.execPath, [path.join(here, 'viewer-memory.mjs'), path.join(ROOT, 'web-demo'), big.path]);
}

log(`recent list: ${listing.files} files in ${listing.projects} projects, ${CFG.recentReps} rep(s)`);
const recent = json(NATIVE, ['recent', listing.agentDir, listing.projectDirs[0], String(CFG.recentReps)]);
for (const k of ['one', 'all']) {
  recent[k].medianMs = median(recent[k].wallMs);
  recent[k].floorMedianMs = median(recent[k].floorWallMs);
  recent[k].bytesPerFile = recent[k].bytesRead / Math.max(1, recent[k].prefixReads + recent[k].fullReads);
}
results.recent = recent;

// The hand-written passes kept for speed, against the library alternatives, on the real
// fixtures' entry lines repeated (bench_native parsers): a number per choice.
const REAL = path.join(ROOT, 'tests', 'fixtures', 'real');
const realFiles = fs.readdirSync(REAL).filter((f) => f.endsWith('.jsonl')).map((f) => path.join(REAL, f));
const parserMb = QUICK ? 4 : 100;
log(`parsers: real fixtures repeated to ${parserMb} MB`);
results.parsers = json(NATIVE, ['parsers', String(parserMb), String(QUICK ? 1 : 5), ...realFiles]);

log('memory');
const rss = json(NATIVE, ['rss', big.path, big.agentDir]);
const memText = json(process.execPath, [path.join(here, 'open.mjs'), 'memory', 'wasm-text', big.path, big.agentDir]);
const memOpen = json(process.execPath, [path.join(here, 'open.mjs'), 'memory', 'wasm-open', big.path, big.agentDir]);
const memJs = json(process.execPath, [path.join(here, 'open.mjs'), 'memory', 'js', big.path, big.agentDir]);
const cliRss = processMaxRss(CLI, cliArgs(big.path, big.agentDir), cliEnv);
results.memory = { native: rss, wasmText: memText, wasmOpen: memOpen, js: memJs, wasmtimeMaxRssBytes: cliRss };

// ------------------------------------------------------------------ real content

// Every open here is the first open of a fresh copy (new agent dir, new path, new mtime,
// the blobs copied along): nothing a host might keep about a file it saw before can help
// it. The reopen is a second process opening the same unchanged copy.
const REAL_TMP = path.join(TMP, 'real');
let copies = 0;
function freshCopy(s) {
  const agent = path.join(REAL_TMP, String(copies++), 'agent');
  const dir = path.join(agent, 'sessions', path.basename(path.dirname(s.path)));
  fs.mkdirSync(dir, { recursive: true });
  const blobs = path.join(s.agentDir, 'blobs');
  if (fs.existsSync(blobs)) fs.cpSync(blobs, path.join(agent, 'blobs'), { recursive: true });
  const file = path.join(dir, path.basename(s.path));
  fs.copyFileSync(s.path, file);
  return { path: file, agentDir: agent, root: path.dirname(agent) };
}
const dropCopy = (c) => fs.rmSync(c.root, { recursive: true, force: true });

// One open of a copy in a fresh process, per host: { wallMs, contextBytes?, messages? }.
const REAL_HOSTS = {
  // Through the session index (the cache under the copy's agent dir: none on the first
  // open, which writes it; the reopen reads it).
  native: (c) => {
    const r = json(NATIVE, ['context', c.path, c.agentDir, 'use', '0', '1']);
    return { wallMs: r.wallMs[0], contextBytes: r.contextBytes, messages: r.messages, contextSha256: r.contextSha256 };
  },
  cli: (c) => ({ wallMs: timeProcess(CLI, cliArgs(c.path, c.agentDir), cliEnv).wallMs }),
  npm: (c) => {
    const r = json(process.execPath, [path.join(here, 'open.mjs'), 'wasm-open-stream', c.path, c.agentDir, '0', '1']);
    return { wallMs: r.wallMs[0], contextBytes: r.contextBytes, contextSha256: r.contextSha256 };
  },
  npmIndex: (c) => {
    const r = json(process.execPath, [path.join(here, 'open.mjs'), 'wasm-open-context', c.path, c.agentDir, '0', '1']);
    return { wallMs: r.wallMs[0], contextBytes: r.contextBytes, contextSha256: r.contextSha256 };
  },
  // The drop-in resuming as the agent does: SessionManager.open, then buildSessionContext()
  // (a JS object; lazy: the index, then the leaf's path).
  agent: (c) => {
    const r = json(process.execPath, [path.join(here, 'open.mjs'), 'agent-resume', c.path, c.agentDir, '0', '1']);
    return { wallMs: r.wallMs[0] };
  },
};
// Peak memory of one first open, per host (bytes).
const REAL_MEMORY = {
  native: (c) => json(NATIVE, ['context', c.path, c.agentDir, 'use', '0', '1']).vmHwmKiB * 1024,
  cli: (c) => {
    // A run that fails does not count: its peak is that of a failure.
    const r = spawnSync('/usr/bin/time', ['-f', 'XCSH_MAXRSS_KIB=%M', CLI, ...cliArgs(c.path, c.agentDir)], {
      env: { ...process.env, ...cliEnv },
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`xcsh-session exited ${r.status}: ${r.stderr}`);
    const m = /XCSH_MAXRSS_KIB=(\d+)/.exec(r.stderr ?? '');
    return m ? Number(m[1]) * 1024 : NaN;
  },
  npm: (c) => json(process.execPath, [path.join(here, 'open.mjs'), 'memory', 'wasm-open-stream', c.path, c.agentDir]).maxRssBytes,
  npmIndex: (c) => json(process.execPath, [path.join(here, 'open.mjs'), 'memory', 'wasm-open-context', c.path, c.agentDir]).maxRssBytes,
  agent: (c) => json(process.execPath, [path.join(here, 'open.mjs'), 'memory', 'agent-resume', c.path, c.agentDir]).maxRssBytes,
};
const attempt = (f) => {
  try {
    return f();
  } catch (e) {
    return { error: String(e.message ?? e).slice(0, 2000) };
  }
};
// The line of a failed run's stderr that says why (not the command line).
const why = (error) => {
  const tail = error.split(/ exited \d+: /).slice(1).join(' ') || error;
  const lines = tail.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines.find((l) => /error/i.test(l)) ?? lines[0] ?? error).slice(0, 200);
};

function measureReal(key, reps) {
  const s = realManifest.sessions[key];
  const r = { key, bytes: s.bytes, variant: s.variant, generated: s, cat: [], hosts: {}, memory: {} };
  for (const h of Object.keys(REAL_HOSTS)) r.hosts[h] = { firstMs: [], reopenMs: [], errors: [] };
  for (let i = 0; i < reps; i++) {
    for (const [h, open] of Object.entries(REAL_HOSTS)) {
      const c = freshCopy(s);
      if (h === 'native') {
        timeProcess('cat', [c.path]);
        r.cat.push(timeProcess('cat', [c.path]).wallMs);
      }
      const first = attempt(() => open(c));
      const again = first.error ? first : attempt(() => open(c));
      dropCopy(c);
      const out = r.hosts[h];
      if (first.error || again.error) {
        out.errors.push(first.error ?? again.error);
        log(`  ${key} ${h}: FAILED: ${why(first.error ?? again.error)}`);
        continue;
      }
      out.firstMs.push(first.wallMs);
      out.reopenMs.push(again.wallMs);
      for (const k of ['contextBytes', 'messages', 'contextSha256']) if (first[k] !== undefined) out[k] = first[k];
    }
    log(`  ${key} rep ${i + 1}/${reps}: cat ${fmtMs(median(r.cat))}, ` +
      Object.entries(r.hosts).map(([h, o]) => `${h} ${fmtMs(median(o.firstMs))} (reopen ${fmtMs(median(o.reopenMs))})`).join(', '));
  }
  for (const [h, peak] of Object.entries(REAL_MEMORY)) {
    const c = freshCopy(s);
    const v = attempt(() => peak(c));
    dropCopy(c);
    r.memory[h] = typeof v === 'number' ? v : NaN;
    if (typeof v !== 'number') r.hosts[h].errors.push(`memory: ${v.error}`);
  }
  r.catMs = median(r.cat);
  for (const o of Object.values(r.hosts)) {
    o.firstMedianMs = median(o.firstMs);
    o.reopenMedianMs = median(o.reopenMs);
  }
  r.contextBytes = r.hosts.native.contextBytes ?? r.hosts.npm.contextBytes ?? null;
  r.contextMessages = r.hosts.native.messages ?? null;
  r.contextMessagesAsGenerated = r.contextMessages === s.contextMessages;
  r.sameContextNativeNpm = r.hosts.native.contextSha256 === undefined || r.hosts.npm.contextSha256 === undefined
    ? null
    : r.hosts.native.contextSha256 === r.hosts.npm.contextSha256;
  if (r.contextMessages !== null && !r.contextMessagesAsGenerated) {
    log(`  WARNING: ${key}: the context has ${r.contextMessages} messages, the generator said ${s.contextMessages}`);
  }
  return r;
}

results.real = {};
for (const key of [...REAL_CFG.sessions, REAL_CFG.big]) {
  const reps = key === REAL_CFG.big ? REAL_CFG.bigReps : REAL_CFG.reps;
  log(`real content: ${key} (${(realManifest.sessions[key].bytes / 1e6).toFixed(1)} MB), ${reps} fresh cop${reps === 1 ? 'y' : 'ies'} per host`);
  results.real[key] = measureReal(key, reps);
}
// Appends through a SessionManager on a copy of the compact real session: the drop-in
// under Node against the agent's own (oh-my-pi's published session-manager.ts, under Bun,
// installed by scripts/setup test), one process each, interleaved. Skipped without them.
const TOOLS = process.env.XCSH_TOOLS_DIR || path.join(os.homedir(), '.cache', 'xcsh-session', 'tools');
const AGENT_TS = path.join(TOOLS, 'omp', 'node_modules', '@oh-my-pi', 'pi-coding-agent', 'src', 'session', 'session-manager.ts');
const BUN = path.join(TOOLS, 'pkgtest', 'node_modules', '.bin', 'bun');
const APPEND_KEY = REAL_CFG.sessions.find((k) => k.endsWith('-compact'));
if (fs.existsSync(AGENT_TS) && fs.existsSync(BUN)) {
  const reps = QUICK ? 50 : 300;
  log(`agent append: ${APPEND_KEY}, ${reps} appends + flush, then ${reps} appends and one flush: the drop-in (Node) and the agent (Bun)`);
  // `agentFsync`: the agent with the fsync xcsh's flush() does after it (agent-append.mjs).
  const runs = { dropin: [], agent: [], agentFsync: [] };
  for (let i = 0; i < (QUICK ? 1 : 3); i++) {
    for (const who of Object.keys(runs)) {
      const c = freshCopy(realManifest.sessions[APPEND_KEY]);
      const [bin, mod] = who === 'dropin' ? [process.execPath, path.join(ROOT, 'pkg', 'agent.mjs')] : [BUN, AGENT_TS];
      const mode = who === 'agentFsync' ? ['fsync'] : [];
      const r = attempt(() => json(bin, [path.join(here, 'agent-append.mjs'), mod, c.path, c.agentDir, String(reps), ...mode]));
      dropCopy(c);
      if (r.error) log(`  ${who}: FAILED: ${why(r.error)}`);
      else runs[who].push(r);
    }
  }
  const flat = (who) => runs[who].flatMap((r) => r.appendFlushMs);
  results.agentAppend = {
    key: APPEND_KEY,
    reps,
    appendFlushMs: Object.fromEntries(Object.keys(runs).map((who) => [who, median(flat(who))])),
    batchMs: Object.fromEntries(Object.keys(runs).map((who) => [who, median(runs[who].map((r) => r.batchMs))])),
  };
} else {
  log(`agent append: skipped (no ${fs.existsSync(BUN) ? AGENT_TS : BUN}: scripts/setup test installs it)`);
}
fs.rmSync(REAL_TMP, { recursive: true, force: true });

// The 10 GB tier: opened where it was generated (a copy would double the disk it takes),
// its index cache removed before each first open. Native streams the context; the CLI and
// npm openContext peaks are of a first open (the scan, then the streamed context).
{
  const s = realManifest.sessions[REAL_CFG.huge];
  const c = { path: s.path, agentDir: s.agentDir };
  const noCache = () => fs.rmSync(path.join(s.agentDir, 'cache'), { recursive: true, force: true });
  log(`real content: ${REAL_CFG.huge} (${(s.bytes / 1e6).toFixed(1)} MB) in place: native first open and reopen, CLI and npm openContext peak memory`);
  const h = { key: REAL_CFG.huge, bytes: s.bytes, entries: s.entries, errors: [] };
  timeProcess('cat', [s.path]);
  h.catMs = timeProcess('cat', [s.path]).wallMs;
  noCache();
  const first = attempt(() => json(NATIVE, ['context', s.path, s.agentDir, 'use', '0', '1']));
  const again = first.error ? first : attempt(() => json(NATIVE, ['context', s.path, s.agentDir, 'use', '0', '1']));
  if (first.error || again.error) h.errors.push(`native: ${first.error ?? again.error}`);
  h.native = first.error ? {} : { firstMs: first.wallMs[0], reopenMs: again.error ? NaN : again.wallMs[0], peak: first.vmHwmKiB * 1024, contextBytes: first.contextBytes };
  for (const host of ['cli', 'npmIndex']) {
    noCache();
    const v = attempt(() => REAL_MEMORY[host](c));
    h[host] = typeof v === 'number' ? v : NaN;
    if (typeof v !== 'number') h.errors.push(`${host}: ${v.error}`);
  }
  noCache();
  for (const e of h.errors) log(`  ${REAL_CFG.huge}: FAILED: ${why(e)}`);
  results.huge = h;
}

// The viewer's first render of each 100 MB real-content session, opened from the browser
// storage (OPFS) in headless Chromium: from navigating to the session's address to its
// first message on screen (full runs; --quick's sessions are too small to say anything).
if (!QUICK && fs.existsSync('/usr/bin/chromium')) {
  for (const key of REAL_CFG.sessions) {
    log(`viewer: ${key} opened from OPFS in headless Chromium (first render, renderer memory)`);
    const v = attempt(() => json(process.execPath, [path.join(here, 'viewer-memory.mjs'), path.join(ROOT, 'web-demo'), realManifest.sessions[key].path]));
    results.real[key].viewer = v;
    if (v.error) log(`  ${key} viewer: FAILED: ${why(v.error)}`);
  }
}

// ------------------------------------------------------------------ listing a store

// `list --all` of the CLI and `SessionManager.listAll()` of the npm drop-in over a store
// of real-content sessions: cold (no index cache: each file scanned once, its index
// written) and warm (every index cached: a header line, a first user message and the
// index per session). The same session file copied under many paths (copies: the CLI reads
// no file with more than one link, so hard links would be left out of its list): each path
// has its own index (the cache is keyed by path); their header ids repeat, which a listing
// does not mind.
{
  const agent = path.join(TMP, 'store', 'agent');
  fs.rmSync(path.dirname(agent), { recursive: true, force: true });
  let n = 0;
  let bytes = 0;
  const files = [];
  for (const [key, count] of STORE_CFG.parts) {
    const s = realManifest.sessions[key];
    for (let i = 0; i < count; i++, n++) {
      const dir = path.join(agent, 'sessions', `--work-p${n % 10}--`);
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `2026-01-01T00-00-${String(n).padStart(6, '0')}Z_${key}-${i}.jsonl`);
      fs.copyFileSync(s.path, file);
      files.push(file);
      bytes += s.bytes;
    }
  }
  const cache = path.join(agent, 'cache');
  const cliList = ['--agent-dir', agent, '--component', COMPONENT, 'list', '--all'];
  const npmList = () => json(process.execPath, [path.join(here, 'list.mjs'), agent]);
  log(`store listing: ${n} sessions, ${fmtBytes(bytes)}, ${STORE_CFG.reps} rep(s), cold and warm`);
  timeProcess('cat', files);
  const store = { sessions: n, bytes, catMs: [], cli: { coldMs: [], warmMs: [] }, npm: { coldMs: [], warmMs: [] } };
  for (let i = 0; i < STORE_CFG.reps; i++) {
    store.catMs.push(timeProcess('cat', files).wallMs);
    fs.rmSync(cache, { recursive: true, force: true });
    store.cli.coldMs.push(timeProcess(CLI, cliList, cliEnv).wallMs);
    store.cli.warmMs.push(timeProcess(CLI, cliList, cliEnv).wallMs);
    fs.rmSync(cache, { recursive: true, force: true });
    const cold = npmList();
    store.npm.coldMs.push(cold.wallMs);
    store.npm.warmMs.push(npmList().wallMs);
    if (cold.sessions !== n) log(`  WARNING: listAll gave ${cold.sessions} sessions of ${n}`);
  }
  // What each listed (a list that leaves sessions out is no list: its rows say NO).
  store.cli.sessions = JSON.parse(run(CLI, [...cliList, '--json'], { env: cliEnv }).stdout).length;
  store.npm.sessions = npmList().sessions;
  for (const [h, o] of [['CLI', store.cli], ['npm', store.npm]]) {
    if (o.sessions !== n) log(`  WARNING: ${h} listed ${o.sessions} sessions of ${n}`);
  }
  store.catMedianMs = median(store.catMs);
  for (const h of [store.cli, store.npm]) {
    h.coldMedianMs = median(h.coldMs);
    h.warmMedianMs = median(h.warmMs);
  }
  log(`  cat ${fmtMs(store.catMedianMs)}; CLI cold ${fmtMs(store.cli.coldMedianMs)}, warm ${fmtMs(store.cli.warmMedianMs)}; ` +
    `npm cold ${fmtMs(store.npm.coldMedianMs)}, warm ${fmtMs(store.npm.warmMedianMs)}`);
  // The picker's first screen: the newest 20 sessions, with and without their indexes
  // cached (the files' modification times put 1 GB sessions among the newest 20).
  const newest = [...files.slice(0, 2), ...files.slice(-18)];
  const now = Date.now() / 1000;
  newest.forEach((f, i) => fs.utimesSync(f, now - i, now - i));
  const cliFirst = ['--agent-dir', agent, '--component', COMPONENT, 'list', '--all', '--limit', '20'];
  const npmFirst = () => json(process.execPath, [path.join(here, 'list.mjs'), agent, 'first', '20']);
  store.first = { cli: { coldMs: [], warmMs: [] }, npm: { coldMs: [], warmMs: [] } };
  for (let i = 0; i < STORE_CFG.reps; i++) {
    fs.rmSync(cache, { recursive: true, force: true });
    store.first.cli.coldMs.push(timeProcess(CLI, cliFirst, cliEnv).wallMs);
    store.first.cli.warmMs.push(timeProcess(CLI, cliFirst, cliEnv).wallMs);
    fs.rmSync(cache, { recursive: true, force: true });
    store.first.npm.coldMs.push(npmFirst().wallMs);
    store.first.npm.warmMs.push(npmFirst().wallMs);
  }
  store.first.cli.sessions = JSON.parse(run(CLI, [...cliFirst, '--json'], { env: cliEnv }).stdout).length;
  store.first.npm.sessions = npmFirst().sessions;
  for (const h of [store.first.cli, store.first.npm]) {
    h.coldMedianMs = median(h.coldMs);
    h.warmMedianMs = median(h.warmMs);
  }
  log(`  first screen (20): CLI cold ${fmtMs(store.first.cli.coldMedianMs)}, warm ${fmtMs(store.first.cli.warmMedianMs)}; ` +
    `npm cold ${fmtMs(store.first.npm.coldMedianMs)}, warm ${fmtMs(store.first.npm.warmMedianMs)}`);
  // The search over every session's text, streamed (indexes cached): a query found early
  // in most sessions, and one found nowhere (every message of every session read).
  store.search = {};
  for (const [key, query] of [['found', 'cargo test'], ['none', 'zqxjvkw']]) {
    const cliSearch = ['--agent-dir', agent, '--component', COMPONENT, 'search', query, '--all'];
    const npm = json(process.execPath, [path.join(here, 'list.mjs'), agent, 'search', query]);
    store.search[key] = {
      query,
      cliMs: timeProcess(CLI, cliSearch, cliEnv).wallMs,
      cliRssBytes: processMaxRss(CLI, cliSearch, cliEnv),
      npm,
    };
    log(`  search '${query}': CLI ${fmtMs(store.search[key].cliMs)} (${fmtBytes(store.search[key].cliRssBytes)} RSS); ` +
      `npm ${fmtMs(npm.wallMs)}, first step ${fmtMs(npm.firstStepMs)}, ${npm.steps} steps, ${npm.hits} hits, ` +
      `${fmtBytes(npm.bytesRead)} of ${fmtBytes(npm.bytes)} read, ${fmtBytes(npm.maxRssBytes)} RSS`);
  }
  results.store = store;
  fs.rmSync(path.dirname(agent), { recursive: true, force: true });
}

// ------------------------------------------------------------------ sync

// `xcsh-session sync` against a 3-node Garage cluster on loopback (replication 3,
// scripts/lib/garage.mjs; Garage from scripts/setup test), whole CLI processes (the issue
// "Sessions across machines"): 200 sessions of real content (the real fixtures under new
// ids) synced once, then an unchanged sync (listing only: ≤ 1 s); a 1 KB append, then its
// sync (≤ 8 KiB moved); the 1 GB session (10 MB in --quick) sent once, then after an
// append only its new segment. Bytes moved are the report's `pushedBytes` (segments sent).
const GARAGE_MOD = path.join(ROOT, 'scripts', 'lib', 'garage.mjs');
const { GARAGE, startCluster } = await import(GARAGE_MOD);
if (fs.existsSync(GARAGE) && fs.existsSync(CLI)) {
  log('sync: a 3-node Garage cluster on loopback');
  const work = fs.mkdtempSync(path.join(TMP, 'sync-'));
  const cluster = await startCluster({ dir: path.join(work, 'garage') });
  try {
    const env = { ...process.env, ...cluster.env, AWS_ENDPOINT_URL: cluster.nodes[0].endpoint, XCSH_SESSION_CACHE_DIR: AOT_CACHE };
    const syncArgs = (agent, prefix) => ['--agent-dir', agent, 'sync', '--remote', `s3://${cluster.bucket}/${prefix}`, '--all', '--json'];
    const report = (agent, prefix) => {
      const t0 = performance.now();
      const out = JSON.parse(run(CLI, syncArgs(agent, prefix), { env }).stdout);
      return { ms: performance.now() - t0, out };
    };
    const appendKb = (agent, file) => {
      const entry = JSON.stringify({ type: 'message', message: { role: 'user', content: 'k'.repeat(1000), timestamp: 1 } });
      run(CLI, ['--agent-dir', agent, 'append', '--cwd', '/bench/proj', '--json', entry, file], { env });
    };
    // 200 sessions: the real fixtures in turn, each under an id of its own.
    const agent = path.join(work, 'store');
    const dir = path.join(agent, 'sessions', '-bench-proj');
    fs.mkdirSync(dir, { recursive: true });
    const fixtures = fs.readdirSync(path.join(ROOT, 'tests', 'fixtures', 'real')).filter((f) => f.endsWith('.jsonl'));
    let storeBytes = 0;
    const files = [];
    for (let i = 0; i < 200; i++) {
      const lines = fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'real', fixtures[i % fixtures.length]), 'utf8').split('\n');
      const header = JSON.parse(lines[0]);
      header.id = `bench${String(i).padStart(4, '0')}`;
      lines[0] = JSON.stringify(header);
      const file = path.join(dir, `2026-01-01T00-00-00-000Z_${header.id}.jsonl`);
      fs.writeFileSync(file, lines.join('\n'));
      storeBytes += fs.statSync(file).size;
      files.push(file);
    }
    const first = report(agent, 'store');
    const unchanged = [];
    for (let i = 0; i < 3; i++) unchanged.push(report(agent, 'store'));
    appendKb(agent, files[0]);
    const append = report(agent, 'store');
    // The big session: sent once, then only what is new.
    const bigKey = REAL_CFG.big;
    const bigSession = realManifest.sessions[bigKey];
    const bigAgent = path.join(work, 'big');
    const bigDir = path.join(bigAgent, 'sessions', '-bench-proj');
    fs.mkdirSync(bigDir, { recursive: true });
    const bigFile = path.join(bigDir, path.basename(bigSession.path));
    fs.copyFileSync(bigSession.path, bigFile);
    const bigFirst = report(bigAgent, 'big');
    appendKb(bigAgent, bigFile);
    const bigAgain = report(bigAgent, 'big');
    const pushed = (r) => r.out.sessions.reduce((n, s) => n + s.pushedBytes, 0);
    results.sync = {
      sessions: files.length,
      storeBytes,
      firstMs: first.ms,
      firstPushedBytes: pushed(first),
      unchangedMs: median(unchanged.map((r) => r.ms)),
      unchangedChanged: unchanged.map((r) => r.out.sessions.filter((s) => s.pushedEntries || s.pulledEntries).length),
      appendMs: append.ms,
      appendPushedBytes: pushed(append),
      big: { key: bigKey, bytes: fs.statSync(bigSession.path).size, firstMs: bigFirst.ms, firstPushedBytes: pushed(bigFirst), againMs: bigAgain.ms, againPushedBytes: pushed(bigAgain) },
    };
  } finally {
    await cluster.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
} else {
  log(`sync: skipped (${fs.existsSync(GARAGE) ? CLI : GARAGE} missing)`);
}

log('sizes');
const sizeOf = (file) => {
  if (!fs.existsSync(file)) return null;
  const buf = fs.readFileSync(file);
  return { file: path.relative(ROOT, file), raw: buf.length, gzip9: zlib.gzipSync(buf, { level: 9 }).length };
};
results.sizes = { jsPackage: sizeOf(PKG_WASM), component: sizeOf(COMPONENT) };
results.meta.loadavgEnd = loadavg();

// ------------------------------------------------------------------ table


const rows = [];
/** cmp: 'le' (ratio or value must be ≤ limit) or 'ge'. */
function row(id, label, value, fmt, baseline, { limit, cmp = 'le', on = 'ratio', target, cpuRatio } = {}) {
  const ratio = baseline === undefined || baseline === null ? NaN : value / baseline;
  let ok = '–';
  if (limit !== undefined) {
    const x = on === 'ratio' ? ratio : value;
    ok = (cmp === 'le' ? x <= limit : x >= limit) ? 'yes' : 'NO';
  }
  const r = {
    id,
    label,
    value,
    baseline: baseline ?? null,
    ratio: Number.isFinite(ratio) ? ratio : null,
    cpuRatio: Number.isFinite(cpuRatio) ? cpuRatio : null,
    target: target ?? null,
    ok,
    text: [label, fmt(value), baseline === undefined || baseline === null ? '–' : fmt(baseline), fmtRatio(ratio), Number.isFinite(cpuRatio) ? fmtRatio(cpuRatio) : '–', target ?? '–', ok],
  };
  rows.push(r);
  return r;
}

const S = CFG.session.replace('MB', ' MB');
const o = results.open;
const cpu = (a, b) => o[a].medianCpuMs / o[b].medianCpuMs;
row('open.native', `Open ${S} → context JSON: native (vs cat floor)`, o.native.medianMs, fmtMs, o.cat.medianMs, { limit: 6, target: '≤ 6×', cpuRatio: cpu('native', 'readFloor') });
row('open.wasmNode', `Open ${S} from a JS string: wasm fromText (vs plain JS, same string)`, o.wasmText.medianMs, fmtMs, o.jsText.medianMs, { limit: 0.5, target: '≤ 0.5× (2× faster)', cpuRatio: cpu('wasmText', 'jsText') });
row('open.wasmNodeOpen', `Open ${S}: wasm in Node, Session.open (vs plain JS)`, o.wasmOpen.medianMs, fmtMs, o.js.medianMs, { limit: 0.5, target: '≤ 0.5× (2× faster)', cpuRatio: cpu('wasmOpen', 'js') });
row('open.wasmNodeVsNative', `Open ${S} from a JS string: wasm fromText (vs native open)`, o.wasmText.medianMs, fmtMs, o.native.medianMs, { limit: 2, target: '≤ 2×', cpuRatio: cpu('wasmText', 'native') });
row('open.wasmNodeOpenVsNative', `Open ${S}: wasm in Node, Session.open (vs native)`, o.wasmOpen.medianMs, fmtMs, o.native.medianMs, { limit: 2, target: '≤ 2×', cpuRatio: cpu('wasmOpen', 'native') });
row('open.wasmtime', `Open ${S}: wasmtime CLI, whole process (vs native)`, o.wasmtime.medianMs, fmtMs, o.native.medianMs, { limit: 2, target: '≤ 2×', cpuRatio: cpu('wasmtime', 'native') });
if (o.nativeOneCore) {
  row('open.wasmNodeOpenVsNative1', `Open ${S}: wasm in Node, Session.open (vs native on one core)`, o.wasmOpen.medianMs, fmtMs, o.nativeOneCore.medianMs, { cpuRatio: cpu('wasmOpen', 'nativeOneCore') });
  row('open.wasmtimeVsNative1', `Open ${S}: wasmtime CLI, whole process (vs native on one core)`, o.wasmtime.medianMs, fmtMs, o.nativeOneCore.medianMs, { cpuRatio: cpu('wasmtime', 'nativeOneCore') });
}
row('open.js', `Open ${S}: plain JS baseline (vs cat floor)`, o.js.medianMs, fmtMs, o.cat.medianMs, { cpuRatio: cpu('js', 'readFloor') });
const a = results.append.medianMs;
row('append.flush', `Append 1 entry + flush: ${S} (vs 1 KB)`, a.bigFlush, fmtMs, a.smallFlush, { limit: 1.5, target: '≤ 1.5×' });
row('append.only', `Append 1 entry, no fsync: ${S} (vs 1 KB)`, a.bigAppend, fmtMs, a.smallAppend, {});
const ra = results.append.resource.medianMs;
row('append.resource', `Append 1 entry + flush to ${S}: component session resource in jco (vs native)`, ra.appendFlush, fmtMs, a.bigFlush, { limit: 2, target: '≤ 2×' });
row('append.resourceOnly', `Append 1 entry, no fsync, to ${S}: component session resource in jco (vs native)`, ra.append, fmtMs, a.bigAppend, {});
const rd = results.append.resourceDebugOnce.medianMs;
row('append.resourceDebugOnce', `Append 1 entry + flush to ${S}: resource in jco, its JCO_DEBUG check read once (vs native)`, rd.appendFlush, fmtMs, a.bigFlush, {});
row('append.resourceDebugOnceOnly', `Append 1 entry, no fsync, to ${S}: resource in jco, JCO_DEBUG read once (vs native)`, rd.append, fmtMs, a.bigAppend, {});
const rc = results.append.cli.medianMs;
row('append.cliInHost', `Append 1 entry + flush to ${S}: session resource in wasmtime, in the CLI host's process (vs native)`, rc.inHostAppendFlush, fmtMs, a.bigFlush, { limit: 2, target: '≤ 2×' });
row('append.cliInHostOnly', `Append 1 entry, no fsync, to ${S}: session resource in wasmtime, in process (vs native)`, rc.inHostAppend, fmtMs, a.bigAppend, {});
row('append.cli', `Append 1 entry + flush to ${S}: xcsh-session session, request to answer on a pipe from Node (vs native)`, rc.appendFlush, fmtMs, a.bigFlush, {});
row('append.cliOnly', `Append 1 entry, no fsync, to ${S}: xcsh-session session on a pipe (vs native)`, rc.append, fmtMs, a.bigAppend, {});
for (const [key, c] of Object.entries(results.convert ?? {})) {
  const r = row(`convert.serdeWasmBindgen.${key}`, `context() as JS objects, ${c.file === 'before-compaction.jsonl' ? 'real fixture' : key} (${fmtBytes(c.contextBytes)} JSON): serde-wasm-bindgen (vs JSON.parse)${c.sameObjects ? '' : ', objects DIFFER'}`, c.medianMs.serdeWasmBindgen, fmtMs, c.medianMs.jsonParse, { limit: 1, target: '≤ 1× and same objects (else JSON.parse)' });
  if (!c.sameObjects) {
    r.ok = 'NO';
    r.text[r.text.length - 1] = 'NO';
  }
}
if (results.viewer) row('memory.viewerOpfs', `Peak renderer RSS, viewer with ${S} opened from OPFS (vs file size)`, results.viewer.rendererRssBytes, fmtBytes, results.viewer.fileBytes, {});
row('recent.one', `Recent list, one project (${recent.one.files} files) (vs raw 4 KiB reads)`, recent.one.medianMs, fmtMs, recent.one.floorMedianMs, {});
row('recent.all', `Recent list, all projects (${recent.all.files} files) (vs raw 4 KiB reads)`, recent.all.medianMs, fmtMs, recent.all.floorMedianMs, {});
row('recent.bytesPerFile', 'Recent list: bytes read per file', recent.all.bytesPerFile, (b) => `${Math.round(b)} B`, null, { limit: 4096, on: 'value', target: '≤ 4096 B' });
{
  const st = results.store;
  const S = `${st.sessions} sessions, ${fmtBytes(st.bytes)}`;
  for (const [id, label, o] of [['cli', 'CLI list --all, whole process', st.cli], ['npm', 'npm SessionManager.listAll()', st.npm]]) {
    const x = row(`store.${id}.warm`, `Full list of a store (${S}), index caches present: ${label} (vs its cold list)`, o.warmMedianMs, fmtMs, o.coldMedianMs, { limit: 1000, on: 'value', target: `≤ 1 s, all ${st.sessions} listed` });
    if (o.sessions !== st.sessions) x.ok = x.text[x.text.length - 1] = `NO (${o.sessions} listed)`;
  }
  row('store.cli.cold', `Full list of a store (${S}), no index cache (each file scanned, its index written): CLI list --all (vs cat of the files)`, st.cli.coldMedianMs, fmtMs, st.catMedianMs, {});
  row('store.npm.cold', `Full list of a store (${S}), no index cache: npm SessionManager.listAll() (vs cat of the files)`, st.npm.coldMedianMs, fmtMs, st.catMedianMs, {});
  for (const [id, label, o] of [['cli', 'CLI list --all --limit 20, whole process', st.first.cli], ['npm', 'npm listSessions({ limit: 20 })', st.first.npm]]) {
    const x = row(`store.${id}.first`, `First screen of a store (${S}): the newest 20 (two of 1 GB), index caches present: ${label} (vs its full warm list)`, o.warmMedianMs, fmtMs, st[id].warmMedianMs, { limit: 300, on: 'value', target: '≤ 300 ms, 20 listed' });
    if (o.sessions !== 20) x.ok = x.text[x.text.length - 1] = `NO (${o.sessions} listed)`;
    row(`store.${id}.firstCold`, `First screen of a store (${S}), no index cache (the 20 files scanned): ${label} (vs its cold full list)`, o.coldMedianMs, fmtMs, st[id].coldMedianMs, {});
  }
  for (const [key, what] of [['found', 'found in most sessions'], ['none', 'found nowhere: every message read']]) {
    const q = st.search[key];
    row(`store.cli.search.${key}`, `Search of a store (${S}), '${q.query}' (${what}): CLI search --all, whole process (vs cat of the files)`, q.cliMs, fmtMs, st.catMedianMs, {});
    row(`store.npm.search.${key}`, `Search of a store (${S}), '${q.query}' (${what}): npm SessionSearch stepped to its end (vs cat of the files)`, q.npm.wallMs, fmtMs, st.catMedianMs, {});
    row(`store.npm.search.${key}.firstStep`, `Search of a store, '${q.query}': npm SessionSearch's first step (4 MiB), the first progress a page can show`, q.npm.firstStepMs, fmtMs, null, {});
    row(`store.cli.search.${key}.rss`, `Search of a store, '${q.query}': peak RSS of the CLI (vs the bytes of the store)`, q.cliRssBytes, fmtBytes, st.bytes, {});
    row(`store.npm.search.${key}.rss`, `Search of a store, '${q.query}': peak RSS of Node (vs the bytes of the store)`, q.npm.maxRssBytes, fmtBytes, st.bytes, {});
  }
}
const fileBytes = big.bytes;
row('memory.native', `Peak RSS, native open ${S} (vs file size)`, rss.vmHwmKiB * 1024, fmtBytes, fileBytes, { limit: 1.5, target: '≤ 1.5×' });
row('memory.wasmNode', `Peak wasm memory, Node fromText (vs file size)`, memText.wasmMemoryPeakBytes, fmtBytes, fileBytes, { limit: 2, target: '≤ 2×' });
row('memory.wasmNodeOpen', `Peak wasm memory, Node Session.open (vs file size)`, memOpen.wasmMemoryPeakBytes, fmtBytes, fileBytes, { limit: 2, target: '≤ 2×' });
if (cliRss) row('memory.wasmtime', `Peak RSS, wasmtime CLI process (vs file size)`, cliRss, fmtBytes, fileBytes, {});
row('memory.js', `Peak RSS, plain JS baseline process (vs file size)`, memJs.maxRssBytes, fmtBytes, fileBytes, {});
const p = results.parsers;
const PM = fmtBytes(p.bytes);
row('parse.fields', `Validate + pick entry fields, real lines (${PM}): scan.rs (vs serde_json)`, p.fieldsScanMs, fmtMs, p.fieldsSerdeMs, { limit: 1, target: '< 1× (else serde_json)' });
row('parse.utf8', `UTF-8 check, real text (${PM}): simdutf8 (vs std::str::from_utf8)`, p.utf8Simdutf8Ms, fmtMs, p.utf8StdMs, { limit: 1, target: '≤ 1× (else std)' });
const sz = results.sizes;
if (sz.jsPackage) {
  row('size.jsGzip', 'JS package .wasm, gzip -9 (vs raw)', sz.jsPackage.gzip9, fmtBytes, sz.jsPackage.raw, { limit: 300_000, on: 'value', target: '≤ 300 kB' });
}
if (sz.component) row('size.componentGzip', 'Component .wasm, gzip -9 (vs raw)', sz.component.gzip9, fmtBytes, sz.component.raw, {});
const MiB64 = 64 * 1024 * 1024;
const realLabel = (key) => {
  const [size, variant] = key.split('-');
  return `${size.replace(/(\d)([KMG]B)$/, '$1 $2')} real, ${variant}`;
};
// First opens without an index (the issue "Resume at any size"): compact variant native
// ≤ 3×, CLI ≤ 4×, npm ≤ 6× cat; a session without compaction reads its whole context.
const REAL_TARGETS = { compact: { native: 3, cli: 4, npm: 6, npmIndex: 6 }, nocompact: { native: 4, cli: 5, npm: 6, npmIndex: 6 } };
const REAL_NAMES = { native: 'native through the index, context streamed', cli: 'CLI context --json, whole process', npm: 'npm Session.open → writeContextJson', npmIndex: 'npm openContext → writeJson' };
for (const key of REAL_CFG.sessions) {
  const r = results.real[key];
  const L = realLabel(key);
  const v = r.variant;
  for (const h of ['native', 'cli', 'npm', 'npmIndex']) {
    const lim = REAL_TARGETS[v][h];
    row(`real.open.${h}.${v}`, `Open ${L}, first: ${REAL_NAMES[h]} (vs cat)`, r.hosts[h].firstMedianMs, fmtMs, r.catMs, { limit: lim, target: `≤ ${lim}×` });
  }
  // The issue's reopen target has two clauses: ≤ 5 % of the first open, and ≤ 30 ms plus
  // reading the context's own bytes (cat's time scaled to the context's size).
  const ctxReadMs = r.catMs * (r.contextBytes ?? r.bytes) / r.bytes;
  for (const h of ['native', 'cli', 'npm', 'npmIndex']) {
    row(`real.reopen.${h}.${v}`, `Reopen ${L} unchanged: ${REAL_NAMES[h]} (vs its first open)`, r.hosts[h].reopenMedianMs, fmtMs, r.hosts[h].firstMedianMs, { limit: 0.05, target: '≤ 0.05×' });
    row(`real.reopenAbs.${h}.${v}`, `Reopen ${L} unchanged: ${REAL_NAMES[h]} (vs 30 ms + cat of the context's bytes)`, r.hosts[h].reopenMedianMs, fmtMs, 30 + ctxReadMs, { limit: 1, target: '≤ 1×' });
  }
  // The drop-in: time to the first context, in the process (the package loaded); the
  // issue's 128 MB case (the agent: ~10 s) asks ≤ 50 ms on a reopen.
  row(`real.open.agent.${v}`, `Open ${L}, first: drop-in SessionManager.open → buildSessionContext() (vs cat)`, r.hosts.agent.firstMedianMs, fmtMs, r.catMs, {});
  row(`real.reopen.agent.${v}`, `Reopen ${L} unchanged: drop-in SessionManager.open → buildSessionContext()`, r.hosts.agent.reopenMedianMs, fmtMs, null,
    v === 'compact' ? { limit: 50, on: 'value', target: '≤ 50 ms' } : {});
  row(`real.memory.agent.${v}`, `Peak RSS, Node process, drop-in resume of ${L} (vs file size)`, r.memory.agent, fmtBytes, r.bytes, {});
  row(`real.memory.native.${v}`, `Peak RSS, native first open of ${L} (vs file size)`, r.memory.native, fmtBytes, r.bytes, { limit: 1.5, target: '≤ 1.5×' });
  row(`real.memory.cli.${v}`, `Peak RSS, CLI process, ${L} (vs file size)`, r.memory.cli, fmtBytes, r.bytes, {});
  row(`real.memory.npm.${v}`, `Peak RSS, Node process, npm Session.open of ${L} (vs file size)`, r.memory.npm, fmtBytes, r.bytes, { limit: 2, target: '≤ 2×' });
  row(`real.memory.npmIndex.${v}`, `Peak RSS, Node process, npm openContext of ${L} (vs file size)`, r.memory.npmIndex, fmtBytes, r.bytes, {});
  if (r.viewer) {
    row(`real.viewer.${v}`, `Viewer first render of ${L} from OPFS, headless Chromium`, r.viewer.openMs ?? NaN, fmtMs, null, { limit: 1000, on: 'value', target: '≤ 1 s' });
    // The second visit (reloaded, the same session opened again): through the index cache
    // the first visit wrote to OPFS.
    row(`real.viewerSecond.${v}`, `Viewer first render of ${L} from OPFS, second visit (index cached)`, r.viewer.second?.openMs ?? NaN, fmtMs, null, { limit: 500, on: 'value', target: '≤ 500 ms' });
    row(`real.viewerMemory.${v}`, `Peak renderer RSS, viewer with ${L} opened from OPFS (vs file size)`, r.viewer.rendererRssBytes ?? NaN, fmtBytes, r.bytes, { limit: 250e6, on: 'value', target: '≤ 250 MB' });
    // What a reader does next (viewer-memory.mjs's `interact`): the slowest of 20 branch
    // switches, the slowest first hit of 5 searches, a search cancelled midway, and the
    // renderer's memory after all of it.
    const worst = (xs) => (xs?.length ? Math.max(...xs) : NaN);
    row(`real.viewerSwitch.${v}`, `Viewer branch switch in ${L}, slowest of 20 (root, ¼, ½, ¾, leaf)`, worst(r.viewer.switchMs), fmtMs, null, { limit: 300, on: 'value', target: '≤ 300 ms' });
    row(`real.viewerFind.${v}`, `Viewer find in ${L}: first hit listed, slowest of 5 queries (typing debounce included)`, worst(r.viewer.find?.filter((f) => f.firstHitMs !== null).map((f) => f.firstHitMs)), fmtMs, null, { limit: 300, on: 'value', target: '≤ 300 ms' });
    row(`real.viewerFindAll.${v}`, `Viewer find in ${L}: every hit listed, slowest of 5 queries`, worst(r.viewer.find?.map((f) => f.allMs)), fmtMs, null, {});
    row(`real.viewerCancel.${v}`, `Viewer find in ${L} closed midway: until the worker answers again`, r.viewer.cancelMs ?? NaN, fmtMs, null, { limit: 100, on: 'value', target: '≤ 100 ms' });
    row(`real.viewerMemoryAfter.${v}`, `Renderer RSS after those switches and searches, ${L} (vs file size)`, r.viewer.rssAfterBytes ?? NaN, fmtBytes, r.bytes, { limit: 250e6, on: 'value', target: '≤ 250 MB' });
  }
}
{
  const r = results.real[REAL_CFG.big];
  const L = realLabel(REAL_CFG.big) + (QUICK ? ' (--quick: for the 1 GB tier)' : '');
  row('real.open1g.native', `Open ${L}, first: native (vs cat)`, r.hosts.native.firstMedianMs, fmtMs, r.catMs, { limit: 5, target: '≤ 5×' });
  for (const h of ['cli', 'npm', 'npmIndex']) {
    const x = row(`real.open1g.${h}`, `Open ${L}, first: ${REAL_NAMES[h]} (vs cat)`, r.hosts[h].firstMedianMs, fmtMs, r.catMs, { target: 'opens' });
    x.ok = x.text[x.text.length - 1] = Number.isFinite(r.hosts[h].firstMedianMs) ? 'yes' : 'NO';
  }
  for (const h of ['native', 'cli', 'npm', 'npmIndex']) {
    row(`real.reopen1g.${h}`, `Reopen ${L} unchanged: ${REAL_NAMES[h]} (vs its first open)`, r.hosts[h].reopenMedianMs, fmtMs, r.hosts[h].firstMedianMs, { limit: 0.05, target: '≤ 0.05×' });
  }
  const ctx = r.contextBytes ?? NaN;
  const limit = ctx + MiB64;
  const target = `≤ context ${fmtBytes(ctx)} + 64 MiB = ${fmtBytes(limit)}`;
  // A streamed context (through the index): 64 MiB plus 32 bytes per entry, at any size.
  const streamed = MiB64 + 32 * r.generated.entries;
  const streamedTarget = `≤ 64 MiB + 32 B × ${r.generated.entries} entries = ${fmtBytes(streamed)}`;
  row('real.memory1g.native', `Peak RSS, native first open of ${L}, context streamed (vs file size)`, r.memory.native, fmtBytes, r.bytes, { limit: streamed, on: 'value', target: streamedTarget });
  row('real.memory1g.cli', `Peak RSS, CLI process, ${L} (vs file size)`, r.memory.cli, fmtBytes, r.bytes, { limit: streamed, on: 'value', target: streamedTarget });
  row('real.memory1g.npmIndex', `Peak RSS, Node process, npm openContext of ${L} (vs file size)`, r.memory.npmIndex, fmtBytes, r.bytes, { limit: streamed, on: 'value', target: streamedTarget });
  row('real.memory1g.npm', `Peak RSS, Node process, npm Session.open of ${L} (vs file size)`, r.memory.npm, fmtBytes, r.bytes, { limit, on: 'value', target });
  // The drop-in's buildSessionContext() of a context larger than a JS string can hold
  // (no compaction) is a clear error naming the call that streams, never a crash.
  const a = r.hosts.agent;
  const said = a.errors.some((e) => /more than a JavaScript string can hold.*openContext/s.test(e));
  const x = row('real.open1g.agent', `Open ${L}, first: drop-in SessionManager.open → buildSessionContext() (vs cat)`, a.firstMedianMs, fmtMs, r.catMs, { target: 'opens, or a clear error' });
  x.ok = x.text[x.text.length - 1] = Number.isFinite(a.firstMedianMs) || said ? 'yes' : 'NO';
  row('real.memory1g.agent', `Peak RSS, Node process, drop-in resume of ${L} (vs file size)`, r.memory.agent, fmtBytes, r.bytes, {});
}
{
  const h = results.huge;
  const L = realLabel(h.key) + (QUICK ? ' (--quick: for the 10 GB tier)' : '');
  const MiB512 = 512 * 1024 * 1024;
  row('real.open10g.native', `Open ${L}, first: native through the index, context streamed (vs cat)`, h.native.firstMs ?? NaN, fmtMs, h.catMs, {});
  row('real.reopen10g.native', `Reopen ${L} unchanged: native (vs its first open)`, h.native.reopenMs ?? NaN, fmtMs, h.native.firstMs ?? NaN, {});
  for (const [id, label, v] of [['native', 'native first open, context streamed', h.native.peak], ['cli', 'CLI context --json, first open', h.cli], ['npmIndex', 'Node process, npm openContext → writeJson, first open', h.npmIndex]]) {
    row(`real.memory10g.${id}`, `Peak RSS, ${label}, ${L} (vs file size)`, v ?? NaN, fmtBytes, h.bytes, { limit: MiB512, on: 'value', target: '≤ 512 MiB' });
  }
}
if (results.agentAppend) {
  const a = results.agentAppend;
  const L = realLabel(a.key);
  // xcsh's flush() fsyncs its writer (session-manager.ts), and so does the drop-in's
  // (nothing lost on a power cut); the oh-my-pi release run here never fsyncs. The target
  // compares like with like; the second row shows the price of the fsync.
  row('agentAppend.flush', `Append + flush, ${L}: drop-in, whose flush fsyncs as xcsh's does (vs the agent under Bun with that fsync)`, a.appendFlushMs.dropin, fmtMs, a.appendFlushMs.agentFsync, { limit: 1, target: '≤ 1×' });
  row('agentAppend.flushNoFsync', `Append + flush, ${L}: drop-in (vs the agent under Bun as released: its flush never fsyncs)`, a.appendFlushMs.dropin, fmtMs, a.appendFlushMs.agent, {});
  row('agentAppend.batch', `${a.reps} appends then one flush, ${L}: drop-in (vs the agent under Bun)`, a.batchMs.dropin, fmtMs, a.batchMs.agent, { limit: 1, target: '≤ 1×' });
}
if (results.sync) {
  const y = results.sync;
  const KiB8 = 8 * 1024;
  row('sync.unchanged', `Sync of an unchanged store of ${y.sessions} real-content sessions (${fmtBytes(y.storeBytes)}) with a 3-node Garage cluster: CLI, whole process (vs its first sync)`, y.unchangedMs, fmtMs, y.firstMs, { limit: 1000, on: 'value', target: '≤ 1 s, nothing moved' });
  if (y.unchangedChanged.some((n) => n > 0)) rows.at(-1).ok = 'NO';
  row('sync.append1k', `Sync after a 1 KB append to one of them: bytes sent (vs the store's first sync)`, y.appendPushedBytes, fmtBytes, y.firstPushedBytes, { limit: KiB8, on: 'value', target: '≤ 8 KiB' });
  const B = realLabel(y.big.key);
  row('sync.bigFirst', `First sync of ${B}: bytes sent (vs the file)`, y.big.firstPushedBytes, fmtBytes, y.big.bytes, { limit: 1.01, target: 'once (≤ 1.01×)' });
  row('sync.bigFirstMs', `First sync of ${B}: CLI, whole process (vs the store's unchanged sync)`, y.big.firstMs, fmtMs, y.unchangedMs, {});
  row('sync.bigAgain', `Sync of ${B} after a 1 KB append: bytes sent (vs the file)`, y.big.againPushedBytes, fmtBytes, y.big.bytes, { limit: KiB8, on: 'value', target: '≤ 8 KiB: only the new segment' });
  row('sync.bigAgainMs', `Sync of ${B} after a 1 KB append: CLI, whole process (vs its first sync)`, y.big.againMs, fmtMs, y.big.firstMs, {});
}
results.table = rows.map(({ text, ...r }) => r);

function markdown(header, lines) {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const fmt = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

const out = [];
out.push(markdown(['measurement', 'value', 'baseline', 'ratio', 'cpu ratio', 'target', 'ok'], rows.map((r) => r.text)));
out.push('');
out.push(`open ${S}: medians of ${o.native.wallMs.length} timed runs (wall clock); min: ` +
  ALL.map((k) => `${k} ${fmtMs(o[k].minMs)}`).join(', '));
out.push(`context: ${fmtBytes(results.outputs.contextBytes)}; identical in all four hosts: ${results.outputs.hostsIdentical ? 'yes' : 'NO'}; ` +
  `plain JS baseline output identical: ${results.outputs.baselineIdentical ? 'yes' : 'no'}`);
if (Object.keys(results.scaling).length) {
  out.push('');
  out.push(markdown(['open (median)', ...Object.keys(results.scaling), CFG.session], ['cat', 'readFloor', 'native', 'wasmText', 'wasmOpen', 'js', 'jsText'].map((k) => [
    k, ...Object.values(results.scaling).map((s) => fmtMs(s[k].medianMs)), fmtMs(o[k].medianMs),
  ])));
}
out.push('');
out.push(`native open phases (median of ${phaseReps}, after 1 untimed run): ` +
  Object.entries(results.phases.medianMs).map(([k, v]) => `${k} ${fmtMs(v)}`).join(', '));
for (const r of Object.values(results.real)) {
  const g = r.generated;
  out.push(`real ${r.key}: ${fmtBytes(r.bytes)}, ${g.entries} entries (${g.copies}× the fixtures), ${g.pathMessages} messages on the leaf's path, ` +
    `${g.compactions} compactions; context ${r.contextBytes === null ? '–' : fmtBytes(r.contextBytes)}, ${r.contextMessages ?? '–'} messages ` +
    `(generator: ${g.contextMessages}${r.contextMessagesAsGenerated ? ', matches' : ', DIFFERS'}); native and npm contexts identical: ${r.sameContextNativeNpm === null ? '–' : r.sameContextNativeNpm ? 'yes' : 'NO'}` +
    Object.entries(r.hosts).filter(([, o]) => o.errors.length).map(([h, o]) => `; ${h} failed: ${why(o.errors[0])}`).join(''));
}
out.push(`recent list: ${recent.all.prefixReads} prefix reads, ${recent.all.fullReads} full reads, ${recent.all.stats} stats for ${recent.all.files} files`);
out.push(`load average (1, 5, 15 min): start ${results.meta.loadavgStart.join(' ')}, end ${results.meta.loadavgEnd.join(' ')} on ${results.meta.cpus} CPUs`);
const text = out.join('\n');
console.log(text);
results.tableText = text;

fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, JSON.stringify(results, null, 2) + '\n');
log(`results: ${path.relative(process.cwd(), OUT) || OUT}`);
