// The WASI command under jco in Node (run.mjs: preview2-shim with preopened
// directories, nothing else). The scenario's output equals the native core's for the same
// files, and wasmtime-py (run.py) prints the same bytes for them; paths outside the
// preopen are refused and nothing is written there.
// Needs XCSH_WASI_JCO_OUT (the `jco transpile --instantiation async` output),
// XCSH_NATIVE_EXAMPLES (the built `show` and `context` examples), XCSH_WASI_COMMAND (the
// component, for wasmtime-py) and XCSH_PY (a Python with wasmtime); scripts/test-wasi-command
// sets them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const env = (name) => {
  const value = process.env[name];
  assert.ok(value, `${name} is not set (run scripts/test-wasi-command)`);
  return value;
};
const OUT = env('XCSH_WASI_JCO_OUT');
const EXAMPLES = env('XCSH_NATIVE_EXAMPLES');
const COMPONENT = env('XCSH_WASI_COMMAND');
const PY = env('XCSH_PY');

const AGENT = '/data/agent';
const PROJECT = '/work/pi';
const SESSIONS = `${AGENT}/sessions/--work-pi--`;

/** A temp dir `box` (preopened as /data) and a sibling `outside` (not preopened). */
function sandbox(t) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-wasi-jco-')));
  t.after(() => fs.rmSync(base, { recursive: true, force: true }));
  const box = path.join(base, 'box');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(box);
  fs.mkdirSync(outside);
  const host = (guest) => {
    assert.ok(guest.startsWith('/data/'), guest);
    return path.join(box, guest.slice('/data/'.length));
  };
  const flags = ['--dir', `${box}::/data`, '--env', 'HOME=/data/home'];
  const spawn = (argv0, pre, args, input) => {
    const r = spawnSync(argv0, [...pre, ...flags, '--', ...args], { input: input ?? '', encoding: 'utf8' });
    assert.equal(r.error, undefined);
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  return {
    box,
    outside,
    host,
    jco: (args, input) => spawn(process.execPath, [path.join(HERE, 'run.mjs'), OUT], args, input),
    py: (args) => spawn(PY, [path.join(HERE, 'run.py'), COMPONENT], args),
  };
}

/** The stdout of a successful run. */
function ok({ code, out, err }) {
  assert.equal(err, '');
  assert.equal(code, 0);
  assert.ok(out.endsWith('\n'), out);
  return out;
}

/** The native core's output (`show` or `context`) for a host file. */
function native(example, file, ...args) {
  const r = spawnSync(path.join(EXAMPLES, example), [file, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

const user = (text) => JSON.stringify({ type: 'message', message: { role: 'user', content: text, timestamp: 1 } });
const reply = (text) => JSON.stringify({
  type: 'message',
  message: { role: 'assistant', content: [{ type: 'text', text }], provider: 'p', model: 'm', timestamp: 2 },
});

test('the scenario prints what the native core and wasmtime-py print for the same files', (t) => {
  const s = sandbox(t);
  const file = `${SESSIONS}/s.jsonl`;
  const first = JSON.parse(ok(s.jco(['--agent-dir', AGENT, 'append', file, '--json', user('hello'), '--cwd', PROJECT]))).id;
  const second = JSON.parse(ok(s.jco(['--agent-dir', AGENT, 'append', file, '--json', '-', '--cwd', PROJECT], reply('hi there')))).id;
  const hostFile = s.host(file);
  const lines = fs.readFileSync(hostFile, 'utf8').split('\n').filter(Boolean);
  assert.equal(lines.length, 3);
  assert.equal(JSON.parse(lines[2]).parentId, first);

  const show = ok(s.jco(['--agent-dir', AGENT, 'show', file, '--json']));
  assert.equal(show, native('show', hostFile));
  assert.equal(JSON.parse(show).leafId, second);
  const context = ok(s.jco(['--agent-dir', AGENT, 'context', file]));
  assert.equal(context, native('context', hostFile));
  assert.equal(ok(s.jco(['--agent-dir', AGENT, 'context', file, '--leaf', first])), native('context', hostFile, first));
  const tree = ok(s.jco(['--agent-dir', AGENT, 'tree', file]));
  assert.deepEqual(JSON.parse(tree).map((n) => [n.entry.id, n.children.map((c) => c.entry.id)]), [[first, [second]]]);

  const fork = JSON.parse(ok(s.jco(['--agent-dir', AGENT, 'fork', file])));
  assert.equal(fork.oldFile, file);
  assert.equal(path.posix.dirname(fork.newFile), SESSIONS);
  assert.equal(ok(s.jco(['--agent-dir', AGENT, 'show', fork.newFile])), native('show', s.host(fork.newFile)));
  const list = ok(s.jco(['--agent-dir', AGENT, 'list', '--all']));
  assert.deepEqual(JSON.parse(list).map((i) => i.path).sort(), [file, fork.newFile].sort());

  // The other stock runtime, on the files jco wrote: the same bytes.
  assert.equal(ok(s.py(['--agent-dir', AGENT, 'show', file])), show);
  assert.equal(ok(s.py(['--agent-dir', AGENT, 'context', file])), context);
  assert.equal(ok(s.py(['--agent-dir', AGENT, 'tree', file])), tree);
  assert.equal(ok(s.py(['--agent-dir', AGENT, 'list', '--all'])), list);
});

test('paths outside the preopen are refused and nothing is written there', (t) => {
  const s = sandbox(t);
  fs.writeFileSync(path.join(s.outside, 'secret.jsonl'), '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/x"}\n');
  fs.symlinkSync(s.outside, path.join(s.box, 'link'));
  // Exit codes as the CLI's: 1 for errors, 3 for a file that does not exist.
  const refused = (status, args, ...says) => {
    const { code, out, err } = s.jco(args);
    assert.equal(code, status, `${args}: ${out} ${err}`);
    assert.equal(out, '');
    for (const w of says) assert.ok(err.includes(w), `${args}: ${err}`);
  };
  const outside = 'outside the preopened directories: /data';
  refused(1, ['show', '/etc/passwd'], 'EACCES: permission denied: /etc/passwd', outside);
  refused(1, ['show', '/data/../outside/secret.jsonl'], 'permission denied: /outside/secret.jsonl', outside);
  refused(1, ['append', '/data/../outside/new.jsonl', '--json', user('x'), '--cwd', PROJECT], '/outside/new.jsonl', outside);
  refused(1, ['show', '/data/link/secret.jsonl'], 'permission denied: /data/link/secret.jsonl');
  refused(1, ['append', '/data/link/new.jsonl', '--json', user('x'), '--cwd', PROJECT], 'permission denied: /data/link/new.jsonl');
  refused(1, ['append', '/data/s.jsonl', '--json', '{"type":', '--cwd', PROJECT], 'entry is not valid JSON');
  refused(3, ['show', '/data/missing.jsonl'], 'Session file /data/missing.jsonl not found');
  assert.deepEqual(fs.readdirSync(s.outside), ['secret.jsonl']);
  assert.deepEqual(fs.readdirSync(s.box), ['link']);
});

test('a session hard-linked to an outside file is neither read nor written', (t) => {
  const s = sandbox(t);
  const secret = path.join(s.outside, 'secret.jsonl');
  const before = '{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/x"}\n';
  fs.writeFileSync(secret, before);
  fs.linkSync(secret, path.join(s.box, 's.jsonl'));
  for (const args of [['show', '/data/s.jsonl'], ['migrate', '/data/s.jsonl'],
    ['append', '/data/s.jsonl', '--json', user('x'), '--cwd', PROJECT]]) {
    const { code, out, err } = s.jco(args);
    assert.equal(code, 1, `${args}: ${out} ${err}`);
    assert.equal(out, '');
    assert.match(err, /permission denied: \/data\/s\.jsonl \(a hard link: the file has 2 names/, `${args}: ${err}`);
  }
  assert.equal(fs.readFileSync(secret, 'utf8'), before);
  assert.deepEqual(fs.readdirSync(s.box), ['s.jsonl']);
});

test('a preopen nested in the agent dir: its sessions are listed and their images kept by gc', (t) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-wasi-jco-nested-')));
  t.after(() => fs.rmSync(base, { recursive: true, force: true }));
  const agent = path.join(base, 'agent');
  const proj = path.join(base, 'proj');
  fs.mkdirSync(agent);
  fs.mkdirSync(proj);
  const dirs = ['--dir', `${agent}::/a`, '--dir', `${proj}::/a/sessions/--p--`];
  const jco = (...args) => {
    const r = spawnSync(process.execPath, [path.join(HERE, 'run.mjs'), OUT, ...dirs, '--', '--agent-dir', '/a', ...args],
      { encoding: 'utf8' });
    return JSON.parse(ok({ code: r.status, out: r.stdout, err: r.stderr }));
  };
  const bytes = Buffer.from('ABC'.repeat(300));
  const digest = createHash('sha256').update(bytes).digest('hex');
  const image = JSON.stringify({
    type: 'message',
    message: { role: 'user', content: [{ type: 'image', data: bytes.toString('base64'), mimeType: 'image/png' }], timestamp: 1 },
  });
  const inner = '/a/sessions/--p--/s.jsonl';
  const outer = '/a/sessions/--q--/t.jsonl';
  jco('append', inner, '--json', image, '--cwd', '/p');
  jco('append', outer, '--json', user('in the outer preopen'), '--cwd', '/q');
  assert.ok(fs.existsSync(path.join(proj, 's.jsonl')));
  const blob = path.join(agent, 'blobs', digest);
  assert.ok(fs.existsSync(blob));

  assert.deepEqual(jco('list', '--all').map((i) => i.path).sort(), [inner, outer]);
  fs.utimesSync(blob, 0, 0); // older than the hour gc leaves alone
  assert.deepEqual(jco('gc', '--delete').deleted, []);
  assert.ok(fs.existsSync(blob), 'the image of the inner session was deleted');
  fs.unlinkSync(path.join(proj, 's.jsonl'));
  assert.deepEqual(jco('gc', '--delete').deleted, [digest]);
});
