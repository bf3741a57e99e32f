// The Theme menu of the top bar: System follows prefers-color-scheme; Light and Dark win
// over it, are kept across a reload (localStorage) and are on the page from its first
// frame (no flash of the other theme). Screenshots: tests/e2e/screenshots/theme-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SCREENSHOTS, openBrowser } from './helpers.mjs';

const LIGHT = 'rgb(245, 246, 248)'; // --bg, light
const DARK = 'rgb(15, 17, 21)'; // --bg, dark
const KEY = 'xcsh-viewer-theme';

describe('theme menu: System / Light / Dark', { timeout: 120_000 }, () => {
  let b;
  let page;

  before(async () => {
    b = await openBrowser();
    page = b.page;
    // What the first frame painted: the page's background before anything else ran.
    await page.addInitScript(() => {
      requestAnimationFrame(() => {
        window.__firstFrame = { bg: getComputedStyle(document.documentElement).backgroundColor, theme: document.documentElement.dataset.theme ?? 'system' };
      });
    });
  });

  after(async () => {
    await b?.close();
  });

  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const menu = () => page.getByRole('combobox', { name: 'Colour theme' });
  const load = async () => {
    await page.reload();
    await page.locator('#conversation .msg').first().waitFor();
    return page.evaluate(() => window.__firstFrame);
  };

  test('System: the colours follow the system, live', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(b.server.url);
    await page.locator('#conversation .msg').first().waitFor();
    assert.equal(await menu().inputValue(), 'system');
    assert.equal(await bg(), LIGHT);
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await bg(), DARK);
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).colorScheme), 'light dark');
    await page.emulateMedia({ colorScheme: 'light' });
    b.assertNoProblems();
  });

  test('Dark on a light system: kept across a reload, dark from the first frame', async () => {
    await menu().selectOption('dark');
    assert.equal(await bg(), DARK);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), KEY), 'dark');
    await page.screenshot({ path: join(SCREENSHOTS, 'theme-dark-forced.png') });
    const first = await load();
    assert.deepEqual(first, { bg: DARK, theme: 'dark' }, 'the first frame is already dark');
    assert.equal(await menu().inputValue(), 'dark');
    assert.equal(await bg(), DARK);
    b.assertNoProblems();
  });

  test('Light on a dark system: kept across a reload, light from the first frame', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await bg(), DARK, 'forced dark on a dark system');
    await menu().selectOption('light');
    assert.equal(await bg(), LIGHT);
    const first = await load();
    assert.deepEqual(first, { bg: LIGHT, theme: 'light' }, 'the first frame is already light');
    assert.equal(await bg(), LIGHT);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#menu-toggle').click();
    await page.screenshot({ path: join(SCREENSHOTS, 'theme-light-forced-phone.png') });
    await page.locator('#menu-toggle').click();
    await page.setViewportSize({ width: 1440, height: 900 });
    b.assertNoProblems();
  });

  test('System again: nothing kept, the system decides from the first frame', async () => {
    await menu().selectOption('system');
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), KEY), null);
    assert.equal(await bg(), DARK, 'the system is dark');
    const first = await load();
    assert.deepEqual(first, { bg: DARK, theme: 'system' });
    await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await bg(), LIGHT);
    b.assertNoProblems();
  });

  test('the menu is reached with Tab after "Copies go to", with a focus ring', async () => {
    await page.locator('#edit-target').focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'theme-select');
    const ring = await page.evaluate(() => {
      const s = getComputedStyle(document.activeElement);
      return { style: s.outlineStyle, width: s.outlineWidth };
    });
    assert.notEqual(ring.style, 'none');
    assert.notEqual(ring.width, '0px');
    assert.equal(await page.locator('.theme-picker').innerText().then((t) => t.startsWith('Theme')), true, 'labelled "Theme" on screen');
    b.assertNoProblems();
  });
});
