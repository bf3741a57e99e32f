// Finding things in a session: the find bar (the worker searches the whole branch, not the
// 40 messages in the DOM), the role and tool filters, "#n" and "Go to", the position footer
// and its slider, the outline of user prompts; a hostile session stays inert; contrast of
// the new controls in light and dark.
//
// The expected hits are computed here, independently of the viewer, from the real fixture
// (tests/fixtures/real/large-session.jsonl, the viewer's large sample) read by the Node
// build of the package.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, ROOT, SCREENSHOTS, fileChip, openBrowser, messageAt, assertContrast, suiteBrowser } from './helpers.mjs';

const TERM = 'b5bd68'; // a colour of the theme work: only in messages far beyond the first window
const TYPED = 'B5bD68'; // typed in another case

/** The branch's messages of the large fixture, as the package's context gives them. */
async function fixtureMessages() {
  const pkgFile = join(ROOT, 'pkg', 'node.mjs');
  assert.ok(existsSync(pkgFile), 'pkg/node.mjs (the package) is missing: run scripts/build-js');
  const { Session } = await import(pkgFile);
  const s = Session.fromText(await readFile(join(FIXTURES, 'large-session.jsonl'), 'utf8'));
  const messages = JSON.parse(s.contextJson()).messages;
  s.free();
  return messages;
}

/** A plain search: the lower-cased text, thinking, tool calls and results of each message. */
function textOf(m) {
  const parts = [];
  const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
  for (const b of blocks) {
    if (b.type === 'text') parts.push(b.text);
    else if (b.type === 'thinking') parts.push(b.thinking);
    else if (b.type === 'toolCall') parts.push(`${b.name}\n${JSON.stringify(b.arguments, null, 2)}`);
  }
  if (m.errorMessage) parts.push(m.errorMessage);
  return parts.join('\n').toLowerCase();
}

const count = (text, term) => text.split(term).length - 1;
const num = (text) => Number(String(text).replace(/,/g, ''));

describe('finding things in a session', { timeout: 240_000 }, () => {
  let b;
  let page;
  let server;
  let messages;
  let expected; // message indices containing TERM
  let tmp;

  before(async () => {
    messages = await fixtureMessages();
    expected = messages.map((m, i) => [i, count(textOf(m), TERM)]).filter(([, n]) => n > 0);
    tmp = await mkdtemp(join(tmpdir(), 'xcsh-e2e-find-'));
    b = await openBrowser();
    ({ page, server } = b);
  });

  after(async () => {
    await b?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const openLarge = async () => {
    await page.goto(`${server.url}?sample=large-session.jsonl`);
    await fileChip(page, 'large-session.jsonl');
    await page.locator('#conversation .msg').first().waitFor();
  };
  const convBox = () => page.locator('#conversation').boundingBox();
  const inView = async (locator) => {
    const [box, view] = [await locator.boundingBox(), await convBox()];
    return box !== null && box.y >= view.y - 1 && box.y + Math.min(box.height, 20) <= view.y + view.height + 1;
  };

  test('Ctrl+F searches the whole branch in the worker; Enter and Shift+Enter go from hit to hit', async (t) => {
    assert.ok(expected.length >= 3, `the term is in several messages (${expected.length})`);
    assert.ok(expected[0][0] >= 40, `the first hit (#${expected[0][0] + 1}) is beyond the first window`);
    await openLarge();
    assert.equal(await page.locator('#conversation .msg').count() <= 40, true);
    assert.equal(await page.locator(`#conversation .msg[data-index="${expected[0][0]}"]`).count(), 0, 'the first hit is not in the DOM before the search');
    assert.equal(await page.locator('#find-bar').isVisible(), false);

    await page.locator('#conversation').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+f');
    await page.locator('#find-bar').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.id), 'find-query', 'the field has the focus');
    // The hits found so far are listed while the search goes on (the status says so).
    await page.evaluate(() => {
      window.__soFar = false;
      new MutationObserver(() => {
        if (/so far/.test(document.getElementById('find-status').textContent) && document.querySelector('#find-hits .find-hit-row')) window.__soFar = true;
      }).observe(document.getElementById('find-status'), { childList: true, subtree: true, characterData: true });
    });
    const started = Date.now();
    await page.locator('#find-query').fill(TYPED);
    const status = page.locator('#find-status');
    await status.filter({ hasText: /messages? ·/ }).waitFor();
    assert.equal(await page.evaluate(() => window.__soFar), true, 'the first hits were listed before the search ended');
    t.diagnostic(`search answered ${Date.now() - started} ms after the first key (${await status.getAttribute('title')})`);
    const matches = expected.reduce((n, [, c]) => n + c, 0);
    assert.match(await status.innerText(), new RegExp(`^${expected.length} messages · ${matches} match`), 'every hit of the branch is counted');
    const rows = page.locator('#find-hits .find-hit-row');
    assert.equal(await rows.count(), expected.length, 'one row per message');
    assert.deepEqual((await page.locator('#find-hits .fh-idx').allInnerTexts()).map((s) => num(s.slice(1)) - 1), expected.map(([i]) => i));
    assert.equal((await rows.first().locator('mark').innerText()).toLowerCase(), TERM, 'the snippet marks the match');
    await page.screenshot({ path: join(SCREENSHOTS, 'find-results.png') });

    // Enter: the first hit, its window loaded, scrolled to, the match marked.
    await page.keyboard.press('Enter');
    await status.filter({ hasText: `1 of ${expected.length}` }).waitFor();
    const first = messageAt(page, expected[0][0]);
    await first.waitFor();
    const mark = first.locator('mark.find-hit.current');
    await mark.waitFor();
    assert.equal((await mark.innerText()).toLowerCase(), TERM, 'case-insensitive: the match as written in the session');
    await page.waitForTimeout(100);
    assert.ok(await inView(mark), 'the match is in view');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'find-query', 'the focus stays in the field');
    assert.equal(num(new URL(page.url()).hash.match(/msg=(\d+)/)[1]), expected[0][0] + 1, 'the address names the message');
    const [from, to = from] = (await page.locator('#conv-position').innerText()).match(/[\d,]+/g).slice(0, -1).map(num);
    assert.ok(from <= expected[0][0] + 1 && expected[0][0] + 1 <= to, `the footer says the message is in view (${from}–${to})`);
    await page.screenshot({ path: join(SCREENSHOTS, 'find-hit.png') });

    await page.keyboard.press('Enter');
    await status.filter({ hasText: `2 of ${expected.length}` }).waitFor();
    await messageAt(page, expected[1][0]).locator('mark.find-hit.current').waitFor();
    assert.equal(await page.locator('#find-hits [aria-current]').innerText().then((s) => num(s.match(/#([\d,]+)/)[1]) - 1), expected[1][0], 'the list shows the current hit');
    await page.keyboard.press('Shift+Enter');
    await status.filter({ hasText: `1 of ${expected.length}` }).waitFor();
    await page.keyboard.press('Shift+Enter');
    await status.filter({ hasText: `${expected.length} of ${expected.length}` }).waitFor();
    await messageAt(page, expected.at(-1)[0]).locator('mark.find-hit.current').waitFor();

    // A row of the list goes to its message.
    await rows.nth(2).click();
    await status.filter({ hasText: `3 of ${expected.length}` }).waitFor();
    await messageAt(page, expected[2][0]).locator('mark.find-hit.current').waitFor();

    // Escape closes the bar and takes the marks away.
    await page.locator('#find-query').focus();
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#find-bar').isVisible(), false);
    assert.equal(await page.locator('#conversation mark.find-hit').count(), 0);
    b.assertNoProblems();
  });

  test('role and tool filters; "#914" in the field and "Go to" go to a message', async () => {
    await page.keyboard.press('Control+f');
    await page.locator('#find-query').fill(TERM);
    const status = page.locator('#find-status');
    await status.filter({ hasText: /messages? ·/ }).waitFor();
    const users = expected.filter(([i]) => messages[i].role === 'user');
    assert.ok(users.length > 0 && users.length < expected.length);
    await page.locator('#find-role').selectOption('user');
    await status.filter({ hasText: new RegExp(`^${users.length} messages? ·`) }).waitFor();
    assert.deepEqual(await page.locator('#find-hits .fh-role').allInnerTexts(), users.map(() => 'User'));
    await page.locator('#find-role').selectOption('toolResult');
    const results = expected.filter(([i]) => messages[i].role === 'toolResult');
    await status.filter({ hasText: new RegExp(`^${results.length} messages? ·`) }).waitFor();

    // A tool, no words: every call of it and every result.
    const bash = messages.filter((m) => (m.role === 'toolResult' && m.toolName === 'bash') || (m.role === 'assistant' && Array.isArray(m.content) && m.content.some((c) => c.type === 'toolCall' && c.name === 'bash')));
    const calls = messages.reduce((n, m) => n + (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((c) => c.type === 'toolCall' && c.name === 'bash').length : 0), 0);
    await page.locator('#find-role').selectOption('');
    await page.locator('#find-query').fill('');
    const option = page.locator('#find-tool option[value=bash]');
    assert.equal(await option.innerText(), `bash (${calls})`, 'the tool list counts the calls');
    await page.locator('#find-tool').selectOption('bash');
    await status.filter({ hasText: new RegExp(`^${bash.length.toLocaleString('en-US')} messages · Enter`) }).waitFor();
    await page.locator('#find-tool').selectOption('');

    // "#914": the last message, loaded, at the top, focused.
    const n = messages.length;
    await page.locator('#find-query').fill(`#${n}`);
    await status.filter({ hasText: `go to message #${n}` }).waitFor();
    await page.locator('#find-query').press('Enter');
    const last = messageAt(page, n - 1);
    await last.waitFor();
    await page.waitForFunction((i) => (document.activeElement?.dataset?.index ?? document.activeElement?.dataset?.resultIndex) === String(i), n - 1);
    assert.ok(await inView(last));
    assert.match(await last.getAttribute('class'), /msg-target/);
    await page.locator('#find-query').fill(`#${n + 5}`);
    await status.filter({ hasText: `No message #${n + 5}` }).waitFor();
    await page.keyboard.press('Escape');

    // "Go to" in the footer, and its check.
    await page.locator('#goto-input').fill('500');
    await page.locator('#goto-input').press('Enter');
    const target = messageAt(page, 499);
    await target.waitFor();
    await page.waitForFunction(() => (document.activeElement?.dataset?.index ?? document.activeElement?.dataset?.resultIndex) === '499');
    const [box, view] = [await target.boundingBox(), await convBox()];
    assert.ok(Math.abs(box.y - view.y) < 40, `message #500 is at the top (${box.y} vs ${view.y})`);
    await page.locator('#conv-position').filter({ hasText: /^Messages? 500\b/ }).waitFor();
    assert.match(await page.locator('#conv-position').innerText(), new RegExp(`of ${n}$`));
    assert.ok(await page.locator('#conversation .msg').count() <= 80, 'still a window, not the whole branch');
    await page.screenshot({ path: join(SCREENSHOTS, 'goto-message.png') });
    await page.locator('#goto-input').fill('0');
    await page.locator('#goto-input').press('Enter');
    assert.match(await page.locator('#goto-status').innerText(), new RegExp(`from 1 to ${n}`));
    b.assertNoProblems();
  });

  test('the slider covers the whole branch; the outline lists the user prompts and goes to them', async () => {
    const n = messages.length;
    const slider = page.locator('#conv-slider');
    assert.equal(num(await slider.getAttribute('max')), n);
    assert.equal(num(await slider.inputValue()), 500, 'the slider shows where the reader is');
    await slider.focus();
    await page.keyboard.press('End');
    await messageAt(page, n - 1).waitFor();
    await page.locator('#conv-position').filter({ hasText: new RegExp(`${n} of ${n}$`) }).waitFor();
    await page.keyboard.press('Home');
    await messageAt(page, 0).waitFor();
    await page.locator('#conv-position').filter({ hasText: /^Messages? 1\b/ }).waitFor();

    const prompts = messages.map((m, i) => [i, m]).filter(([, m]) => m.role === 'user');
    await page.locator('#outline-open').click();
    const links = page.locator('#outline a.outline-link');
    await links.first().waitFor();
    assert.equal(await links.count(), prompts.length, 'every user prompt of the branch');
    assert.equal(await page.locator('#outline-open').getAttribute('aria-expanded'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement.classList.contains('outline-link')), true, 'the list has the focus');
    assert.deepEqual((await page.locator('#outline .ol-idx').allInnerTexts()).slice(0, 5).map((s) => num(s.slice(1)) - 1), prompts.slice(0, 5).map(([i]) => i));
    const firstText = prompts[0][1].content.find((c) => c.type === 'text').text;
    assert.equal(await links.first().locator('.ol-text').innerText(), firstText.replace(/\s+/g, ' ').trim().slice(0, 160));
    await page.screenshot({ path: join(SCREENSHOTS, 'outline.png') });
    // Keyboard: End, then up twice, Enter.
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    const [want] = prompts.at(-3);
    assert.equal(await page.evaluate(() => document.activeElement.dataset.index), String(want));
    assert.match(await page.evaluate(() => document.activeElement.getAttribute('href')), new RegExp(`#leaf=[^&]+&msg=${want + 1}$`), 'a real link to the message');
    await page.keyboard.press('Enter');
    await page.waitForFunction((i) => document.activeElement?.dataset?.index === String(i), want);
    assert.equal(await page.locator('#outline').isVisible(), false, 'the list closes');
    assert.ok(await inView(messageAt(page, want)));
    // Escape closes it and gives the focus back to its button.
    await page.locator('#outline-open').click();
    await page.locator('#outline a[aria-current]').waitFor();
    assert.equal(await page.locator('#outline a[aria-current]').getAttribute('data-index'), String(want), 'the prompt the reader is at is marked');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#outline').isVisible(), false);
    assert.equal(await page.evaluate(() => document.activeElement.id), 'outline-open');
    b.assertNoProblems();
  });

  test('Esc during a search stops it: its hits are dropped, and Enter searches again', async () => {
    await openLarge();
    await page.locator('#conversation').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+f');
    await page.locator('#find-bar').waitFor();
    // A word found nowhere, so the search reads the whole branch. Esc is pressed as the
    // status says it started (an observer runs in the same turn of the page's loop), so
    // the worker's answer cannot come between.
    const closedWhile = await page.evaluate(() => {
      const field = document.getElementById('find-query');
      const status = document.getElementById('find-status');
      return new Promise((resolve) => {
        const seen = new MutationObserver(() => {
          if (!/Searching/.test(status.textContent)) return;
          seen.disconnect();
          const text = status.textContent;
          field.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
          resolve(text);
        });
        seen.observe(status, { childList: true, subtree: true, characterData: true });
        field.value = 'zq-found-nowhere-xv';
        field.dispatchEvent(new Event('input', { bubbles: true }));
      });
    });
    assert.match(closedWhile, /^Searching/);
    assert.equal(await page.locator('#find-bar').isVisible(), false);
    // Open again on the same branch: the stopped search left no answer, and Enter runs it.
    await page.keyboard.press('Control+f');
    await page.locator('#find-bar').waitFor();
    await page.waitForTimeout(300); // longer than the typing debounce: nothing comes
    assert.doesNotMatch(await page.locator('#find-status').innerText(), /No matches|Searching/, 'the stopped search left no answer');
    await page.locator('#find-query').press('Enter');
    await page.locator('#find-status').filter({ hasText: 'No matches in this branch' }).waitFor();
    await page.keyboard.press('Escape');
    // The tool filter was filled meanwhile (by the search's own count, or after it).
    assert.ok((await page.locator('#find-tool option').count()) > 1, 'the branch\'s tools are listed');
    b.assertNoProblems();
  });

  test('on a phone: the find bar, the hits, the outline and the footer fit the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await openLarge();
      await page.locator('#find-open').click();
      await page.locator('#find-query').fill(TERM);
      await page.locator('#find-status').filter({ hasText: /messages? ·/ }).waitFor();
      await page.locator('#find-query').press('Enter');
      await page.locator('#find-status').filter({ hasText: `1 of ${expected.length}` }).waitFor();
      await page.locator('#conversation mark.find-hit.current').waitFor();
      for (const sel of ['#find-query', '#find-next', '#find-close', '#find-tool', '#conv-slider', '#goto-input', '#outline-open']) {
        const box = await page.locator(sel).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 390 + 1, `${sel} is on the screen (${JSON.stringify(box)})`);
      }
      await page.locator('#conversation').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, 'find-phone.png') });
      await page.keyboard.press('Escape');
      await page.locator('#outline-open').click();
      await page.locator('#outline a').first().waitFor();
      const box = await page.locator('#outline').boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 391, `the outline is on the screen (${JSON.stringify(box)})`);
      await page.screenshot({ path: join(SCREENSHOTS, 'outline-phone.png') });
      await page.keyboard.press('Escape');
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 });
    }
    b.assertNoProblems();
  });

  test('a hostile session: search snippets, marks and the outline keep its text inert', async () => {
    const header = { type: 'session', version: 3, id: 'f00dbabe00000001', timestamp: '2026-03-01T10:00:00.000Z', cwd: '/work/hostile' };
    const img = '<img src=x onerror="window.__pwned=1">';
    const script = '<script>window.__pwned=2</script>';
    const link = '[click](javascript:window.__pwned=3)';
    const entries = [
      { type: 'message', id: 'a0000001', parentId: null, timestamp: '2026-03-01T10:00:01.000Z', message: { role: 'user', content: `find ${img} and ${script} and ${link}`, timestamp: 1 } },
      { type: 'message', id: 'a0000002', parentId: 'a0000001', timestamp: '2026-03-01T10:00:02.000Z', message: { role: 'assistant', content: [{ type: 'text', text: `Here: ${img} ${link}` }, { type: 'toolCall', id: 'call1', name: 'bash', arguments: { command: `echo '${script}'` } }], timestamp: 2 } },
      { type: 'message', id: 'a0000003', parentId: 'a0000002', timestamp: '2026-03-01T10:00:03.000Z', message: { role: 'toolResult', toolCallId: 'call1', toolName: 'bash', content: [{ type: 'text', text: script }], isError: false, timestamp: 3 } },
    ];
    const file = join(tmp, 'hostile-find.jsonl');
    await writeFile(file, `${[header, ...entries].map((e) => JSON.stringify(e)).join('\n')}\n`);
    const foreign = [];
    const onRequest = (r) => {
      if (!r.url().startsWith(server.url) || /\/x$/.test(new URL(r.url()).pathname)) foreign.push(r.url());
    };
    page.on('request', onRequest);
    try {
      await page.setInputFiles('#file-input', file);
      await fileChip(page, 'hostile-find.jsonl');
      await page.keyboard.press('Control+f');
      await page.locator('#find-query').fill('onerror');
      await page.locator('#find-status').filter({ hasText: '2 messages' }).waitFor();
      assert.match(await page.locator('#find-hits').innerText(), /<img src=x onerror="window.__pwned=1">/, 'the snippet is the text as written');
      assert.equal(await page.locator('#find-hits img, #find-hits script, #find-hits a').count(), 0);
      await page.keyboard.press('Enter');
      await page.locator('#conversation mark.find-hit.current').waitFor();
      await page.locator('#find-query').fill('<script>');
      await page.locator('#find-status').filter({ hasText: '3 messages' }).waitFor();
      for (let i = 0; i < 3; i++) {
        await page.keyboard.press('Enter');
        await page.locator('#find-status').filter({ hasText: `${i + 1} of 3` }).waitFor();
        await page.locator('#conversation mark.find-hit.current').waitFor();
      }
      assert.equal(await page.locator('#conversation mark.find-hit.current').innerText(), '<script>');
      await page.keyboard.press('Escape');
      await page.locator('#outline-open').click();
      await page.locator('#outline a').first().waitFor();
      assert.match(await page.locator('#outline').innerText(), /find <img src=x onerror/);
      await page.keyboard.press('Escape');
      assert.equal(await page.locator('#conversation img, #conversation script, #find-bar img, #outline img').count(), 0, 'no element came from the text');
      assert.equal(await page.locator('a[href^="javascript:"]').count(), 0, 'no javascript: link');
      await page.waitForTimeout(300);
      assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran');
      assert.deepEqual(foreign, [], 'nothing was fetched');
    } finally {
      page.off('request', onRequest);
    }
    b.assertNoProblems();
  });
});


for (const scheme of ['light', 'dark']) {
  describe(`finding things: text contrast, ${scheme} theme`, { timeout: 120_000 }, () => {
    let page;
    const b = suiteBrowser(async (opened) => {
      page = opened.page;
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${opened.server.url}?sample=large-session.jsonl`);
      await page.locator('#conversation .msg').first().waitFor();
    });

    test('the find bar, its hits and marks, the outline, the footer', async () => {
      const check = (selector) => assertContrast(page, selector);
      await page.keyboard.press('Control+f');
      await page.locator('#find-query').fill(TERM);
      await page.locator('#find-status').filter({ hasText: /messages? ·/ }).waitFor();
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      await page.locator('#find-status').filter({ hasText: /^2 of/ }).waitFor();
      await page.locator('#conversation mark.find-hit.current').waitFor();
      await check('#find-status, .find-filters label, #find-hits .find-hit-row span, #find-hits mark');
      await check('#conversation mark.find-hit');
      await check('#conv-position, .goto-form label');
      await page.screenshot({ path: join(SCREENSHOTS, `find-contrast-${scheme}.png`) });
      await page.keyboard.press('Escape');
      await page.locator('#outline-open').click();
      await page.locator('#outline a[aria-current]').waitFor();
      await check('#outline .outline-note, #outline .ol-idx, #outline .ol-text');
      await page.keyboard.press('Escape');
      b.assertNoProblems();
    });
  });
}
