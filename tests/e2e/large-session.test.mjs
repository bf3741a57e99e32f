// A large generated session opens without freezing the page: the worker parses it (with
// a progress bar) while the main thread keeps painting frames.
//
// The session is generated here from web-demo/samples/large-session.jsonl (migrated to v3
// by the Node build of the package), repeated with fresh 8-hex ids and a parentId chain
// until it reaches XCSH_E2E_LARGE_MB megabytes (default 20; 100 works, it takes ~4x longer).
//
// Run: scripts/test-e2e   (XCSH_E2E_LARGE_MB=100 scripts/test-e2e --no-build for the big one)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, SCREENSHOTS, cssEscape, fileChip, openBrowser } from './helpers.mjs';

const MB = Number(process.env.XCSH_E2E_LARGE_MB ?? 20);
const MAX_FRAME_GAP_MS = 500;

/** Writes a v3 session of about `mb` MB; returns {file, entries, bytes, lastId}. */
async function generate(dir, mb) {
  const pkgFile = join(ROOT, 'pkg', 'node.mjs');
  assert.ok(existsSync(pkgFile), 'pkg/node.mjs (the package) is missing: run scripts/build-js');
  const { Session } = await import(pkgFile);
  const source = await readFile(join(ROOT, 'web-demo', 'samples', 'large-session.jsonl'), 'utf8');
  const s = Session.fromText(source);
  const lines = s.toJsonl().split('\n').filter(Boolean);
  s.free();
  const header = { ...JSON.parse(lines[0]), version: 3, title: `Generated large session (${mb} MB)` };
  const entries = lines.slice(1).map((l) => JSON.parse(l));
  const target = mb * 1024 * 1024;
  const out = [JSON.stringify(header)];
  let bytes = out[0].length + 1;
  let next = 0x10000000;
  let prev = null;
  let count = 0;
  while (bytes < target) {
    const ids = new Map(entries.map((e) => [e.id, (next++).toString(16)]));
    for (const e of entries) {
      const c = { ...e, id: ids.get(e.id), parentId: e.parentId == null ? prev : ids.get(e.parentId) ?? prev };
      for (const k of ['firstKeptEntryId', 'targetId', 'fromId']) if (typeof c[k] === 'string') c[k] = ids.get(c[k]) ?? c[k];
      const line = JSON.stringify(c);
      out.push(line);
      bytes += Buffer.byteLength(line) + 1;
      count++;
    }
    prev = ids.get(entries.at(-1).id);
  }
  const file = join(dir, `generated-${mb}mb.jsonl`);
  await writeFile(file, `${out.join('\n')}\n`);
  return { file, name: `generated-${mb}mb.jsonl`, entries: count, bytes, lastId: prev };
}

describe('large session', { timeout: 600_000 }, () => {
  let b;
  let page;
  let server;
  let tmp;
  let big;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'xcsh-e2e-large-'));
    big = await generate(tmp, MB);
    b = await openBrowser();
    ({ page, server } = b);
    page.setDefaultTimeout(180_000);
  });

  after(async () => {
    await b?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test(`a ~${MB} MB session opens in the worker while the page keeps responding`, async (t) => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    // Watch the main thread from inside the page: the longest gap between animation
    // frames, whether the progress bar showed, and when the session first rendered.
    await page.evaluate((name) => {
      const w = (window.__watch = { maxGap: 0, frames: 0, progressSeen: false, progressMax: 0, firstRender: null, t0: performance.now() });
      let last = performance.now();
      const tick = (now) => {
        w.maxGap = Math.max(w.maxGap, now - last);
        last = now;
        w.frames++;
        const p = document.getElementById('progress');
        if (!p.hidden) {
          w.progressSeen = true;
          w.progressMax = Math.max(w.progressMax, Number(p.getAttribute('aria-valuenow')));
        }
        if (w.firstRender === null && document.querySelector('#session-bar [data-testid=chip-file]')?.textContent.includes(name) && document.querySelector('#conversation .msg')) {
          w.firstRender = now - w.t0;
        }
        if (!w.stop) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    }, big.name);
    const started = Date.now();
    await page.setInputFiles('#file-input', big.file);
    await fileChip(page, big.name);
    await page.locator('#conversation .msg').first().waitFor();
    const wall = Date.now() - started;
    await page.waitForFunction(() => window.__watch.firstRender !== null);
    const w = await page.evaluate(() => ({ ...window.__watch }));
    t.diagnostic(`${(big.bytes / 1024 / 1024).toFixed(1)} MB, ${big.entries} entries: first render after ${Math.round(w.firstRender)} ms (wall ${wall} ms), longest frame gap ${Math.round(w.maxGap)} ms over ${w.frames} frames, progress bar up to ${w.progressMax}%`);
    assert.ok(w.progressSeen, 'the progress bar showed while loading');
    assert.ok(w.progressMax >= 10, `the progress bar advanced (${w.progressMax}%)`);
    assert.ok(w.maxGap < MAX_FRAME_GAP_MS, `the main thread kept painting: longest frame gap ${Math.round(w.maxGap)} ms`);
    assert.ok(w.frames > 10, `frames were painted while loading (${w.frames})`);
    assert.equal(await page.locator('#progress').isHidden(), true, 'the progress bar is gone');
    assert.equal(await page.locator('#tree-meta').innerText(), `${big.entries.toLocaleString('en-US')} entries`);
    const total = Number((await page.locator('#conv-meta').innerText()).match(/([\d,]+) messages/)[1].replace(/,/g, ''));
    assert.ok(total > 1000, `a long context: ${total} messages`);
    assert.ok((await page.locator('#conversation .msg').count()) <= 40, 'the conversation is rendered in a window');
    assert.ok((await page.locator('#tree .node').count()) < 200, 'the tree is virtual');
    assert.equal(await page.locator(`#node-${big.lastId}`).count(), 0, 'the last row is not in the DOM until scrolled to');
    await page.screenshot({ path: join(SCREENSHOTS, 'large-generated.png') });

    // Click an entry in the middle of the tree: the page stays responsive and shows the end
    // of that branch.
    await page.locator('#tree').evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
    await page.waitForFunction(() => {
      const box = document.querySelector('#tree').getBoundingClientRect();
      return document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)?.closest('.node');
    });
    const id = await page.evaluate(() => {
      const box = document.querySelector('#tree').getBoundingClientRect();
      return document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2).closest('.node').dataset.id;
    });
    await page.evaluate(() => {
      window.__watch.maxGap = 0;
    });
    const clicked = Date.now();
    await page.locator(`#node-${cssEscape(id)}`).click();
    await page.locator(`#node-${cssEscape(id)}.selected`).waitFor();
    const clickMs = Date.now() - clicked;
    const gap = await page.evaluate(() => window.__watch.maxGap);
    t.diagnostic(`branch switch in the middle: ${clickMs} ms, longest frame gap ${Math.round(gap)} ms`);
    assert.ok(gap < MAX_FRAME_GAP_MS, `no freeze while switching (${Math.round(gap)} ms)`);
    const shown = Number((await page.locator('#conv-meta').innerText()).match(/([\d,]+) messages/)[1].replace(/,/g, ''));
    assert.ok(shown < total, 'an earlier point of the chain has a shorter context');
    assert.equal(Number(await page.locator('#conversation .msg').last().getAttribute('data-index')), shown - 1, 'the end of the selected branch is shown');

    // Scrolling up loads earlier messages in windows.
    const before = await page.locator('#conversation .msg').count();
    await page.locator('#conversation').evaluate((c) => (c.scrollTop = 0));
    await page.waitForFunction((n) => document.querySelectorAll('#conversation .msg').length > n, before);
    await page.evaluate(() => {
      window.__watch.stop = true;
    });
    b.assertNoProblems();
  });
});
