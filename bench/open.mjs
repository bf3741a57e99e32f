// One measured system of the "open" benchmark, run in its own Node process by run.mjs.
//
//   node bench/open.mjs <mode> <file> <agentDir> <warmup> <reps>
//   node bench/open.mjs memory <mode> <file> <agentDir>
//
// modes:
//   wasm-text  Session.fromText(text, {storage, agentDir}).contextJson(), from the file's text
//              already in memory as a JS string (read and decoded outside the timed region)
//   wasm-open  Session.open(storage, file, {readOnly, agentDir}).contextJson() (bytes, no JS string)
//   wasm-open-bytes  the same with contextJsonBytes(): the context as UTF-8 bytes, which has
//              no JS string's size limit (a 1 GB session's context is ~975 MB)
//   wasm-open-stream  the same with writeContextJson(): the context streamed in 1 MiB chunks,
//              never whole in memory (what the real-content rows measure)
//   wasm-open-context  openContext(storage, file, {agentDir}).writeJson(): the context read
//              through the file's index (kept in <agentDir>/cache/index: a first open scans
//              the file and writes it, a reopen reads it and the context's lines only)
//   agent-resume  the drop-in (xcsh-session/agent): SessionManager.open(file) then
//              buildSessionContext(), as the agent resumes a session (PI_CODING_AGENT_DIR set
//              to the agent dir; the open is lazy: the index cache is read or made, then only
//              the leaf's path); the context is stringified outside the timed region
//   js         the straightforward JavaScript reference (baseline.mjs), reading the file itself
//   js-text    the same reference from the JS string already in memory (as wasm-text)
// Prints one JSON object. Times are wall-clock ms (performance.now) and process CPU ms
// (process.cpuUsage, all threads). Freeing the wasm session is outside the timed region.
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { nodeStorage as fsStorage } from '../pkg/node-storage.mjs';
import { contextJson } from './baseline.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgPath = process.env.XCSH_BENCH_PKG || path.join(here, '..', 'pkg', 'node.cjs');
// The drop-in loads the package's ESM entry (its own instance): loaded only for its mode.
const agent = process.argv.includes('agent-resume') ? await import(path.join(path.dirname(pkgPath), 'agent.mjs')) : null;

// Keep a handle on the package's wasm instance to read its linear memory size: the
// package does not export it, so the constructor is wrapped while the package loads.
let instance = null;
function loadPackage() {
  const Original = WebAssembly.Instance;
  WebAssembly.Instance = new Proxy(Original, {
    construct(target, args, newTarget) {
      instance = Reflect.construct(target, args, newTarget);
      return instance;
    },
  });
  try {
    return createRequire(import.meta.url)(pkgPath);
  } finally {
    WebAssembly.Instance = Original;
  }
}

function runner(mode, file, agentDir) {
  if (mode === 'js') {
    return { run: () => contextJson(fs.readFileSync(file, 'utf8'), agentDir), free: () => {} };
  }
  if (mode === 'js-text') {
    return { prepare: () => fs.readFileSync(file, 'utf8'), run: (text) => contextJson(text, agentDir), free: () => {} };
  }
  const pkg = loadPackage();
  const storage = fsStorage();
  let session = null;
  const free = () => {
    session?.free();
    session = null;
  };
  if (mode === 'wasm-text') {
    return {
      prepare: () => fs.readFileSync(file, 'utf8'),
      run(text) {
        session = pkg.Session.fromText(text, { storage, agentDir });
        return session.contextJson();
      },
      free,
    };
  }
  if (mode === 'wasm-open' || mode === 'wasm-open-bytes') {
    const bytes = mode === 'wasm-open-bytes';
    return {
      run() {
        session = pkg.Session.open(storage, file, { readOnly: true, agentDir });
        return bytes ? session.contextJsonBytes() : session.contextJson();
      },
      free,
    };
  }
  if (mode === 'wasm-open-stream') {
    // The context streamed through writeContextJson into a reused 1 MiB buffer (as a
    // program writing it to a file or a socket would); its hash is taken afterwards,
    // outside the timed region, by streaming it again.
    const sink = Buffer.alloc(1 << 20);
    return {
      run() {
        session = pkg.Session.open(storage, file, { readOnly: true, agentDir });
        return new StreamedContext(session.writeContextJson((chunk) => sink.set(chunk)), session);
      },
      free,
    };
  }
  if (mode === 'agent-resume') {
    process.env.PI_CODING_AGENT_DIR = agentDir;
    let manager = null;
    return {
      async run() {
        manager = await agent.SessionManager.open(file);
        return new BuiltContext(manager.buildSessionContext());
      },
      free: () => {
        manager?.close();
        manager = null;
      },
    };
  }
  if (mode === 'wasm-open-context') {
    const sink = Buffer.alloc(1 << 20);
    return {
      run() {
        session = pkg.openContext(storage, file, { agentDir });
        return new StreamedContext(session.writeJson((chunk) => sink.set(chunk)), session, 'writeJson');
      },
      free,
    };
  }
  throw new Error(`unknown mode ${mode}`);
}

/** What agent-resume's run returns: the context object, stringified after the timing. */
class BuiltContext {
  constructor(context) {
    this.context = context;
  }
}

/** What wasm-open-stream's run returns: the length, and the hash computed on demand. */
class StreamedContext {
  constructor(length, session, write = 'writeContextJson') {
    this.length = length;
    this.session = session;
    this.write = write;
  }
  sha256() {
    const hash = crypto.createHash('sha256');
    this.session[this.write]((chunk) => hash.update(chunk));
    return hash.digest('hex');
  }
}
const contextBytes = (json) => (json instanceof StreamedContext ? json.length : Buffer.byteLength(json));

const memoryBytes = () => instance?.exports?.memory?.buffer?.byteLength ?? null;
const args = process.argv.slice(2);

if (args[0] === 'memory') {
  const [, mode, file, agentDir] = args;
  const r = runner(mode, file, agentDir);
  global.gc?.();
  const wasmBefore = memoryBytes();
  const input = r.prepare?.();
  const rssBefore = process.memoryUsage().rss;
  const t = performance.now();
  let json = await r.run(input);
  const wallMs = performance.now() - t;
  if (json instanceof BuiltContext) json = JSON.stringify(json.context);
  // Linear memory only grows, so its size now is its peak during the open.
  const wasmAfter = memoryBytes();
  const rssAfter = process.memoryUsage().rss;
  r.free();
  console.log(JSON.stringify({
    mode,
    wasmMemoryBeforeBytes: wasmBefore,
    wasmMemoryPeakBytes: wasmAfter,
    rssBeforeBytes: rssBefore,
    rssAfterBytes: rssAfter,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    fileBytes: fs.statSync(file).size,
    contextBytes: contextBytes(json),
    wallMs,
  }));
} else {
  const [mode, file, agentDir, warmupArg, repsArg] = args;
  const warmup = Number(warmupArg ?? 1);
  const reps = Number(repsArg ?? 3);
  const r = runner(mode, file, agentDir);
  const wallMs = [];
  const cpuMs = [];
  let json = '';
  for (let i = 0; i < warmup + reps; i++) {
    let input = r.prepare?.();
    const c = process.cpuUsage();
    const t = performance.now();
    json = await r.run(input);
    input = null;
    const wall = performance.now() - t;
    const cpu = process.cpuUsage(c);
    if (json instanceof BuiltContext) json = JSON.stringify(json.context);
    if (json instanceof StreamedContext) json = { length: json.length, sha: json.sha256() };
    r.free();
    if (i >= warmup) {
      wallMs.push(wall);
      cpuMs.push((cpu.user + cpu.system) / 1000);
    }
  }
  console.log(JSON.stringify({
    mode,
    wallMs,
    cpuMs,
    contextBytes: json.sha ? json.length : Buffer.byteLength(json),
    contextSha256: json.sha ?? crypto.createHash('sha256').update(json).digest('hex'),
    wasmMemoryBytes: memoryBytes(),
  }));
}
