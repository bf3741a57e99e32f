// `require` in Node and Bun.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const pkg = require('xcsh-session');

import('./scenario.mjs').then(async ({ asyncScenario, scenario }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-consumer-'));
  const onDisk = scenario(pkg, pkg.nodeStorage(), path.join(dir, 'agent'));
  const files = fs.readdirSync(path.join(dir, 'agent'), { recursive: true }).filter((f) => f.endsWith('.jsonl'));
  const inMemory = scenario(pkg, pkg.memoryStorage(), '/agent');
  const asyncOnDisk = await asyncScenario(pkg, pkg.nodeAsyncStorage(), path.join(dir, 'async-agent'));
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify({ onDisk, files: files.length, inMemory, asyncOnDisk }));
});
