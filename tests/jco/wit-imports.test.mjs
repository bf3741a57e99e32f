// The WIT declares no import function the component does not call: every function of
// the interfaces the world imports from this package (`storage`, `history`) is in the
// built component's imports, which list only what its code calls (wasm-tools' `component
// new` keeps the imports the core module uses). A dead function is work for every host
// author (0.1.0's `blob-put`, `blob-get` and `copy-dir` were). This host, jco's, also
// implements exactly those functions, no more. Needs XCSH_COMPONENT (the built component;
// scripts/test-jco sets it) and `jco` on PATH.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { storage, history } from './host.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WIT = fs.readFileSync(path.join(ROOT, 'wit', 'xcsh-session.wit'), 'utf8');
const COMPONENT = process.env.XCSH_COMPONENT;
assert.ok(COMPONENT, 'XCSH_COMPONENT: the built component (run scripts/test-jco)');

const PACKAGE = /^package\s+([a-z0-9-]+:[a-z0-9-]+)@([0-9.]+)\s*;/m.exec(WIT);
assert.ok(PACKAGE, 'the WIT names its package');
const [, PKG, VERSION] = PACKAGE;

/** The lines of `interface <name> { … }` (the closing brace at column 0). */
function interfaceLines(name) {
  const lines = WIT.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^interface\\s+${name}\\s*\\{`).test(l));
  assert.ok(start >= 0, `interface ${name} in the WIT`);
  const end = lines.findIndex((l, i) => i > start && /^\}/.test(l));
  return lines.slice(start + 1, end);
}

/**
 * The functions an interface declares, by their component names: `read`,
 * `[method]reader.read`, `[static]r.f`, `[constructor]r`.
 */
function declaredFunctions(name) {
  const names = [];
  const open = []; // the enclosing blocks: a resource's name, or null for a type
  for (const raw of interfaceLines(name)) {
    const line = raw.replace(/\/\/.*$/, '');
    const resource = /^\s*resource\s+(%?[a-z][a-z0-9-]*)\s*\{/.exec(line);
    const block = /^\s*(?:record|variant|enum|flags)\s+%?[a-z][a-z0-9-]*\s*\{/.test(line);
    const fn = /^\s*(%?[a-z][a-z0-9-]*)\s*:\s*(static\s+)?func\b/.exec(line);
    const ctor = /^\s*constructor\s*\(/.test(line);
    const owner = open.at(-1);
    if (fn) {
      const f = fn[1].replace(/^%/, '');
      names.push(owner ? `[${fn[2] ? 'static' : 'method'}]${owner}.${f}` : f);
    } else if (ctor && owner) {
      names.push(`[constructor]${owner}`);
    }
    if (resource) open.push(resource[1].replace(/^%/, ''));
    else if (block) open.push(null);
    if (/^\s*\}/.test(line)) open.pop();
  }
  return names.sort();
}

/** The interfaces of this package the world imports. */
function importedInterfaces() {
  const world = /^world\s+session-component\s*\{([\s\S]*?)^\}/m.exec(WIT);
  assert.ok(world, 'world session-component in the WIT');
  return [...world[1].matchAll(/^\s*import\s+([a-z][a-z0-9-]*)\s*;/gm)].map((m) => m[1]);
}

/** The functions of each imported instance in the component's own type (`jco print`). */
function componentImports() {
  const text = execFileSync('jco', ['print', COMPONENT], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const out = new Map();
  // `(type $ty-<name> (;N;) (instance … (export (;i;) "<func>" (func (type j))) …))`
  // precedes each `(import "<name>" (instance …))`.
  for (const m of text.matchAll(/^  \(type \$ty-([^ ]+) \(;\d+;\)\n    \(instance\n([\s\S]*?)\n    \)\n  \)/gm)) {
    const funcs = [...m[2].matchAll(/\(export \(;\d+;\) "([^"]+)" \(func /g)].map((f) => f[1]);
    out.set(m[1], funcs.sort());
  }
  return out;
}

const camel = (name) => name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

test('the world imports storage and history, each declaring functions', () => {
  assert.deepEqual(importedInterfaces(), ['storage', 'history']);
  assert.ok(declaredFunctions('storage').includes('[method]reader.read'), 'resource methods are read');
  assert.ok(declaredFunctions('storage').includes('read-range'));
  assert.ok(declaredFunctions('history').includes('last-prompt'));
});

test('every function the WIT declares in an imported interface is one the component imports', () => {
  const imports = componentImports();
  for (const name of importedInterfaces()) {
    const key = `${PKG}/${name}@${VERSION}`;
    assert.ok(imports.has(key), `the component imports ${key} (found: ${[...imports.keys()].join(', ')})`);
    const used = new Set(imports.get(key));
    const dead = declaredFunctions(name).filter((f) => !used.has(f));
    assert.deepEqual(dead, [], `${key}: declared in the WIT, never imported by the component`);
    assert.deepEqual(imports.get(key), declaredFunctions(name));
  }
});

test('the jco host implements exactly the imported functions', () => {
  const plain = (name) => declaredFunctions(name).filter((f) => !f.startsWith('['))
    .map(camel).sort();
  // A resource is a class, its methods on the prototype.
  assert.deepEqual(Object.keys(storage).filter((k) => k !== 'Reader').sort(), plain('storage'));
  assert.equal(typeof storage.Reader.prototype.read, 'function');
  assert.deepEqual(Object.keys(history).sort(), plain('history'));
});
