// The viewer's memory with a large session in the browser storage (OPFS): the session is
// streamed into OPFS, the page reloaded (the worker starts over and reads the storage the
// way it does), the session opened from the browser storage, then the renderer process's
// resident memory (the page and its worker live there) is read from /proc.
// Prints JSON: {fileBytes, rendererRssBytes, openMs, treeMs, timings, second} (timings: the
// worker's phases in ms, as the page got them: parse, context, tree; treeMs: from
// navigating to the tree's rows on screen, which come after the first render; `second`:
// {openMs, treeMs, timings, opened}, the second visit, the page reloaded and the same
// session opened again, with the index cache the first visit wrote; `opened`: how the
// worker opened it, {lazy, readBytes}).
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
  const visit = async () => {
    await page.goto(`${url}?source=opfs&path=${encodeURIComponent(target)}`);
    await page.waitForFunction(() => window.__seen.render !== undefined && window.__seen.tree !== undefined);
    const seen = await page.evaluate(() => window.__seen);
    const { timings, opened } = await page.evaluate(async () => {
      const v = (await import('./state.js')).state.view;
      return { timings: v?.timings ?? null, opened: v?.opened ?? null };
    });
    return { openMs: Math.round(seen.render), treeMs: Math.round(seen.tree), timings, opened };
  };
  const { openMs, treeMs, timings, opened } = await visit();
  await page.waitForTimeout(2000);
  const rendererRssBytes = rendererRss();
  const interactions = await interact(page);
  await page.waitForTimeout(2000);
  const rssAfterBytes = rendererRss();
  // The second visit: reloaded (a new worker), the same session opened the same way.
  const second = await visit();
  process.stdout.write(`${JSON.stringify({ fileBytes, rendererRssBytes, rssAfterBytes, openMs, treeMs, timings, opened, ...interactions, second })}\n`);
} finally {
  await context.close();
  server.kill('SIGTERM');
  fs.rmSync(profile, { recursive: true, force: true });
  fs.rmSync(served, { force: true });
}

/** The renderer's resident memory now (bytes). */
function rendererRss() {
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
  return rss;
}

/**
 * What a reader does after the first screen, timed in the page:
 * - `switchMs`: 20 branch switches (`selectEntry`, what a click or Enter on a tree row does:
 *   the worker builds that entry's branch and the page shows it), among the root, a quarter,
 *   the middle, three quarters and the leaf of the tree, each to the second frame painted;
 * - `find`: five searches typed in the find bar, each from its input event to the first hit
 *   listed (`firstHitMs`, the 150 ms typing debounce included) and to the last (`allMs`),
 *   over the whole branch (the last switch leaves the leaf's branch shown);
 * - `cancelMs`: a search that finds nothing (so it reads every message), closed with Esc
 *   as soon as it says it runs, until the worker answers the next request.
 */
async function interact(page) {
  const switchMs = await page.evaluate(async () => {
    const { state } = await import('./state.js');
    const { selectEntry } = await import('./tree.js');
    const { ids } = state.rows;
    const n = ids.length;
    const picks = [0, n >> 2, n >> 1, (3 * n) >> 2, n - 1];
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const out = [];
    for (let k = 0; k < 20; k++) {
      const t = performance.now();
      await selectEntry(ids[picks[k % picks.length]]);
      await frames();
      out.push(performance.now() - t);
    }
    return out;
  });
  await page.locator('#conversation').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+f');
  await page.locator('#find-query').waitFor();
  const find = await page.evaluate(async (queries) => {
    const field = document.getElementById('find-query');
    const status = document.getElementById('find-status');
    const hits = document.getElementById('find-hits');
    const out = [];
    for (const query of queries) {
      const t0 = performance.now();
      let started = false;
      let firstHitMs = null;
      hits.replaceChildren(); // the last query's rows stay until the new one's first report
      // Every change of the status and the hit list is seen (an observer, not a poll: a
      // search of a short branch can start and end between two frames).
      await new Promise((resolve) => {
        const seen = new MutationObserver(() => {
          const text = status.textContent;
          if (/Searching/.test(text)) started = true;
          if (firstHitMs === null && started && hits.querySelector('.find-hit-row')) firstHitMs = performance.now() - t0;
          if (started && !/Searching/.test(text)) {
            seen.disconnect();
            resolve();
          }
        });
        for (const el of [status, hits]) seen.observe(el, { childList: true, subtree: true, characterData: true });
        field.value = query;
        field.dispatchEvent(new Event('input', { bubbles: true }));
      });
      out.push({ query, firstHitMs, allMs: performance.now() - t0, status: status.textContent });
    }
    return out;
  }, ['error', 'function', 'cargo test', 'README', 'thanks']);
  const cancelMs = await page.evaluate(async () => {
    const { call } = await import('./rpc.js');
    const field = document.getElementById('find-query');
    const status = document.getElementById('find-status');
    // Closed as soon as the search says it runs (with a percentage where it reports one);
    // a branch short enough to be searched in one step is closed as it starts.
    const t0 = await new Promise((resolve) => {
      const seen = new MutationObserver(() => {
        if (!/Searching/.test(status.textContent)) return;
        seen.disconnect();
        const t = performance.now();
        field.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
        resolve(t);
      });
      seen.observe(status, { childList: true, subtree: true, characterData: true });
      field.value = 'zq-nowhere-xv';
      field.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await call('sources');
    return performance.now() - t0;
  });
  return { switchMs, find, cancelMs };
}
