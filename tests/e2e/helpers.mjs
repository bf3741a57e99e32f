// Shared by the end-to-end tests of the session viewer: the static server, a headless
// Chromium (/usr/bin/chromium, never a downloaded browser) with a fresh profile, and the
// list of problems (page errors, console errors, failed requests) every test must keep empty.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/lib/start-server.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..', '..');
export const FIXTURES = resolve(ROOT, 'tests', 'fixtures', 'real'); // the real session files kept in the repo
export const SCREENSHOTS = join(HERE, 'screenshots');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
export const TIMEOUT = 30_000;

export { startServer };

/**
 * How long a server may take to exit on SIGTERM before it is killed (a limit for a loaded
 * CI, not a delay: the wait ends when it exits).
 */
const SERVER_EXIT_LIMIT_MS = 60_000;

/** SIGTERM the server and return its exit code (it must exit cleanly). */
export function stopServer(child) {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), SERVER_EXIT_LIMIT_MS);
    child.removeAllListeners('exit');
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolvePromise(code ?? signal);
    });
    child.kill('SIGTERM');
  });
}

/**
 * One browser for the enclosing describe(): opened before its tests, closed after them.
 * `onOpen(b)` runs once it is open (to take its page, pick a colour scheme…). The returned
 * object is the one openBrowser() gives, filled in when the suite starts.
 */
export function suiteBrowser(onOpen) {
  const b = {};
  before(async () => {
    Object.assign(b, await openBrowser());
    await onOpen?.(b);
  });
  after(async () => {
    await b.close?.();
  });
  return b;
}

/**
 * The server, a persistent Chromium context on a fresh profile (so OPFS survives page
 * reloads within the run), its page, and `problems`: every page error, console error,
 * failed request and HTTP error. `assertNoProblems()` reports and clears them.
 */
export async function openBrowser() {
  assert.ok(
    existsSync(join(ROOT, 'web-demo', 'pkg', 'xcsh_session.js')),
    'web-demo/pkg/xcsh_session.js is missing: build the package with scripts/build-js',
  );
  await mkdir(SCREENSHOTS, { recursive: true });
  const server = await startServer();
  const profile = await mkdtemp(join(tmpdir(), 'xcsh-e2e-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1440, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(TIMEOUT);
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => {
    // A navigation (goto, reload, Back) aborts what the page it leaves still loads (the
    // history's sqlite3.wasm, say): that is the test leaving, not a failure of the viewer.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return {
    server,
    context,
    page,
    problems,
    assertNoProblems: () => assert.deepEqual(problems.splice(0), [], 'no page errors, console errors or failed requests'),
    async close() {
      await context?.close();
      await rm(profile, { recursive: true, force: true });
      const code = await stopServer(server.child);
      assert.equal(code, 0, 'serve.mjs exits with status 0 on SIGTERM');
    },
  };
}

/** Waits until the session bar names the open file (on a phone the chip is folded behind Details). */
export async function fileChip(page, name) {
  await page.locator('#session-bar [data-testid=chip-file]', { hasText: name }).waitFor({ state: 'attached' });
}

/** Drops `text` as a file on the page, as a drag from the file manager would. */
export async function dropFile(page, name, text) {
  await page.evaluate(
    ([fileName, content]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([content], fileName, { type: 'application/x-ndjson' }));
      for (const type of ['dragenter', 'dragover', 'drop']) {
        document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
      }
    },
    [name, text],
  );
}

export function cssEscape(id) {
  return String(id).replace(/[^\w-]/g, (c) => `\\${c}`);
}

/** The text of a file in the page's OPFS (what the browser storage holds on disk). */
export function readOpfs(page, path) {
  return page.evaluate(async (p) => {
    let dir = await navigator.storage.getDirectory();
    const parts = p.split('/').filter(Boolean);
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
    return (await (await dir.getFileHandle(parts.at(-1))).getFile()).text();
  }, path);
}

/** Titles of the picker's list, in order. */
export function pickerTitles(page) {
  return page.locator('#picker-list .picker-item .pi-title').allInnerTexts();
}

/**
 * The element that shows message `index` of the conversation: its article, or for a tool
 * result drawn inside its call's card (the article then an empty marker), that card.
 */
export function messageAt(page, index) {
  return page.locator(`#conversation .msg[data-index="${index}"]:not(.msg-merged), #conversation [data-result-index="${index}"]`);
}

/**
 * In the page (`page.evaluate(contrastRatios, selector)`): the contrast ratio of each visible
 * element matching `selector`, its text against the first opaque background up the tree.
 */
export function contrastRatios(selector) {
  const rgb = (c) => (c.match(/[\d.]+/g) ?? []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => {
      const x = v / 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  return [...document.querySelectorAll(selector)]
    .filter((el) => el.textContent.trim() && el.getClientRects().length)
    .map((el) => {
      const a = lum(rgb(getComputedStyle(el).color).slice(0, 3));
      const b = lum(background(el));
      return { text: el.textContent.trim().slice(0, 40), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
    });
}

/** Asserts that every visible element matching `selector` has text contrast >= 4.5:1 (WCAG AA). */
export async function assertContrast(page, selector) {
  const seen = await page.evaluate(contrastRatios, selector);
  assert.ok(seen.length > 0, `nothing visible matches ${selector}`);
  for (const { text, ratio } of seen) assert.ok(ratio >= 4.5, `${selector} "${text}": ${ratio.toFixed(2)}:1 (< 4.5:1)`);
}
