// Export of the open branch: the whole branch (85 messages, while the page holds a window of
// 40) as Markdown, as a self-contained HTML page (no scripts, nothing fetched when opened),
// and as the package's context JSON, byte for byte what Session.contextJson() returns.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, SCREENSHOTS, dropFile, fileChip, openBrowser } from './helpers.mjs';
import { contentMessages, contentSession } from './content-fixture.mjs';

const NAME = 'content-demo.jsonl';

describe('export of the open branch', { timeout: 180_000 }, () => {
  let b;
  let page;

  /** Picks `label` in the Export menu by keyboard and returns the downloaded file. */
  const exportAs = async (label) => {
    const summary = page.locator('#export-menu > summary');
    await summary.focus();
    await page.keyboard.press('Enter');
    const item = page.getByRole('button', { name: label });
    await item.waitFor();
    await item.focus();
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    await page.locator('[data-testid=export-toast]', { hasText: download.suggestedFilename() }).waitFor();
    assert.equal(await page.locator('#export-menu').evaluate((d) => d.open), false, 'the menu closes');
    return { name: download.suggestedFilename(), text: await readFile(await download.path(), 'utf8') };
  };

  before(async () => {
    b = await openBrowser();
    page = b.page;
    await page.goto(b.server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await dropFile(page, NAME, contentSession());
    await fileChip(page, NAME);
    await page.locator('#conversation article.msg[data-index="0"]').waitFor();
  });

  after(async () => {
    await b?.close();
  });

  test('the page holds one window; the menu is reachable by keyboard', async () => {
    const loaded = await page.locator('#conversation article.msg').count();
    assert.ok(loaded < 85, `only a window is loaded (${loaded} of 85)`);
    await page.locator('#export-menu > summary').click();
    await page.getByRole('button', { name: 'Markdown (.md)' }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'export-menu.png') });
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#export-menu').evaluate((d) => d.open), false, 'Esc closes the menu');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#export-menu > summary').scrollIntoViewIfNeeded();
    await page.locator('#export-menu > summary').click();
    const box = await page.locator('#export-menu .export-items').boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `the menu fits the phone (${box.x}..${box.x + box.width})`);
    await page.screenshot({ path: join(SCREENSHOTS, 'export-menu-phone.png') });
    await page.keyboard.press('Escape');
    await page.setViewportSize({ width: 1440, height: 900 });
    b.assertNoProblems();
  });

  test('Markdown: every message of the branch, with headings, code fences and tool calls', async () => {
    const { name, text } = await exportAs('Markdown (.md)');
    assert.match(name, /^content-demo-c0ffee84\.md$/);
    assert.match(text, /^# Content rendering demo\n/);
    assert.match(text, /- Session c0ffee00c0ffee00\n/);
    const headings = text.match(/^## .* · #\d+$/gm);
    assert.equal(headings.length, 85, 'one heading per message, the unloaded ones too');
    assert.equal(headings[0], '## User · #1');
    assert.equal(headings[84], '## User · #85');
    assert.match(text, /## User · #85\n\nthe last message of the branch\n/);
    assert.match(text, /\n- first item\n- second item with `inline code`\n/);
    assert.match(text, /\*\*Tool call: bash\*\*\n\n```bash\ncargo test --quiet 2>&1 \| tail -n 5\n```\n\n```json\n\{\n {2}"timeout": 120\n\}\n```/);
    assert.match(text, /## Tool result · bash · #3\n\n```\ntest result: ok\. 42 passed; 0 failed\n```/);
    b.assertNoProblems();
  });

  test('HTML: one self-contained page, sanitized, no scripts, nothing fetched when opened', async () => {
    const { name, text } = await exportAs('HTML page (.html)');
    assert.match(name, /\.html$/);
    assert.match(text, /^<!doctype html>/i);
    assert.doesNotMatch(text, /<script/i, 'no scripts');
    assert.doesNotMatch(text, /<link\b/i, 'CSS inline, no stylesheet links');
    assert.doesNotMatch(text, /\son[a-z]+=/i, 'no event handler attributes');
    assert.match(text, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">/);

    const view = await b.context.newPage();
    const requests = [];
    view.on('request', (r) => requests.push(r.url()));
    await view.setContent(text);
    const messages = contentMessages();
    const merged = messages.filter((m) => m.role === 'toolResult').length; // results shown in their call's card
    assert.equal(await view.locator('article.msg').count(), messages.length - merged);
    assert.match(await view.locator('article.msg').last().innerText(), /the last message of the branch/);
    assert.deepEqual(await view.locator('article.msg').first().locator('ul > li').allInnerTexts(), ['first item', 'second item with inline code']);
    assert.equal(await view.locator('table th').count(), 2);
    assert.ok((await view.locator('pre .hljs-keyword').count()) > 0, 'code coloured');
    assert.equal(await view.locator('.diff-wrap .diff-added').count(), 1, 'the edit as a diff');
    assert.equal(await view.locator('details.json-details[open] .diff-added').count(), 1, 'its diff with line numbers, open');
    assert.match(await view.locator('.tool-card[data-tool-call-id=tBash] .tool-result-slot').innerText(), /42 passed/);
    assert.equal(await view.locator('button, [tabindex]').count(), 0, 'no controls of the viewer');
    assert.equal(await view.locator('a.ext-link').getAttribute('rel'), 'noopener noreferrer');
    await view.screenshot({ path: join(SCREENSHOTS, 'export-html.png') });
    await view.setViewportSize({ width: 390, height: 844 });
    await view.screenshot({ path: join(SCREENSHOTS, 'export-html-phone.png') });
    assert.deepEqual(requests, [], 'nothing fetched');
    await view.close();
    b.assertNoProblems();
  });

  test('JSON: exactly the package\'s context JSON of the branch', async () => {
    const { name, text } = await exportAs('Context JSON (.json)');
    assert.match(name, /\.json$/);
    const { Session } = await import(join(ROOT, 'pkg', 'node.mjs'));
    const session = Session.fromText(contentSession());
    try {
      assert.equal(text, session.contextJson());
    } finally {
      session.free();
    }
    assert.equal(JSON.parse(text).messages.length, 85);
    b.assertNoProblems();
  });
});
