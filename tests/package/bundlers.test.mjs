// The browser entries as the bundlers users bring meet them, without configuration: a
// tiny app (tests/package/app/: it opens a sample session and prints its context) built
// by Vite 5, 6, 7 and 8 (`vite build`, and the dev server with its dependency
// pre-bundling), webpack 5 and Rollup from the packed package in a fresh project, then run
// in headless Chromium; `xcsh-session/inline` built by esbuild and Rollup, which emit no asset for
// the .wasm. The bundlers are pinned in scripts/setup (BUNDLER_DEPS).
//
// Needs XCSH_PACKAGE_TARBALL, XCSH_BUNDLERS (the bundlers' node_modules) and
// XCSH_PKGTEST_BIN (esbuild); scripts/test-package sets them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/lib/start-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..', '..');
const TARBALL = process.env.XCSH_PACKAGE_TARBALL;
const BUNDLERS = process.env.XCSH_BUNDLERS;
const BIN = process.env.XCSH_PKGTEST_BIN;
assert.ok(TARBALL && fs.existsSync(TARBALL), 'XCSH_PACKAGE_TARBALL: the packed package (run scripts/test-package)');
assert.ok(BUNDLERS && fs.existsSync(path.join(BUNDLERS, 'webpack')), 'XCSH_BUNDLERS: Vite, webpack and Rollup (scripts/setup test)');
assert.ok(BIN && fs.existsSync(path.join(BIN, 'esbuild')), 'XCSH_PKGTEST_BIN: esbuild (scripts/setup test)');
const bundler = createRequire(path.join(BUNDLERS, 'index.js'));

/** What the app prints: the sample session's context, as the core builds it. */
const CONTEXT = JSON.parse(fs.readFileSync(path.join(ROOT, 'crates/js/tests/small-session.context.json'), 'utf8'));

let project;
let browser;
let server;

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: project, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${path.basename(cmd)} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

/** A page of a built app in a directory of the project, served by scripts/serve.mjs. */
async function context(url) {
  const page = await browser.newPage();
  try {
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(url);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 30_000 });
    const result = await page.evaluate(() => window.__result);
    assert.deepEqual(errors, []);
    assert.equal(result.error, undefined, result.error);
    assert.equal(await page.textContent('output'), JSON.stringify(CONTEXT));
    return result;
  } finally {
    await page.close();
  }
}

/** The app built into `dir`, with a page loading `script`. */
function page(dir, script, type = 'module') {
  fs.writeFileSync(path.join(project, dir, 'index.html'),
    `<!doctype html>\n<meta charset="utf-8">\n<output></output>\n<script ${type === 'module' ? 'type="module"' : 'defer'} src="./${script}"></script>\n`);
  return new URL(`${dir}/`, server.url).href;
}

const wasmAssets = (dir) => fs.readdirSync(path.join(project, dir), { recursive: true }).filter((f) => String(f).endsWith('.wasm'));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

before(async () => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-bundlers-'));
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  fs.cpSync(path.join(here, 'app'), project, { recursive: true });
  const sample = fs.readFileSync(path.join(ROOT, 'crates/js/tests/small-session.jsonl'), 'utf8');
  fs.writeFileSync(path.join(project, 'sample.mjs'), `export const sample = ${JSON.stringify(sample)};\n`);
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', TARBALL]);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  const started = await startServer({ root: project });
  server = { url: started.url, child: started.child };
});

after(async () => {
  await browser?.close();
  server?.child.kill('SIGTERM');
  fs.rmSync(project, { recursive: true, force: true });
});

describe('a browser app bundled without configuration runs in Chromium', { timeout: 600_000 }, () => {
  for (const vite of ['vite5', 'vite6', 'vite7', 'vite8']) {
    const bin = path.join(BUNDLERS, vite, 'bin', 'vite.js');
    const version = JSON.parse(fs.readFileSync(path.join(BUNDLERS, vite, 'package.json'), 'utf8')).version;

    test(`Vite ${version}: vite build emits the .wasm as an asset`, async () => {
      run(process.execPath, [bin, 'build', '--outDir', `dist-${vite}`, '--emptyOutDir', '--logLevel', 'warn']);
      assert.equal(wasmAssets(`dist-${vite}`).length, 1);
      // Served at the root: Vite's default base is `/`.
      const { child, url } = await startServer({ root: path.join(project, `dist-${vite}`) });
      try {
        await context(url);
      } finally {
        child.kill('SIGTERM');
      }
    });

    test(`Vite ${version}: the dev server, which pre-bundles the package`, async () => {
      const port = await freePort();
      const dev = spawn(process.execPath, [bin, '--port', String(port), '--strictPort', '--host', '127.0.0.1', '--force', '--logLevel', 'warn'],
        { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      dev.stdout.on('data', (d) => (out += d));
      dev.stderr.on('data', (d) => (out += d));
      try {
        const url = `http://127.0.0.1:${port}/`;
        for (let i = 0; ; i++) {
          if (await fetch(url).then((r) => r.ok, () => false)) break;
          assert.ok(i < 200 && dev.exitCode === null, `the dev server did not start:\n${out}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        await context(url);
        assert.ok(fs.existsSync(path.join(project, 'node_modules', '.vite', 'deps', 'xcsh-session.js')), 'the package was pre-bundled');
        assert.doesNotMatch(out, /error/i);
      } finally {
        dev.kill('SIGTERM');
      }
    });
  }

  test('webpack 5: production build emits the .wasm as an asset', async () => {
    const webpack = bundler('webpack');
    const stats = await new Promise((resolve, reject) => webpack({
      mode: 'production',
      context: project,
      entry: './main.mjs',
      output: { path: path.join(project, 'dist-webpack'), filename: 'app.js' },
    }, (err, s) => (err ? reject(err) : resolve(s))));
    assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
    assert.equal(wasmAssets('dist-webpack').length, 1);
    await context(page('dist-webpack', 'app.js', 'classic'));
  });

  test('Rollup with node-resolve: the default entry, the .wasm copied beside the bundle', async () => {
    const { rollup } = bundler('rollup');
    const { nodeResolve } = bundler('@rollup/plugin-node-resolve');
    const build = await rollup({ input: path.join(project, 'main.mjs'), plugins: [nodeResolve({ browser: true })] });
    await build.write({ file: path.join(project, 'dist-rollup', 'app.js'), format: 'es' });
    fs.copyFileSync(path.join(project, 'node_modules', 'xcsh-session', 'xcsh_session_bg.wasm'), path.join(project, 'dist-rollup', 'xcsh_session_bg.wasm'));
    await context(page('dist-rollup', 'app.js'));
  });

  test('Rollup with node-resolve: xcsh-session/inline, nothing to copy', async () => {
    const { rollup } = bundler('rollup');
    const { nodeResolve } = bundler('@rollup/plugin-node-resolve');
    const build = await rollup({ input: path.join(project, 'main-inline.mjs'), plugins: [nodeResolve({ browser: true })] });
    await build.write({ file: path.join(project, 'dist-rollup-inline', 'app.js'), format: 'es' });
    assert.deepEqual(wasmAssets('dist-rollup-inline'), []);
    await context(page('dist-rollup-inline', 'app.js'));
  });

  test('esbuild: xcsh-session/inline, nothing to copy', async () => {
    run(path.join(BIN, 'esbuild'), ['main-inline.mjs', '--bundle', '--format=esm', '--outfile=dist-esbuild-inline/app.js', '--log-level=warning']);
    assert.deepEqual(wasmAssets('dist-esbuild-inline'), []);
    await context(page('dist-esbuild-inline', 'app.js'));
  });

  test('the default entry tells what is missing when the .wasm is not beside the bundle', async () => {
    run(path.join(BIN, 'esbuild'), ['main.mjs', '--bundle', '--format=esm', '--outfile=dist-esbuild-bare/app.js', '--log-level=warning']);
    const p = await browser.newPage();
    try {
      await p.goto(page('dist-esbuild-bare', 'app.js'));
      await p.waitForFunction(() => window.__result !== undefined, null, { timeout: 30_000 });
      const { error } = await p.evaluate(() => window.__result);
      assert.match(error, /no WebAssembly module at http:\/\/\S+\/dist-esbuild-bare\/xcsh_session_bg\.wasm \(HTTP 404.*copy node_modules\/xcsh-session\/xcsh_session_bg\.wasm beside the bundle, or import xcsh-session\/inline/);
    } finally {
      await p.close();
    }
  });
});
