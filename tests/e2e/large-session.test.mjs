// A large generated session opens without freezing the page: the worker parses it (with
// a progress bar) while the main thread keeps painting frames.
//
// The session is generated here from web-demo/samples/large-session.jsonl (migrated to v3
// by the Node build of the package), repeated with fresh 8-hex ids and a parentId chain
// until it reaches XCSH_E2E_LARGE_MB megabytes (default 20; 100 works, it takes ~4x longer).
//
// Also measured (printed with console.log, and checked): a load can be cancelled and leaves
// the open session; the session picker opens during a load (its time printed; target 200 ms);
// a branch switch on the main line cut from the context already built (printed; target 300 ms); importing into the browser storage, and a switch on that copy.
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
// Targets of the issue, printed beside the measurements (timings are reported, not asserted:
// the machines are shared; what is asserted is the behaviour that makes them reachable).
const PICKER_TARGET_MS = 200;
const SWITCH_TARGET_MS = 300;
/** Numbers for the report (console.log at the end). */
const measured = {};

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

  /** How the worker built the last selection's context, and in how many ms (tree.js notes it). */
  const workerSelect = async () => page.locator('#tree').evaluate((el) => ({ ms: Number(el.dataset.selectMs), how: el.dataset.selectHow }));

  after(async () => {
    await b?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test(`a load of the ~${MB} MB session can be cancelled: the open session stays`, async () => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    const title = await page.locator('#session-bar h1').innerText();
    // Hold the load until the page cancels it, so the click cannot come after a fast load
    // has finished: the page's request to open the file reaches the worker only when the
    // page sends its cancel, just before it (the worker then stops the load at its first
    // step). Patched on the prototype, so the page's worker, already running, is covered;
    // the next test's navigation drops the patch.
    await page.evaluate(() => {
      const post = Worker.prototype.postMessage;
      let held = null;
      Worker.prototype.postMessage = function hold(msg, ...rest) {
        if (msg?.op === 'openFile' && !held) {
          held = () => post.call(this, msg, ...rest);
          return;
        }
        if (msg?.op === 'cancel' && held) {
          held();
          held = null;
        }
        return post.call(this, msg, ...rest);
      };
    });
    await page.setInputFiles('#file-input', big.file);
    const cancel = page.getByRole('button', { name: `Stop opening ${big.name}` });
    await cancel.waitFor();
    const t0 = Date.now();
    await cancel.click();
    await page.locator('#progress').waitFor({ state: 'hidden' });
    measured.cancelMs = Date.now() - t0;
    await page.locator('[data-testid=load-status]', { hasText: `Stopped opening ${big.name}` }).waitFor();
    assert.equal(await page.locator('#session-bar h1').innerText(), title, 'the open session is still shown');
    // The worker drops the load at its next step; then the open session answers again.
    const t1 = Date.now();
    const other = page.locator('#tree .node:not(.selected)').first();
    const id = await other.getAttribute('data-id');
    await other.click();
    await page.locator(`#node-${cssEscape(id)}.selected`).waitFor();
    measured.afterCancelMs = Date.now() - t1;
    assert.equal(await page.locator('#session-bar h1').innerText(), title, 'still the same session after the worker is free');
    assert.equal(await page.locator('#session-bar [data-testid=chip-file]', { hasText: big.name }).count(), 0, 'the cancelled file is not shown');
    assert.equal(await page.getByText('finished opening before it could be stopped').count(), 0, 'the worker stopped the load');
    console.log(`cancel: the page is back on its session after ${measured.cancelMs} ms; the worker answered a click ${measured.afterCancelMs} ms later`);
    b.assertNoProblems();
  });

  test(`a ~${MB} MB session opens in the worker while the page keeps responding`, async (t) => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    // Watch the main thread from inside the page: the longest gap between animation
    // frames, whether the progress bar showed, and when the session first rendered.
    await page.evaluate((name) => {
      const w = (window.__watch = { maxGap: 0, frames: 0, progressSeen: false, progressMax: 0, firstRender: null, treeAt: null, buildingSeen: false, t0: performance.now() });
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
        if (document.querySelector('#tree [data-testid=tree-building]') && document.querySelector('#session-bar [data-testid=chip-file]')?.textContent.includes(name)) w.buildingSeen = true;
        if (w.treeAt === null && document.querySelector('#tree-meta')?.textContent.includes('entries') && document.querySelector('#session-bar [data-testid=chip-file]')?.textContent.includes(name)) {
          w.treeAt = now - w.t0;
        }
        if (!w.stop) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    }, big.name);
    const started = Date.now();
    await page.setInputFiles('#file-input', big.file);
    // The session picker opens during the load, from what the page already has.
    // At once: a busy machine can read and parse the file in well under a second, and the
    // picker must have opened before that (it never waits for the worker during a load).
    await page.locator('#progress').waitFor();
    // Timed in the page: from the key to the dialog open with a list in it.
    await page.evaluate(() => {
      const p = (window.__picker = { t0: null, t1: null });
      window.addEventListener('keydown', (e) => e.ctrlKey && e.key === 'k' && p.t0 === null && (p.t0 = performance.now()), { capture: true });
      const obs = new MutationObserver(() => {
        if (p.t0 !== null && document.querySelector('#picker[open] #picker-list li')) {
          obs.disconnect();
          p.t1 = performance.now();
          p.loading = !document.getElementById('progress').hidden;
        }
      });
      obs.observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    const k0 = Date.now();
    await page.keyboard.press('Control+k');
    await page.locator('#picker[open] #picker-list li').first().waitFor();
    await page.waitForFunction(() => window.__picker.t1 !== null);
    measured.pickerWallMs = Date.now() - k0;
    measured.pickerMs = await page.evaluate(() => Math.round(window.__picker.t1 - window.__picker.t0));
    const busy = await page.locator('#picker [data-testid=picker-busy]').count();
    await page.screenshot({ path: join(SCREENSHOTS, 'large-picker-during-load.png') });
    await page.keyboard.press('Escape');
    console.log(`picker open during the load: ${measured.pickerMs} ms in the page, ${measured.pickerWallMs} ms seen by the test (${busy ? 'from the page\'s list, marked as such' : 'the worker was already free'})`);
    console.log(`  (target <= ${PICKER_TARGET_MS} ms)`);
    assert.ok(await page.evaluate(() => window.__picker.loading), 'the picker had its list while the load was still running (it did not wait for the worker)');
    await fileChip(page, big.name);
    await page.locator('#conversation .msg').first().waitFor();
    const wall = Date.now() - started;
    await page.waitForFunction(() => window.__watch.firstRender !== null);
    const w = await page.evaluate(() => ({ ...window.__watch }));
    measured.firstRenderMs = Math.round(w.firstRender);
    const parsed = (await page.locator('#session-bar [data-testid=chip-file]').getAttribute('title')) ?? ''; // the load time is in the file chip's tooltip
    console.log(`${(big.bytes / 1024 / 1024).toFixed(1)} MB, ${big.entries} entries: first render after ${Math.round(w.firstRender)} ms (wall ${wall} ms), longest frame gap ${Math.round(w.maxGap)} ms over ${w.frames} frames, progress bar up to ${w.progressMax}%; session bar: ${parsed.match(/read in [\d,]+ ms/)?.[0] ?? '?'}`);
    t.diagnostic(`first render ${Math.round(w.firstRender)} ms`);
    assert.ok(w.progressSeen, 'the progress bar showed while loading');
    assert.ok(w.progressMax >= 10, `the progress bar advanced (${w.progressMax}%)`);
    assert.ok(w.maxGap < MAX_FRAME_GAP_MS, `the main thread kept painting: longest frame gap ${Math.round(w.maxGap)} ms`);
    assert.ok(w.frames > 10, `frames were painted while loading (${w.frames})`);
    assert.equal(await page.locator('#progress').isHidden(), true, 'the progress bar is gone');
    // The first screen does not wait for the tree: the tree pane says it is being built,
    // then the rows come.
    await page.locator('#tree-meta', { hasText: `${big.entries.toLocaleString('en-US')} entries` }).waitFor();
    await page.waitForFunction(() => window.__watch.treeAt !== null);
    const treeAt = await page.evaluate(() => window.__watch.treeAt);
    measured.treeAfterRenderMs = Math.round(treeAt - w.firstRender);
    console.log(`  the tree's rows ${measured.treeAfterRenderMs} ms after the first render`);
    assert.ok(await page.evaluate(() => window.__watch.buildingSeen), 'the tree pane said the tree was being built while the session was shown');
    assert.ok(treeAt > w.firstRender, `the conversation rendered (${Math.round(w.firstRender)} ms) before the tree was built (${Math.round(treeAt)} ms)`);
    const total = Number((await page.locator('#conv-meta').innerText()).match(/([\d,]+) messages/)[1].replace(/,/g, ''));
    assert.ok(total > 1000, `a long context: ${total} messages`);
    assert.ok((await page.locator('#conversation .msg').count()) <= 40, 'the conversation is rendered in a window');
    assert.ok((await page.locator('#tree .node').count()) < 200, 'the tree is virtual');
    // Rendered: the rows at the top, and the leaf (the last row: the keyboard's active row).
    const far = await page.locator('#tree .node').evaluateAll((els) => els.filter((e) => Number(e.dataset.index) > 200).map((e) => e.dataset.id));
    assert.deepEqual(far, [big.lastId], 'no row far down is in the DOM but the active one');
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
    measured.switchMs = clickMs;
    const worker = await workerSelect();
    measured.switchWorkerMs = worker.ms;
    console.log(`branch switch in the middle: ${clickMs} ms (the worker: ${worker.ms} ms, context ${worker.how}), longest frame gap ${Math.round(gap)} ms`);
    assert.ok(gap < MAX_FRAME_GAP_MS, `no freeze while switching (${Math.round(gap)} ms)`);
    assert.equal(worker.how, 'window', 'no context is built: the branch is counted and one window of it made');
    console.log(`  (target <= ${SWITCH_TARGET_MS} ms)`);
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

  test(`the ~${MB} MB session imports into the browser storage, and a switch there is quick too`, async () => {
    const t0 = Date.now();
    await page.locator('#import-btn').click();
    await page.locator('#session-bar [data-testid=chip-source]', { hasText: 'browser storage' }).waitFor();
    await page.locator('#progress').waitFor({ state: 'hidden' });
    measured.importMs = Date.now() - t0;
    console.log(`import into the browser storage: ${measured.importMs} ms`);
    await page.locator('#tree').evaluate((el) => (el.scrollTop = el.scrollHeight / 3));
    await page.waitForFunction(() => {
      const box = document.querySelector('#tree').getBoundingClientRect();
      return document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)?.closest('.node:not(.selected)');
    });
    const id = await page.evaluate(() => {
      const box = document.querySelector('#tree').getBoundingClientRect();
      return document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2).closest('.node').dataset.id;
    });
    const t1 = Date.now();
    await page.locator(`#node-${cssEscape(id)}`).click();
    await page.locator(`#node-${cssEscape(id)}.selected`).waitFor();
    measured.switchStoredMs = Date.now() - t1;
    const worker = await workerSelect();
    measured.switchStoredWorkerMs = worker.ms;
    console.log(`branch switch on the stored copy: ${measured.switchStoredMs} ms (the worker: ${worker.ms} ms, context ${worker.how})`);
    console.log(`measured at ${MB} MB: ${JSON.stringify(measured)}`);
    assert.equal(worker.how, 'window');

    b.assertNoProblems();
  });

  test(`while the stored copy's tree is built, what needs it waits: the address's branch, a message's entry`, async () => {
    // Watches the page as it opens (from the browser storage): whether the tree was being
    // built while the conversation was shown, and clicks the first message's #n then.
    await page.addInitScript(() => {
      const w = (window.__early = { building: false, clicked: null });
      new MutationObserver(() => {
        if (!document.querySelector('#tree [data-testid=tree-building]')) return;
        w.building = true;
        const link = document.querySelector('#conversation .msg .entry-link');
        if (link && w.clicked === null) {
          w.clicked = link.dataset.entry;
          link.click();
        }
      }).observe(document, { subtree: true, childList: true });
    });
    const leaf = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('leaf');
    assert.ok(leaf, `the address names the branch shown (${page.url()})`);
    // Reopened at that address: the branch is restored once the rows say the entry is there.
    await page.reload();
    await page.locator(`#node-${cssEscape(leaf)}.selected`).waitFor();
    assert.ok(await page.evaluate(() => window.__early.building), 'the tree was still being built when the session was shown');
    assert.equal(await page.locator('#banner').isHidden(), true, 'no “not in this session” banner');
    // Its own branch: the #n clicked before the rows came shows that entry once they do.
    await page.goto(page.url().split('#')[0]);
    await page.waitForFunction(() => window.__early.clicked !== null);
    const clicked = await page.evaluate(() => window.__early.clicked);
    await page.locator('#inspector-meta', { hasText: clicked }).waitFor();
    b.assertNoProblems();
  });
});
