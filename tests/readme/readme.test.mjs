// Every code block of README.md and crates/js/README.md runs as written.
//
// How a block is read, by its info string:
//   ```text      a diagram or a synopsis: not code, nothing to run.
//   ```console   a terminal session: each `$ ` line is a command run by bash (with
//                pipefail, so a command that fails inside a pipe fails the block) and the
//                lines up to the next `$ ` are its expected output (stdout and stderr as a
//                terminal shows them),
//                where `…` stands for any text on that line.
//   ```js        an ES module, written to a file and run with node; it must exit 0.
//   ```html      a page, written to a file in the scratch directory, served from there
//                (scripts/serve.mjs) and opened in headless Chromium: it must throw
//                nothing and fill its `<output>` within 30 s.
//   ```sh        the quick start: exactly `scripts/demo` and `scripts/test`. scripts/demo is
//                started and must serve the viewer; scripts/test is what `.ci/run` runs.
// Any other block fails the test: a README example nobody runs is how examples rot.
//
// The blocks of one README run in order in one scratch directory, as a reader following
// along would: it holds the package as node_modules/xcsh-session (pkg/), and for the
// repository's README (not the npm package's, whose reader has no repository) a copy of
// tests/fixtures and the package as ./pkg too; the CLI (target/release/xcsh-session) is
// on PATH.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/lib/start-server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI_DIR = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target'), 'release');

/** The fenced code blocks of a Markdown file: { info, lines, line }. */
export function codeBlocks(markdown) {
  const blocks = [];
  let open = null;
  markdown.split('\n').forEach((text, i) => {
    const fence = /^```(.*)$/.exec(text);
    if (fence && !open) open = { info: fence[1].trim(), lines: [], line: i + 1 };
    else if (fence) {
      blocks.push(open);
      open = null;
    } else if (open) open.lines.push(text);
  });
  assert.equal(open, null, 'an unclosed code block');
  return blocks;
}

/** A console block as [{ command, expected: [line] }]. */
export function consoleSteps(lines) {
  const steps = [];
  for (const line of lines) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: [] });
    else {
      assert.ok(steps.length > 0, `output before the first command: ${line}`);
      steps.at(-1).expected.push(line);
    }
  }
  return steps;
}

/** Does `actual` (text) match the expected lines, `…` standing for any text in a line? */
export function matches(expected, actual) {
  const want = expected.join('\n');
  const pattern = want
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^\\n]*');
  return new RegExp(`^${pattern}$`).test(actual.replace(/\n$/, ''));
}

function scratch(repository) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-readme-'));
  if (repository) {
    fs.cpSync(path.join(ROOT, 'tests', 'fixtures'), path.join(dir, 'tests', 'fixtures'), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'pkg'), path.join(dir, 'pkg'));
  }
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(path.join(ROOT, 'pkg'), path.join(dir, 'node_modules', 'xcsh-session'));
  return dir;
}

function runConsole(block, dir, env) {
  for (const { command, expected } of consoleSteps(block.lines)) {
    // stderr joins stdout in the order they are written, as a terminal shows them.
    const r = spawnSync('bash', ['-o', 'pipefail', '-c', `{ ${command}\n} 2>&1`], { cwd: dir, env, encoding: 'utf8' });
    const output = r.stdout;
    assert.equal(r.status, 0, `line ${block.line}: \`${command}\` exited ${r.status}:\n${output}`);
    assert.ok(
      matches(expected, output),
      `line ${block.line}: \`${command}\` printed\n${output}\nwhich does not match\n${expected.join('\n')}`,
    );
  }
}

function runJs(block, dir, env, name) {
  const file = path.join(dir, `${name}-line${block.line}.mjs`);
  fs.writeFileSync(file, block.lines.join('\n') + '\n');
  const r = spawnSync(process.execPath, [file], { cwd: dir, env, encoding: 'utf8' });
  assert.equal(r.status, 0, `line ${block.line}: the example exited ${r.status}:\n${r.stdout}${r.stderr}`);
}

async function runHtml(block, dir, name) {
  const file = `${name}-line${block.line}.html`;
  fs.writeFileSync(path.join(dir, file), block.lines.join('\n') + '\n');
  const { child, url } = await startServer({ root: dir });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    const logs = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => logs.push(m.text()));
    await page.goto(new URL(file, url).href);
    await page.waitForFunction(() => document.querySelector('output')?.textContent || undefined, null, { timeout: 30_000 })
      .catch((e) => assert.fail(`line ${block.line}: the page filled no <output> (${e.message}):\n${[...errors, ...logs].join('\n')}`));
    assert.deepEqual(errors, [], `line ${block.line}: the page threw`);
  } finally {
    await browser.close();
    child.kill('SIGTERM');
  }
}

async function runQuickStart(block) {
  const commands = block.lines.map((l) => l.replace(/#.*$/, '').trim()).filter(Boolean);
  assert.deepEqual(commands, ['scripts/demo', 'scripts/test'], `line ${block.line}: the quick start is two commands`);
  // scripts/test is what CI runs.
  assert.match(fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8'), /^exec bash scripts\/test$/m);
  // scripts/demo serves the viewer (its build is fresh here: the tiers before built it).
  const demo = spawn(path.join(ROOT, 'scripts', 'demo'), ['--port', '0'], { cwd: ROOT, detached: true });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`scripts/demo did not serve within 5 min:\n${out}`)), 300_000);
      for (const stream of [demo.stdout, demo.stderr]) {
        stream.on('data', (d) => {
          out += d;
          const m = /Serving the session viewer at (http:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      }
      demo.on('exit', (code) => reject(new Error(`scripts/demo exited ${code}:\n${out}`)));
    });
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>[^<]*session[^<]*<\/title>/i);
  } finally {
    process.kill(-demo.pid, 'SIGTERM');
  }
}

for (const readme of ['README.md', 'crates/js/README.md']) {
  test(`${readme}: every code block runs as written`, async () => {
    const blocks = codeBlocks(fs.readFileSync(path.join(ROOT, readme), 'utf8'));
    assert.ok(blocks.length > 0);
    const dir = scratch(readme === 'README.md');
    const env = { ...process.env, PATH: `${CLI_DIR}:${process.env.PATH}`, HOME: dir, XCSH_SESSION_CACHE_DIR: path.join(ROOT, 'target', 'aot-cache') };
    try {
      for (const block of blocks) {
        if (block.info === 'text') continue;
        else if (block.info === 'console') runConsole(block, dir, env);
        else if (block.info === 'js') runJs(block, dir, env, path.basename(readme, '.md'));
        else if (block.info === 'html') await runHtml(block, dir, path.basename(readme, '.md'));
        else if (block.info === 'sh') await runQuickStart(block);
        else assert.fail(`${readme} line ${block.line}: a \`\`\`${block.info} block (want text, console, js, html or sh)`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('the README checker: `…` matches any text in a line, and only there', () => {
  assert.ok(matches(['{"id":"…"}'], '{"id":"5d0c7a2e"}\n'));
  assert.ok(!matches(['{"id":"…"}'], '{"id":"5d0c7a2e"}\nmore'));
  assert.ok(!matches(['exit 3'], 'exit 0'));
  assert.ok(matches(['a.b'], 'a.b'));
  assert.ok(!matches(['a.b'], 'axb'));
  assert.deepEqual(consoleSteps(['$ echo hi', 'hi', '$ true']), [
    { command: 'echo hi', expected: ['hi'] },
    { command: 'true', expected: [] },
  ]);
});
