// An accessibility audit of the viewer with axe-core (npm axe-core, pinned in
// tests/package.json, injected into the page from tests/node_modules): every state a
// reader reaches (a session open, an entry inspected, the session picker, the prompt
// history), in the light and the dark theme, at a desktop and a phone size. A serious or
// critical violation of the WCAG 2.x A/AA rules (or of axe's best practices) fails the
// test and names the rule, the impact and the elements; minor and moderate ones are
// printed, not counted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SCREENSHOTS, openBrowser } from './helpers.mjs';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
const FAILING = new Set(['serious', 'critical']);

/** Runs axe on the page (or inside `include`) and returns its violations, compacted. */
async function audit(page, include) {
  if (!(await page.evaluate(() => typeof globalThis.axe === 'object'))) await page.addScriptTag({ content: AXE });
  return page.evaluate(
    async ([tags, within]) => {
      const result = await globalThis.axe.run(within ? { include: [within] } : document, {
        runOnly: { type: 'tag', values: tags },
        resultTypes: ['violations'],
      });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.slice(0, 12).map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1).join(' ').trim()}`),
        count: v.nodes.length,
      }));
    },
    [TAGS, include ?? null],
  );
}

/** Fails on serious and critical violations; prints the rest. */
function judge(what, violations) {
  const bad = violations.filter((v) => FAILING.has(v.impact));
  for (const v of violations.filter((x) => !FAILING.has(x.impact))) {
    console.log(`# axe (${what}): ${v.impact} ${v.id} (${v.count}): ${v.help}`);
  }
  assert.deepEqual(
    bad.map((v) => `${v.impact} ${v.id} (${v.count}): ${v.help}\n    ${v.nodes.join('\n    ')}`),
    [],
    `serious or critical accessibility violations: ${what}`,
  );
}

const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } };

for (const scheme of ['light', 'dark']) {
  for (const [size, viewport] of Object.entries(SIZES)) {
    describe(`axe-core, ${scheme} theme, ${size}`, { timeout: 180_000 }, () => {
      let b;
      let page;
      const what = (state) => `${state}, ${scheme}, ${size}`;

      before(async () => {
        b = await openBrowser();
        page = b.page;
        await page.setViewportSize(viewport);
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(b.server.url);
        await page.locator('#conversation .msg').first().waitFor();
      });

      after(async () => {
        await b?.close();
      });

      test('a session open', async () => {
        judge(what('session open'), await audit(page));
        await page.screenshot({ path: join(SCREENSHOTS, `axe-${scheme}-${size}-session.png`) });
        b.assertNoProblems();
      });

      test('an entry inspected', async () => {
        // On a phone the tree and the entry are behind tabs: reach them as a reader would.
        const phone = size === 'phone';
        if (phone) await page.getByRole('tab', { name: /tree/i }).click();
        await page.locator('#tree [role=treeitem]').nth(2).click();
        if (phone) await page.getByRole('tab', { name: /entry/i }).click();
        await page.locator('#inspector').filter({ hasText: /\S/ }).waitFor();
        judge(what('entry inspected'), await audit(page));
        b.assertNoProblems();
      });

      test('the session picker', async () => {
        await page.locator('#open-picker').click();
        await page.locator('#picker-list .picker-item').first().waitFor();
        judge(what('session picker'), await audit(page, '#picker'));
        await page.screenshot({ path: join(SCREENSHOTS, `axe-${scheme}-${size}-picker.png`) });
        await page.keyboard.press('Escape');
        await page.locator('#picker').waitFor({ state: 'hidden' });
        b.assertNoProblems();
      });

      test('the prompt history', async () => {
        if (size === 'phone') await page.locator('#menu-toggle').click(); // the history is in the menu
        await page.locator('#open-history').click();
        await page.locator('#history[open]').waitFor();
        await page.locator('[data-testid=history-backend]').filter({ hasNotText: '…' }).waitFor();
        judge(what('prompt history'), await audit(page, '#history'));
        await page.keyboard.press('Escape');
        await page.locator('#history').waitFor({ state: 'hidden' });
        b.assertNoProblems();
      });
    });
  }
}
