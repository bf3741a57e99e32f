// The session bar's totals of the open branch (tokens, cost, duration, models): the numbers
// shown equal what this test computes from the session file itself, for a real session and
// for each branch of the demo; a hostile session's text stays text there.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, ROOT, SCREENSHOTS, dropFile, fileChip, suiteBrowser } from './helpers.mjs';

const nf = new Intl.NumberFormat('en-US');

/** Expected totals of the messages of `entries` (a branch, root first), computed here. */
function expected(entries) {
  const messages = entries.filter((e) => e.type === 'message');
  const assistant = messages.filter((e) => e.message.role === 'assistant');
  const sum = (f) => assistant.reduce((n, e) => n + (e.message.usage?.[f] ?? 0), 0);
  const times = messages.map((e) => e.message.timestamp ?? Date.parse(e.timestamp));
  const costs = assistant.map((e) => e.message.usage?.cost?.total).filter((c) => typeof c === 'number');
  const cost = costs.reduce((a, c) => a + c, 0);
  const secs = Math.round((Math.max(...times) - Math.min(...times)) / 1000);
  const min = Math.floor(secs / 60);
  const duration = secs < 60 ? `${secs} s` : min < 60 ? `${min} min ${String(secs % 60).padStart(2, '0')} s` : `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
  return {
    tokens: `${nf.format(sum('input'))} in · ${nf.format(sum('output'))} out`,
    cost: costs.length ? `$${cost >= 1 ? cost.toFixed(2) : cost.toFixed(4)}` : null,
    duration,
    models: [...new Set(assistant.map((e) => `${e.message.provider}/${e.message.model}`))],
  };
}

/** The branch root → `leafId` of a v3 file's entries (by parentId). */
function pathTo(entries, leafId) {
  const byId = new Map(entries.filter((e) => e.id).map((e) => [e.id, e]));
  const path = [];
  for (let e = byId.get(leafId); e; e = e.parentId ? byId.get(e.parentId) : null) path.unshift(e);
  return path;
}

const readJsonl = async (path) => (await readFile(path, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('session totals in the header', { timeout: 120_000 }, () => {
  let page;
  const b = suiteBrowser((opened) => (page = opened.page));

  const shown = async () => {
    const box = page.locator('#session-totals');
    const value = async (k) => ((await box.locator(`[data-testid=chip-${k}]`).count()) ? box.locator(`[data-testid=chip-${k}] .chip-v`).innerText() : null);
    return {
      tokens: await value('tokens'),
      cost: await value('cost'),
      duration: await value('duration'),
      models: (await value('models'))?.split(', ') ?? [],
      modelsTip: (await box.locator('[data-testid=chip-models]').getAttribute('title')) ?? '',
    };
  };
  const assertShown = async (want, where) => {
    await page.locator('#session-totals [data-testid=chip-tokens] .chip-v', { hasText: want.tokens }).waitFor();
    const got = await shown();
    assert.equal(got.tokens, want.tokens, `${where}: tokens`);
    assert.equal(got.cost, want.cost, `${where}: cost`);
    assert.equal(got.duration, want.duration, `${where}: duration`);
    assert.deepEqual(got.models, want.models, `${where}: models`);
  };

  test('a real session (large-session.jsonl, one branch): its sums', async () => {
    const want = expected(await readJsonl(join(FIXTURES, 'large-session.jsonl')));
    assert.equal(want.models.length, 2, 'the fixture uses two models');
    await page.goto(`${b.server.url}?sample=large-session.jsonl`);
    await fileChip(page, 'large-session.jsonl');
    await assertShown(want, 'large-session');
    const tip = (await shown()).modelsTip;
    for (const m of want.models) assert.match(tip, new RegExp(`${m.replace(/[.]/g, '\\.')} \\(\\d[\\d,]* messages?\\)`), 'the tooltip counts each model\'s messages');
    await page.locator('#session-totals').screenshot({ path: join(SCREENSHOTS, 'totals-large-session.png') });
    b.assertNoProblems();
  });

  test('the demo: the totals follow the branch shown (compacted messages included)', async () => {
    const entries = await readJsonl(join(ROOT, 'web-demo', 'samples', 'demo-branches.jsonl'));
    const leaf = entries.at(-1).id;
    const main = expected(pathTo(entries, leaf));
    const side = expected(pathTo(entries, '0a1b2c3d'));
    assert.notEqual(main.tokens, side.tokens, 'the two branches differ');
    await page.goto(b.server.url);
    await fileChip(page, 'demo-branches.jsonl');
    await assertShown(main, 'demo, main branch');
    await page.locator('#node-0a1b2c3d').click();
    await assertShown(side, 'demo, side branch');
    await page.screenshot({ path: join(SCREENSHOTS, 'totals-desktop.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('tab', { name: 'Tree' }).click();
    await page.locator(`#node-${leaf}`).click();
    await assertShown(main, 'phone, main branch');
    assert.equal(await page.locator('#session-totals [data-testid=chip-tokens]').isVisible(), true, 'shown on a phone without Details');
    await page.screenshot({ path: join(SCREENSHOTS, 'totals-phone.png') });
    await page.setViewportSize({ width: 1440, height: 900 });
    b.assertNoProblems();
  });

  test('a hostile session: markup in its model, title and text stays text, nothing runs, nothing is fetched', async () => {
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    const img = '<img src=x onerror="window.__pwned=1">';
    const lines = [
      { type: 'session', version: 3, id: 'hostile01', timestamp: '2026-03-01T10:00:00.000Z', cwd: '/w', title: `${img}<script>window.__pwned=2</script>` },
      { type: 'message', id: 'h1', parentId: null, timestamp: '2026-03-01T10:00:01.000Z', message: { role: 'user', content: `look: [click](javascript:window.__pwned=3) ${img}`, timestamp: 1772359201000 } },
      {
        type: 'message', id: 'h2', parentId: 'h1', timestamp: '2026-03-01T10:01:01.000Z',
        message: { role: 'assistant', content: [{ type: 'text', text: `<script>window.__pwned=4</script>[x](javascript:alert(1))` }], provider: '<b onmouseover="window.__pwned=5">p</b>', model: img, usage: { input: 7, output: 3, cost: { total: 0.5 } }, timestamp: 1772359261000 },
      },
    ];
    await dropFile(page, 'hostile.jsonl', `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    await fileChip(page, 'hostile.jsonl');
    const want = expected(lines.slice(1));
    await assertShown(want, 'hostile');
    const models = page.locator('#session-totals [data-testid=chip-models] .chip-v');
    assert.equal(await models.innerText(), `<b onmouseover="window.__pwned=5">p</b>/${img}`, 'the model is shown as text');
    await models.hover();
    await page.locator('#session-bar h1').hover();
    assert.equal(await page.locator('#session-bar img, #session-bar script, #session-bar b').count(), 0, 'no element made of session text');
    assert.equal(await page.locator('a[href^="javascript:" i]').count(), 0, 'no javascript: link');
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran');
    const origin = new URL(b.server.url).origin;
    assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:')), [], 'nothing fetched from elsewhere');
    assert.deepEqual(requests.filter((u) => /\/x(\?|$)/.test(u)), [], 'the img src was not fetched');
    b.assertNoProblems();
  });
});
