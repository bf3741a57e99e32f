// The viewer on a pi agent directory (~/.pi/agent): a session pi 0.73.1's own
// SessionManager wrote (tests/fixtures/pi) is listed and shown by pi's name for it (its
// latest session_info entry), with its conversation.
//
// Run: scripts/test-e2e   (or `node --test tests/e2e/` once the packages are built)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT, openBrowser, pickerTitles } from './helpers.mjs';

const NAME = 'Listing hidden files';

describe('a pi agent directory', { timeout: 120_000 }, () => {
  let b;
  let page;
  let server;

  before(async () => {
    b = await openBrowser();
    ({ page, server } = b);
  });

  after(async () => {
    await b?.close();
  });

  test('is listed and shown with the names pi gives its sessions', async () => {
    await page.goto(server.url);
    await page.locator('#conversation .msg').first().waitFor();
    await page.locator('#open-picker').click();
    await page.locator('#picker').waitFor();
    await page.setInputFiles('#folder-input', join(ROOT, 'tests', 'fixtures', 'pi', 'agent'));
    await page.locator('#picker-sources [data-source=opened].active').waitFor();
    await page.locator('#picker-sources [data-source=opened] .count', { hasText: '1' }).waitFor();
    await page.locator('#picker-scope').click(); // all projects
    await page.locator('#picker-scope[data-scope=all]').waitFor(); // that list shown (set as it is rendered)
    await page.waitForFunction(() => document.querySelectorAll('#picker-list .picker-item').length === 1);
    assert.match((await pickerTitles(page)).join('\n'), new RegExp(NAME));
    await page.locator('#picker-list .picker-item', { hasText: NAME }).click();
    await page.locator('#session-bar h1', { hasText: NAME }).waitFor();
    await page.locator('#conversation').getByText('ls -a').first().waitFor();
    assert.equal(await page.locator('#conversation .msg').count(), 4);
    b.assertNoProblems();
  });
});
