// What a reader meets on the first screens (issue 32, point 3), each checked on a desktop
// (1440×900) and on a phone (390×844): the Copy button of a code block sits beside the code,
// never over it; "Show all" of a 1,389-line output shows every line, not a 360 px box; tabs
// are 4 columns wide; the conversation's header ("446 messages · thinking off · model") shows
// its whole text (at 1280 px too) and has a tooltip; on a phone, once the reader scrolls the
// conversation, the session bar folds away and the conversation gets at least 60 % of the
// height; the first screen speaks the reader's words, the format versions and the load time
// in tooltips; the exported HTML page is no wider than the screen.
//
// The session is the large sample (web-demo/samples/large-session.jsonl: a real v1 file,
// the 1,389-line output is the result of message #26); the export is of the content demo
// (content-fixture.mjs: a code line of 600 characters). Screenshots: first-*.png.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SCREENSHOTS, dropFile, fileChip, suiteBrowser } from './helpers.mjs';
import { contentSession } from './content-fixture.mjs';

const LARGE = 'large-session.jsonl';
const LONG_OUTPUT = 25; // message #26: the 1,389 lines of tui-renderer.ts, read in full

/**
 * In the page: each code block's Copy button that lies over a line of its code, as the
 * reader sees it (the text boxes of the code clipped to the block's visible box).
 */
function copyOverCode() {
  const covered = [];
  let checked = 0;
  for (const block of document.querySelectorAll('#conversation .code-block')) {
    const button = block.querySelector(':scope > .code-copy');
    const pre = block.querySelector(':scope > pre');
    if (!button || !pre || !button.getClientRects().length) continue;
    const b = button.getBoundingClientRect();
    const clip = pre.getBoundingClientRect();
    if (!b.width || !clip.width) continue;
    checked++;
    const range = document.createRange();
    range.selectNodeContents(pre);
    for (const r of range.getClientRects()) {
      const left = Math.max(r.left, clip.left);
      const right = Math.min(r.right, clip.right);
      const top = Math.max(r.top, clip.top);
      const bottom = Math.min(r.bottom, clip.bottom);
      if (right <= left || bottom <= top) continue;
      const x = Math.min(right, b.right) - Math.max(left, b.left);
      const y = Math.min(bottom, b.bottom) - Math.max(top, b.top);
      if (x > 0.5 && y > 0.5) {
        covered.push(`${pre.getAttribute('aria-label')} "${pre.textContent.slice(0, 50)}…": ${x.toFixed(0)}×${y.toFixed(0)} px of a line under the button`);
        break;
      }
    }
  }
  return { checked, covered };
}

/** In the page: the share of the window's height the conversation shows. */
function conversationShare() {
  const r = document.getElementById('conversation').getBoundingClientRect();
  return Math.max(0, Math.min(r.bottom, window.innerHeight) - Math.max(r.top, 0)) / window.innerHeight;
}

/** In the page: the conversation header's text, tooltip and whether all of it shows. */
function convMeta() {
  const el = document.getElementById('conv-meta');
  const r = el.getBoundingClientRect();
  const head = el.closest('.panel-head').getBoundingClientRect();
  return {
    text: el.textContent,
    title: el.title,
    scrollWidth: el.scrollWidth,
    clientWidth: el.clientWidth,
    scrollHeight: el.scrollHeight,
    clientHeight: el.clientHeight,
    width: r.width,
    inside: r.left >= head.left - 1 && r.right <= head.right + 1 && r.top >= head.top - 1 && r.bottom <= head.bottom + 1,
  };
}

/** The text of the page's own parts a reader sees first (not the session's messages). */
function chromeText(page) {
  return page.evaluate(() =>
    ['#topbar', '#session-bar', '#banner', '#panel-tabs', '#conv-panel > .panel-head', '#conv-panel > .conv-foot']
      .map((s) => document.querySelector(s))
      .filter((el) => el && el.getClientRects().length)
      .map((el) => el.innerText)
      .join('\n'),
  );
}

const DEVELOPER_WORDS = /older format|migrat|parsed|\bv\d+\s*→|→\s*v\d+|\b\d[\d,]*\s*ms\b/i;

const SIZES = {
  desktop: { width: 1440, height: 900 },
  phone: { width: 390, height: 844 },
};

for (const [size, viewport] of Object.entries(SIZES)) {
  const phone = size === 'phone';
  const where = `${viewport.width}×${viewport.height}`;

  describe(`first screens, ${size} ${where}`, { timeout: 240_000 }, () => {
    let page;
    const b = suiteBrowser(async (opened) => {
      page = opened.page;
      await page.setViewportSize(viewport);
    });

    const openLarge = async () => {
      await page.goto(`${b.server.url}?sample=${LARGE}`);
      await fileChip(page, LARGE);
      await page.locator('#conversation .msg').first().waitFor();
    };
    const longOutput = () => page.locator(`#conversation [data-result-index="${LONG_OUTPUT}"]`);

    test(`${where}: the first screen speaks the reader's words; versions and load time are in tooltips`, async () => {
      await openLarge();
      const older = page.locator('#session-bar [data-testid=older-format]');
      if (phone) await page.locator('#session-bar .sb-more').click(); // the file's details
      assert.equal(await older.isVisible(), true, 'the reader is told the file is an older one');
      assert.match(await older.innerText(), /older session file.*current version.*unchanged/i);
      const text = await chromeText(page);
      assert.doesNotMatch(text, DEVELOPER_WORDS, `developer words on the first screen:\n${text}`);
      assert.match(await older.getAttribute('title'), /format v1\b.*\bv3\b.*not changed/, 'the versions are in its tooltip');
      assert.match(await page.locator('#session-bar [data-testid=chip-file]').getAttribute('title'), /session format v1, converted to v3 .*read in \d+ ms/, 'the format and the load time are in the file\'s tooltip');
      await page.screenshot({ path: join(SCREENSHOTS, `first-words-${size}.png`) });
      if (phone) {
        await page.locator('#session-bar .sb-more').click();
        assert.doesNotMatch(await chromeText(page), DEVELOPER_WORDS, 'with the details folded');
      }
      b.assertNoProblems();
    });

    test(`${where}: the conversation header shows its whole text and has a tooltip`, async () => {
      const sizes = phone ? [viewport] : [{ width: 1280, height: 800 }, viewport];
      for (const s of sizes) {
        await page.setViewportSize(s);
        await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
        const m = await page.evaluate(convMeta);
        const at = `${s.width}×${s.height}`;
        assert.match(m.text, /^[\d,]+ messages · /, `${at}: the header says what the branch holds (${m.text})`);
        assert.ok(m.width > 100 && m.scrollWidth <= m.clientWidth && m.scrollHeight <= m.clientHeight, `${at}: "${m.text}" shows whole (${m.clientWidth}×${m.clientHeight} px shown of ${m.scrollWidth}×${m.scrollHeight})`);
        assert.ok(m.inside, `${at}: the header's text is inside the panel's header`);
        for (const word of m.text.split(/[\s·]+/).filter(Boolean)) assert.ok(m.title.includes(word), `${at}: the tooltip "${m.title}" says "${word}"`);
        if (!phone) await page.screenshot({ path: join(SCREENSHOTS, `first-conv-header-${s.width}.png`) });
      }
      b.assertNoProblems();
    });

    test(`${where}: a Copy button never covers the code it copies`, async () => {
      await openLarge();
      const top = await page.evaluate(copyOverCode);
      await longOutput().scrollIntoViewIfNeeded();
      await longOutput().locator('pre.code').first().waitFor();
      const further = await page.evaluate(copyOverCode);
      assert.ok(top.checked + further.checked >= 5, `code blocks were measured (${top.checked} + ${further.checked})`);
      assert.deepEqual([...top.covered, ...further.covered], [], 'no Copy button over a line of code');
      await page.screenshot({ path: join(SCREENSHOTS, `first-copy-${size}.png`) });
      b.assertNoProblems();
    });

    test(`${where}: "Show all" of a 1,389-line output shows every line, no 360 px box; tabs are 4 wide`, async () => {
      const card = longOutput();
      const showAll = card.getByRole('button', { name: /^Show all · 1,389 lines/ });
      await showAll.scrollIntoViewIfNeeded();
      await showAll.click();
      const pre = card.locator('.tool-result pre.code').first();
      await pre.waitFor();
      const box = await pre.evaluate((el) => ({ height: el.getBoundingClientRect().height, clientHeight: el.clientHeight, scrollHeight: el.scrollHeight, lines: el.textContent.split('\n').length }));
      assert.equal(box.lines, 1389, 'every line is in the box');
      assert.ok(box.height > 5 * 360, `the box grew to the output (${Math.round(box.height)} px high)`);
      assert.ok(box.scrollHeight <= box.clientHeight + 1, `nothing is hidden inside it (${box.scrollHeight} px of content in ${box.clientHeight} px)`);

      // Tabs (the output is indented with them) are 4 columns, in output, code and text.
      assert.match(await pre.textContent(), /\n\t\t/, 'the output has tabs');
      assert.equal(await pre.evaluate((el) => getComputedStyle(el).tabSize), '4');
      const elsewhere = await page.evaluate(() => [...document.querySelectorAll('#conversation pre.code, #conversation .text, #inspector pre')].map((el) => getComputedStyle(el).tabSize));
      assert.ok(elsewhere.length > 10);
      assert.deepEqual([...new Set(elsewhere)], ['4'], 'every code, output and text block');
      await page.screenshot({ path: join(SCREENSHOTS, `first-show-all-${size}.png`) });
      b.assertNoProblems();
    });

    test(`${where}: once the reader scrolls the conversation, it has at least 60 % of the height`, async () => {
      await openLarge();
      const before = await page.evaluate(conversationShare);
      const conv = await page.locator('#conversation').boundingBox();
      // The wheel over the conversation's own padding (over a tool output, it scrolls that).
      await page.mouse.move(conv.x + 3, conv.y + conv.height / 2);
      await page.mouse.wheel(0, 800);
      await page.mouse.wheel(0, 800);
      await page.waitForFunction(() => document.getElementById('conversation').scrollTop > 800);
      // Give the layout a moment to follow (the assertion below says what it came to).
      await page.waitForFunction(`(${conversationShare})() >= 0.6`, null, { timeout: 5000 }).catch(() => {});
      const after = await page.evaluate(conversationShare);
      assert.ok(after >= 0.6, `scrolled, the conversation shows on ${(after * 100).toFixed(0)} % of the height (${(before * 100).toFixed(0)} % before)`);
      assert.equal(await page.evaluate(() => window.scrollY), 0, 'the page itself does not scroll');
      await page.screenshot({ path: join(SCREENSHOTS, `first-scrolled-${size}.png`) });
      if (phone) {
        assert.equal(await page.locator('#session-bar').isVisible(), false, 'the session bar folded away');
        // Back at the top of the branch, the session bar is back.
        await page.locator('#jump-start').click();
        await page.locator('#session-bar h1').waitFor();
        assert.equal(await page.locator('#session-bar .sb-more').isVisible(), true);
      } else {
        assert.equal(await page.locator('#session-bar').isVisible(), true, 'on a desktop the session bar stays');
      }
      b.assertNoProblems();
    });

    test(`${where}: the exported HTML page is no wider than the screen`, async () => {
      await page.goto(b.server.url);
      await page.locator('#conversation .msg').first().waitFor();
      await dropFile(page, 'content-demo.jsonl', contentSession());
      await fileChip(page, 'content-demo.jsonl');
      await page.locator('#export-menu > summary').click();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'HTML page (.html)' }).click()]);
      const html = await readFile(await download.path(), 'utf8');
      assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
      const view = await b.context.newPage();
      try {
        await view.setViewportSize(viewport);
        await view.setContent(html);
        const m = await view.evaluate(() => ({
          scrollWidth: document.scrollingElement.scrollWidth,
          width: window.innerWidth,
          // the page's main box scrolls (.conversation): nothing in it may stick out either
          inner: document.querySelector('main').scrollWidth - document.querySelector('main').clientWidth,
          code: document.querySelectorAll('pre.code').length,
          tabSize: getComputedStyle(document.querySelector('pre.code')).tabSize,
        }));
        assert.ok(m.code > 0, 'the page has code blocks');
        assert.ok(m.scrollWidth <= viewport.width, `the page is ${m.scrollWidth} px wide in a ${m.width} px window`);
        assert.ok(m.inner <= 0, `the page's content sticks out of it by ${m.inner} px`);
        assert.equal(m.tabSize, '4', 'tabs 4 wide in the export too');
        await view.screenshot({ path: join(SCREENSHOTS, `first-export-${size}.png`) });
      } finally {
        await view.close();
      }
      b.assertNoProblems();
    });
  });
}
