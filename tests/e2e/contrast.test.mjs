// Text contrast of the viewer's controls, light and dark, as the system asks and as the
// Theme menu forces against the system (forced light on a dark system, forced dark on a
// light one): every text the checks below reach meets WCAG AA for normal text (4.5:1)
// against the background it is drawn on (the first opaque background up the tree). The
// places axe-core flagged: the primary button in dark mode, the chips' labels, the
// picker's active row; and the session totals, the phone's tabs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SCREENSHOTS, assertContrast, dropFile, fileChip, suiteBrowser } from './helpers.mjs';
import { contentSession } from './content-fixture.mjs';


const MODES = [
  { name: 'light', scheme: 'light', theme: 'system' },
  { name: 'dark', scheme: 'dark', theme: 'system' },
  { name: 'forced-light', scheme: 'dark', theme: 'light' },
  { name: 'forced-dark', scheme: 'light', theme: 'dark' },
];

for (const { name, scheme, theme } of MODES) {
  describe(`text contrast, ${name} theme (system ${scheme}, menu ${theme})`, { timeout: 120_000 }, () => {
    let page;
    const b = suiteBrowser(async (opened) => {
      page = opened.page;
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(opened.server.url);
      await page.locator('#conversation .msg').first().waitFor();
      await page.locator('#tree .node').first().waitFor(); // the tree comes after the first screen
      if (theme !== 'system') {
        await page.locator('#theme-select').selectOption(theme);
        await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
      }
      // The colours really are the ones asked for (the body's background).
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      assert.equal(bg, (theme === 'system' ? scheme : theme) === 'dark' ? 'rgb(15, 17, 21)' : 'rgb(245, 246, 248)');
    });

    const check = (selector) => assertContrast(page, selector);

    test('the buttons of the top bar', async () => {
      await check('.topbar .btn');
      b.assertNoProblems();
    });

    test('the chips of the session bar, labels and values', async () => {
      await check('#session-bar .chip-k');
      await check('#session-bar .chip-v');
      b.assertNoProblems();
    });

    test('the tree\'s rows and its filter bar', async () => {
      await check('#tree .node .preview');
      await check('#tree .node .tag');
      await check('.tree-tools .btn');
      await check('.tree-tools select');
      await page.locator('#tree-filter').fill('the');
      await page.locator('#tree-filter-count', { hasText: /shown/ }).waitFor();
      await check('#tree-filter-count');
      await page.locator('#tree-filter').fill('');
      b.assertNoProblems();
    });

    test('the picker\'s rows, the active one included', async () => {
      await page.locator('#open-picker').click();
      await page.locator('#picker-list .picker-item.active').waitFor();
      await check('#picker-list .picker-item.active *');
      await check('#picker-list .picker-item *');
      await page.screenshot({ path: join(SCREENSHOTS, `contrast-picker-${name}.png`) });
      await page.keyboard.press('Escape');
      b.assertNoProblems();
    });

    test('the branch totals and the theme menu', async () => {
      await check('#session-totals .sb-totals-k');
      await check('#session-totals .chip-k');
      await check('#session-totals .chip-v');
      await check('.topbar .theme-picker');
      b.assertNoProblems();
    });

    test('the phone\'s tabs, the selected one included', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.locator('#panel-tabs').waitFor();
      await check('#panel-tabs [role=tab]');
      await check('#panel-tabs [role=tab][aria-selected=true]');
      await check('#session-bar .sb-more');
      await page.screenshot({ path: join(SCREENSHOTS, `contrast-phone-${name}.png`) });
      await page.setViewportSize({ width: 1440, height: 900 });
      b.assertNoProblems();
    });

    test('message content: code colours, diff lines, links, tool cards, message controls', async () => {
      await dropFile(page, 'content-demo.jsonl', contentSession());
      await fileChip(page, 'content-demo.jsonl');
      const first = page.locator('#conversation article.msg[data-index="0"]');
      await first.locator('pre.code[data-highlighted=python]').waitFor();
      await check('#conversation pre.code [class^=hljs-]');
      await check('#conversation .text a');
      await check('#conversation .tool-summary > span:not(.tool-status), #conversation .tool-status .badge');
      await check('#conversation .tool-kv dt, #conversation .tool-kv dd, #conversation .tool-result-head');
      await check('#conversation .msg-copy, #conversation .code-copy, #toggle-tools, #export-menu > summary');
      await page.locator('#conversation .tool-card[data-tool-call-id=tEdit]').scrollIntoViewIfNeeded();
      await check('#conversation .diff-line, #conversation .diff-summary');
      await page.screenshot({ path: join(SCREENSHOTS, `contrast-content-${name}.png`) });
      b.assertNoProblems();
    });
  });
}
