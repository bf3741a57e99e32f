// Hostile session content stays inert: raw HTML in Markdown, javascript:/data: links,
// remote images, HTML in code, tool arguments and results. Nothing runs (window.__pwned
// stays undefined), nothing is fetched from anywhere, no dangerous element reaches the DOM,
// in the conversation and in the exported HTML page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SCREENSHOTS, dropFile, fileChip, openBrowser } from './helpers.mjs';

const TRAP = 'http://127.0.0.1:9'; // nothing listens there: any fetch would be a failed request

const HOSTILE_MD = [
  '# Title <img src=x onerror="window.__pwned=1">',
  '<script>window.__pwned=2</script>',
  '<iframe src="' + TRAP + '/frame"></iframe><style>body{display:none}</style><form action="' + TRAP + '"><input name=a></form>',
  '[click me](javascript:window.__pwned=3) and [data](data:text/html,<script>window.__pwned=4</script>) and [rel](../../etc/passwd)',
  '![tracker](' + TRAP + '/pixel.png)',
  '<a href="https://example.com" onclick="window.__pwned=5" style="color:red">styled</a>',
  '<details open ontoggle="window.__pwned=6">x</details><svg onload="window.__pwned=7"></svg>',
  '`<img src=y onerror=window.__pwned=8>` and **<b onmouseover=window.__pwned=9>bold</b>**',
].join('\n\n') + '\n\n' + [
  '```html',
  '<script>window.__pwned=10</script><img src=z onerror="window.__pwned=11">',
  '```',
  '',
  '| <img src=t onerror=window.__pwned=12> | b |',
  '|---|---|',
  '| [x](javascript:alert(1)) | <u>u</u> |',
].join('\n');

function hostileSession() {
  let t = Date.UTC(2026, 3, 1);
  const e = (i, message) => JSON.stringify({ type: 'message', id: `bad0000${i}`, parentId: i ? `bad0000${i - 1}` : null, timestamp: new Date((t += 1000)).toISOString(), message: { ...message, timestamp: t } });
  const asst = (content) => ({ role: 'assistant', content, provider: 'p', model: 'm<img src=m onerror=window.__pwned=20>', usage: { input: 1, output: 1 }, stopReason: 'toolUse' });
  return [
    JSON.stringify({ type: 'session', version: 3, id: 'bad0000000000bad', timestamp: new Date(t).toISOString(), cwd: '/tmp', title: 'hostile <img src=x onerror=window.__pwned=21>' }),
    e(0, { role: 'user', content: HOSTILE_MD }),
    e(1, asst([
      { type: 'thinking', thinking: '<img src=q onerror=window.__pwned=22> [t](javascript:window.__pwned=23)' },
      { type: 'text', text: HOSTILE_MD },
      { type: 'toolCall', id: 'h1', name: 'bash<img src=n onerror=window.__pwned=24>', arguments: { command: '<script>window.__pwned=25</script> echo "<img src=c onerror=window.__pwned=26>"' } },
      { type: 'toolCall', id: 'h2', name: 'edit', arguments: { path: '<b>p</b>.html', oldText: '<img src=o onerror=window.__pwned=27>', newText: '<script>window.__pwned=28</script>' } },
      { type: 'toolCall', id: 'h3', name: 'write', arguments: { path: 'x.html', content: '<iframe src="' + TRAP + '/w"></iframe>' } },
    ])),
    e(2, { role: 'toolResult', toolCallId: 'h1', toolName: 'bash', content: [{ type: 'text', text: '<img src=r onerror=window.__pwned=29> artifact://0' }], details: { diff: '+<script>window.__pwned=30</script>' }, isError: false }),
    e(3, { role: 'toolResult', toolCallId: 'nowhere', toolName: '<i>ghost</i>', content: [{ type: 'text', text: '<script>window.__pwned=31</script>' }], isError: true }),
    e(4, { role: 'branchSummary', summary: HOSTILE_MD, fromId: 'bad00000' }),
  ].join('\n');
}

/** In the page: dangerous things found under `root` (elements, attributes, links). */
function findDanger(rootSel) {
  const root = document.querySelector(rootSel);
  const out = [];
  for (const el of root.querySelectorAll('script, iframe, style, form, input, svg, img, object, embed, link, meta, b, u, i')) {
    if (el.tagName === 'IMG' && el.getAttribute('src')?.startsWith('data:image/')) continue;
    out.push(`<${el.tagName.toLowerCase()}>`);
  }
  for (const el of root.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (/^on/i.test(a.name) || a.name === 'style' && el.closest('.msg-body') && !el.classList.contains('progress-fill')) out.push(`${el.tagName.toLowerCase()}[${a.name}]`);
      if (/^(href|src|action|formaction|xlink:href)$/i.test(a.name) && !/^(https?:\/\/|mailto:|#$|data:image\/)/i.test(a.value)) out.push(`${el.tagName.toLowerCase()}[${a.name}=${a.value}]`);
    }
  }
  return out;
}

describe('hostile session content stays inert', { timeout: 120_000 }, () => {
  let b;
  let page;
  const foreign = [];

  before(async () => {
    b = await openBrowser();
    page = b.page;
    page.on('request', (r) => {
      if (!r.url().startsWith(b.server.url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url());
    });
    await page.goto(b.server.url);
    await page.locator('#conversation .msg').first().waitFor();
  });

  after(async () => {
    await b?.close();
  });

  test('in the conversation: nothing runs, nothing is fetched, only safe elements and links', async () => {
    await dropFile(page, 'hostile-md.jsonl', hostileSession());
    await fileChip(page, 'hostile-md.jsonl');
    // Every message drawn in full (Markdown and colours are drawn as they come on screen).
    for (const m of await page.locator('#conversation article.msg').all()) {
      await m.scrollIntoViewIfNeeded();
      await page.waitForTimeout(50);
    }
    await page.waitForFunction(() => !document.querySelector('#conversation .lazy-pending:not(.tool-card:not([open]) *)'));
    const first = page.locator('#conversation article.msg[data-index="0"]');
    assert.equal(await first.locator('h1').count(), 1, 'the Markdown was rendered');
    assert.match(await first.innerText(), /<script>window\.__pwned=2<\/script>/, 'raw HTML is shown as text');
    assert.match(await first.innerText(), /click me/, 'a javascript: link keeps its text');
    assert.equal(await first.locator('a', { hasText: 'click me' }).count(), 0, '... and is no link');
    assert.equal(await first.locator('a', { hasText: 'rel' }).count(), 0, 'relative links are not links');
    assert.match(await first.innerText(), /image: tracker/, 'a remote image is only named');
    assert.equal(await first.locator('a[href="https://example.com"]').count(), 0, 'a raw <a> is text, not a link');
    // Click what looks clickable: still nothing runs.
    await first.getByText('click me').click();
    await page.screenshot({ path: join(SCREENSHOTS, 'hostile-markdown.png') });
    assert.deepEqual(await page.evaluate(findDanger, '#conversation'), []);
    assert.deepEqual(await page.evaluate(findDanger, '#session-bar'), []);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(foreign, [], 'nothing fetched from elsewhere');
    b.assertNoProblems();
  });

  test('in the exported HTML page: no scripts, nothing runs or is fetched when it is opened', async () => {
    await page.locator('#export-menu > summary').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'HTML page (.html)' }).click()]);
    const html = await readFile(await download.path(), 'utf8');
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /<(iframe|form|input|svg|object|embed)\b/i);
    assert.doesNotMatch(html, /href="(?!https?:|mailto:)/i, 'links only to http(s) and mailto');
    const view = await b.context.newPage();
    const fetched = [];
    const errors = [];
    view.on('request', (r) => fetched.push(r.url()));
    view.on('pageerror', (e) => errors.push(e.message));
    await view.setContent(html);
    await view.mouse.move(10, 10);
    assert.deepEqual(await view.evaluate(findDanger, 'body'), []);
    assert.equal(await view.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(fetched, []);
    assert.deepEqual(errors, []);
    await view.close();
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(foreign, []);
    b.assertNoProblems();
  });
});
