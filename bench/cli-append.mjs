// Append + flush through the CLI host: `xcsh-session session`, the component's `session`
// resource driven over JSON lines (host/src/rpc.rs). A program in any language that holds
// a session open this way pays, per append, one request line and one answer line on a
// pipe plus the component's append. Prints JSON like resource-append.mjs:
//   {"openMs", "appendMs": [..], "appendFlushMs": [..], "coldAppendMs": [..],
//    "coldAppendFlushMs": [..], "warmupAppends", "inHostAppendMs": [..], "inHostAppendFlushMs": [..]}
// Each sample is the time from writing the request to reading its answer; the `inHost`
// ones are what the host itself spent (`--timings`: the component called in process, as
// a host embedding wasmtime pays), without the pipe and this script's event loop.
// Usage: node cli-append.mjs <cli> <component.wasm> <aot-cache-dir> <session.jsonl> <tmp-dir> <reps>
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { appendSamples } from './append-samples.mjs';

const [cli, component, cacheDir, source, tmp, repsArg] = process.argv.slice(2);
const reps = Number(repsArg);

fs.rmSync(tmp, { recursive: true, force: true });
fs.mkdirSync(tmp, { recursive: true });
const file = path.join(tmp, 'big.jsonl');
const agentDir = path.join(tmp, 'agent');
fs.copyFileSync(source, file);
const fd = fs.openSync(file, 'r');
fs.fsyncSync(fd); // the copy is durable before timing: the appends' fsync must not pay for it
fs.closeSync(fd);

const child = spawn(cli, ['--agent-dir', agentDir, '--component', component, 'session', '--timings', '--dir', tmp], {
  env: { ...process.env, XCSH_SESSION_CACHE_DIR: cacheDir },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const answers = createInterface({ input: child.stdout });
const waiting = [];
answers.on('line', (line) => waiting.shift()(JSON.parse(line)));
let nextId = 1;
/** One request; resolves with its `ok` value, rejects with its error. */
function call(name, args, self) {
  const id = nextId++;
  child.stdin.write(`${JSON.stringify(self ? { id, call: name, self, args } : { id, call: name, args })}\n`);
  return new Promise((resolve, reject) => waiting.push((a) => {
    if (a.id !== id) reject(new Error(`answer ${a.id} to request ${id}`));
    else if (a.error) reject(new Error(`${name}: ${a.error.kind}: ${a.error.message}`));
    else resolve({ ok: a.ok, us: a.us });
  }));
}

let t = performance.now();
const s = (await call('session.open', [file, agentDir, '/work/bench', false])).ok;
const openMs = performance.now() - t;
const samples = await appendSamples(reps, (m) => call('session.append-message', [m], s), () => call('session.flush', [], s));
await call('drop', [], s);
child.stdin.end();
const code = await new Promise((resolve) => child.on('close', resolve));
if (code !== 0) throw new Error(`xcsh-session session exited with ${code}`);
const { extra, ...times } = samples;
const inHostAppendMs = extra.map(([a]) => a.us / 1000);
const inHostAppendFlushMs = extra.map(([a, f]) => (a.us + f.us) / 1000);
process.stdout.write(`${JSON.stringify({ openMs, ...times, inHostAppendMs, inHostAppendFlushMs })}\n`);
