// The second visit of a session in the browser storage (OPFS) opens through the index
// cache the first visit wrote there: the worker reads the cached index and the lines the
// first screen shows, not the file (`state.view.opened`: {lazy, readBytes}, the bytes the
// open and the first screen read), and shows the same conversation. A cache gone stale
// (the file appended to, or replaced, between visits) still shows what the file holds.
//
// Run: scripts/test-e2e   (or `node --test tests/e2e/second-visit.test.mjs` once built)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT, fileChip, openBrowser } from './helpers.mjs';

const DIR = '/xcsh/agent/sessions/--e2e-second-visit--';
const NAME = 'second-visit.jsonl';
const TARGET = `${DIR}/${NAME}`;

/**
 * A session of `n` long exchanges, then a compaction keeping the last one (the context,
 * and the first screen, are a few messages of a file of megabytes), written by the
 * package; and the same session with `more` appended: {text, appended}.
 */
async function generate(dir, { n, title, more }) {
  const pkgFile = join(ROOT, 'pkg', 'node.mjs');
  assert.ok(existsSync(pkgFile), 'pkg/node.mjs (the package) is missing: run scripts/build-js');
  const { Session, nodeStorage } = await import(pkgFile);
  const s = Session.create(nodeStorage(), { agentDir: join(dir, 'agent'), cwd: '/e2e' });
  const text = (t) => [{ type: 'text', text: t }];
  let kept;
  for (let i = 0; i < n; i++) {
    s.appendMessage({ role: 'user', content: text(`${title} question ${i} ${'x'.repeat(3000)}`), timestamp: 10 + 2 * i });
    kept = s.appendMessage({ role: 'assistant', content: text(`${title} answer ${i} ${'y'.repeat(3000)}`), api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: 11 + 2 * i });
  }
  s.appendCompaction({ summary: `${title}: the summary of the earlier work`, firstKeptEntryId: kept, tokensBefore: 1000 });
  s.appendMessage({ role: 'user', content: text(`${title}: go on`), timestamp: 100_000 });
  const file = s.file;
  const before = await readFile(file, 'utf8');
  s.appendMessage({ role: 'user', content: text(more), timestamp: 100_001 });
  s.free();
  const after = await readFile(file, 'utf8');
  assert.ok(after.startsWith(before));
  return { text: before, appended: after.slice(before.length) };
}

/** The page's modules: those app.js imports, directly or not (static imports), relative to web-demo/. */
function pageModules() {
  const web = join(ROOT, 'web-demo');
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^import\s(?:[^;]*?\sfrom\s)?'(\.[^']+)'/gms)) walk(resolve(dirname(file), m[1]));
  };
  walk(join(web, 'app.js'));
  return [...seen].map((f) => relative(web, f)).filter((f) => f !== 'app.js').sort();
}

test('the page asks for all its modules at once: index.html preloads every module app.js imports', async () => {
  const html = await readFile(join(ROOT, 'web-demo', 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort();
  assert.deepEqual(preloaded, pageModules());
});

describe('the second visit of a browser-storage session', { timeout: 240_000 }, () => {
  let b;
  let page;
  let server;
  let tmp;
  let first;
  let other;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'xcsh-e2e-second-'));
    first = await generate(join(tmp, 'a'), { n: 300, title: 'Cached', more: 'appended between the visits' });
    other = await generate(join(tmp, 'b'), { n: 20, title: 'Replacing', more: 'unused' });
    b = await openBrowser();
    ({ page, server } = b);
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
  });

  after(async () => {
    await b?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** Writes `text` to the OPFS file (appended to what is there with `append`). */
  const writeOpfs = (text, { append = false } = {}) =>
    page.evaluate(
      async ([dirPath, name, content, keep]) => {
        let dir = await navigator.storage.getDirectory();
        for (const part of dirPath.split('/').filter(Boolean)) dir = await dir.getDirectoryHandle(part, { create: true });
        const handle = await dir.getFileHandle(name, { create: true });
        const w = await handle.createWritable({ keepExistingData: keep });
        if (keep) await w.seek((await handle.getFile()).size);
        await w.write(content);
        await w.close();
      },
      [DIR, NAME, text, append],
    );

  /** The names of the index cache's files in OPFS. */
  const cacheFiles = () =>
    page.evaluate(async () => {
      let dir = await navigator.storage.getDirectory();
      try {
        for (const part of ['xcsh', 'agent', 'cache', 'index']) dir = await dir.getDirectoryHandle(part);
      } catch {
        return [];
      }
      const out = [];
      for await (const [name] of dir.entries()) out.push(name);
      return out;
    });

  /**
   * Loads the viewer on the session (a new page and worker, as a visit is), waits for its
   * conversation and its tree; what it shows and how the worker opened it.
   */
  async function visit(wanted) {
    await page.goto(`${server.url}?source=opfs&path=${encodeURIComponent(TARGET)}`);
    await fileChip(page, NAME);
    await page.locator('#conversation .msg', { hasText: wanted }).first().waitFor();
    await page.locator('#tree .node').first().waitFor();
    const view = await page.evaluate(async () => (await import('./state.js')).state.view);
    const messages = await page.locator('#conversation .msg').allInnerTexts();
    return { opened: view.opened, size: view.size, title: view.title, messages };
  }

  test('opens through the index cache the first visit wrote, reading a few lines, and shows the same conversation', async () => {
    const size = Buffer.byteLength(first.text);
    await writeOpfs(first.text);
    const one = await visit('Cached: go on');
    assert.equal(one.size, size);
    assert.equal(one.opened.lazy, true, 'opened through an index');
    assert.ok(one.opened.readBytes >= size, `the first visit scans the file (read ${one.opened.readBytes} of ${size} bytes)`);
    assert.equal((await cacheFiles()).filter((n) => n.endsWith('.idx')).length, 1, 'the first visit wrote the index cache to OPFS');
    const two = await visit('Cached: go on');
    assert.equal(two.opened.lazy, true);
    assert.ok(two.opened.readBytes < size / 4, `the second visit reads the cached index and the lines shown (read ${two.opened.readBytes} of ${size} bytes)`);
    assert.deepEqual(two.messages, one.messages, 'the same conversation');
    assert.match(two.messages[0], /Cached: the summary of the earlier work/);
    assert.equal(two.title, one.title);
    b.assertNoProblems();
  });

  test('an opened folder keeps its index cache in the browser storage: opened again, its session is read through it', async () => {
    const folder = join(tmp, 'a', 'agent'); // the first session, with its last message appended
    const shown = [];
    for (let time = 0; time < 2; time++) {
      await page.goto(server.url);
      await page.locator('#conversation .msg').first().waitFor();
      await page.locator('#open-picker').click();
      await page.setInputFiles('#folder-input', folder);
      await page.locator('#picker-sources [data-source=opened].active .count', { hasText: '1' }).waitFor();
      if (await page.locator('#picker-scope[data-scope=project]').count()) await page.locator('#picker-scope').click();
      await page.locator('#picker-list .picker-item', { hasText: 'Cached question 0' }).click();
      await page.locator('#conversation .msg', { hasText: 'appended between the visits' }).waitFor();
      const view = await page.evaluate(async () => (await import('./state.js')).state.view);
      assert.equal(view.source, 'opened');
      shown.push({ opened: view.opened, size: view.size, messages: await page.locator('#conversation .msg').allInnerTexts() });
    }
    const size = shown[1].size;
    assert.equal(shown[1].opened.lazy, true, 'opened through an index');
    assert.equal(typeof shown[1].opened.readBytes, 'number');
    assert.ok(shown[1].opened.readBytes < size / 4, `opened again, it reads the cached index and the lines shown (read ${shown[1].opened.readBytes} of ${size} bytes)`);
    assert.deepEqual(shown[1].messages, shown[0].messages);
    b.assertNoProblems();
  });

  test('a stale cache: the file appended to, then replaced, between visits, is shown as it is', async () => {
    await writeOpfs(first.appended, { append: true });
    const appended = await visit('appended between the visits');
    assert.equal(appended.size, Buffer.byteLength(first.text + first.appended));
    assert.match(appended.messages.at(-1), /appended between the visits/);
    assert.ok(appended.opened.readBytes < appended.size / 4, `the cached index, the bytes appended since scanned (read ${appended.opened.readBytes} bytes)`);
    await writeOpfs(other.text);
    const replaced = await visit('Replacing: go on');
    assert.equal(replaced.size, Buffer.byteLength(other.text));
    assert.match(replaced.messages[0], /Replacing: the summary of the earlier work/);
    assert.ok(!replaced.messages.some((m) => /Cached|appended between/.test(m)), 'nothing of the file it replaced');
    assert.match(replaced.title, /Replacing question 0/);
    b.assertNoProblems();
  });
});
