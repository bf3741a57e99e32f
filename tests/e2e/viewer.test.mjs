// End-to-end test of the in-browser session viewer (web-demo/) with the real wasm package.
//
// Serves web-demo/ with scripts/serve.mjs on a free port, drives headless Chromium
// (/usr/bin/chromium, never a downloaded browser) with playwright-core, and fails on any
// page error, console error or failed request (helpers.mjs). Screenshots:
// tests/e2e/screenshots/*.png. The picker, the browser storage and large sessions are in
// sessions.test.mjs and large-session.test.mjs.
//
// Run: scripts/test-e2e   (or `node --test tests/e2e/` once web-demo/pkg is built)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, SCREENSHOTS, FIXTURES, cssEscape as CSS_escape, dropFile, fileChip, suiteBrowser } from './helpers.mjs';

describe('session viewer', { timeout: 180_000 }, () => {
  let server;
  let page;
  const b = suiteBrowser((opened) => ({ server, page } = opened));

  const conversationText = () => page.locator('#conversation').innerText();
  // Each test reports (and clears) what went wrong during it.
  const assertNoProblems = () => b.assertNoProblems();

  test('serves the page, the wasm package and the samples with the right MIME types', async () => {
    for (const [path, type] of [
      ['', 'text/html'],
      ['app.js', 'text/javascript'],
      ['worker.js', 'text/javascript'],
      ['worker/reply.js', 'text/javascript'],
      ['pkg/memory-storage.mjs', 'text/javascript'],
      ['opfs-source.js', 'text/javascript'],
      ['pkg/xcsh_session.js', 'text/javascript'],
      ['style.css', 'text/css'],
      ['samples/index.json', 'application/json'],
    ]) {
      const res = await fetch(server.url + path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type'), new RegExp(`^${type}`), path);
    }
    const wasm = (await readFile(join(ROOT, 'web-demo', 'pkg', 'xcsh_session.js'), 'utf8')).match(/['"]([\w.-]+\.wasm)['"]/);
    if (wasm) {
      const res = await fetch(`${server.url}pkg/${wasm[1]}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/wasm');
    }
    assert.equal((await fetch(`${server.url}..%2f..%2fCargo.toml`)).status >= 400, true, 'nothing outside web-demo/');
    assert.equal((await fetch(`${server.url}no-such-file`)).status, 404);
  });

  test('the default sample (demo-branches) renders its conversation', async () => {
    await page.goto(server.url);
    await page.locator('.msg').first().waitFor();
    const bar = page.locator('#session-bar');
    await assert.doesNotReject(bar.getByText('Fix the tokenizer bug').waitFor());
    assert.match(await bar.innerText(), /1f9d2a6b9c0d1234/);
    assert.match(await bar.innerText(), /\/work\/demo/);
    assert.match(await bar.locator('[data-testid=chip-file]').getAttribute('title'), /session format v3\b/, 'the format is in the file\'s tooltip');
    assert.equal(await page.locator('[data-testid=older-format]').count(), 0, 'a v3 file is in the current format');

    // The leaf is the last entry: the main branch, compacted. Compaction summary, the 12
    // kept messages from firstKeptEntryId, the branch summary, the custom message.
    assert.equal(await page.locator('#conversation .msg').count(), 15);
    assert.equal(await page.locator('#conversation .role-compactionSummary').count(), 1);
    assert.equal(await page.locator('#conversation .role-branchSummary').count(), 1);
    assert.equal(await page.locator('#conversation .role-custom').count(), 1);
    assert.equal(await page.locator('#conversation .role-toolResult').count(), 2);
    assert.equal(await page.locator('#conversation .role-toolResult.is-error').count(), 1);
    const text = await conversationText();
    assert.match(text, /Tokenizer quoted-string fix/); // compaction shortSummary
    assert.match(text, /Rewrite the string scanner properly/); // this branch
    assert.doesNotMatch(text, /Please get familiar with this repository/, 'compacted away (before firstKeptEntryId)');
    assert.doesNotMatch(text, /Just remove the trim\(\) call/, 'the side branch is not on this path');

    await page.screenshot({ path: join(SCREENSHOTS, 'default-sample.png') });

    // Tool call with name + JSON arguments; thinking collapsed; the image decoded.
    const call = page.locator('.tool-call').first();
    assert.match(await call.innerText(), /read[\s\S]*path\s+src\/tokenizer.rs/);
    const thinking = page.locator('details.thinking').first();
    assert.equal(await thinking.evaluate((d) => d.open), false, 'thinking starts collapsed');
    const img = page.locator('.msg figure.image img').first();
    await img.scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('.msg figure.image img')?.complete);
    assert.equal(await img.evaluate((i) => i.naturalWidth), 16, 'the base64 PNG decodes');

    // The tree lists every entry (23), labels included, with the active path highlighted.
    assert.equal(await page.locator('#tree .node').count(), 23);
    assert.match(await page.locator('#node-e5f6a7b8').innerText(), /bug understood/);
    assert.equal(await page.locator('#node-b5c6d7e8.selected').count(), 1);
    assert.equal(await page.locator('#node-f6a7b8c9.on-path').count(), 0);

    await page.screenshot({ path: join(SCREENSHOTS, 'default-sample-image.png') });
    assertNoProblems();
  });

  test('counts read as words: 1 message, 2 messages', async () => {
    const words = await page.evaluate(async () => {
      const { fmtCount } = await import('./dom.js');
      return [fmtCount(0, 'message'), fmtCount(1, 'message'), fmtCount(2, 'message'), fmtCount(1234, 'earlier message'), fmtCount(1, 'entry', 'entries')];
    });
    assert.deepEqual(words, ['0 messages', '1 message', '2 messages', '1,234 earlier messages', '1 entry']);
    assert.doesNotMatch(await page.locator('#conv-meta').innerText(), /\b1 messages\b/);
    assertNoProblems();
  });

  test('a file that is not a session is refused with a message, and the open session stays', async () => {
    const before = await page.locator('#session-bar [data-testid=chip-file]').innerText();
    await page.setInputFiles('#file-input', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('shopping list\n- milk\n- bread\n') });
    const banner = page.locator('#banner');
    await banner.filter({ hasText: 'not a session file' }).waitFor();
    assert.match(await banner.innerText(), /notes\.txt is not a session file: no session header found/);
    assert.equal(await page.locator('#session-bar [data-testid=chip-file]').innerText(), before, 'the session shown before is still shown');
    await page.locator('#banner .banner-close').click();
    assertNoProblems();
  });

  test('"Open file…" shows a focus ring when the keyboard reaches it', async () => {
    await page.locator('#open-history').focus();
    await page.keyboard.press('Tab');
    const seen = await page.evaluate(() => ({
      focused: document.activeElement?.id,
      visible: document.activeElement?.matches(':focus-visible'),
      ring: getComputedStyle(document.querySelector('label[for=file-input]')).outlineStyle,
    }));
    assert.deepEqual(seen, { focused: 'file-input', visible: true, ring: 'solid' });
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('label[for=file-input]')).outlineStyle), 'none', 'no ring once the focus moved on');
    assertNoProblems();
  });

  test('clicking a tree node shows the conversation of that branch', async () => {
    await page.locator('#node-0a1b2c3d').click(); // leaf of the side branch
    await page.locator('#conversation').getByText('Just remove the trim() call', { exact: false }).first().waitFor();
    let text = await conversationText();
    assert.match(text, /Done: removed `?trim\(\)`? on line 47/);
    assert.match(text, /Please get familiar with this repository/, 'no compaction on the side branch');
    assert.doesNotMatch(text, /Rewrite the string scanner properly/, 'the main branch message is gone');
    assert.equal(await page.locator('#conversation .role-compactionSummary').count(), 0);
    assert.equal(await page.locator('#conversation .msg').count(), 10);
    assert.equal(await page.locator('#node-0a1b2c3d.selected').count(), 1);
    assert.equal(await page.locator('#node-f6a7b8c9.on-path').count(), 1);
    assert.equal(await page.locator('#node-2c3d4e5f.on-path').count(), 0);
    // The inspector updates after the conversation: wait for it, or a read can see the
    // entry shown before the click (it failed one CI run that way).
    await page.locator('[data-testid=raw-json]').filter({ hasText: '"id": "0a1b2c3d"' }).waitFor({ timeout: 10_000 });
    assert.match(await page.locator('[data-testid=raw-json]').innerText(), /"id": "0a1b2c3d"/, 'the inspector shows the entry');
    await page.locator('details.thinking summary').first().click();
    await page.screenshot({ path: join(SCREENSHOTS, 'side-branch.png') });

    // And back: the branch summary's link goes to the abandoned branch, the tree back to main.
    await page.locator('#node-5f607182').click();
    await page.locator('#conversation').getByText('All 42 tests pass').first().waitFor();
    await page.locator('#conversation').getByText('Rewrite the string scanner properly').first().waitFor();
    text = await conversationText();
    assert.match(text, /Rewrite the string scanner properly/);
    assert.doesNotMatch(text, /Just remove the trim\(\) call/);
    assertNoProblems();
  });

  test('a real session uploaded through the file input shows its messages', async () => {
    const fixture = join(FIXTURES, 'before-compaction.jsonl');
    assert.ok(existsSync(fixture), `fixture missing: ${fixture}`);
    await page.setInputFiles('#file-input', fixture);
    await fileChip(page, 'before-compaction.jsonl');
    assert.equal(await page.locator('[data-testid=older-format]').count(), 1, 'a v1 file is read as the current format, the file unchanged');
    assert.match(await page.locator('#session-bar').innerText(), /ffae836b-9420-4060-ac13-7745215f90ff/);
    const meta = await page.locator('#conv-meta').innerText();
    const total = Number(meta.match(/([\d,]+) messages/)[1].replace(/,/g, ''));
    assert.ok(total > 0, `messages in the context: ${total}`);
    const rendered = await page.locator('#conversation .msg').count();
    assert.ok(rendered > 0 && rendered <= total, `rendered ${rendered} of ${total}`);
    // The second compaction is the last one on the path: its summary comes first.
    assert.equal(await page.locator('#conversation .msg').first().getAttribute('data-role'), 'compactionSummary');
    assert.match(await page.locator('#tree-meta').innerText(), /1,002 entries/);
    await page.screenshot({ path: join(SCREENSHOTS, 'uploaded-fixture.png') });

    // The last user messages of the file are at the end of the conversation.
    await page.locator('#jump-end').click();
    await page.locator('#conversation').getByText('what did i just execute?').first().waitFor();
    assert.ok(await page.locator('#conversation .role-bashExecution').count() > 0, 'bashExecution shown');
    await page.screenshot({ path: join(SCREENSHOTS, 'uploaded-fixture-end.png') });
    assertNoProblems();
  });

  test('a reload after opening a file by hand says why the file is not shown again', async () => {
    assert.equal(new URL(page.url()).searchParams.get('opened'), 'before-compaction.jsonl');
    await page.reload();
    const banner = page.locator('#banner');
    await banner.filter({ hasText: 'before-compaction.jsonl was opened from your disk' }).waitFor();
    assert.match(await banner.innerText(), /a reload cannot read it again/);
    await page.locator('#conversation .msg').first().waitFor();
    assert.equal(new URL(page.url()).searchParams.get('opened'), null, 'said once');
    await page.locator('#banner .banner-close').click();
    assertNoProblems();
  });

  test('Back and Forward move between the sessions opened, inside the viewer', async () => {
    await page.goto(server.url);
    await fileChip(page, 'demo-branches.jsonl');
    await page.locator('#sample-select').selectOption('large-session.jsonl');
    await fileChip(page, 'large-session.jsonl');
    assert.equal(new URL(page.url()).searchParams.get('sample'), 'large-session.jsonl');
    await page.goBack();
    await fileChip(page, 'demo-branches.jsonl');
    assert.equal(new URL(page.url()).origin, new URL(server.url).origin, 'Back stays in the viewer');
    assert.equal(new URL(page.url()).searchParams.get('sample'), null);
    await page.goForward();
    await fileChip(page, 'large-session.jsonl');
    assert.equal(await page.locator('#sample-select').inputValue(), 'large-session.jsonl');
    // Back to the default sample: the next test opens the large one itself, from the top.
    await page.goBack();
    await fileChip(page, 'demo-branches.jsonl');
    assertNoProblems();
  });

  test('the large v1 sample opens and loads more messages while scrolling', async () => {
    await page.selectOption('#sample-select', 'large-session.jsonl');
    await fileChip(page, 'large-session.jsonl');
    assert.equal(await page.locator('[data-testid=older-format]').count(), 1);
    // The tree comes after the first screen.
    await page.locator('#tree-meta', { hasText: /1,018 entries/ }).waitFor();
    const before = await page.locator('#conversation .msg').count();
    const total = Number((await page.locator('#conv-meta').innerText()).match(/([\d,]+) messages/)[1].replace(/,/g, ''));
    assert.ok(total > 500, `a long conversation: ${total}`);
    assert.ok(before < total, 'rendered in windows, not all at once');
    await page.locator('#conversation').evaluate((c) => (c.scrollTop = c.scrollHeight));
    await page.waitForFunction((n) => document.querySelectorAll('#conversation .msg').length > n, before);
    // Clicking a node deep in the (virtual) tree is quick and shows that branch's end.
    await page.locator('#tree').evaluate((t) => (t.scrollTop = t.scrollHeight / 2));
    const id = await page.evaluate(
      () =>
        new Promise((done) =>
          // After the tree has re-rendered for the new scroll position: the row in the middle.
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              const box = document.querySelector('#tree').getBoundingClientRect();
              done(document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2).closest('.node').dataset.id);
            }),
          ),
        ),
    );
    const started = Date.now();
    await page.locator(`#node-${CSS_escape(id)}`).click();
    await page.locator(`#node-${CSS_escape(id)}.selected`).waitFor();
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 3000, `a click re-renders the branch quickly (${elapsed} ms)`);
    const last = await page.locator('#conversation .msg').last().getAttribute('data-index');
    const shown = Number((await page.locator('#conv-meta').innerText()).match(/([\d,]+) messages/)[1].replace(/,/g, ''));
    assert.equal(Number(last), shown - 1, 'the conversation shows the end of the selected branch');
    await page.screenshot({ path: join(SCREENSHOTS, 'large-session.png') });
    assertNoProblems();
  });

  test('a dropped file with glued records shows load warnings, and session text is never HTML', async () => {
    const glued = await readFile(join(FIXTURES, 'historical-compact.jsonl'), 'utf8');
    await dropFile(page, 'historical-compact.jsonl', glued);
    await fileChip(page, 'historical-compact.jsonl');
    // The Sample menu says that the open session is none of its samples.
    assert.equal(await page.locator('#sample-select').inputValue(), '');
    assert.equal(await page.locator('#sample-select option:checked').innerText(), 'None (not a sample)');
    const warnings = page.locator('[data-testid=load-warnings]');
    await warnings.waitFor();
    await warnings.locator('summary').click();
    assert.match(await warnings.innerText(), /glued/i);
    await page.screenshot({ path: join(SCREENSHOTS, 'dropped-glued.png') });

    const hostile = [
      '{"type":"session","version":3,"id":"00000000000000aa","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/<b>cwd</b>","title":"<img src=x onerror=window.__pwned=1>"}',
      '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"<script>window.__pwned=2</script><img src=y onerror=window.__pwned=3>","timestamp":1767225601000}}',
      '{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"<i>x</i>","arguments":{"a":"</pre><b>y</b>"}},{"type":"image","data":"AAAA","mimeType":"text/html"}],"provider":"p","model":"m","usage":{"input":1,"output":1},"timestamp":1767225602000}}',
      '{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"weirdRole","payload":{"x":1},"timestamp":1767225603000}}',
    ].join('\n');
    await dropFile(page, 'hostile.jsonl', hostile);
    await page.locator('#session-bar').getByText('<img src=x onerror=window.__pwned=1>').waitFor();
    assert.match(await conversationText(), /<script>window.__pwned=2<\/script>/);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.locator('#session-bar img, #conversation b, #conversation i, #conversation script').count(), 0);
    assert.match(await page.locator('#conversation .role-other').innerText(), /weirdRole[\s\S]*"payload"/, 'unknown roles are shown generically');
    const imgSrc = await page.locator('#conversation figure.image img').getAttribute('src');
    assert.ok(imgSrc.startsWith('data:image/'), `an image is only ever an image data URL: ${imgSrc}`);
    assertNoProblems();
  });

  test('a compaction expands in place to the messages it replaced; find searches them; it collapses back', async () => {
    const text = await readFile(join(FIXTURES, 'historical-compact.jsonl'), 'utf8');
    await dropFile(page, 'compacted.jsonl', text);
    await fileChip(page, 'compacted.jsonl');
    const shown = async () => Number((await page.locator('#conv-meta').innerText()).match(/([\d,]+) messages?/)[1].replace(/,/g, ''));
    const inContext = await shown();
    const summary = page.locator('#conversation .msg[data-role=compactionSummary]').first();
    const compactionId = await summary.getAttribute('data-entry');
    await summary.locator('[data-testid=history-expand]').click();
    await page.locator('#conv-meta', { hasText: 'whole history' }).waitFor();
    const inHistory = await shown();
    assert.ok(inHistory > inContext, `the history (${inHistory}) holds more than the context (${inContext})`);
    // In place: the same compaction, with the messages it replaced before it.
    const target = page.locator('#conversation .msg.msg-target');
    await target.waitFor();
    assert.equal(await target.getAttribute('data-entry'), compactionId);
    assert.ok(Number(await target.getAttribute('data-index')) > 0, 'the replaced messages come before it');
    await page.screenshot({ path: join(SCREENSHOTS, 'history-expanded.png') });

    // Find reads the history: the first prompt, replaced by the compaction, is found.
    await page.locator('#conversation').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+f');
    await page.locator('#find-query').fill('pi-mono/issues/288');
    await page.locator('#find-status').filter({ hasText: /messages? ·/ }).waitFor();
    const hits = await page.locator('#find-hits .fh-idx').allInnerTexts();
    assert.ok(hits.includes('#1'), `the first message of the history is a hit: ${hits.join(' ')}`);
    await page.keyboard.press('Escape');

    // Collapsed: the model's context again, its summary first.
    await page.locator(`#conversation .msg[data-entry="${compactionId}"] [data-testid=history-collapse]`).click();
    await page.waitForFunction(() => !document.querySelector('#conv-meta').textContent.includes('whole history'));
    assert.equal(await shown(), inContext);
    assert.equal(await page.locator('#conversation .msg[data-role=compactionSummary] [data-testid=history-expand]').count() > 0, true);
    assertNoProblems();
  });
});
