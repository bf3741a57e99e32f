// Append + flush through the component's `session` resource, in jco (Node): the row that
// shows an append to a large session costs about what it costs natively (the state lives
// in the instance; nothing is re-read). Prints JSON:
//   {"openMs", "appendMs": [..], "appendFlushMs": [..],
//    "coldAppendMs": [..], "coldAppendFlushMs": [..], "warmupAppends"}
// `appendMs` / `appendFlushMs` are the steady state, timed after `warmupAppends` appends:
// jco's glue is JavaScript that V8 only optimizes after a few hundred calls (until then
// an append costs about twice as much), and a session host lives for many appends. The
// `cold…` samples are the first appends after open, kept to show what a short-lived host
// pays (bench/append-samples.mjs).
// Usage: node resource-append.mjs <jco-out-dir> <session.jsonl> <tmp-dir> <reps>
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { storage, history } from '../tests/jco/host.mjs';
import { appendSamples } from './append-samples.mjs';

const [out, source, tmp, repsArg] = process.argv.slice(2);
const reps = Number(repsArg);
const { instantiate } = await import(pathToFileURL(path.join(out, 'xcsh_session_component.js')).href);
const wasi = {
  'wasi:clocks/wall-clock': {
    now() {
      const ms = Date.now();
      return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (ms % 1000) * 1e6 };
    },
    resolution: () => ({ seconds: 0n, nanoseconds: 1e6 }),
  },
  'wasi:random/insecure': {
    getInsecureRandomBytes: (n) => Uint8Array.from({ length: Number(n) }, () => Math.floor(Math.random() * 256)),
    getInsecureRandomU64: () => BigInt.asUintN(64, BigInt(Math.floor(Math.random() * 2 ** 53)) * 2048n + BigInt(Math.floor(Math.random() * 2048))),
  },
};
const component = await instantiate(
  (file) => WebAssembly.compile(fs.readFileSync(path.join(out, file))),
  { ...wasi, 'xcsh:session/storage': storage, 'xcsh:session/history': history },
);
const { Session } = component.sessionApi;

fs.rmSync(tmp, { recursive: true, force: true });
fs.mkdirSync(tmp, { recursive: true });
const file = path.join(tmp, 'big.jsonl');
fs.copyFileSync(source, file);
const fd = fs.openSync(file, 'r');
fs.fsyncSync(fd); // the copy is durable before timing: the appends' fsync must not pay for it
fs.closeSync(fd);

let t = performance.now();
const s = Session.open(file, path.join(tmp, 'agent'), '/work/bench', false);
const openMs = performance.now() - t;
// A synchronous append is timed as it is: `await` of a plain value adds a microtask (~1 µs).
const samples = await appendSamples(reps, (m) => s.appendMessage(m), () => s.flush());
s.close();
const { extra, ...times } = samples;
process.stdout.write(`${JSON.stringify({ openMs, ...times })}\n`);
