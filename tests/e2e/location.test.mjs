// The address names the place shown: `?<session>#leaf=<entry id>&msg=<n>` (location.js).
// Opening such an address restores the session, the branch and the message; selecting a
// branch and jumping are history entries (Back and Forward move between them), scrolling
// replaces the current one; an address naming something missing says so and still shows
// the session.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SCREENSHOTS, cssEscape, fileChip, messageAt, suiteBrowser } from './helpers.mjs';

describe('the address of the place shown', { timeout: 180_000 }, () => {
  let page;
  let server;
  const b = suiteBrowser((opened) => ({ page, server } = opened));

  const hash = () => new URLSearchParams(new URL(page.url()).hash.slice(1));
  const msgParam = () => Number(hash().get('msg'));
  const historyLength = () => page.evaluate(() => history.length);
  const focusedIndex = () => page.evaluate(() => document.activeElement?.dataset?.index ?? document.activeElement?.dataset?.resultIndex ?? null);
  /** The message at the top of the conversation (data-index). */
  const topIndex = () =>
    page.evaluate(() => {
      // The first message not wholly above the top edge (a point could fall between two).
      const conv = document.getElementById('conversation').getBoundingClientRect();
      const first = [...document.querySelectorAll('#conversation .msg')].find((m) => m.getBoundingClientRect().bottom > conv.top + 1);
      return first?.dataset.index ?? null;
    });
  const waitTop = (i) =>
    page.waitForFunction((want) => {
      const conv = document.getElementById('conversation').getBoundingClientRect();
      // A tool result drawn in its call's card is that card (data-result-index).
      const at = document.elementFromPoint(conv.left + conv.width / 2, conv.top + 30);
      const card = at?.closest('[data-result-index]');
      return (card ? card.dataset.resultIndex : at?.closest('.msg')?.dataset.index) === String(want);
    }, i);

  test('opening an address with #msg= shows that message at the top, focused, in its window', async () => {
    await page.goto(`${server.url}?sample=large-session.jsonl#msg=700`);
    await fileChip(page, 'large-session.jsonl');
    await messageAt(page, 699).waitFor();
    await waitTop(699);
    assert.equal(await focusedIndex(), '699', 'the message has the focus');
    assert.equal(await page.locator('#conversation .msg[data-index="0"]').count(), 0, 'the start is not loaded');
    await page.locator('#conv-position').filter({ hasText: /^Messages? 700\b/ }).waitFor();
    assert.equal(msgParam(), 700, 'the address keeps naming it');
    assert.ok(hash().get('leaf'), 'and names the branch');
    assert.equal(await page.locator('#banner').isVisible(), false);
    await page.screenshot({ path: join(SCREENSHOTS, 'location-msg.png') });
    b.assertNoProblems();
  });

  test('jumps are history entries, scrolling replaces the current one; Back and Forward move between them', async () => {
    const start = await historyLength();
    await page.locator('#goto-input').fill('120');
    await page.locator('#goto-input').press('Enter');
    await waitTop(119);
    assert.equal(msgParam(), 120);
    assert.equal(await historyLength(), start + 1, 'a new entry');

    await page.locator('#outline-open').click();
    const link = page.locator('#outline a.outline-link').nth(60);
    const target = Number(await link.getAttribute('data-index'));
    await link.click();
    await waitTop(target);
    assert.equal(msgParam(), target + 1);
    assert.equal(await historyLength(), start + 2);

    // Scroll by hand: the address follows (replaced, once the scrolling rests).
    await page.locator('#conversation').hover();
    for (let i = 0; i < 4; i++) {
      await page.mouse.wheel(0, 500);
      await page.waitForTimeout(60);
    }
    await page.waitForFunction((was) => Number(new URLSearchParams(location.hash.slice(1)).get('msg')) > was, target + 1);
    const scrolled = msgParam();
    const top = Number(await topIndex());
    assert.ok(Math.abs(scrolled - 1 - top) <= 1, `the address names the message at the top (${scrolled} vs #${top + 1})`);
    assert.equal(await historyLength(), start + 2, 'scrolling adds no entry');

    await page.goBack();
    await waitTop(119);
    assert.equal(msgParam(), 120);
    await page.goForward();
    await page.waitForFunction((m) => new URLSearchParams(location.hash.slice(1)).get('msg') === String(m), scrolled);
    await waitTop(scrolled - 1);
    await page.goBack();
    await waitTop(119);
    await page.goBack();
    await waitTop(699);
    assert.equal(msgParam(), 700);
    b.assertNoProblems();
  });

  test('selecting another branch is a history entry; a reload restores branch and message', async () => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    const defaultLeaf = await page.locator('#tree .node.selected').getAttribute('data-id');
    assert.equal(new URL(page.url()).hash, '', 'a session just opened has no place in the address');
    const other = page.locator('#tree .node:not(.on-path)').first();
    const id = await other.getAttribute('data-id');
    const start = await historyLength();
    await other.click();
    await page.locator(`#node-${cssEscape(id)}.selected`).waitFor();
    await page.waitForFunction((want) => new URLSearchParams(location.hash.slice(1)).get('leaf') === want, id);
    assert.equal(await historyLength(), start + 1);
    const count = await page.locator('#conversation .msg').count();
    assert.ok(count >= 2);

    // Go to message 2 of that branch, then reload: the same branch and message.
    await page.locator('#goto-input').fill('2');
    await page.locator('#goto-input').press('Enter');
    await waitTop(1);
    assert.equal(hash().get('leaf'), id);
    assert.equal(msgParam(), 2);
    const text = await messageAt(page, 1).innerText();
    await page.reload();
    await page.locator(`#node-${cssEscape(id)}.selected`).waitFor();
    await waitTop(1);
    assert.equal(await messageAt(page, 1).innerText(), text);
    assert.equal(await focusedIndex(), '1');

    // Back: the branch selected (no message); Back again: the session's own branch.
    await page.goBack();
    await page.waitForFunction(() => !new URLSearchParams(location.hash.slice(1)).get('msg'));
    assert.equal(await page.locator('#tree .node.selected').getAttribute('data-id'), id);
    await page.goBack();
    await page.locator(`#node-${cssEscape(defaultLeaf)}.selected`).waitFor();
    assert.equal(new URL(page.url()).hash, '');
    await page.goForward();
    await page.locator(`#node-${cssEscape(id)}.selected`).waitFor();
    b.assertNoProblems();
  });

  test('an address naming a missing entry, message or session says so and still shows a session', async () => {
    const banner = page.locator('#banner');
    await page.goto(`${server.url}?sample=large-session.jsonl#leaf=nosuchentry&msg=3`);
    await banner.filter({ hasText: 'nosuchentry' }).waitFor();
    assert.match(await banner.innerText(), /not in this session/);
    await waitTop(2);
    assert.ok((await page.locator('#conversation .msg').count()) > 0, 'the conversation is shown');
    await page.screenshot({ path: join(SCREENSHOTS, 'location-missing-entry.png') });

    await page.goto(`${server.url}?sample=large-session.jsonl#msg=99999`);
    await banner.filter({ hasText: '#99,999' }).waitFor();
    const total = Number((await page.locator('#conv-meta').innerText()).match(/([\d,]+) messages/)[1].replace(/,/g, ''));
    assert.match(await banner.innerText(), new RegExp(`has ${total.toLocaleString('en-US')} messages`));
    assert.ok((await page.locator('#conversation .msg').count()) > 0);

    await page.goto(`${server.url}?sample=large-session.jsonl#msg=abc`);
    await banner.filter({ hasText: '“abc”' }).waitFor();
    assert.match(await banner.innerText(), /not a message number/);

    await page.goto(`${server.url}?sample=no-such-sample.jsonl#msg=3`);
    await banner.filter({ hasText: 'no-such-sample.jsonl' }).waitFor();
    await page.locator('#conversation .msg').first().waitFor();
    assert.equal(new URL(page.url()).hash, '', 'the place of a missing session is dropped');
    assert.equal(new URL(page.url()).searchParams.get('sample'), null, 'the default sample is named');
    await page.locator('#banner .banner-close').click();
    b.assertNoProblems();
  });
});
