// The viewer's layout at a phone's width (390×844), a small laptop's (1024×768), two columns
// (860×800) and the desktop (1440×900): on a phone one panel at a time behind ARIA tabs, the
// conversation within the first screen and one scroll; at every width chips that never
// shrink to nothing and message headers whose parts never overlap. Screenshots:
// tests/e2e/screenshots/layout-*.png.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SCREENSHOTS, suiteBrowser } from './helpers.mjs';

const AGENT_SESSION = '/samples/agent/sessions/--work-demo--/2026-03-02T09-15-00-000Z_7e1d4c2a9b3f5e60.jsonl';

/** In the page: every pair of parts of a message header (role, #n, model, tokens, time, badges) that overlap. */
function headerOverlaps() {
  const overlaps = [];
  let checked = 0;
  for (const head of document.querySelectorAll('#conversation .msg-head')) {
    const parts = [head.querySelector('.role'), head.querySelector('.idx'), ...head.querySelectorAll('.msg-meta > *')].filter(Boolean);
    const boxes = parts.map((el) => ({ el, r: el.getBoundingClientRect() }));
    const headBox = head.getBoundingClientRect();
    if (!boxes[0] || boxes[0].r.width === 0) continue; // not laid out
    checked++;
    for (let i = 0; i < boxes.length; i++) {
      const a = boxes[i].r;
      if (a.right > headBox.right + 1 || a.left < headBox.left - 1) overlaps.push(`${boxes[i].el.className} sticks out of its header`);
      for (let j = i + 1; j < boxes.length; j++) {
        const b = boxes[j].r;
        const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (x > 0.5 && y > 0.5) overlaps.push(`"${boxes[i].el.textContent}" and "${boxes[j].el.textContent}" overlap (${x.toFixed(1)}×${y.toFixed(1)} px)`);
      }
    }
  }
  return { checked, overlaps };
}

/** In the page: each chip of the session bar, its width and whether its text fits or is cut with a tooltip. */
function chipReport() {
  const bar = document.getElementById('session-bar').getBoundingClientRect();
  return [...document.querySelectorAll('#session-bar .chip')]
    .filter((c) => c.getClientRects().length)
    .map((c) => {
      const r = c.getBoundingClientRect();
      const v = c.querySelector('.chip-v');
      const k = c.querySelector('.chip-k');
      return {
        text: c.textContent,
        width: r.width,
        keyWidth: k?.getBoundingClientRect().width ?? 0,
        valueWidth: v?.getBoundingClientRect().width ?? 0,
        fits: !v || v.scrollWidth <= v.clientWidth + 1,
        tooltip: c.title,
        inside: r.left >= bar.left - 1 && r.right <= bar.right + 1,
      };
    });
}

/** In the page: the page scrolls, or a scroll area holds the conversation besides the conversation itself. */
function scrolls() {
  const page = document.scrollingElement;
  const conv = document.getElementById('conversation');
  const nested = [];
  for (let e = conv.parentElement; e && e !== document.documentElement; e = e.parentElement) {
    const oy = getComputedStyle(e).overflowY;
    if ((oy === 'auto' || oy === 'scroll') && e.scrollHeight > e.clientHeight + 1) nested.push(e.tagName + (e.id ? `#${e.id}` : ''));
  }
  return { pageScrolls: page.scrollHeight > window.innerHeight + 1, nested, convScrolls: conv.scrollHeight > conv.clientHeight + 1 };
}

describe('layout: phone, laptop and desktop widths', { timeout: 180_000 }, () => {
  let page;
  const b = suiteBrowser((opened) => (page = opened.page));

  const open = async (query = '') => {
    await page.goto(b.server.url + query);
    await page.locator('#conversation .msg').first().waitFor();
  };
  const checkChips = async (where) => {
    const chips = await page.evaluate(chipReport);
    assert.ok(chips.length >= 5, `${where}: the session bar shows its chips (${chips.length})`);
    for (const c of chips) {
      assert.ok(c.width > 20 && c.keyWidth > 5 && c.valueWidth > 5, `${where}: chip "${c.text}" is ${c.width.toFixed(0)} px wide (key ${c.keyWidth.toFixed(0)}, value ${c.valueWidth.toFixed(0)})`);
      assert.ok(c.fits || c.tooltip.length > 0, `${where}: chip "${c.text}" is cut without a tooltip`);
      assert.ok(c.inside, `${where}: chip "${c.text}" sticks out of the session bar`);
    }
    const title = await page.locator('#session-bar h1').boundingBox();
    assert.ok(title.width > 60 && title.height > 10, `${where}: the title is ${title.width}×${title.height} px`);
  };
  const checkHeaders = async (where) => {
    const { checked, overlaps } = await page.evaluate(headerOverlaps);
    assert.ok(checked >= 3, `${where}: message headers were measured (${checked})`);
    assert.deepEqual(overlaps, [], `${where}: message headers`);
  };

  test('phone 390×844: tabs, one panel at a time, the conversation in the first screen, one scroll', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await open();
    const tabs = page.getByRole('tablist', { name: 'Panels' }).getByRole('tab');
    assert.deepEqual(await tabs.allInnerTexts(), ['Conversation', 'Tree', 'Entry']);
    assert.equal(await page.getByRole('tab', { name: 'Conversation' }).getAttribute('aria-selected'), 'true');
    const panel = page.getByRole('tabpanel');
    assert.equal(await panel.count(), 1, 'one panel is shown');
    assert.equal(await panel.getAttribute('id'), 'conv-panel');
    assert.equal(await panel.getAttribute('aria-labelledby'), 'tab-conv');
    assert.equal(await page.locator('#tree').isVisible(), false);
    assert.equal(await page.locator('#inspector').isVisible(), false);

    // The first message starts within the first screen, and so does the panel's end.
    const first = await page.locator('#conversation .msg').first().boundingBox();
    assert.ok(first.y + 40 < 844, `the first message starts at ${first.y} px`);
    const conv = await page.locator('#conv-panel').boundingBox();
    assert.ok(conv.y + conv.height <= 844 + 1 && conv.width >= 370, `the panel is ${JSON.stringify(conv)}`);
    const s = await page.evaluate(scrolls);
    assert.equal(s.pageScrolls, false, 'the page itself does not scroll');
    assert.deepEqual(s.nested, [], 'no scroll area around the conversation');
    assert.equal(s.convScrolls, true, 'the conversation is the scroll');
    await page.mouse.move(195, conv.y + conv.height / 2);
    await page.mouse.wheel(0, 600);
    await page.waitForFunction(() => document.getElementById('conversation').scrollTop > 0);
    assert.equal(await page.evaluate(() => window.scrollY), 0);
    // Scrolled down, the session bar may have folded away (first-screens.test.mjs): at the
    // top of the conversation it is back.
    await page.locator('#conversation').evaluate((c) => (c.scrollTop = 0));
    await page.locator('#session-bar .sb-more').waitFor();

    // The top bar: the name, Sessions… and Menu; the rest behind Menu.
    const menu = page.locator('#menu-toggle');
    assert.equal(await page.locator('#open-picker').isVisible(), true);
    assert.equal(await page.locator('#open-history').isVisible(), false);
    const bar = await page.locator('#topbar').boundingBox();
    assert.ok(bar.height < 60, `the top bar is ${bar.height} px high`);
    await menu.click();
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    for (const id of ['#open-history', '#open-folder', '#sample-select', '#edit-target', '#theme-select']) assert.equal(await page.locator(id).isVisible(), true, id);
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-phone-menu.png') });
    await page.keyboard.press('Escape');
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    assert.equal(await page.locator('#open-history').isVisible(), false);
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-phone-conversation.png') });

    // Title, totals and the file's chips (behind Details) wrap: never 0 px wide.
    const details = page.locator('#session-bar .sb-more');
    assert.equal(await page.locator('#session-bar [data-testid=chip-id]').isVisible(), false);
    await details.click();
    assert.equal(await details.getAttribute('aria-expanded'), 'true');
    await page.locator('#session-bar [data-testid=chip-id]').waitFor();
    await checkChips('phone');
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-phone-details.png') });
    await details.click();
    await checkHeaders('phone, demo');
    b.assertNoProblems();
  });

  test('phone: arrow keys move between the tabs; a tree row shows its branch, #n its entry', async () => {
    const tab = (name) => page.getByRole('tab', { name });
    await tab('Conversation').focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await tab('Tree').getAttribute('aria-selected'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-tree');
    assert.equal(await page.locator('#tree').isVisible(), true);
    assert.equal(await page.locator('#conversation').isVisible(), false);
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none', 'the focused tab shows a focus ring');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-entry');
    assert.equal(await page.locator('#inspector').isVisible(), true);
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-conv', 'the last tab wraps to the first');
    await page.keyboard.press('End');
    assert.equal(await tab('Entry').getAttribute('aria-selected'), 'true');
    await page.keyboard.press('Home');
    assert.equal(await tab('Conversation').getAttribute('aria-selected'), 'true');
    assert.equal(await page.locator('[role=tab][tabindex="0"]').count(), 1, 'one tab in the Tab order');

    // Tree: a row on the side branch shows that branch in the Conversation tab, its end in view.
    await tab('Tree').click();
    await page.locator('#node-0a1b2c3d').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-phone-tree.png') });
    await page.locator('#node-0a1b2c3d').click();
    assert.equal(await tab('Conversation').getAttribute('aria-selected'), 'true');
    await page.locator('#conversation .msg[data-entry="0a1b2c3d"]').waitFor();
    const last = page.locator('#conversation .msg').last();
    assert.equal(await last.getAttribute('data-entry'), '0a1b2c3d', 'the branch ends at the picked entry');
    // Scrolled to the end: the picked message's start is in the conversation's view.
    await page.waitForFunction(() => {
      const c = document.getElementById('conversation').getBoundingClientRect();
      const m = document.querySelector('#conversation .msg:last-of-type').getBoundingClientRect();
      return m.top >= c.top && m.top < c.bottom - 40;
    });

    // Conversation: a message's #n shows its entry in the Entry tab.
    await page.locator('#conversation .msg[data-entry="f6a7b8c9"] .idx').click();
    assert.equal(await tab('Entry').getAttribute('aria-selected'), 'true');
    await page.locator('#inspector-meta', { hasText: 'f6a7b8c9' }).waitFor();
    assert.equal(await page.locator('#inspector').isVisible(), true);
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-phone-entry.png') });
    await tab('Conversation').click();
    b.assertNoProblems();
  });

  test('phone: a real session\'s message headers (model, tokens, badges, time) never overlap; the links panel covers the screen', async () => {
    await open('?sample=large-session.jsonl');
    await checkHeaders('phone, large session');
    await page.locator('#jump-end').click();
    await page.waitForFunction(() => document.querySelector('#conversation .msg:last-child')?.dataset.index > 800);
    await checkHeaders('phone, large session end');

    await open(`?source=samples&path=${encodeURIComponent(AGENT_SESSION)}`);
    await page.locator('#conversation .int-link[data-url="artifact://0"]').first().click();
    await page.locator('#url-body [data-testid=url-content]').waitFor();
    const panel = await page.locator('#url-panel').boundingBox();
    assert.ok(panel.width >= 390 - 20 && panel.height >= 844 - 20, `the links panel is ${panel.width}×${panel.height}`);
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-phone-link.png') });
    await page.keyboard.press('Escape');
    b.assertNoProblems();
  });

  // Three panels side by side, in this order, none overlapping, none tiny; no tabs.
  const checkColumns = async (where, minConv) => {
    assert.equal(await page.locator('#panel-tabs').isVisible(), false, `${where}: no tab bar`);
    assert.equal(await page.getByRole('tabpanel').count(), 0, `${where}: the panels are not tab panels`);
    assert.equal(await page.locator('#menu-toggle').isVisible(), false);
    assert.equal(await page.locator('#session-bar .sb-more').isVisible(), false);
    const [tree, conv, insp] = await Promise.all(['#tree-panel', '#conv-panel', '#inspector-panel'].map((id) => page.locator(id).boundingBox()));
    assert.ok(tree.x + tree.width <= conv.x && conv.x + conv.width <= insp.x, `${where}: tree | conversation | entry`);
    assert.ok(tree.width >= 250 && insp.width >= 250 && conv.width >= minConv, `${where}: widths ${tree.width} / ${conv.width} / ${insp.width}`);
    const s = await page.evaluate(scrolls);
    assert.equal(s.pageScrolls, false, `${where}: the page does not scroll`);
    assert.deepEqual(s.nested, [], `${where}: one scroll`);
    await checkChips(where);
    await checkHeaders(where);
  };

  test('laptop 1024×768: three columns, chips and headers intact', async () => {
    await page.setViewportSize({ width: 1024, height: 768 });
    await open();
    await checkColumns('1024×768', 400);
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-1024.png') });
    await open('?sample=large-session.jsonl');
    await checkHeaders('1024×768, large session');
    b.assertNoProblems();
  });

  test('desktop 1440×900: three columns as before, every panel shown', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await open();
    await checkColumns('1440×900', 600);
    const bar = await page.locator('#session-bar').boundingBox();
    const conv = await page.locator('#conv-panel').boundingBox();
    assert.ok(conv.y < 260 && conv.height > 600, `the conversation panel is ${JSON.stringify(conv)} (session bar ${bar.height} px)`);
    assert.equal(await page.locator('#open-history').isVisible(), true);
    assert.equal(await page.locator('#theme-select').isVisible(), true);
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-1440.png') });
    b.assertNoProblems();
  });

  test('860×800: two columns, the tree over the entry, the conversation beside them', async () => {
    await page.setViewportSize({ width: 860, height: 800 });
    await open();
    const [tree, conv, insp] = await Promise.all(['#tree-panel', '#conv-panel', '#inspector-panel'].map((id) => page.locator(id).boundingBox()));
    assert.ok(tree.y + tree.height <= insp.y && Math.abs(tree.x - insp.x) < 1, 'the tree is over the entry');
    assert.ok(tree.x + tree.width <= conv.x && conv.width >= 400, 'the conversation is beside them');
    const s = await page.evaluate(scrolls);
    assert.equal(s.pageScrolls, false);
    await checkChips('860×800');
    await checkHeaders('860×800');
    await page.screenshot({ path: join(SCREENSHOTS, 'layout-860.png') });
    b.assertNoProblems();
  });
});
