// Every code block of README.md and of the crates' READMEs (crates/js, crates/component,
// crates/wasi-command) runs as written.
//
// How a block is read, by its info string:
//   ```text      a diagram or a synopsis: not code, nothing to run; except a `wasmtime run`
//                command line (`\` continuations joined): the wasmtime CLI is not installed
//                here, so it runs through tests/wasi-command/run.py (wasmtime-py, the same
//                wasmtime, with the CLI's --dir and --env flags), after the README's other
//                blocks (it is shown before the example that makes its files), and must
//                exit 0, print nothing on stderr and JSON on stdout.
//   ```console   a terminal session: each `$ ` line is a command run by bash (with
//                pipefail, so a command that fails inside a pipe fails the block) and the
//                lines up to the next `$ ` are its expected output (stdout and stderr as a
//                terminal shows them),
//                where `…` stands for any text on that line.
//   ```js        an ES module, written to a file and run with node; it must exit 0.
//   ```js file=NAME  a module a later block imports (a page's helper): written to NAME in
//                the scratch directory, not run by itself; a later block must name it.
//   ```html      a page, written to a file in the scratch directory, served from there
//                (scripts/serve.mjs) and opened in headless Chromium: it must throw
//                nothing and fill its `<output>` within 30 s.
//   ```sh        the quick start: exactly `scripts/demo` and `scripts/test`. scripts/demo is
//                started and must serve the viewer; scripts/test is what `.ci/run` runs.
// Any other block fails the test: a README example nobody runs is how examples rot.
//
// The blocks of one README run in order in one scratch directory, as a reader following
// along would: it holds the package as node_modules/xcsh-session (pkg/) and the browser
// build of WASI, node_modules/@bytecodealliance/preview2-shim (tests/node_modules', from
// scripts/setup test); for the repository's README (not the npm package's, whose reader
// has no repository) a copy of tests/fixtures, the package as ./pkg and `scripts` as a
// link (its sync example starts a local Garage cluster) too; for the
// component's and the WASI command's, whose reader is at the repository root, `target`
// (the built components) and `tests` as links. On PATH: the CLI
// (target/release/xcsh-session), the venv's python3 (with wasmtime) and the tool cache
// (jco). The built components come from the tiers before, or the readme tier's own
// scripts/build-component and scripts/build-wasi-command.
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
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
const CLI_DIR = path.join(TARGET, 'release');
/** The tool cache (scripts/lib/env.sh): jco, and the venv whose python3 has wasmtime. */
const TOOLS = process.env.XCSH_TOOLS_DIR ?? path.join(os.homedir(), '.cache', 'xcsh-session', 'tools');
const PATH = [CLI_DIR, path.join(TOOLS, 'py', 'bin'), path.join(TOOLS, 'bin'), path.join(TOOLS, 'node_modules', '.bin'), process.env.PATH].join(':');

/** Each README and what its reader has beside the blocks (see the header). */
const READMES = {
  'README.md': { repository: true, links: ['scripts'] },
  'crates/js/README.md': {},
  'crates/component/README.md': { links: ['target'] },
  'crates/wasi-command/README.md': { links: ['target', 'tests'] },
};

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

function scratch({ repository = false, links = [] }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-readme-'));
  if (repository) {
    fs.cpSync(path.join(ROOT, 'tests', 'fixtures'), path.join(dir, 'tests', 'fixtures'), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'pkg'), path.join(dir, 'pkg'));
  }
  for (const name of links) fs.symlinkSync(name === 'target' ? TARGET : path.join(ROOT, name), path.join(dir, name));
  fs.mkdirSync(path.join(dir, 'node_modules', '@bytecodealliance'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'pkg'), path.join(dir, 'node_modules', 'xcsh-session'));
  const shim = path.join('@bytecodealliance', 'preview2-shim');
  fs.symlinkSync(path.join(ROOT, 'tests', 'node_modules', shim), path.join(dir, 'node_modules', shim));
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

/** A `js file=NAME` block: NAME's text, for the blocks after it. */
function writeHelper(block, dir, name, later) {
  assert.ok(/^[\w.-]+$/.test(name), `line ${block.line}: file=${name} (want a plain file name)`);
  fs.writeFileSync(path.join(dir, name), block.lines.join('\n') + '\n');
  assert.ok(later.some((b) => b.lines.some((l) => l.includes(name))), `line ${block.line}: no later block uses ${name}`);
}

/**
 * The `wasmtime run` command lines of a text block, `\` continuations joined, each as the
 * run.py command that runs it: `wasmtime run [--dir D | --env E]... WASM ARGS...` is
 * `python3 tests/wasi-command/run.py WASM [--dir D | --env E]... ARGS...`.
 */
export function wasmtimeCommands(lines) {
  return lines.join('\n').replace(/\\\n\s*/g, '').split('\n').filter((l) => l.startsWith('wasmtime run ')).map((line) => {
    const words = line.split(/\s+/).slice(2);
    let flags = 0;
    while (words[flags] === '--dir' || words[flags] === '--env') flags += 2;
    const [wasm, ...args] = words.slice(flags);
    return { line, command: ['python3', 'tests/wasi-command/run.py', wasm, ...words.slice(0, flags), ...args].join(' ') };
  });
}

function runWasmtime(block, dir, env) {
  for (const { line, command } of wasmtimeCommands(block.lines)) {
    const r = spawnSync('bash', ['-c', command], { cwd: dir, env, encoding: 'utf8' });
    const said = `line ${block.line}: \`${line}\` (as \`${command}\`) exited ${r.status}:\n${r.stdout}${r.stderr}`;
    assert.equal(r.status, 0, said);
    assert.equal(r.stderr, '', said);
    assert.doesNotThrow(() => JSON.parse(r.stdout), said);
  }
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
    // The first of: the <output> filled, the page threw (no need to wait any longer), 30 s.
    const threw = new Promise((resolve) => page.once('pageerror', resolve));
    await page.goto(new URL(file, url).href);
    const filled = page.waitForFunction(() => document.querySelector('output')?.textContent || undefined, null, { timeout: 30_000 });
    await Promise.race([filled, threw])
      .catch((e) => assert.fail(`line ${block.line}: the page filled no <output> (${e.message}):\n${[...errors, ...logs].join('\n')}`));
    assert.deepEqual(errors, [], `line ${block.line}: the page threw\n${logs.join('\n')}`);
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

for (const [readme, reader] of Object.entries(READMES)) {
  test(`${readme}: every code block runs as written`, async () => {
    const blocks = codeBlocks(fs.readFileSync(path.join(ROOT, readme), 'utf8'));
    assert.ok(blocks.length > 0);
    const dir = scratch(reader);
    const env = { ...process.env, PATH, HOME: dir, XCSH_TOOLS_DIR: TOOLS, XCSH_SESSION_CACHE_DIR: path.join(ROOT, 'target', 'aot-cache') };
    const name = readme.replace(/\/?README\.md$/, '').replaceAll('/', '-') || 'README';
    try {
      for (const [i, block] of blocks.entries()) {
        const file = /^js file=(\S+)$/.exec(block.info)?.[1];
        if (block.info === 'text') continue; // after the others: see the header
        else if (block.info === 'console') runConsole(block, dir, env);
        else if (block.info === 'js') runJs(block, dir, env, name);
        else if (file) writeHelper(block, dir, file, blocks.slice(i + 1));
        else if (block.info === 'html') await runHtml(block, dir, name);
        else if (block.info === 'sh') await runQuickStart(block);
        else assert.fail(`${readme} line ${block.line}: a \`\`\`${block.info} block (want text, console, js, js file=NAME, html or sh)`);
      }
      for (const block of blocks.filter((b) => b.info === 'text')) runWasmtime(block, dir, env);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('the README checker: `…` matches any text in a line, and only there; console steps; wasmtime command lines', () => {
  assert.ok(matches(['{"id":"…"}'], '{"id":"5d0c7a2e"}\n'));
  assert.ok(!matches(['{"id":"…"}'], '{"id":"5d0c7a2e"}\nmore'));
  assert.ok(!matches(['exit 3'], 'exit 0'));
  assert.ok(matches(['a.b'], 'a.b'));
  assert.ok(!matches(['a.b'], 'axb'));
  assert.deepEqual(wasmtimeCommands(['wasmtime run --dir a::/b --env H=/b \\', '  x.wasm show /b/s.jsonl', 'scripts/x   # y']), [{
    line: 'wasmtime run --dir a::/b --env H=/b x.wasm show /b/s.jsonl',
    command: 'python3 tests/wasi-command/run.py x.wasm --dir a::/b --env H=/b show /b/s.jsonl',
  }]);
  assert.deepEqual(consoleSteps(['$ echo hi', 'hi', '$ true']), [
    { command: 'echo hi', expected: ['hi'] },
    { command: 'true', expected: [] },
  ]);
});
