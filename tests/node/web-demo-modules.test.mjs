// The session viewer's modules (web-demo/, page and worker): their static imports make no
// circle, every relative import names a file that is there, and no file is over 500 lines.
// The package (pkg/), the vendored libraries (vendor/) and node_modules/ are not ours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = fileURLToPath(new URL('../../web-demo/', import.meta.url));
const SKIP = new Set(['pkg', 'vendor', 'node_modules']);
const MAX_LINES = 500;

/** The viewer's own `.js` / `.mjs` files, relative to web-demo/, with `/` separators. */
function modules(dir = WEB) {
  const out = [];
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, d.name);
    if (d.isDirectory()) {
      if (!SKIP.has(d.name)) out.push(...modules(full));
    } else if (/\.m?js$/.test(d.name)) {
      out.push(path.relative(WEB, full).split(path.sep).join('/'));
    }
  }
  return out.sort();
}

/** `import … from './x.js'`, `import './x.js'` and `export … from './x.js'` (relative only). */
const STATIC_IMPORT = /^[ \t]*(?:import|export)\s+(?:[\w$*{}\s,]+?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The relative specifiers of one file's static imports, resolved against web-demo/. */
function importsOf(file, text) {
  return [...text.matchAll(STATIC_IMPORT)].map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1])));
}

/** Lines as `wc -l` counts them, plus an unterminated last line. */
const lineCount = (text) => (text.match(/\n/g)?.length ?? 0) + (text && !text.endsWith('\n') ? 1 : 0);

const files = modules();
const texts = new Map(files.map((f) => [f, fs.readFileSync(path.join(WEB, f), 'utf8')]));
const ours = (target) => !SKIP.has(target.split('/')[0]);
const graph = new Map(files.map((f) => [f, importsOf(f, texts.get(f)).filter(ours)]));

/** Every circle the depth-first walk meets, each as its path (`a.js → b.js → a.js`). */
function cycles() {
  const found = [];
  const done = new Set();
  const stack = [];
  const onStack = new Set();
  const visit = (f) => {
    stack.push(f);
    onStack.add(f);
    for (const to of graph.get(f) ?? []) {
      if (onStack.has(to)) found.push([...stack.slice(stack.indexOf(to)), to].join(' → '));
      else if (!done.has(to)) visit(to);
    }
    stack.pop();
    onStack.delete(f);
    done.add(f);
  };
  for (const f of files) if (!done.has(f)) visit(f);
  return found;
}

test('web-demo: the page and the worker are found with their imports', () => {
  for (const f of ['app.js', 'worker.js', 'state.js']) assert.ok(files.includes(f), `web-demo/${f} is missing`);
  assert.ok(graph.get('app.js').length > 5, 'app.js imports no modules: the import pattern no longer matches');
  assert.ok(graph.get('worker.js').length > 0, 'worker.js imports no modules: the import pattern no longer matches');
});

test('web-demo: every relative import names a file of web-demo', () => {
  const missing = [];
  for (const [f, targets] of graph) for (const to of targets) if (!texts.has(to)) missing.push(`${f} imports ${to}`);
  assert.deepEqual(missing, [], `imports of files that are not there:\n  ${missing.join('\n  ')}`);
});

test('web-demo: the static imports make no circle', () => {
  const found = cycles();
  assert.deepEqual(found, [], `import cycles:\n  ${found.join('\n  ')}`);
});

test(`web-demo: no module is over ${MAX_LINES} lines`, () => {
  const long = files.map((f) => [f, lineCount(texts.get(f))]).filter(([, n]) => n > MAX_LINES).map(([f, n]) => `${f}: ${n} lines`);
  assert.deepEqual(long, [], `split these by concern:\n  ${long.join('\n  ')}`);
});
