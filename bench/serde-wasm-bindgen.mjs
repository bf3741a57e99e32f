// serde-wasm-bindgen against today's conversion, on the same session: `context()` (the
// core's JSON text, then JSON.parse into JS objects) and `contextViaSerdeWasmBindgen()`
// (the text parsed into a serde_json::Value, then serde-wasm-bindgen's json-compatible
// serializer), from a package built with the feature `serde-wasm-bindgen-bench`
// (scripts/bench). Also says whether both give the same objects.
// Prints JSON: {file, bytes, contextBytes, jsonParseMs: [..], serdeWasmBindgenMs: [..], sameObjects, firstDifference}
// Usage: node serde-wasm-bindgen.mjs <pkg-dir> <session.jsonl> <reps>
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

const [pkgDir, file, repsArg] = process.argv.slice(2);
const reps = Number(repsArg);
const pkg = await import(pathToFileURL(path.join(pkgDir, 'xcsh_session.js')).href);
pkg.initSync({ module: fs.readFileSync(path.join(pkgDir, 'xcsh_session_bg.wasm')) });
const session = pkg.Session.fromText(fs.readFileSync(file));
const contextBytes = Buffer.byteLength(session.contextJson());

function time(f) {
  f(); // warm-up
  const out = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    f();
    out.push(performance.now() - t);
  }
  return out;
}

const jsonParseMs = time(() => session.context());
const serdeWasmBindgenMs = time(() => session.contextViaSerdeWasmBindgen());
let sameObjects = true;
let firstDifference = null;
try {
  assert.deepStrictEqual(session.contextViaSerdeWasmBindgen(), session.context());
} catch (e) {
  sameObjects = false;
  firstDifference = String(e.message).split('\n').slice(0, 12).join('\n');
}
process.stdout.write(`${JSON.stringify({ file: path.basename(file), bytes: fs.statSync(file).size, contextBytes, jsonParseMs, serdeWasmBindgenMs, sameObjects, firstDifference })}\n`);
