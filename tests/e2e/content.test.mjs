// Message content as the reader sees it: Markdown (lists, tables, links, highlighted code),
// headings per message, code blocks reachable and scrollable by keyboard with a copy button,
// Copy as Markdown, tool calls and results as one card (diff for edits, bash as code),
// "Hide tool details" kept across reloads, and call/result pairs split across windows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SCREENSHOTS, dropFile, fileChip, openBrowser } from './helpers.mjs';
import { contentSession } from './content-fixture.mjs';

const NAME = 'content-demo.jsonl';

describe('message content', { timeout: 240_000 }, () => {
  let b;
  let page;
  const msg = (n) => page.locator(`#conversation article.msg[data-index="${n - 1}"]`);

  const openDemo = async () => {
    await dropFile(page, NAME, contentSession());
    await fileChip(page, NAME);
    await msg(1).locator('.text.md:not(.plain)').first().waitFor();
  };

  before(async () => {
    b = await openBrowser();
    page = b.page;
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: b.server.url });
    await page.goto(b.server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await openDemo();
  });

  after(async () => {
    await b?.close();
  });

  test('Markdown: lists, table, links and code are elements, not literal marks', async () => {
    const first = msg(1);
    assert.deepEqual(await first.locator('ul > li').allInnerTexts(), ['first item', 'second item with inline code']);
    assert.deepEqual(await first.locator('ol > li').allInnerTexts(), ['step one', 'step two']);
    assert.deepEqual(await first.locator('table th').allInnerTexts(), ['name', 'value']);
    assert.equal(await first.locator('table td').count(), 4);
    assert.equal(await first.locator('table td[align=right]').count(), 2, 'the column alignment is kept');
    assert.equal(await first.locator('li code').innerText(), 'inline code');
    const text = await first.locator('.msg-body').innerText();
    assert.doesNotMatch(text, /^- first item/m, 'no literal list marks');
    assert.doesNotMatch(text, /\|------\|/, 'no raw table pipes');

    const ext = first.locator('a.ext-link');
    assert.equal(await ext.getAttribute('href'), 'https://example.com/docs');
    assert.equal(await ext.getAttribute('target'), '_blank');
    assert.equal(await ext.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await first.locator('a.int-link[data-url="artifact://0"]').count(), 1, 'artifact:// stays an internal link');

    // Code: coloured by highlight.js once on screen, labelled, focusable.
    const py = first.locator('pre.code[data-lang=python]');
    await py.scrollIntoViewIfNeeded();
    await first.locator('pre.code[data-highlighted=python]').waitFor();
    assert.ok((await py.locator('span[class^=hljs-]').count()) >= 3, 'keywords, strings and comments are spans');
    assert.equal(await py.getAttribute('tabindex'), '0');
    assert.equal(await py.getAttribute('aria-label'), 'Code, python');
    const kw = await py.locator('.hljs-keyword').first().evaluate((e) => getComputedStyle(e).color);
    const plain = await py.evaluate((e) => getComputedStyle(e).color);
    assert.notEqual(kw, plain, 'keywords are coloured');
    await page.screenshot({ path: join(SCREENSHOTS, 'content-markdown.png') });
    b.assertNoProblems();
  });

  test('messages have headings; a code block is reached and scrolled by keyboard and copied', async () => {
    const headings = (await page.locator('#conversation article.msg:not(.msg-merged) > header h3').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
    assert.ok(headings.length >= 30, `one heading per message (${headings.length})`);
    assert.equal(headings[0], 'User #1');
    assert.equal(headings[1], 'Assistant · anthropic/claude-sonnet-4-5 #2', 'the model is in the heading (for screen readers)');

    const js = msg(1).locator('pre.code[data-lang=js]');
    await js.scrollIntoViewIfNeeded();
    await page.keyboard.press('Shift'); // the last interaction is the keyboard: focus rings show
    await js.focus();
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.lang), 'js');
    assert.equal(await js.evaluate((e) => getComputedStyle(e).outlineStyle), 'solid', 'a visible focus ring');
    assert.ok(await js.evaluate((e) => e.scrollWidth > e.clientWidth), 'the long line overflows');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.activeElement.scrollLeft > 0);

    // Its Copy button (Tab from the code reaches it) puts the code on the clipboard.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Copy code, js');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid=copy-toast]', { hasText: 'Code copied' }).waitFor();
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^const value = "abcdefghij"/);
    b.assertNoProblems();
  });

  test('Copy puts a message on the clipboard as Markdown', async () => {
    await msg(1).scrollIntoViewIfNeeded();
    await msg(1).getByRole('button', { name: 'Copy message #1 as Markdown' }).click();
    await page.locator('[data-testid=copy-toast]', { hasText: 'Message #1 copied as Markdown' }).waitFor();
    const md = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(md, /^## User · #1\n/);
    assert.match(md, /\n- first item\n/);
    assert.match(md, /\| alpha \| 1 \|/);
    assert.match(md, /```python\ndef greet/);

    await msg(2).getByRole('button', { name: 'Copy message #2 as Markdown' }).click();
    await page.locator('[data-testid=copy-toast]', { hasText: 'Message #2 copied as Markdown' }).waitFor();
    const md2 = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(md2, /^## Assistant · anthropic\/claude-sonnet-4-5 · #2/);
    assert.match(md2, /> \*\*Thinking\*\*/);
    assert.match(md2, /\*\*Tool call: bash\*\*\n\n```bash\ncargo test --quiet 2>&1 \| tail -n 5\n```/);
    b.assertNoProblems();
  });

  test('a tool call and its result are one card: bash as code, edit as a diff, read as names and values', async () => {
    const bash = page.locator('#conversation .tool-card[data-tool-call-id=tBash]');
    await bash.scrollIntoViewIfNeeded();
    assert.equal(await bash.locator('pre.code[data-lang=bash]').innerText(), 'cargo test --quiet 2>&1 | tail -n 5');
    assert.match(await bash.locator('.tool-kv').innerText(), /timeout\s+120/);
    assert.match(await bash.locator('.tool-result-slot').innerText(), /42 passed; 0 failed/, 'the result is in the call\'s card');
    assert.equal(await bash.locator('summary .badge-ok').count(), 1);
    // The result's own message is only a marker (no box of its own), still #3 for navigation.
    const marker = msg(3);
    assert.equal(await marker.getAttribute('data-merged'), '1');
    assert.ok(((await marker.boundingBox())?.height ?? 0) <= 1, 'the merged result takes no room');
    assert.match(await marker.locator('h3').textContent(), /shown with its call in message #2/);
    assert.equal(await page.locator('#conversation .role-toolResult:not(.msg-merged)').count(), 0, 'no separate result cards in this window');

    const edit = page.locator('#conversation .tool-card[data-tool-call-id=tEdit]');
    await edit.scrollIntoViewIfNeeded();
    assert.match(await edit.locator('.tool-kv').innerText(), /path\s+src\/lib\.rs/);
    assert.equal(await edit.locator('.diff-summary').innerText(), '1 line removed, 1 line added');
    const removed = edit.locator('.diff-removed');
    const added = edit.locator('.diff-added');
    assert.equal(await removed.count(), 1);
    assert.equal(await added.count(), 1);
    // Not colour alone: a sign and a spoken word on each changed line.
    assert.equal(await removed.textContent(), '−removed:     a - b');
    assert.equal(await added.textContent(), '+added:     a + b');
    assert.equal(await edit.locator('.diff-unchanged').count(), 2);
    const [red, green] = [await removed.evaluate((e) => getComputedStyle(e).color), await added.evaluate((e) => getComputedStyle(e).color)];
    assert.notEqual(red, green);
    assert.match(await edit.locator('pre.diff').getAttribute('aria-label'), /^Changes to src\/lib\.rs: 1 line removed, 1 line added$/);

    const read = page.locator('#conversation .tool-card[data-tool-call-id=tRead]');
    assert.match(await read.locator('.tool-summary').innerText(), /read\s+src\/lib\.rs \(from line 1, 20 lines\)/);
    assert.deepEqual(await read.locator('.tool-kv dt').allInnerTexts(), ['path', 'offset', 'limit']);
    assert.match(await read.locator('.tool-result-slot').innerText(), /a \+ b/);
    await edit.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'content-tool-cards.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await edit.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'content-tool-cards-phone.png') });
    const card = await edit.boundingBox();
    assert.ok(card.width <= 390, `the card fits the phone (${card.width}px)`);
    await msg(1).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'content-markdown-phone.png') });
    await page.setViewportSize({ width: 1440, height: 900 });
    b.assertNoProblems();
  });

  test('"Hide tool details" folds every card to one line, and the choice survives a reload', async () => {
    const toggle = page.getByRole('button', { name: 'Hide tool details' });
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    const bash = page.locator('#conversation .tool-card[data-tool-call-id=tBash]');
    const tall = (await bash.boundingBox()).height;
    await toggle.focus();
    await page.keyboard.press('Enter');
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('#conversation details.tool-card[open]').count(), 0, 'all cards folded');
    await bash.scrollIntoViewIfNeeded();
    const short = (await bash.boundingBox()).height;
    const line = (await bash.locator('.tool-summary').boundingBox()).height;
    assert.ok(short <= line + 3 && short < tall / 2, `one line: ${short}px (its summary ${line}px; open ${tall}px)`);
    assert.match(await bash.locator('.tool-summary').innerText(), /bash\s+cargo test --quiet/, 'the line still says what ran');
    await page.screenshot({ path: join(SCREENSHOTS, 'content-tools-hidden.png') });

    await page.reload();
    await fileChip(page, 'demo-branches.jsonl'); // a file opened by hand is not read again: the sample
    await openDemo();
    assert.equal(await page.getByRole('button', { name: 'Hide tool details' }).getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('#conversation details.tool-card[open]').count(), 0, 'still folded after a reload');
    // One card opened by hand shows its body.
    const again = page.locator('#conversation .tool-card[data-tool-call-id=tEdit]');
    await again.locator('.tool-summary').click();
    await again.locator('.diff-added').waitFor();
    await page.getByRole('button', { name: 'Hide tool details' }).click();
    assert.equal(await page.locator('#conversation details.tool-card:not([open])').count(), 0);
    b.assertNoProblems();
  });

  test('a result loaded in the next window joins its call; one whose call is not loaded has its own card', async () => {
    // From the start: #40 calls tA, its result #41 comes with the next window.
    const cardA = page.locator('#conversation .tool-card[data-tool-call-id=tA]');
    await cardA.scrollIntoViewIfNeeded();
    await page.locator('#conversation .sentinel-bottom').scrollIntoViewIfNeeded();
    await page.locator('#conversation article.msg[data-index="40"]').waitFor({ state: 'attached' });
    await cardA.locator('.tool-result-slot', { hasText: 'across-the-first-window' }).waitFor();
    assert.equal(await page.locator('#conversation article.msg[data-index="40"]').getAttribute('data-merged'), '1');

    // From the end: the window starts at #46, the result of tB, whose call (#45) is not loaded.
    await page.locator('#jump-end').click();
    const lone = page.locator('#conversation article.msg[data-index="45"]');
    await lone.locator('.tool-lone').waitFor();
    await lone.scrollIntoViewIfNeeded();
    assert.match(await lone.locator('h3').textContent(), /Tool result · bash/);
    await lone.locator('.tool-result', { hasText: 'across-the-last-window' }).waitFor();
    // Loading earlier messages brings the call, which points at the result below.
    await page.locator('#conversation').evaluate((c) => (c.scrollTop = 0));
    const cardB = page.locator('#conversation .tool-card.tool-call[data-tool-call-id=tB]');
    await cardB.waitFor({ state: 'attached' });
    assert.match(await cardB.locator('.tool-summary').textContent(), /result in #46/);
    b.assertNoProblems();
  });

  test('long text stays clamped with "Show all", which then shows Markdown', async () => {
    const long = Array.from({ length: 60 }, (_, i) => `- item ${i + 1}`).join('\n');
    const text = contentSession().replace('"content":"filler question 9"', `"content":${JSON.stringify(long)}`);
    await dropFile(page, 'content-long.jsonl', text);
    await fileChip(page, 'content-long.jsonl');
    const m9 = msg(9);
    await m9.scrollIntoViewIfNeeded();
    await m9.locator('.text.md:not(.plain)').waitFor();
    const shown = await m9.locator('li').count();
    assert.ok(shown > 0 && shown < 60, `clamped: ${shown} of 60 items`);
    await m9.getByRole('button', { name: /Show all · 60 lines/ }).click();
    await page.waitForFunction(() => document.querySelectorAll('#conversation article[data-index="8"] li').length === 60);
    b.assertNoProblems();
  });
});
