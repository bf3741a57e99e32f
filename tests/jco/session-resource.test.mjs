// The component's `session` resource driven from jco in Node, a host that is not the
// project's: create, append, label, branch, name, context, tree, paging, fork, reopen.
// Contexts must equal the native core's for the same files, byte for byte, and the state
// must live in the instance: appends never read the file again.
// Needs XCSH_JCO_OUT (the `jco transpile --instantiation async` output; scripts/test-jco
// makes it) and cargo (the native reference: `cargo run --example context`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { clocks, random } from '@bytecodealliance/preview2-shim';
import { storage, history } from './host.mjs';

const OUT = process.env.XCSH_JCO_OUT;
assert.ok(OUT, 'XCSH_JCO_OUT: the jco transpile output directory (run scripts/test-jco)');
const { instantiate } = await import(pathToFileURL(path.join(OUT, 'xcsh_session_component.js')).href);

/** The paths each reading import was called with, to see what an operation reads. */
const reads = [];
const READS = new Set(['read', 'openReader', 'readPrefix']);
const counted = Object.fromEntries(Object.entries(storage).map(([name, f]) => [name, READS.has(name)
  ? (p, ...rest) => { reads.push(p); return f(p, ...rest); }
  : f]));
const component = await instantiate(
  (file) => WebAssembly.compile(fs.readFileSync(path.join(OUT, file))),
  {
    // The clock and entropy are standard WASI: jco's own preview2 shim provides them.
    'wasi:clocks/wall-clock': clocks.wallClock,
    'wasi:random/insecure': random.insecure,
    'xcsh:session/storage': counted,
    'xcsh:session/history': history,
  },
);
const { Session } = component.sessionApi;

/** The native core's context JSON of `file` (at `leaf`). */
function native(file, leaf) {
  const args = ['run', '-q', '--example', 'context', '--', file, ...(leaf ? [leaf] : [])];
  return execFileSync('cargo', args, { encoding: 'utf8' }).trimEnd();
}

function tempRoot(t) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-jco-')));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return root;
}

const user = (text) => JSON.stringify({ role: 'user', content: text, timestamp: 1 });
const reply = (text) => JSON.stringify({ role: 'assistant', content: [{ type: 'text', text }], provider: 'p', model: 'm', timestamp: 2 });

/** The error payload a failing method throws (jco wraps it in a ComponentError). */
function apiError(f) {
  try {
    f();
  } catch (e) {
    return e.payload ?? e;
  }
  assert.fail('expected an error');
}

test('a session resource: appends, labels, branches, names, context equal to the native core', (t) => {
  const root = tempRoot(t);
  const agentDir = path.join(root, 'agent');
  const s = Session.create(agentDir, '/work/pi', undefined, undefined);
  const first = s.appendMessage(user('hello'));
  s.appendMessage(reply('hi there'));
  const file = s.file();
  assert.ok(file.startsWith(path.join(agentDir, 'sessions')));
  assert.ok(fs.existsSync(file), 'written with the first reply');

  s.appendLabel(first, 'start');
  assert.equal(s.label(first), 'start');
  s.branch(first);
  const other = s.appendMessage(reply('another answer'));
  assert.equal(s.leafId(), other);
  assert.equal(s.setName('The pi session', 'user'), true);
  assert.equal(JSON.parse(s.header()).title, 'The pi session');
  s.appendModelChange('claude', 'default');
  s.appendThinkingLevelChange('high');
  s.appendCustomEntry('ext', JSON.stringify({ n: 1 }));
  s.appendEntry(JSON.stringify({ type: 'custom', customType: 'raw', data: [1, 2] }));

  const context = s.context(undefined);
  assert.deepEqual(JSON.parse(context).messages.map((m) => m.role), ['user', 'assistant']);
  assert.equal(context, native(file), 'the resource context is the native core context of the file');
  assert.equal(s.context(first), native(file, first), 'at a given leaf too');

  const tree = JSON.parse(s.tree());
  assert.equal(tree.length, 1);
  assert.equal(tree[0].label, 'start');
  assert.equal(tree[0].children.length, 2, 'two branches under the first message');

  assert.equal(s.entryCount(), 8, 'the name is in the header, not an entry');
  const page = JSON.parse(s.entries(2, 3));
  assert.equal(page.length, 3);
  assert.equal(page[0].type, 'label');
  assert.deepEqual(JSON.parse(s.entries(0, 100)).map((e) => e.id), fs.readFileSync(file, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l).id));
  assert.deepEqual(JSON.parse(s.children(first)).map((e) => e.id), [JSON.parse(s.entries(1, 1))[0].id, other], 'both replies');
  assert.equal(JSON.parse(s.branchPath(undefined)).at(-1).id, s.leafId());
  assert.equal(JSON.parse(s.entry(other)).id, other);

  assert.equal(apiError(() => s.entry('nope')).kind, 'entry-not-found');
  assert.equal(apiError(() => s.branch('nope')).kind, 'entry-not-found');
  assert.ok(fs.existsSync(`${file}.lock`), 'the writer lock is held');
  s.close();
  assert.equal(fs.existsSync(`${file}.lock`), false, 'close releases it');
  s.appendMessage(user('later'));
  assert.ok(fs.existsSync(`${file}.lock`), 'a later write takes it again');
  s[Symbol.dispose]();
  assert.equal(fs.existsSync(`${file}.lock`), false, 'dropping the resource releases it');
});

test('the state lives in the instance: 200 appends never read the session file again', (t) => {
  const root = tempRoot(t);
  const s = Session.create(path.join(root, 'agent'), '/work/pi', undefined, undefined);
  s.appendMessage(user('q'));
  s.appendMessage(reply('a'));
  reads.length = 0;
  for (let i = 0; i < 200; i++) s.appendMessage(i % 2 ? reply(`a${i}`) : user(`q${i}`));
  assert.deepEqual(reads.filter((p) => p === s.file()), [], 'no re-read of the file');
  assert.ok(reads.every((p) => p === `${s.file()}.lock`), 'only the writer lock is checked');
  assert.equal(fs.readFileSync(s.file(), 'utf8').trim().split('\n').length, 203);
  s.close();
});

test('fork, reopen and branch-with-summary through the resource', (t) => {
  const root = tempRoot(t);
  const agentDir = path.join(root, 'agent');
  const s = Session.create(agentDir, '/work/pi', undefined, undefined);
  const q = s.appendMessage(user('question'));
  s.appendMessage(reply('answer'));
  const summary = s.branchWithSummary(q, 'tried another way', JSON.stringify({ why: 'test' }), false);
  assert.equal(JSON.parse(s.entry(summary)).type, 'branch_summary');

  const forked = s.fork();
  assert.ok(forked.oldFile && forked.newFile && forked.oldFile !== forked.newFile);
  assert.deepEqual(forked.warnings, []);
  assert.equal(s.file(), forked.newFile, 'continues in the copy');
  s.close();

  const again = Session.open(forked.newFile, agentDir, '/work/pi', true);
  assert.equal(again.context(undefined), native(forked.newFile));
  assert.equal(again.entryCount(), 3);
  assert.equal(apiError(() => again.appendMessage(user('x'))).kind, 'read-only');
  const old = Session.open(forked.oldFile, agentDir, '/work/pi', false);
  assert.equal(old.context(undefined), native(forked.oldFile));
  old.close();

  const mem = Session.inMemory('/w');
  mem.appendMessage(user('only here'));
  assert.equal(mem.file(), undefined);
  assert.equal(JSON.parse(mem.context(undefined)).messages.length, 1);
});

test('every entry kind, compaction, usage, artifacts and rewrites through the resource', (t) => {
  const root = tempRoot(t);
  const agentDir = path.join(root, 'agent');
  const s = Session.create(agentDir, '/work/pi', undefined, undefined);
  const q = s.appendMessage(user('first question'));
  s.appendMessage(JSON.stringify({
    role: 'assistant', content: [{ type: 'text', text: 'first answer' }], provider: 'p', model: 'm', timestamp: 2,
    usage: { input: 10, output: 5, cacheRead: 2, cacheWrite: 1, cost: { total: 0.5 } },
  }));
  const kept = s.appendMessage(user('second question'));
  s.appendCompaction({
    summary: 'they asked twice', shortSummary: 'two questions', firstKeptEntryId: kept, tokensBefore: 1234n,
    detailsJson: JSON.stringify({ files: [] }), fromExtension: false, preserveDataJson: undefined,
  });
  s.appendCustomMessageEntry('note', JSON.stringify('a note for the model'), true, undefined, 'agent');
  s.appendModeChange('plan', JSON.stringify({ step: 1 }));
  s.appendTtsrInjection(['rule-a']);
  s.appendMcpToolSelection(['search']);
  s.appendServiceTierChange('priority');
  s.appendContextChange('prod', 'acme', 'default');
  s.appendModelChange('claude', 'smol');

  assert.equal(s.lastModelChangeRole(), 'smol');
  const usage = s.usageStatistics();
  assert.equal(usage.input, 10);
  assert.equal(usage.output, 5);
  assert.equal(usage.cost, 0.5);
  const context = JSON.parse(s.context(undefined));
  assert.ok(context.messages.some((m) => m.role === 'compactionSummary' || JSON.stringify(m).includes('they asked twice')));
  assert.deepEqual(context.injectedTtsrRules, ['rule-a']);
  assert.equal(s.context(undefined), native(s.file()), 'equal to the native core with every kind in the file');

  const slot = s.allocateArtifactPath('bash');
  assert.equal(slot.id, '0');
  assert.equal(path.dirname(slot.path), s.file().slice(0, -'.jsonl'.length));
  const saved = s.saveArtifact('full output', 'bash');
  assert.equal(fs.readFileSync(s.artifactPath(saved), 'utf8'), 'full output');
  assert.equal(s.artifactPath('99'), undefined);

  const entry = JSON.parse(s.entry(q));
  entry.message.content = 'first question (pruned)';
  s.replaceEntry(JSON.stringify(entry));
  assert.ok(!fs.readFileSync(s.file(), 'utf8').includes('(pruned)'), 'in memory until the rewrite');
  s.rewriteEntries();
  assert.equal(s.needsRewrite(), false);
  assert.equal(s.toJsonl(), fs.readFileSync(s.file(), 'utf8'), 'the file is what the state says');
  assert.ok(fs.readFileSync(s.file(), 'utf8').includes('first question (pruned)'));
  assert.deepEqual(s.warnings(), []);
  assert.equal(typeof JSON.parse(s.report()), 'object');
  assert.equal(apiError(() => s.replaceEntry(JSON.stringify({ ...entry, id: 'nope' }))).kind, 'entry-not-found');
  s.close();
});

test('an old file opened through the resource is migrated in memory until rewritten', (t) => {
  const root = tempRoot(t);
  const file = path.join(root, 'old.jsonl');
  const v1 = [
    { type: 'session', id: 'old-1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w' },
    { type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: 'hi', timestamp: 1 } },
    { type: 'message', timestamp: '2025-01-01T00:00:02.000Z', message: { role: 'assistant', content: [{ type: 'text', text: 'hello' }], timestamp: 2 } },
  ].map((r) => JSON.stringify(r)).join('\n') + '\n';
  fs.writeFileSync(file, v1);
  const s = Session.open(file, path.join(root, 'agent'), '/w', false);
  assert.equal(s.needsRewrite(), true);
  assert.equal(JSON.parse(s.report()).migration.fromVersion, 1);
  assert.equal(fs.readFileSync(file, 'utf8'), v1, 'opening never rewrites');
  assert.equal(s.context(undefined), native(file), 'the same context as the native core of the old file');
  s.rewriteEntries();
  assert.equal(s.needsRewrite(), false);
  assert.equal(JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0]).version, 3);
  s.close();
});

test('the output-sink resource spills to an artifact the session allocated', (t) => {
  const root = tempRoot(t);
  const s = Session.create(path.join(root, 'agent'), '/work/pi', undefined, undefined);
  s.appendMessage(user('run it'));
  s.appendMessage(reply('running'));
  const slot = s.allocateArtifactPath('bash');
  const { OutputSink } = component.sessionApi;
  const sink = new OutputSink(slot.path, slot.id, 1000n, undefined);
  const line = `${'y'.repeat(99)}\n`;
  sink.push('\u001b[3');
  sink.push('2mgreen\u001b[0m\r');
  sink.push('\n');
  for (let i = 0; i < 20; i++) sink.push(line);
  const d = sink.dump('exit code 0');
  assert.equal(d.truncated, true);
  assert.equal(d.artifactId, slot.id);
  assert.equal(d.totalLines, 21n);
  assert.ok(d.output.startsWith('[exit code 0]\n'));
  assert.equal(fs.readFileSync(slot.path, 'utf8'), `green\n${line.repeat(20)}`, 'the whole output, sanitized');
  const short = new OutputSink(undefined, undefined, undefined, undefined);
  short.push('ok\n');
  assert.deepEqual({ ...short.dump(undefined) }, {
    output: 'ok\n', truncated: false, totalLines: 1n, totalBytes: 3n, outputLines: 1n, outputBytes: 3n,
    artifactId: undefined, artifactError: undefined,
  });
  s.close();
});
