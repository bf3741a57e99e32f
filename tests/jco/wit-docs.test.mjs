// Every item of the WIT package has a doc comment: interfaces, worlds, types (records,
// variants, enums, resources), functions, constructors, resource methods, and each import
// and export of a world. The docs are
// what host authors read (wasmtime's bindgen and jco's types carry them), so an item
// without one fails here. The world's docs are also in the built component (checked by
// scripts/build-component).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WIT_DIR = path.join(ROOT, 'wit');

/** The lines of each `.wit` file of the package (not the vendored WASI deps). */
const files = fs.readdirSync(WIT_DIR).filter((f) => f.endsWith('.wit'))
  .map((f) => ({ file: f, lines: fs.readFileSync(path.join(WIT_DIR, f), 'utf8').split('\n') }));

const ITEM = /^\s*(?:(interface|world|record|variant|enum|flags|resource|type)\s+(%?[a-z][a-z0-9-]*)|(%?[a-z][a-z0-9-]*)\s*:\s*(?:static\s+)?func\b|(constructor)\s*\(|(?:import|export)\s+([a-z][a-z0-9:/@.-]*)\s*;)/;

/** The undocumented items: `file:line name`. */
function undocumented() {
  const missing = [];
  for (const { file, lines } of files) {
    lines.forEach((line, i) => {
      const m = ITEM.exec(line);
      if (!m) return;
      let j = i - 1;
      while (j >= 0 && /^\s*@/.test(lines[j])) j--; // feature gates sit between
      if (!/^\s*\/\/\//.test(lines[j] ?? '')) missing.push(`${file}:${i + 1} ${m[2] ?? m[3] ?? m[5] ?? m[6]}`);
    });
  }
  return missing;
}

test('the WIT package has items to check', () => {
  assert.ok(files.length >= 1);
  const items = files.flatMap(({ lines }) => lines.filter((l) => ITEM.test(l)));
  assert.ok(items.length > 100, `found only ${items.length} items: the pattern is broken`);
  assert.ok(items.some((l) => /resource session\b/.test(l)), 'the session resource is an item');
});

test('every WIT item has a doc comment', () => {
  assert.deepEqual(undocumented(), []);
});
