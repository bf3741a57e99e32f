// End-to-end tests of the viewer's prompt history: PromptHistory (the package) over SQLite
// compiled to wasm (vendored npm @sqlite.org/sqlite-wasm) on OPFS with the opfs-sahpool VFS.
// Adding prompts (a consecutive duplicate is kept once), FTS5 search (prefix, phrase,
// plain words), the "this project only" filter, a malformed query (an error message, no
// crash), persistence across a reload, importing the prompts of the listed sessions, and
// the in-memory fallback (the same SQLite database in memory: a second tab; ?history=memory).
//
// Run: scripts/test-e2e   (or `node --test tests/e2e/history.test.mjs` once built)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, SCREENSHOTS, fileChip, openBrowser } from './helpers.mjs';

const A = 'Fix the parser for nested quotes';
const B = 'Parsing the exact phrase is slow';
const C = 'Phrase the error exactly: exact words, phrase later';
const D = 'Refactor the tokenizer';
const DEMO = '/work/demo';
const OTHER = '/work/other';
const BACKEND = 'saved in this browser';
const BACKEND_NAME = 'sqlite-wasm (opfs-sahpool)';
/**
 * How long any one wait may take: a limit for a loaded 2-core CI, never a delay (every
 * wait ends as soon as its condition holds). A page of this suite waits this long by
 * default, and the suite as a whole at most SUITE_LIMIT.
 */
const WAIT = 120_000;
const SUITE_LIMIT = 900_000;

describe('prompt history (SQLite wasm on OPFS)', { timeout: SUITE_LIMIT }, () => {
  let b;
  let page;
  let server;

  before(async () => {
    assert.ok(
      existsSync(join(ROOT, 'web-demo', 'vendor', 'sqlite-wasm', 'index.mjs')),
      'web-demo/vendor/sqlite-wasm is missing: run scripts/build-web-vendor',
    );
    b = await openBrowser();
    ({ page, server } = b);
    page.setDefaultTimeout(WAIT);
  });

  after(async () => {
    await b?.close();
  });

  /** The prompts the history list shows, in order. */
  const shown = (p = page) => p.locator('#history-list .hi-prompt').allInnerTexts();

  /** Waits until the list shows exactly `expected` (in order, or as a set). */
  async function waitList(expected, { sorted = false, p = page } = {}) {
    const norm = (l) => (sorted ? [...l].sort() : l);
    try {
      await p.waitForFunction(
        ([exp, sort]) => {
          const got = [...document.querySelectorAll('#history-list .hi-prompt')].map((e) => e.textContent);
          return JSON.stringify(sort ? got.sort() : got) === JSON.stringify(exp);
        },
        [norm(expected), sorted],
        { timeout: WAIT },
      );
    } catch {
      /* reported below with the actual list */
    }
    assert.deepEqual(norm(await shown(p)), norm(expected));
  }

  async function search(query, { plain = false, project = false } = {}) {
    await page.locator('#history-plain').setChecked(plain);
    await page.locator('#history-project').setChecked(project);
    await page.locator('#history-query').fill(query);
  }

  async function add(prompt, cwd = DEMO) {
    const status = page.locator('#history-status');
    const seq = Number((await status.getAttribute('data-seq')) ?? 0);
    await page.locator('#history-add-text').fill(prompt);
    await page.locator('#history-add-cwd').fill(cwd ?? '');
    await page.locator('#history-add-btn').click();
    // Each report bumps data-seq (two duplicates in a row show the same text).
    await page.waitForFunction((n) => Number(document.querySelector('#history-status').dataset.seq ?? 0) > n, seq);
    return status.innerText();
  }

  async function openHistoryBox(p = page) {
    await p.locator('#open-history').click();
    await p.locator('#history[open]').waitFor();
    await p.locator('#history-backend.ok, #history-backend.mem').waitFor();
  }

  test('the History box uses SQLite wasm on OPFS; adding prompts keeps a consecutive duplicate once', async () => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await openHistoryBox();
    const backend = await page.locator('[data-testid=history-backend]').innerText();
    assert.ok(backend.startsWith(BACKEND), `backend shown: ${backend}`);
    assert.match(await page.locator('[data-testid=history-backend]').getAttribute('title'), new RegExp(BACKEND_NAME.replace(/[()]/g, '\\$&')), 'the backend named in the tooltip');
    assert.match(backend, /SQLite 3\.\d+/);
    assert.match(backend, /history\.db/);
    assert.equal(await page.locator('#history-fallback').isHidden(), true, 'no fallback note');
    await page.locator('[data-testid=history-empty]', { hasText: 'No prompts yet' }).waitFor();
    assert.equal(await page.locator('#history-cwd').innerText(), DEMO, 'this project = the open session’s cwd');
    assert.equal(await page.locator('#history-add-cwd').inputValue(), DEMO);

    assert.match(await add(A), /^Added/);
    await waitList([A]);
    assert.match(await add(A), /Not added: the same as the previous prompt/);
    await waitList([A]);
    assert.match(await add(`  ${A}  `), /Not added/, 'compared trimmed');
    assert.match(await add(B), /^Added/);
    assert.match(await add(C, OTHER), /^Added/);
    assert.match(await add(D, OTHER), /^Added/);
    assert.match(await add(A), /^Added/, 'not consecutive: stored again');
    assert.match(await add('   '), /Not added: the prompt is empty/);
    // Recent: newest first.
    await waitList([A, D, C, B, A]);
    assert.match(await page.locator('#history-info').innerText(), /Recent prompts, newest first/);
    assert.match(await page.locator('[data-testid=history-backend]').innerText(), /5 prompts/);
    const metas = await page.locator('#history-list .history-item .pi-meta').allInnerTexts();
    assert.match(metas[0], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, 'createdAt shown');
    assert.match(metas[0], /\/work\/demo/);
    assert.match(metas[1], /\/work\/other/);
    await page.screenshot({ path: join(SCREENSHOTS, 'history-recent.png') });
    b.assertNoProblems();
  });

  test('FTS5 search: prefix, phrase, best first; plain words; this project only', async () => {
    await search('pars*');
    await waitList([A, A, B], { sorted: true });
    assert.equal(await page.locator('#history-info').innerText(), '3 matches, best first (bm25) · all projects');
    assert.equal(await page.locator('#history-list .hi-rank').first().innerText(), '1.');
    await page.screenshot({ path: join(SCREENSHOTS, 'history-search-prefix.png') });

    await search('"exact phrase"');
    await waitList([B]);
    await search('exact');
    await waitList([B, C], { sorted: true });
    await search('tokenizer OR quotes');
    await waitList([A, A, D], { sorted: true });
    await search('pars* NOT quotes');
    await waitList([B]);
    await page.screenshot({ path: join(SCREENSHOTS, 'history-search-phrase.png') });

    // A query of plain words is a prefix query by default: `pars` finds "parser".
    await search('pars');
    await waitList([A, A, B], { sorted: true });
    assert.equal(await page.locator('[data-testid=history-fts-query]').innerText(), '"pars"*');
    await search('nested quotes');
    await waitList([A, A], { sorted: true });

    // Plain words: each word a prefix term, FTS5 syntax taken literally.
    await search('pars', { plain: true });
    await waitList([A, A, B], { sorted: true });
    assert.equal(await page.locator('[data-testid=history-fts-query]').innerText(), '"pars"*');
    await search('"exact phrase', { plain: true });
    await waitList([B, C], { sorted: true });

    // This project only (the open session's cwd, /work/demo).
    await search('exact', { project: true });
    await waitList([B]);
    assert.match(await page.locator('#history-info').innerText(), /1 match, best first \(bm25\) · in \/work\/demo/);
    await search('', { project: true });
    await waitList([A, B, A]);
    await page.screenshot({ path: join(SCREENSHOTS, 'history-this-project.png') });
    await search('', { project: false });
    await waitList([A, D, C, B, A]);
    b.assertNoProblems();
  });

  test('a malformed query shows an error message, not a crash', async () => {
    const err = page.locator('[data-testid=history-error]');
    for (const bad of ['"exact phrase', '(pars*', 'AND', 'nosuchcolumn: x']) {
      // From a list without an error, so the error read is this query's, not the last one's.
      await search('tokenizer');
      await waitList([D]);
      await search(bad);
      await err.waitFor();
      const text = await err.innerText();
      assert.match(text, /Invalid search: /, `${bad}: ${text}`);
      assert.match(text, /fts5|syntax|unterminated|no such column/i, `${bad}: ${text}`);
    }
    await page.screenshot({ path: join(SCREENSHOTS, 'history-invalid-query.png') });
    // Still working.
    await search('tokenizer');
    await waitList([D]);
    assert.equal(await page.locator('[data-testid=history-error]').count(), 0);
    b.assertNoProblems();
  });

  test('the prompts are still there after a reload (OPFS)', async () => {
    await page.reload();
    await page.locator('#conversation .msg').first().waitFor();
    await openHistoryBox();
    assert.ok((await page.locator('[data-testid=history-backend]').innerText()).startsWith(BACKEND));
    await search('');
    await waitList([A, D, C, B, A]);
    await search('pars*');
    await waitList([A, A, B], { sorted: true });
    // The dedupe state comes from the database: A is still the last prompt.
    await search('');
    assert.match(await add(A), /Not added: the same as the previous prompt/);
    await waitList([A, D, C, B, A]);
    await page.screenshot({ path: join(SCREENSHOTS, 'history-after-reload.png') });
    b.assertNoProblems();
  });

  test('importing the prompts of the listed sessions (this project, then all projects)', async () => {
    await page.locator('#history-import').click();
    await page.locator('#history-status', { hasText: 'Added 6 of 6 prompts from 3 sessions' }).waitFor();
    assert.match(await page.locator('#history-import-hint').innerText(), /this project \(\/work\/demo\)/);
    await search('flaky');
    await waitList(['CI fails every few runs on `net::tests::reconnects`. Find out why the test is flaky.']);
    assert.match(await page.locator('#history-list .pi-meta').first().innerText(), /\/work\/demo/);
    // All branches, in time order: the side branch's prompt is the newest.
    await search('');
    await waitList([
      'Alternatively, could we just mark the test #[serial]?',
      'Go ahead, use port 0 everywhere.',
      'CI fails every few runs on `net::tests::reconnects`. Find out why the test is flaky.',
      'Make the JSON output pretty when stdout is a terminal.',
      'Add a `--json` flag to `demo list` that prints the items as JSON lines.',
      'Write a README with a quick start and an architecture section.',
      A, D, C, B, A,
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, 'history-imported.png') });

    // The picker lists all projects: the import follows it.
    await page.locator('#history-close').click();
    await page.locator('#open-picker').click();
    await page.locator('#picker-list .picker-item').first().waitFor();
    await page.locator('#picker-scope').click();
    await page.locator('#picker-scope[data-scope=all]').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 4);
    await page.locator('#picker-close').click();
    await openHistoryBox();
    await page.locator('#history-import').click();
    await page.locator('#history-status', { hasText: 'from 4 sessions' }).waitFor();
    await search('cargo');
    await waitList(['Run cargo update and fix whatever breaks.']);
    assert.match(await page.locator('#history-list .pi-meta').first().innerText(), /\/work\/other/);
    await search('cargo', { project: true });
    await page.locator('[data-testid=history-empty]', { hasText: 'No prompt matches' }).waitFor();
    await search('', { project: false });
    b.assertNoProblems();
  });

  test('a prompt links back to the sessions where it was typed', async () => {
    await search('cargo');
    await waitList(['Run cargo update and fix whatever breaks.']);
    const row = page.locator('#history-list .history-item').first();
    const toggle = row.getByRole('button', { name: 'Sessions' });
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const found = row.locator('[data-testid=prompt-sessions] .hi-session');
    // Only the one session of /work/other that has it, from the samples (waited for: the
    // list is filled as the sessions are read, and may be drawn again meanwhile).
    await page.waitForFunction(() => document.querySelectorAll(
      '#history-list .history-item:first-child [data-testid=prompt-sessions] .hi-session').length === 1);
    assert.equal(await found.count(), 1);
    assert.match(await found.first().innerText(), /^Upgrade the dependencies · Demo agent directory · /);
    await page.screenshot({ path: join(SCREENSHOTS, 'history-prompt-sessions.png') });
    await found.first().click();
    await page.locator('#history').waitFor({ state: 'hidden' });
    await page.locator('#conversation .msg', { hasText: 'Run cargo update and fix whatever breaks.' }).first().waitFor();
    await fileChip(page, '2026-03-01T19-30-00-000Z_b4f2c8e6a0d1357a.jsonl');

    // A prompt typed by hand, in no session: said so. (The list of the search first: a
    // row of the list before it would be drawn again under the click.)
    await openHistoryBox();
    await search(A);
    await waitList([A, A]);
    const handRow = page.locator('#history-list .history-item', { hasText: A }).first();
    await handRow.getByRole('button', { name: 'Sessions' }).click();
    await handRow.locator('[data-testid=prompt-sessions]', { hasText: `No session of ${DEMO} here contains this prompt.` }).waitFor();
    await handRow.getByRole('button', { name: 'Sessions' }).click();
    assert.equal(await handRow.locator('[data-testid=prompt-sessions]').count(), 0, 'a second press hides the list');
    await search('');
    b.assertNoProblems();
  });

  test('another tab falls back to an in-memory history and says so', async () => {
    const page2 = await b.context.newPage();
    page2.setDefaultTimeout(WAIT);
    const problems2 = [];
    page2.on('pageerror', (e) => problems2.push(`pageerror: ${e.message}`));
    page2.on('console', (m) => {
      if (m.type() === 'error') problems2.push(`console.error: ${m.text()}`);
    });
    try {
      await page2.goto(server.url);
      await page2.locator('#conversation .msg').first().waitFor();
      await openHistoryBox(page2);
      const fallback = page2.locator('[data-testid=history-fallback]');
      await fallback.waitFor();
      assert.match(await fallback.innerText(), /^History kept in memory only: another tab of the viewer has the history database open/);
      assert.match(await page2.locator('[data-testid=history-backend]').innerText(), /^this tab only/);
      assert.match(await page2.locator('[data-testid=history-backend]').innerText(), /SQLite 3\.\d+/, 'the fallback is SQLite in memory');
      // The in-memory history works the same way.
      await page2.locator('#history-add-text').fill('Parse the flags in memory');
      await page2.locator('#history-add-btn').click();
      await page2.locator('#history-status', { hasText: 'Added' }).waitFor();
      await page2.locator('#history-add-text').fill('Refactor in memory');
      await page2.locator('#history-add-btn').click();
      await waitList(['Refactor in memory', 'Parse the flags in memory'], { p: page2 });
      await page2.locator('#history-query').fill('pars*');
      await waitList(['Parse the flags in memory'], { p: page2 });
      assert.match(await page2.locator('#history-info').innerText(), /1 match, best first/);
      await page2.screenshot({ path: join(SCREENSHOTS, 'history-fallback-second-tab.png') });
      assert.deepEqual(problems2, []);
    } finally {
      await page2.close();
    }
    // The first tab still has the database, and did not see the other tab's prompt.
    await search('pars*');
    await waitList([A, A, B], { sorted: true });
    assert.ok((await page.locator('[data-testid=history-backend]').innerText()).startsWith(BACKEND));
    b.assertNoProblems();
  });

  test('?history=memory keeps the history in memory only, and says so', async () => {
    await page.goto(`${server.url}?history=memory`);
    await page.locator('#conversation .msg').first().waitFor();
    await openHistoryBox();
    assert.match(await page.locator('[data-testid=history-fallback]').innerText(), /^History kept in memory only: asked for by \?history=memory/);
    await page.locator('[data-testid=history-empty]').waitFor();
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await openHistoryBox();
    assert.ok((await page.locator('[data-testid=history-backend]').innerText()).startsWith(BACKEND));
    await search('pars*');
    await waitList([A, A, B], { sorted: true });
    b.assertNoProblems();
  });
});
