// The viewer's memory with a large session in the browser storage (OPFS): the session is
// streamed into OPFS, the page reloaded (the worker starts over and reads the storage the
// way it does), the session opened from the browser storage, then the renderer process's
// resident memory (the page and its worker live there) is read from /proc.
// Prints JSON: {fileBytes, rendererRssBytes, openMs}.
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
  const t0 = Date.now();
  await page.goto(`${url}?source=opfs&path=${encodeURIComponent(target)}`);
  await page.locator('#session-bar [data-testid=chip-file]', { hasText: 'bench-memory-session.jsonl' }).waitFor();
  await page.locator('#conversation .msg').first().waitFor();
  const openMs = Date.now() - t0;
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
  process.stdout.write(`${JSON.stringify({ fileBytes, rendererRssBytes: rss, openMs })}\n`);
} finally {
  await context.close();
  server.kill('SIGTERM');
  fs.rmSync(profile, { recursive: true, force: true });
  fs.rmSync(served, { force: true });
}
