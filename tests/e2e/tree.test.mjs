// End-to-end tests of the tree (tree.js): depth-first order with a new branch right under its
// branch point, collapse / expand (aria-expanded, ←/→), the filter (text, entry type),
// "Jump to current leaf", previews over the row's width, the keyboard moving the active row
// only (Enter shows the branch), aria-activedescendant naming a row in the DOM; the links
// panel reached and left by keyboard; and a hostile session that stays inert.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SCREENSHOTS, dropFile, fileChip, suiteBrowser } from './helpers.mjs';

const T0 = Date.parse('2026-03-01T10:00:00Z');
const hex = (n) => (0x70000000 + n).toString(16);

/**
 * A session of `main` entries in a line, then (later in the file) a side branch of `side`
 * entries from main entry `from`: the case where the branch used to be listed at the bottom.
 */
function branchySession({ main = 60, from = 5, side = 3 } = {}) {
  const lines = [JSON.stringify({ type: 'session', version: 3, id: 'tree-test-session', timestamp: new Date(T0).toISOString(), cwd: '/work/tree', title: 'Tree test' })];
  let t = T0;
  const msg = (id, parentId, role, text) => {
    t += 1000;
    const message = role === 'user' ? { role, content: text, timestamp: t } : { role, content: [{ type: 'text', text }], provider: 'anthropic', model: 'claude-test', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: t };
    lines.push(JSON.stringify({ type: 'message', id, parentId, timestamp: new Date(t).toISOString(), message }));
  };
  for (let i = 0; i < main; i++) msg(hex(i), i ? hex(i - 1) : null, i % 2 ? 'assistant' : 'user', `main step ${i}: ${'a long line of text that goes on and on so that a preview can use the whole width of the row '.repeat(2)}`);
  for (let j = 0; j < side; j++) msg(hex(1000 + j), j ? hex(1000 + j - 1) : hex(from), j % 2 ? 'user' : 'assistant', `side branch step ${j}`);
  return `${lines.join('\n')}\n`;
}

describe('the tree', { timeout: 240_000 }, () => {
  let page;
  let server;
  const b = suiteBrowser((opened) => ({ page, server } = opened));

  const row = (id) => page.locator(`#node-${id}`);
  // A row's box once it is shown (the tree renders its rows after the first screen, and
  // again as the selection settles: under load a row can come a frame later).
  const box = async (id) => {
    await row(id).waitFor({ timeout: 10_000 }).catch(() => assert.fail(`row ${id} is not shown`));
    return (await row(id).boundingBox()) ?? assert.fail(`row ${id} is not shown`);
  };
  const activeId = () => page.locator('#tree').getAttribute('aria-activedescendant');

  async function openBranchy(name = 'tree-test.jsonl', opts) {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await dropFile(page, name, branchySession(opts));
    await fileChip(page, name);
    // The tree's rows come after the first screen (one answer of the worker, all at once):
    // this file's first row, not one left from the page's sample.
    await row(hex(0)).waitFor();
  }

  test('a new branch is listed right under its branch point, indented, and collapses', async () => {
    await openBranchy();
    // The side branch (last in the file) comes right after main entry 5, before main entry 6.
    const fork = await box(hex(5));
    const first = await box(hex(1000));
    const next = await box(hex(6));
    assert.ok(Math.abs(first.y - (fork.y + fork.height)) < 2, `the branch's first entry is the row under its branch point (${first.y} vs ${fork.y + fork.height})`);
    assert.ok(next.y > first.y, 'the main line goes on below the side branch');
    const tagX = async (id) => (await row(id).locator('.tag').boundingBox()).x;
    assert.ok((await tagX(hex(1000))) > (await tagX(hex(5))) + 6, 'the branch is indented under its branch point');
    assert.equal(await row(hex(5)).getAttribute('aria-expanded'), 'true', 'a branch point says it is expanded');
    assert.equal(await row(hex(4)).getAttribute('aria-expanded'), null, 'an entry without branches has no aria-expanded');
    await page.screenshot({ path: join(SCREENSHOTS, 'tree-branch-order.png') });

    // Collapse with ← on the branch point (keyboard), expand with →.
    await row(hex(5)).locator('.twisty').click();
    assert.equal(await row(hex(5)).getAttribute('aria-expanded'), 'false', 'the twisty collapses');
    assert.equal(await row(hex(1000)).count(), 0, 'the branch is hidden');
    assert.equal(await row(hex(6)).count(), 0, 'so is the line after the branch point');
    assert.match(await row(hex(5)).innerText(), /\+57/, 'the row counts the hidden entries');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'tree', 'the tree keeps the keyboard');
    assert.equal(await activeId(), `node-${hex(5)}`);
    await page.keyboard.press('ArrowRight');
    assert.equal(await row(hex(5)).getAttribute('aria-expanded'), 'true', '→ expands');
    await row(hex(1000)).waitFor();
    await page.keyboard.press('ArrowLeft');
    assert.equal(await row(hex(5)).getAttribute('aria-expanded'), 'false', '← collapses');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight'); // on an expanded branch point: to its first child
    assert.equal(await activeId(), `node-${hex(1000)}`);
    await page.keyboard.press('ArrowLeft'); // inside a branch: back to its branch point
    assert.equal(await activeId(), `node-${hex(5)}`);
    b.assertNoProblems();
  });

  test('arrow keys move the active row only; Enter shows its branch', async () => {
    await openBranchy('tree-keys.jsonl');
    // The session's leaf is the side branch's last entry (the last line of the file).
    await page.locator(`#node-${hex(1002)}.selected`).waitFor();
    const sideMeta = await page.locator('#conv-meta').innerText();
    assert.match(sideMeta, /^9 messages/, '6 entries of the main line and 3 of the branch');
    await page.locator('#tree').focus();
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    assert.equal(await activeId(), `node-${hex(1000)}`, 'two rows up');
    await page.waitForTimeout(500); // longer than any debounce: still nothing switched
    assert.equal(await page.locator('#conv-meta').innerText(), sideMeta, 'moving does not switch the conversation');
    assert.equal(await page.locator(`#node-${hex(1002)}.selected`).count(), 1);
    assert.equal(await page.locator(`#node-${hex(1000)}.active`).count(), 1, 'the active row is marked');
    const ring = await row(hex(1000)).evaluate((el) => getComputedStyle(el).outlineStyle);
    assert.equal(ring, 'solid', 'the active row shows a focus ring');
    await page.keyboard.press('Enter');
    await page.locator(`#node-${hex(1000)}.selected`).waitFor();
    assert.match(await page.locator('#conv-meta').innerText(), /^7 messages/, 'Enter switched the conversation');
    b.assertNoProblems();
  });

  test('aria-activedescendant names a row in the DOM after the tree is scrolled', async () => {
    await page.goto(`${server.url}?sample=large-session.jsonl`);
    await page.locator('#tree-meta', { hasText: '1,018 entries' }).waitFor();
    await page.locator('#tree').focus();
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    const id = await activeId();
    assert.ok(id, 'the tree names its active row');
    await page.locator('#tree').evaluate((t) => (t.scrollTop = t.scrollHeight));
    await page.waitForFunction(() => document.querySelector('#tree').scrollTop > 1000);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const after = await activeId();
    assert.equal(after, id, 'scrolling does not move the active row');
    assert.equal(await page.evaluate((i) => Boolean(document.getElementById(i)?.closest('#tree')), after), true, `#${after} is in the tree's DOM`);
    assert.ok((await page.locator('#tree .node').count()) < 120, 'the tree is still a virtual list');
    b.assertNoProblems();
  });

  test('Jump to current leaf scrolls to the shown branch end and gives it the keyboard', async () => {
    const leaf = await page.locator('#tree .node.selected').count() ? await page.locator('#tree .node.selected').getAttribute('data-id') : null;
    await page.locator('#tree').evaluate((t) => (t.scrollTop = 0));
    await page.waitForFunction(() => document.querySelector('#tree').scrollTop === 0);
    const selectedId = leaf ?? (await page.evaluate(() => document.querySelector('#conversation .msg:last-child')?.dataset.entry));
    await page.getByRole('button', { name: 'Jump to current leaf' }).click();
    const sel = page.locator('#tree .node.selected');
    await sel.waitFor();
    const tree = await page.locator('#tree').boundingBox();
    const r = await sel.boundingBox();
    assert.ok(r.y >= tree.y - 1 && r.y + r.height <= tree.y + tree.height + 1, `the leaf is inside the tree viewport (row ${JSON.stringify(r)}, tree ${JSON.stringify(tree)})`);
    assert.equal(await activeId(), `node-${await sel.getAttribute('data-id')}`, 'the keyboard is on the leaf');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'tree');
    assert.ok(selectedId === null || selectedId === (await sel.getAttribute('data-id')));
    b.assertNoProblems();
  });

  test('the filter: by text and by entry type, with a count; the leaf is revealed by Jump', async () => {
    await openBranchy('tree-filter.jsonl');
    await page.locator('#tree-filter').fill('side branch');
    await page.locator('#tree-filter-count', { hasText: '3 of 63 shown' }).waitFor();
    const texts = await page.locator('#tree .node .preview').allInnerTexts();
    assert.equal(texts.length, 3);
    for (const t of texts) assert.match(t, /side branch/);
    await page.locator('#tree-filter').fill('');
    await page.locator('#tree-type').selectOption('user');
    await page.locator('#tree-filter-count', { hasText: /of 63 shown/ }).waitFor();
    const classes = await page.locator('#tree .node').evaluateAll((els) => els.map((e) => e.className));
    assert.ok(classes.length > 10);
    for (const c of classes) assert.match(c, /\bt-user\b/, 'only user entries');
    await page.screenshot({ path: join(SCREENSHOTS, 'tree-filter.png') });
    // The leaf is an assistant entry: Jump shows it again (the filter goes).
    await page.getByRole('button', { name: 'Jump to current leaf' }).click();
    await page.locator('#tree .node.selected').waitFor();
    assert.equal(await page.locator('#tree-type').inputValue(), '');
    await page.locator('#tree-filter').fill('no such text anywhere');
    await page.locator('#tree-empty').waitFor();
    await page.locator('#tree-filter').fill('');
    await page.locator('#tree-empty').waitFor({ state: 'hidden' });
    b.assertNoProblems();
  });

  test('previews use the width of the row, with the whole text in the tooltip', async () => {
    await openBranchy('tree-width.jsonl');
    const preview = row(hex(10)).locator('.preview');
    const text = await preview.innerText();
    assert.ok(text.length > 100, `the preview holds a long text (${text.length} characters), cut by CSS only`);
    // Read from the row in the document: the virtual list may draw its rows again between
    // resolving a locator and evaluating on it (a detached element has no computed style).
    const w = await (await page.waitForFunction((id) => {
      const el = document.querySelector(`#node-${id} .preview`);
      const overflow = el?.isConnected ? getComputedStyle(el).textOverflow : '';
      return overflow ? { client: el.clientWidth, scroll: el.scrollWidth, overflow } : null;
    }, hex(10))).jsonValue();
    const rowW = (await row(hex(10)).boundingBox()).width;
    assert.equal(w.overflow, 'ellipsis');
    assert.ok(w.client > rowW * 0.55, `the preview takes most of the row (${w.client} of ${rowW} px)`);
    assert.match(await row(hex(10)).getAttribute('title'), /main step 10: a long line of text/);
    await page.screenshot({ path: join(SCREENSHOTS, 'tree-desktop.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const phone = await row(hex(10)).locator('.preview').evaluate((el) => el.clientWidth);
    assert.ok(phone > 150, `on a phone the preview is still ${phone} px wide`);
    const tools = await page.locator('.tree-tools').boundingBox();
    assert.ok(tools.width <= 390, 'the filter bar fits the phone');
    await page.screenshot({ path: join(SCREENSHOTS, 'tree-phone.png') });
    await page.setViewportSize({ width: 1440, height: 900 });
    b.assertNoProblems();
  });

  test('the links panel: Enter on a link opens it with the keyboard inside, Esc returns to the link', async () => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await page.locator('#open-picker').click();
    await page.locator('#picker-query').fill('flaky');
    await page.waitForFunction(() => document.querySelector('#picker-list .pi-title')?.textContent.startsWith('Investigate the flaky'));
    await page.keyboard.press('Enter');
    await page.locator('#session-bar h1', { hasText: 'Investigate the flaky' }).waitFor();
    const link = page.locator('#conversation .int-link[data-url="artifact://0"]').first();
    await link.focus();
    assert.equal(await link.evaluate((el) => el.tabIndex >= 0 && el.matches(':focus')), true, 'the link is in the Tab order');
    await page.keyboard.press('Enter');
    await page.locator('#url-body [data-testid=url-content]').waitFor();
    assert.equal(await page.evaluate(() => document.getElementById('url-panel').contains(document.activeElement)), true, 'the keyboard is in the panel');
    const ring = await page.locator('#url-body').evaluate((el) => getComputedStyle(el).outlineStyle);
    assert.equal(ring, 'solid', 'the panel shows where the keyboard is');
    // Tab reaches Close (or a link inside) without leaving the panel first.
    await page.keyboard.press('Shift+Tab');
    const inPanel = await page.evaluate(() => document.getElementById('url-panel').contains(document.activeElement) && document.activeElement.textContent);
    assert.equal(inPanel, 'Close', 'Shift+Tab from the content reaches Close');
    await page.screenshot({ path: join(SCREENSHOTS, 'links-panel-keyboard.png') });
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#url-panel').isHidden(), true);
    assert.equal(await link.evaluate((el) => el === document.activeElement), true, 'the focus is back on the link');
    b.assertNoProblems();
  });

  test('a hostile session stays inert: no script runs, nothing is fetched, text stays text', async () => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    const evil = [
      '<img src=x onerror="window.__pwned=1">',
      '<script>window.__pwned=2</script>',
      '[click me](javascript:window.__pwned=3)',
      '<a href="javascript:window.__pwned=4">x</a> <svg onload="window.__pwned=5"></svg>',
    ];
    const lines = [JSON.stringify({ type: 'session', version: 3, id: 'evil', timestamp: new Date(T0).toISOString(), cwd: '/work/<img src=x onerror=window.__pwned=6>' })];
    evil.forEach((text, i) => {
      const m = i % 2 ? { role: 'assistant', content: [{ type: 'text', text }], provider: 'p', model: 'm', stopReason: 'stop', timestamp: T0 + i } : { role: 'user', content: text, timestamp: T0 + i };
      lines.push(JSON.stringify({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: new Date(T0 + i).toISOString(), message: m }));
    });
    lines.push(JSON.stringify({ type: 'label', id: 'e9', parentId: 'e3', timestamp: new Date(T0 + 9).toISOString(), targetId: 'e1', label: '<img src=x onerror=window.__pwned=7>' }));
    await dropFile(page, 'evil.jsonl', `${lines.join('\n')}\n`);
    await fileChip(page, 'evil.jsonl');
    await page.locator('#tree-filter').fill('<img');
    await page.locator('#tree-filter-count', { hasText: /of \d+ shown/ }).waitFor();
    await page.locator('#tree-filter').fill('');
    await page.locator('#tree').focus();
    await page.keyboard.press('Home');
    await page.keyboard.press('Enter');
    await page.locator('#node-e0.selected').waitFor();
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no injected script ran');
    assert.equal(await page.locator('#tree img, #tree script, #tree svg, #conversation img[src="x"], #conversation script, #conversation svg[onload]').count(), 0, 'no element from session text');
    assert.equal(await page.locator('a[href^="javascript:"]').count(), 0, 'no javascript: link');
    assert.match(await page.locator('#node-e0 .preview').innerText(), /<img src=x onerror=/, 'the tree shows the text as text');
    assert.deepEqual(requests.filter((u) => /\/x$|\/x\?/.test(u)), [], 'nothing was fetched from session text');
    b.assertNoProblems();
  });
});
