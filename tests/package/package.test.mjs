// The npm package as its users meet it: `npm pack` of pkg/, installed from the tarball
// into a fresh project, then used from an ES module and a CommonJS script in Node (the
// machine's and Node 22), `tsc --strict` on typed consumers (nodenext and bundler
// resolution), an esbuild bundle for the browser loaded in headless Chromium, an esbuild
// bundle for Node, Deno and Bun (each also over its own file API). Every consumer runs tests/package/consumer/scenario.mjs
// with the shipped storages and must see the same thing.
//
// Needs XCSH_PACKAGE_TARBALL (the packed package) and XCSH_PKGTEST_BIN (where deno, bun,
// esbuild and tsc are: scripts/setup test installs them); scripts/test-package sets both.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/lib/start-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..', '..');
const TARBALL = process.env.XCSH_PACKAGE_TARBALL;
const BIN = process.env.XCSH_PKGTEST_BIN;
const NODE22 = process.env.XCSH_NODE22;
assert.ok(TARBALL && fs.existsSync(TARBALL), 'XCSH_PACKAGE_TARBALL: the packed package (run scripts/test-package)');
assert.ok(BIN && fs.existsSync(path.join(BIN, 'esbuild')), 'XCSH_PKGTEST_BIN: deno, bun, esbuild and tsc (scripts/setup test)');

/** What the scenario sees in every host. */
const SEEN = {
  version: true,
  messages: ['user', 'assistant'],
  text: 'hi from a consumer',
  label: 'start',
  entries: 3,
  idsDiffer: true,
};
/** What consumer/ranges.mjs sees of each storage's readRange. */
const RANGES = { sameAsRead: [], written: true, missing: 'ENOENT', negative: 'EINVAL' };
const BOTH = {
  onDisk: SEEN, files: 1, inMemory: SEEN, asyncOnDisk: SEEN,
  ranges: { onDisk: RANGES, inMemory: RANGES, asyncOnDisk: RANGES },
};

let project;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: project, encoding: 'utf8', timeout: 120_000, ...opts });
  assert.equal(r.status, 0, `${path.basename(cmd)} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const lastJson = (out) => JSON.parse(out.trim().split('\n').at(-1));

before(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-package-'));
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  fs.cpSync(path.join(here, 'consumer'), project, { recursive: true });
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', TARBALL]);
});

after(() => fs.rmSync(project, { recursive: true, force: true }));

describe('the packed package in a fresh project', { timeout: 600_000 }, () => {
  test('the tarball holds the package and nothing else', () => {
    const list = run('tar', ['tzf', TARBALL]).trim().split('\n').map((f) => f.replace(/^package\//, '')).sort();
    for (const f of ['package.json', 'LICENSE', 'README.md', 'xcsh_session_bg.wasm', 'xcsh_session.js', 'xcsh_session.d.ts', 'node.mjs', 'node.cjs', 'browser.mjs', 'inline.mjs', 'inline-wasm.mjs', 'slim.mjs', 'node-storage.mjs', 'memory-storage.mjs', 'opfs-storage.mjs', 'async-session.mjs', 'staged-storage.mjs']) {
      assert.ok(list.includes(f), `${f} is in the tarball`);
    }
    assert.deepEqual(list.filter((f) => f.endsWith('.wasm')), ['xcsh_session_bg.wasm'], 'one .wasm for every host');
    const pkg = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'xcsh-session', 'package.json'), 'utf8'));
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.license, 'MIT');
    assert.ok(Array.isArray(pkg.sideEffects));
    assert.deepEqual(Object.keys(pkg.exports['.']), ['node', 'browser', 'default']);
  });

  test('Node: an ES module imports it, ready without an init call', () => {
    assert.deepEqual(lastJson(run(process.execPath, ['esm.mjs'])), BOTH);
  });

  test('Node: opfsStorage is there and says it needs a browser', () => {
    const out = run(process.execPath, ['--input-type=module', '-e', "import { opfsStorage, ready } from 'xcsh-session'; await ready; try { opfsStorage(); } catch (e) { console.log(e.message); }"]);
    assert.equal(out.trim(), "xcsh-session: opfsStorage() needs the browser's Origin Private File System (navigator.storage), which this runtime has not; use nodeAsyncStorage() or nodeStorage()");
  });

  test('slim: init({ module_or_path }) and initSync({ module }), and the bare forms without wasm-bindgen\'s deprecation warning', () => {
    for (const form of ['init', 'init-bare', 'initSync', 'initSync-bare']) {
      assert.deepEqual(lastJson(run(process.execPath, ['slim.mjs', form])), { warnings: [], messages: 0 }, form);
    }
  });

  test('Node: a CommonJS script requires it', () => {
    assert.deepEqual(lastJson(run(process.execPath, ['cjs.cjs'])), BOTH);
  });

  test('Node 22: ES module and CommonJS', () => {
    assert.ok(NODE22, 'XCSH_NODE22: Node 22 (scripts/setup test)');
    assert.deepEqual(lastJson(run(NODE22, ['esm.mjs'])), BOTH);
    assert.deepEqual(lastJson(run(NODE22, ['cjs.cjs'])), BOTH);
  });

  // tsconfig.json (nodenext) checks the browser consumer too: nodenext resolves the `node`
  // condition, whose typings must export what the browser's do (opfsStorage, ready).
  test('TypeScript: tsc --strict accepts typed Node and browser consumers (nodenext and bundler resolution)', () => {
    run(path.join(BIN, 'tsc'), ['-p', 'tsconfig.json']);
    run(path.join(BIN, 'tsc'), ['-p', 'tsconfig.bundler.json']);
  });

  test('TypeScript: a wrong use is an error, so the check can fail', () => {
    fs.writeFileSync(path.join(project, 'wrong.ts'), "import { Session } from 'xcsh-session';\nconst n: number = Session.inMemory('/w').sessionId;\nexport { n };\n");
    fs.writeFileSync(path.join(project, 'tsconfig.wrong.json'), JSON.stringify({ extends: './tsconfig.json', files: ['wrong.ts'] }));
    const r = spawnSync(path.join(BIN, 'tsc'), ['-p', 'tsconfig.wrong.json'], { cwd: project, encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /wrong\.ts.*Type 'string' is not assignable to type 'number'/);
  });

  test('esbuild for Node: the bundle runs with the .wasm beside it', () => {
    run(path.join(BIN, 'esbuild'), ['esm.mjs', '--bundle', '--platform=node', '--format=esm', '--outfile=dist-node/app.mjs', '--log-level=warning']);
    fs.copyFileSync(path.join(project, 'node_modules', 'xcsh-session', 'xcsh_session_bg.wasm'), path.join(project, 'dist-node', 'xcsh_session_bg.wasm'));
    assert.deepEqual(lastJson(run(process.execPath, ['dist-node/app.mjs'])), BOTH);
  });

  test('esbuild for the browser: no node: import in the bundle, and it runs in headless Chromium', async () => {
    run(path.join(BIN, 'esbuild'), ['browser.mjs', '--bundle', '--platform=browser', '--format=esm', '--target=es2022', '--outfile=dist/app.js', '--log-level=warning']);
    const bundle = fs.readFileSync(path.join(project, 'dist', 'app.js'), 'utf8');
    assert.doesNotMatch(bundle, /["']node:(fs|os|path)["']/);
    fs.copyFileSync(path.join(project, 'node_modules', 'xcsh-session', 'xcsh_session_bg.wasm'), path.join(project, 'dist', 'xcsh_session_bg.wasm'));
    fs.copyFileSync(path.join(project, 'index.html'), path.join(project, 'dist', 'index.html'));
    const { child: server, url } = await startServer({ root: path.join(project, 'dist') });
    let browser;
    try {
      browser = await chromium.launch({
        executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(url);
      await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 30_000 });
      const result = await page.evaluate(() => window.__result);
      assert.deepEqual(errors, []);
      const { names, nodeStorage, ...seen } = result;
      assert.deepEqual(seen, { inMemory: SEEN, opfs: SEEN, ranges: { inMemory: RANGES, opfs: RANGES } });
      const inNode = JSON.parse(run(process.execPath, ['--input-type=module', '-e', "console.log(JSON.stringify(Object.keys(await import('xcsh-session')).sort()))"]));
      assert.deepEqual(names, inNode, 'the browser entry exports the names the Node entry does');
      assert.match(nodeStorage, /^xcsh-session: nodeStorage\(\) needs node:fs, which a browser has not; use opfsStorage\(\) \(with AsyncSession\) or memoryStorage\(\)$/);
    } finally {
      await browser?.close();
      server.kill('SIGTERM');
    }
  });

  test('Deno runs the ES module from node_modules', () => {
    const out = run(path.join(BIN, 'deno'), ['run', '--quiet', '--allow-read', '--allow-write', '--allow-env', '--allow-sys', 'esm.mjs'], {
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_DIR: path.join(project, '.deno') },
    });
    assert.deepEqual(lastJson(out), BOTH);
  });

  test('Deno\'s own file API (no node:fs) works as an async storage', () => {
    const out = run(path.join(BIN, 'deno'), ['run', '--quiet', '--allow-read', '--allow-write', '--allow-env', '--allow-sys', 'deno-native.mjs'], {
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', DENO_DIR: path.join(project, '.deno') },
    });
    assert.deepEqual(lastJson(out), { native: SEEN });
  });

  test('Bun runs the ES module and the CommonJS script', () => {
    assert.deepEqual(lastJson(run(path.join(BIN, 'bun'), ['esm.mjs'])), BOTH);
    assert.deepEqual(lastJson(run(path.join(BIN, 'bun'), ['cjs.cjs'])), BOTH);
  });

  test('Bun\'s own file API (Bun.file, Bun.write) works as an async storage', () => {
    assert.deepEqual(lastJson(run(path.join(BIN, 'bun'), ['bun-native.mjs'])), { native: SEEN });
  });
});
