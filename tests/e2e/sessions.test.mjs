// End-to-end tests of the viewer's session picker, opened folders, artifact/agent links and
// the browser storage (OPFS): import, label, reload, branch, fork, delete; and the
// in-memory ("not kept") backend. Files the viewer writes are read back from OPFS here
// and reopened with the Node build of the package (Session.open) to check they are valid.
//
// Run: scripts/test-e2e   (or `node --test tests/e2e/` once the packages are built)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, SCREENSHOTS, FIXTURES, fileChip, openBrowser, pickerTitles, readOpfs } from './helpers.mjs';

const FLAKY = 'Investigate the flaky CI tests';
const JSON_FLAG = 'Add a --json flag to the CLI';
const README = 'Write a README with a quick start and a…';
const DEPS = 'Upgrade the dependencies';

/** Reopens a session text with the Node package, as the agent would open the file. */
async function reopenWithPackage(path, text) {
  const pkgFile = join(ROOT, 'pkg', 'node.mjs');
  assert.ok(existsSync(pkgFile), 'pkg/node.mjs (the package) is missing: run scripts/build-js');
  const { Session, memoryStorage } = await import(pkgFile);
  const storage = memoryStorage({ readOnly: true });
  storage.put(path, new TextEncoder().encode(text));
  return Session.open(storage, path, { readOnly: true });
}

const clean = (titles) => titles.map((t) => t.replace(/\s*\bopen$/, '').trim());

describe('session picker and browser storage', { timeout: 240_000 }, () => {
  let b;
  let page;
  let server;
  let tmp;

  before(async () => {
    b = await openBrowser();
    ({ page, server } = b);
    tmp = await mkdtemp(join(tmpdir(), 'xcsh-e2e-folder-'));
  });

  after(async () => {
    await b?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const conversationText = () => page.locator('#conversation').innerText();
  const sourceChip = (text) => page.locator('#session-bar [data-testid=chip-source]', { hasText: text }).waitFor();
  const pageParams = () => new URL(page.url()).searchParams;

  test('the picker: recent sessions of this project, fuzzy search ranking, Tab for all projects', async () => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await page.locator('#open-picker').click();
    const dialog = page.locator('#picker');
    await dialog.waitFor();
    await page.locator('#picker-sources [data-source=samples].active').waitFor();
    await page.locator('#picker-list .picker-item').first().waitFor();
    // recentSessions: this project (/work/demo, the newest session's), newest first.
    assert.deepEqual(clean(await pickerTitles(page)), [FLAKY, JSON_FLAG, README]);
    assert.match(await page.locator('#picker-info').innerText(), /This project: \/work\/demo/);
    assert.equal(await page.locator('#picker-query').evaluate((el) => el === document.activeElement), true, 'the search box has the focus');

    // searchSessions: the fuzzy ranking follows the query.
    await page.locator('#picker-query').fill('json flag');
    await page.locator('#picker-list .picker-item .score').first().waitFor();
    await page.waitForFunction((t) => document.querySelector('#picker-list .pi-title')?.textContent.startsWith(t), JSON_FLAG);
    const byJson = clean(await pickerTitles(page));
    assert.equal(byJson[0], JSON_FLAG);
    await page.screenshot({ path: join(SCREENSHOTS, 'picker-search.png') });
    await page.locator('#picker-query').fill('flaky');
    await page.waitForFunction((t) => document.querySelector('#picker-list .pi-title')?.textContent.startsWith(t), FLAKY);
    const byFlaky = clean(await pickerTitles(page));
    assert.equal(byFlaky[0], FLAKY);
    assert.notDeepEqual(byFlaky, byJson, 'another query, another ranking');

    // Tab toggles this project / all projects; so does the button.
    await page.locator('#picker-query').fill('');
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 3);
    await page.keyboard.press('Tab');
    await page.locator('#picker-scope[data-scope=all]').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 4);
    assert.deepEqual(clean(await pickerTitles(page)), [FLAKY, DEPS, JSON_FLAG, 'Write a README with a quick start and an architecture section.']);
    assert.match(await page.locator('#picker-list').innerText(), /\/work\/other/);
    await page.screenshot({ path: join(SCREENSHOTS, 'picker-all-projects.png') });
    await page.locator('#picker-scope').click();
    await page.locator('#picker-scope[data-scope=project]').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 3);

    // Empty state, and Enter on it does nothing.
    await page.locator('#picker-query').fill('qqqzzzxxx');
    await page.locator('[data-testid=picker-empty]', { hasText: 'No session matches' }).waitFor();
    await page.keyboard.press('Enter');
    assert.equal(await dialog.evaluate((d) => d.open), true);

    // Arrow keys and Enter open a session.
    await page.locator('#picker-query').fill('');
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 3);
    await page.keyboard.press('ArrowDown');
    await page.locator('#picker-list .picker-item.active', { hasText: JSON_FLAG }).waitFor();
    await page.keyboard.press('Enter');
    await page.locator('#session-bar h1', { hasText: JSON_FLAG }).waitFor();
    assert.equal(await dialog.evaluate((d) => d.open), false);
    await sourceChip('sample · read-only');
    assert.match(await conversationText(), /pretty-printed on a terminal/);
    b.assertNoProblems();
  });

  test('artifact:// and agent:// links open their content; a tree click switches the branch', async () => {
    await page.locator('#open-picker').click();
    await page.locator('#picker-query').fill('flaky');
    await page.waitForFunction((t) => document.querySelector('#picker-list .pi-title')?.textContent.startsWith(t), FLAKY);
    await page.keyboard.press('Enter');
    await page.locator('#session-bar h1', { hasText: FLAKY }).waitFor();

    // The leaf is on the side branch (#[serial]); the main branch has the port-0 fix.
    assert.match(await conversationText(), /serial_test crate/);
    await page.locator('#node-7e1d0008').click();
    await page.locator('#node-7e1d0008.selected').waitFor();
    await page.locator('#conversation').getByText('50 parallel runs passed').waitFor();
    assert.doesNotMatch(await conversationText(), /serial_test crate/);
    assert.equal(await page.locator('#node-7e1d0009.on-path').count(), 0);
    await page.locator('#node-7e1d0010').click();
    await page.locator('#conversation').getByText('serial_test crate').waitFor();
    assert.doesNotMatch(await conversationText(), /50 parallel runs passed/);

    const panel = page.locator('#url-panel');
    const openLink = async (url) => {
      await page.locator(`#conversation .int-link[data-url="${url}"]`).first().click();
      await page.locator('#url-title', { hasText: url }).waitFor();
      await page.locator('#url-body [data-testid=url-content], #url-body [data-testid=url-error]').first().waitFor();
      return { meta: await page.locator('#url-body').innerText(), content: await page.locator('#url-body [data-testid=url-content]').innerText() };
    };
    let r = await openLink('artifact://0');
    assert.match(r.meta, /text\/plain/);
    assert.match(r.content, /\[run 04\] test net::tests::connects \.\.\. FAILED \(address already in use\)/);
    assert.match(r.content, /51 passed; 9 failed/);
    await page.screenshot({ path: join(SCREENSHOTS, 'link-artifact.png') });

    r = await openLink('agent://0-Explore');
    assert.match(r.meta, /text\/markdown/);
    assert.match(r.content, /Three tests bind the fixed TCP port 7878/);
    r = await openLink('agent://0-Explore/findings/0');
    assert.match(r.meta, /application\/json/);
    assert.deepEqual(JSON.parse(r.content), { file: 'tests/net.rs', line: 88, test: 'reconnects', port: 7878 });
    r = await openLink('agent://0-Explore?q=findings[1].file');
    assert.equal(JSON.parse(r.content), 'tests/net.rs');
    await page.screenshot({ path: join(SCREENSHOTS, 'link-agent.png') });
    await page.keyboard.press('Escape');
    assert.equal(await panel.isHidden(), true, 'Esc closes the panel');

    // A message links to its entry in the tree (contextEntryIds) without changing the branch.
    // (a tool result is shown in its call's card, which carries the result's entry)
    await page.locator('#conversation [data-entry="7e1d0003"] .entry-link').click();
    await page.locator('#node-7e1d0003.inspected').waitFor();
    await page.locator('#inspector-meta', { hasText: '7e1d0003' }).waitFor();
    assert.equal(await page.locator('#node-7e1d0010.selected').count(), 1, 'the branch stays');
    assert.match(await page.locator('#inspector [data-testid=raw-json]').innerText(), /"toolCallId": "toolu_flaky_1"/);
    b.assertNoProblems();
  });

  test('an opened agent folder (<input webkitdirectory>) lists its sessions, read-only', async () => {
    // An agent directory as on disk: real fixtures in their project directory, the demo
    // session in another, a blob directory, and a file that is not a session.
    const agent = join(tmp, 'agent');
    const pimono = join(agent, 'sessions', '--Users-badlogic-workspaces-pi-mono--');
    const demo = join(agent, 'sessions', '--work-demo--');
    await mkdir(pimono, { recursive: true });
    await mkdir(demo, { recursive: true });
    await mkdir(join(agent, 'blobs'), { recursive: true });
    await copyFile(join(FIXTURES, 'before-compaction.jsonl'), join(pimono, '2025-12-09T00-53-29-825Z_ffae836b-9420-4060-ac13-7745215f90ff.jsonl'));
    await copyFile(join(FIXTURES, 'historical-session.jsonl'), join(pimono, '2025-12-17T19-39-21-535Z_5fd1e58c-9635-410e-a644-133a96057c90.jsonl'));
    await copyFile(join(ROOT, 'web-demo', 'samples', 'demo-branches.jsonl'), join(demo, '2026-02-16T10-20-30-123Z_1f9d2a6b9c0d1234.jsonl'));
    await writeFile(join(agent, 'settings.json'), '{}');
    await page.setInputFiles('#folder-input', agent);
    await page.locator('#picker-sources [data-source=opened].active').waitFor();
    await page.locator('#picker-list .picker-item').first().waitFor();
    await page.locator('#picker-sources [data-source=opened] .count', { hasText: '3' }).waitFor();
    await page.locator('#picker-scope').click(); // all projects
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 3);
    const all = await page.locator('#picker-list').innerText();
    assert.match(all, /Fix the tokenizer bug/);
    assert.match(all, /\/Users\/badlogic\/workspaces\/pi-mono/);
    await page.screenshot({ path: join(SCREENSHOTS, 'opened-folder-picker.png') });
    await page.locator('#picker-list .picker-item', { hasText: 'Fix the tokenizer bug' }).click();
    await page.locator('#session-bar h1', { hasText: 'Fix the tokenizer bug' }).waitFor();
    await sourceChip('opened folder · read-only');
    assert.equal(await page.locator('#conversation .msg').count(), 15);

    // The branch switch works the same on an opened session.
    await page.locator('#node-0a1b2c3d').click();
    await page.locator('#conversation').getByText('Just remove the trim() call').first().waitFor();
    assert.doesNotMatch(await conversationText(), /Rewrite the string scanner properly/);

    // The real v1 fixture opens from the folder too (migrated in memory, never written).
    await page.locator('#open-picker').click();
    await page.locator('#picker-query').fill('ffae836b');
    await page.keyboard.press('Enter'); // runs the pending search first

    await fileChip(page, 'ffae836b-9420-4060-ac13-7745215f90ff.jsonl');
    assert.equal(await page.locator('[data-testid=older-format]').count(), 1);
    assert.match(await page.locator('#tree-meta').innerText(), /1,002 entries/);
    await page.screenshot({ path: join(SCREENSHOTS, 'opened-folder-fixture.png') });

    // Several dropped session files open like a folder (each placed by its header's cwd).
    const demoText = await readFile(join(ROOT, 'web-demo', 'samples', 'demo-branches.jsonl'), 'utf8');
    const depsText = await readFile(join(ROOT, 'web-demo', 'samples', 'agent', 'sessions', '--work-other--', '2026-03-01T19-30-00-000Z_b4f2c8e6a0d1357a.jsonl'), 'utf8');
    await page.evaluate(
      ([a, c]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([a], 'demo.jsonl', { type: 'application/x-ndjson' }));
        dt.items.add(new File([c], 'deps.jsonl', { type: 'application/x-ndjson' }));
        for (const type of ['dragenter', 'dragover', 'drop']) document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
      },
      [demoText, depsText],
    );
    await page.locator('#picker-sources [data-source=opened].active .count', { hasText: '2' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 2); // all projects
    assert.deepEqual(clean(await pickerTitles(page)).sort(), ['Fix the tokenizer bug', DEPS]);
    await page.keyboard.press('Escape');
    b.assertNoProblems();
  });

  test('a search of a big opened folder shows its progress, and a newer query stops it', async () => {
    // 30 sessions of 2.4 MB (71 MB of text) beside the demo session: the folder's files
    // are read only as the search reaches them, a few MiB a step.
    const agent = join(tmp, 'big-agent');
    const dir = join(agent, 'sessions', '--work-big--');
    await mkdir(dir, { recursive: true });
    for (let i = 0; i < 30; i++) {
      await copyFile(join(FIXTURES, 'before-compaction.jsonl'), join(dir, `2025-12-09T00-53-${String(i).padStart(2, '0')}-825Z_ffae836b-9420-4060-ac13-7745215f9${String(i).padStart(3, '0')}.jsonl`));
    }
    await copyFile(join(ROOT, 'web-demo', 'samples', 'demo-branches.jsonl'), join(dir, '2026-02-16T10-20-30-123Z_1f9d2a6b9c0d1234.jsonl'));
    await page.setInputFiles('#folder-input', agent);
    await page.locator('#picker-sources [data-source=opened].active .count', { hasText: '31' }).waitFor();
    if (await page.locator('#picker-scope[data-scope=project]').count()) await page.locator('#picker-scope').click();
    await page.locator('#picker-scope[data-scope=all]').waitFor();
    await page.evaluate(() => {
      window.__searchSeen = false;
      new MutationObserver(() => {
        if (document.querySelector('[data-testid=picker-searching]')) window.__searchSeen = true;
      }).observe(document.getElementById('picker-info'), { childList: true, subtree: true, characterData: true });
    });
    // Found nowhere: every message of every session is read, with progress on the way.
    await page.locator('#picker-query').fill('qqqzzzxxxwww');
    await page.waitForFunction(() => window.__searchSeen);
    assert.match(await page.locator('[data-testid=picker-searching]').innerText(), /searching the sessions' text: \d+ %/);
    await page.locator('#picker-query').fill('tokenizer');
    await page.waitForFunction(() => document.querySelector('#picker-list .pi-title')?.textContent.startsWith('Fix the tokenizer bug'));
    assert.equal(await page.locator('[data-testid=picker-searching]').count(), 0, 'the progress goes with the list');
    assert.doesNotMatch(await page.locator('#picker').innerText(), /search was stopped/);
    await page.locator('#picker-close').click();
    await page.waitForFunction(() => !document.getElementById('picker').open);
    b.assertNoProblems();
  });

  test('import into browser storage, label, reload: the OPFS copy and its label are still there', async () => {
    await page.locator('#edit-target').selectOption('opfs');
    await page.locator('#open-picker').click();
    await page.locator('#picker-sources [data-source=samples]').click();
    await page.locator('#picker-query').fill('flaky');
    await page.waitForFunction((t) => document.querySelector('#picker-list .pi-title')?.textContent.startsWith(t), FLAKY);
    await page.keyboard.press('Enter');
    await page.locator('#session-bar h1', { hasText: FLAKY }).waitFor();
    await page.locator('#import-btn', { hasText: 'Import to browser storage' }).click();
    await sourceChip('browser storage · editable');
    assert.equal(pageParams().get('source'), 'opfs');
    const path = pageParams().get('path');
    assert.equal(path, '/xcsh/agent/sessions/--work-demo--/2026-03-02T09-15-00-000Z_7e1d4c2a9b3f5e60.jsonl');
    // The artifacts came along.
    await page.locator('#conversation .int-link[data-url="artifact://0"]').first().click();
    await page.locator('#url-body [data-testid=url-content]', { hasText: '51 passed; 9 failed' }).waitFor();
    await page.locator('#url-close').click();

    // Label the fork point.
    await page.locator('#node-7e1d0006').click();
    await page.locator('#node-7e1d0006.selected').waitFor();
    await page.locator('[data-testid=label-input]').fill('root cause');
    await page.locator('[data-testid=label-save]').click();
    const status = page.locator('[data-testid=save-status]');
    await status.filter({ hasText: 'Labelled 7e1d0006' }).waitFor();
    assert.match(await status.innerText(), /checked on disk ✓/);
    await page.locator('#node-7e1d0006 .label-pill', { hasText: 'root cause' }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'opfs-labelled.png') });

    // What OPFS holds is a valid session with the label (the agent's own reader agrees).
    const onDisk = await readOpfs(page, path);
    const reopened = await reopenWithPackage(path, onDisk);
    assert.deepEqual(reopened.report().issues, []);
    assert.equal(reopened.label('7e1d0006'), 'root cause');
    assert.equal(reopened.entries().length, 12, 'the 11 entries and the label entry');
    assert.equal(reopened.entries().at(-1).type, 'label');

    // Reload the page: the viewer reopens the OPFS session, label included.
    await page.reload();
    await page.locator('#session-bar h1', { hasText: FLAKY }).waitFor();
    await sourceChip('browser storage · editable');
    await page.locator('#node-7e1d0006 .label-pill', { hasText: 'root cause' }).waitFor();
    await page.locator('#open-picker').click();
    await page.locator('#picker-sources [data-source=opfs].active').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 1);
    assert.deepEqual(clean(await pickerTitles(page)), [FLAKY]);
    await page.keyboard.press('Escape');
    b.assertNoProblems();
  });

  test('branch with a summary, fork into a second session, delete it', async () => {
    const path = pageParams().get('path');
    // From a message of the conversation: inspect entry 7e1d0004, branch there with a summary.
    await page.locator('#conversation article[data-entry="7e1d0004"] .msg-head .entry-link').click();
    await page.locator('#inspector-meta', { hasText: '7e1d0004' }).waitFor();
    await page.locator('.branch-form summary').click();
    await page.locator('[data-testid=summary-input]').fill('Tried marking the test #[serial]; dropped in favour of port 0.');
    await page.locator('[data-testid=branch-save]').click();
    await page.locator('[data-testid=save-status]', { hasText: 'Branched from 7e1d0004' }).waitFor();
    await page.locator('#conversation .role-branchSummary', { hasText: 'dropped in favour of port 0' }).waitFor();
    assert.equal(await page.locator('#conversation .msg').count(), 5, 'four messages up to 7e1d0004, then the summary');
    assert.equal(await page.locator('#tree .node.selected.t-branch').count(), 1, 'the leaf is the summary entry');
    const reopened = await reopenWithPackage(path, await readOpfs(page, path));
    assert.deepEqual(reopened.report().issues, []);
    const last = reopened.entries().at(-1);
    assert.equal(last.type, 'branch_summary');
    assert.equal(last.parentId, '7e1d0004');
    assert.equal(reopened.label('7e1d0006'), 'root cause', 'the label is still there');

    // Fork: a second session in the same project directory, with the same entries.
    const idChip = page.locator('[data-testid=chip-id] .chip-v');
    assert.equal(await idChip.innerText(), '7e1d4c2a9b3f5e60');
    await page.locator('#fork-btn').click();
    await page.locator('[data-testid=save-status]', { hasText: 'Forked' }).waitFor();
    assert.notEqual(await idChip.innerText(), '7e1d4c2a9b3f5e60');
    const forkPath = pageParams().get('path');
    assert.notEqual(forkPath, path);
    assert.ok(forkPath.startsWith('/xcsh/agent/sessions/--work-demo--/'), forkPath);
    const fork = await reopenWithPackage(forkPath, await readOpfs(page, forkPath));
    assert.deepEqual(fork.report().issues, []);
    // Linked by the old session's id, as the agent's fork writes it; the chip names it.
    assert.equal(fork.header().parentSession, '7e1d4c2a9b3f5e60');
    const parentChip = page.locator('[data-testid=chip-parent]');
    assert.equal(await parentChip.locator('.chip-v').innerText(), '7e1d4c2a9b3f5e60');
    assert.equal(await parentChip.getAttribute('title'), 'parent: 7e1d4c2a9b3f5e60');
    assert.equal(fork.entries().length, reopened.entries().length);
    assert.equal(fork.label('7e1d0006'), 'root cause');

    await page.locator('#open-picker').click();
    await page.locator('#picker-sources [data-source=opfs].active').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 2);
    // The fork keeps the session's name (the agent's fork writes it in the new header): the
    // recent list names both alike.
    const titles = clean(await pickerTitles(page));
    assert.deepEqual(titles, [FLAKY, FLAKY], titles.join(' | '));
    await page.locator('#picker-sources [data-source=opfs] .count', { hasText: '2' }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'opfs-two-sessions.png') });
    await page.keyboard.press('Escape');
    await page.locator('#node-7e1d0006 .label-pill', { hasText: 'root cause' }).waitFor();

    // Delete the fork (two clicks): one session left.
    await page.locator('#delete-btn').click();
    await page.locator('#delete-btn', { hasText: 'Click again' }).click();
    await page.locator('#session-bar h1', { hasText: 'Fix the tokenizer bug' }).waitFor();
    await page.locator('#open-picker').click();
    await page.locator('#picker-sources [data-source=opfs]').click();
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 1);
    assert.equal(await page.locator('#picker-list .picker-item').getAttribute('data-path'), path);
    await page.keyboard.press('Escape');
    b.assertNoProblems();
  });

  test('the memory backend: an editable copy that is gone after a reload', async () => {
    await page.locator('#edit-target').selectOption('memory');
    await page.locator('#sample-select').selectOption('demo-branches.jsonl');
    await page.locator('#import-btn', { hasText: 'Copy to memory' }).click();
    await sourceChip('memory · editable');
    await page.locator('#node-e5f6a7b8').click();
    await page.locator('[data-testid=inspector-label]', { hasText: 'bug understood' }).waitFor();
    await page.locator('[data-testid=label-input]').fill('the cause');
    await page.locator('[data-testid=label-save]').click();
    await page.locator('#node-e5f6a7b8 .label-pill', { hasText: 'the cause' }).waitFor();
    assert.match(await page.locator('[data-testid=save-status]').innerText(), /saved to memory · checked ✓/);
    await page.reload();
    await page.locator('#banner', { hasText: 'kept in memory only' }).waitFor();
    await page.locator('#node-e5f6a7b8 .label-pill', { hasText: 'bug understood' }).waitFor();
    await sourceChip('sample · read-only');
    await page.locator('#edit-target').selectOption('opfs');
    b.assertNoProblems();
  });
});
