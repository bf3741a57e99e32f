// The viewer's memory with a large session in the browser storage (OPFS): the session is
// streamed into OPFS, the page reloaded (the worker starts over and reads the storage the
// way it does), the session opened from the browser storage, then the renderer process's
// resident memory (the page and its worker live there) is read from /proc.
// Prints JSON: {fileBytes, rendererRssBytes, openMs, treeMs, timings} (timings: the worker's
// phases in ms, as the page got them: parse, context, tree; treeMs: from navigating to the
// tree's rows on screen, which come after the first render).
// Usage: node viewer-memory.mjs <web-root> <session.jsonl>
//   web-root: a directory served as the viewer (web-demo/, or an older copy of it)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { startServer } from '../scripts/lib/start-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const { chromium } = createRequire(path.join(ROOT, 'tests', 'package.json'))('playwright-core');
const [webRoot, session] = process.argv.slice(2);
const fileBytes = fs.statSync(session).size;
const served = path.join(webRoot, 'bench-memory-session.jsonl');
fs.copyFileSync(session, served);

const { child: server, url } = await startServer({ root: webRoot });
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-viewer-memory-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--renderer-process-limit=1'],
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(300_000);
  await page.goto(url);
  await page.locator('#conversation .msg').first().waitFor();
  const target = '/xcsh/agent/sessions/--work-bench--/bench-memory-session.jsonl';
  await page.evaluate(async (target) => {
    let dir = await navigator.storage.getDirectory();
    const names = target.split('/').filter(Boolean);
    const name = names.pop();
    for (const n of names) dir = await dir.getDirectoryHandle(n, { create: true });
    const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
    const res = await fetch('bench-memory-session.jsonl');
    await res.body.pipeTo(w);
  }, target);
  // Timed in the page, from the navigation's start (a test's polling would add up to its
  // interval): the session's first message on screen, and its tree's first row.
  await page.addInitScript(() => {
    const seen = (window.__seen = {});
    new MutationObserver(() => {
      const shown = document.querySelector('#session-bar [data-testid=chip-file]')?.textContent.includes('bench-memory-session.jsonl');
      if (shown && seen.render === undefined && document.querySelector('#conversation .msg')) seen.render = performance.now();
      if (shown && seen.tree === undefined && document.querySelector('#tree .node')) seen.tree = performance.now();
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(`${url}?source=opfs&path=${encodeURIComponent(target)}`);
  await page.waitForFunction(() => window.__seen.render !== undefined && window.__seen.tree !== undefined);
  const seen = await page.evaluate(() => window.__seen);
  const openMs = Math.round(seen.render);
  const treeMs = Math.round(seen.tree);
  const timings = await page.evaluate(async () => (await import('./state.js')).state.view?.timings ?? null);
  await page.waitForTimeout(2000);
  // The renderer: the largest process whose command line says --type=renderer (the page
  // and its worker; --renderer-process-limit=1 keeps them in one).
  let rss = 0;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmd;
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes('--type=renderer')) continue;
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    rss = Math.max(rss, kb * 1024);
  }
  process.stdout.write(`${JSON.stringify({ fileBytes, rendererRssBytes: rss, openMs, treeMs, timings })}\n`);
} finally {
  await context.close();
  server.kill('SIGTERM');
  fs.rmSync(profile, { recursive: true, force: true });
  fs.rmSync(served, { force: true });
}
