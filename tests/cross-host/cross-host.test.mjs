// The three hosts and the native core build byte-identical SessionContext JSON for the
// four real fixtures:
//   native   target/debug/examples/context <file>            (plain Rust core)
//   Node     pkg/ buildSessionContextJson(text)               (wasm-bindgen, nodejs target)
//   Chromium web-demo/pkg/ in headless Chromium, same call     (wasm-bindgen, web target)
//   wasmtime target/release/xcsh-session context <file> --json (WASI component)
// Needs: scripts/build-js, scripts/build-component + the host built in release, and
// `cargo build -p xcsh-session --examples` (scripts/test does all of it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/lib/start-server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = resolve(ROOT, 'tests', 'fixtures', 'real');
const NAMES = ['before-compaction', 'historical-compact', 'historical-session', 'large-session'];
const require = createRequire(import.meta.url);
const pkg = require(join(ROOT, 'pkg', 'node.cjs'));
const sha = (s) => createHash('sha256').update(s).digest('hex');
const scratch = mkdtempSync(join(tmpdir(), 'xcsh-cross-'));
const agentDir = join(scratch, 'agent');

let server;
let browser;
let page;

before(async () => {
  let url;
  ({ child: server, url } = await startServer());
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  page = await browser.newPage();
  await page.goto(url);
  await page.evaluate(async () => {
    const m = await import('/pkg/xcsh_session.js');
    await m.default();
    window.__xcsh = m;
  });
});

after(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
  rmSync(scratch, { recursive: true, force: true });
});

for (const name of NAMES) {
  test(`${name}: native, Node, Chromium and wasmtime agree byte for byte`, async () => {
    const file = join(FIXTURES, `${name}.jsonl`);
    const text = readFileSync(file, 'utf8');
    const native = execFileSync(join(ROOT, 'target', 'debug', 'examples', 'context'), [file], { maxBuffer: 1 << 28, encoding: 'utf8' }).replace(/\n$/, '');
    const node = pkg.buildSessionContextJson(text);
    const inBrowser = await page.evaluate((t) => window.__xcsh.buildSessionContextJson(t), text);
    const wasmtime = execFileSync(join(ROOT, 'target', 'release', 'xcsh-session'), ['--agent-dir', agentDir, 'context', file, '--json'], {
      maxBuffer: 1 << 28,
      encoding: 'utf8',
      env: { ...process.env, XCSH_SESSION_CACHE_DIR: join(scratch, 'cache') },
    }).replace(/\n$/, '');
    assert.ok(JSON.parse(native).messages.length > 0);
    const digests = { native: sha(native), node: sha(node), chromium: sha(inBrowser), wasmtime: sha(wasmtime) };
    assert.deepEqual(new Set(Object.values(digests)).size, 1, JSON.stringify(digests));
    assert.equal(node, native);
  });
}
