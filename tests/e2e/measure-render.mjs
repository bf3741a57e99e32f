// Not a test: measures how long the page takes to render windows of 40 messages of a large
// session (renderWindow, layout included; the best of 3 runs per window). `node tests/e2e/measure-render.mjs [fixture]`.
import { join } from 'node:path';
import { FIXTURES, fileChip, openBrowser } from './helpers.mjs';

const name = process.argv[2] ?? 'large-session.jsonl';
const b = await openBrowser();
try {
  const { page } = b;
  await page.goto(b.server.url);
  await page.locator('#conversation .msg').first().waitFor();
  await page.setInputFiles('#file-input', join(FIXTURES, name));
  await fileChip(page, name);
  await page.locator('#conversation .msg').first().waitFor();
  const times = await page.evaluate(async () => {
    const { call } = await import('/rpc.js');
    const { renderWindow } = await import('/conversation.js');
    const { state } = await import('/state.js');
    const out = [];
    for (let start = 0; start < state.count; start += 40) {
      // The best of 3 runs: the machine's other load only ever adds time.
      let best = [Infinity, Infinity];
      for (let run = 0; run < 3; run++) {
        const win = await call('messages', { start, end: start + 40 });
        const t0 = performance.now();
        renderWindow(win, 'start');
        const t1 = performance.now();
        void document.getElementById('conversation').scrollHeight; // layout
        const t = [performance.now() - t0, t1 - t0];
        if (t[0] < best[0]) best = t;
        await new Promise((r) => setTimeout(r, 20));
      }
      out.push(best);
    }
    return out;
  });

  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return `median ${s[Math.floor(s.length / 2)].toFixed(1)} ms, p90 ${s[Math.floor(s.length * 0.9)].toFixed(1)} ms, max ${s.at(-1).toFixed(1)} ms`;
  };
  console.log(`${name}: ${times.length} windows of 40; render+layout ${stats(times.map((t) => t[0]))}; script only ${stats(times.map((t) => t[1]))}`);
} finally {
  await b.close();
}
