// The component's `session` resource driven from jco in Node, a host that is not the
// project's: create, append, label, branch, name, context, tree, paging, fork, reopen.
// Contexts must equal the native core's for the same files, byte for byte, and the state
// must live in the instance: appends never read the file again. The typed results of
// `session-api` must say what `session-json` (the CLI's text) says, field by field.
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
import { storage } from './host.mjs';

const OUT = process.env.XCSH_JCO_OUT;
assert.ok(OUT, 'XCSH_JCO_OUT: the jco transpile output directory (run scripts/test-jco)');
const { instantiate } = await import(pathToFileURL(path.join(OUT, 'xcsh_session_component.js')).href);

/** The paths each reading import was called with, to see what an operation reads. */
const reads = [];
const READS = new Set(['read', 'openReader', 'readPrefix', 'readRange']);
/** Each reading call: [import, path, bytes returned] (a reader's pieces are not counted). */
const readOps = [];
const counted = Object.fromEntries(Object.entries(storage).map(([name, f]) => [name, READS.has(name)
  ? (p, ...rest) => {
    reads.push(p);
    const r = f(p, ...rest);
    readOps.push([name, p, r?.length ?? 0]);
    return r;
  }
  : f]));
const component = await instantiate(
  (file) => WebAssembly.compile(fs.readFileSync(path.join(OUT, file))),
  {
    // The clock and entropy are standard WASI: jco's own preview2 shim provides them.
    'wasi:clocks/wall-clock': clocks.wallClock,
    'wasi:random/insecure': random.insecure,
    'xcsh:session/storage': counted,
    // host.mjs keeps no prompt history; the typed history tests need one: in memory.
    'xcsh:session/history': memoryHistory(),
  },
);
const { Session } = component.sessionApi;
/** The typed one-shot functions, and the same as the CLI's JSON text. */
const api = component.sessionApi;
const json = component.sessionJson;

/** A prompt history in memory (one table for every database path; `search` matches a
 *  substring, enough to compare the typed rows with the JSON ones). */
function memoryHistory() {
  const rows = [];
  const newest = (cwd) => rows.filter((r) => cwd === undefined || r.cwd === cwd)
    .sort((a, b) => Number(b.createdAt - a.createdAt) || Number(b.id - a.id));
  return {
    add: (_db, prompt, cwd, createdAt) => { rows.push({ id: BigInt(rows.length + 1), prompt, createdAt, cwd }); },
    search: (_db, query, limit, cwd) => newest(cwd).filter((r) => r.prompt.includes(query.replace(/\*$/, ''))).slice(0, limit),
    recent: (_db, limit, cwd) => newest(cwd).slice(0, limit),
    lastPrompt: () => rows.at(-1)?.prompt,
  };
}

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
  assert.equal(s.isOnDisk(), false, 'acknowledged, in memory only');
  assert.equal(fs.existsSync(s.file()), false);
  s.appendMessage(reply('hi there'));
  const file = s.file();
  assert.ok(file.startsWith(path.join(agentDir, 'sessions')));
  assert.ok(fs.existsSync(file), 'written with the first reply');
  assert.equal(s.isOnDisk(), true);

  s.appendLabel(first, 'start');
  assert.equal(s.label(first), 'start');
  s.branch(first);
  const other = s.appendMessage(reply('another answer'));
  assert.equal(s.leafId(), other);
  assert.equal(s.setName('The pi session', 'user'), true);
  assert.equal(s.header().title, 'The pi session');
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
  assert.deepEqual(s.report().issues, []);
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
  assert.equal(s.report().migration.fromVersion, 1n);
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
  assert.equal(d.totalLines, 22n, '21 LFs pushed: the agent counts one line more');
  assert.ok(d.output.startsWith('[exit code 0]\n'));
  assert.equal(fs.readFileSync(slot.path, 'utf8'), `green\n${line.repeat(20)}`, 'the whole output, sanitized');
  const short = new OutputSink(undefined, undefined, undefined, undefined);
  short.push('ok\n');
  assert.deepEqual({ ...short.dump(undefined) }, {
    output: 'ok\n', truncated: false, totalLines: 2n, totalBytes: 3n, outputLines: 2n, outputBytes: 3n,
    artifactId: undefined, artifactError: undefined,
  });
  s.close();
});

// ---- Typed results: session-api's records say what session-json's text says. ----

/** A WIT `option` as JSON says it (`undefined` ↔ absent or `null`). */
const opt = (v) => v ?? undefined;
/** Epoch milliseconds as JSON's ISO-8601. */
const iso = (ms) => new Date(Number(ms)).toISOString();

/** The JSON load report (absent flags and lists left out) from the typed one. */
function reportAsJson(r) {
  const out = { issues: r.issues.map((i) => ({ line: i.line, kind: { unparsable: 'unparsable', 'torn-tail': 'tornTail', 'glued-record': 'gluedRecord' }[i.kind], detail: i.detail })), nonEntries: r.nonEntries.length };
  if (r.headerProblem !== undefined) out.headerProblem = r.headerProblem;
  if (r.invalidUtf8) out.invalidUtf8 = true;
  if (r.duplicateIds.length) out.duplicateIds = r.duplicateIds.length;
  if (r.migration) out.migration = { fromVersion: Number(r.migration.fromVersion), toVersion: Number(r.migration.toVersion), entriesChanged: r.migration.entriesChanged };
  if (r.backupPath !== undefined) out.backupPath = r.backupPath;
  if (r.missingBlobs.length) out.missingBlobs = r.missingBlobs;
  return out;
}

/** A SessionInfo as JSON prints it, from the typed record. */
function infoAsJson(i) {
  const out = { path: i.path, id: i.id, cwd: i.cwd };
  if (i.title !== undefined) out.title = i.title;
  if (i.parentSessionPath !== undefined) out.parentSessionPath = i.parentSessionPath;
  return { ...out, created: i.created, modified: iso(i.modifiedMs), messageCount: i.messageCount, firstMessage: i.firstMessage, allMessagesText: i.allMessagesText };
}

/** A v1 file with an unreadable line, a record that is not an entry, a duplicate id
 *  and a torn tail: every part of the load report is set. */
function oldDamagedFile(root, name) {
  const file = path.join(root, name);
  fs.writeFileSync(file, [
    JSON.stringify({ type: 'session', id: `old-${name}`, timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w', provider: 'p' }),
    JSON.stringify({ type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: 'hi', timestamp: 1 } }),
    'not json at all',
    JSON.stringify({ no: 'type' }),
    JSON.stringify({ type: 'message', timestamp: '2025-01-01T00:00:02.000Z', message: { role: 'assistant', content: [{ type: 'text', text: 'hello' }], timestamp: 2 } }),
    '{"type":"message","timest',
  ].join('\n'));
  return file;
}

test('show, migrate and the resource header and report: typed, equal to the JSON text', (t) => {
  const root = tempRoot(t);
  const agentDir = path.join(root, 'agent');
  const file = oldDamagedFile(root, 'a.jsonl');
  const typed = api.show(file, agentDir);
  const text = JSON.parse(json.show(file, agentDir));
  assert.deepEqual(JSON.parse(typed.header.json), text.header, 'the whole header, extras included');
  assert.equal(typed.header.id, text.header.id);
  assert.equal(typed.header.version, 3n, 'migrated in memory');
  assert.equal(typed.header.timestamp, text.header.timestamp);
  assert.equal(typed.header.cwd, text.header.cwd);
  assert.equal(typed.header.title, opt(text.header.title));
  assert.equal(typed.header.parentSession, opt(text.header.parentSession));
  assert.equal(typed.entryCount, text.entryCount);
  assert.equal(typed.leafId, opt(text.leafId));
  assert.equal(typed.version, BigInt(text.version));
  assert.equal(typed.migrationNeeded, text.migrationNeeded);
  assert.deepEqual(reportAsJson(typed.report), text.report);
  assert.equal(typed.report.fileExisted, true);
  assert.equal(typed.report.fileVersion, 1n);
  assert.deepEqual(typed.report.issues.map((i) => i.kind), ['unparsable', 'torn-tail']);
  assert.ok(typed.report.issues.every((i) => typeof i.offset === 'bigint' && i.offset > 0n));
  assert.equal(typed.report.nonEntries.length, 1);
  assert.equal(typed.report.migration.fromVersion, 1n);

  // migrate: the same report, typed, on two copies of the same file.
  const copy = oldDamagedFile(root, 'b.jsonl');
  const other = oldDamagedFile(root, 'c.jsonl');
  const migrated = api.migrate(copy, agentDir);
  const migratedText = JSON.parse(json.migrate(other, agentDir));
  assert.deepEqual({ ...reportAsJson(migrated), backupPath: undefined }, { ...migratedText, backupPath: undefined });
  assert.ok(migrated.backupPath && fs.existsSync(migrated.backupPath), 'the lossy original kept aside');
  assert.equal(JSON.parse(fs.readFileSync(copy, 'utf8').split('\n')[0]).version, 3);

  // The resource says the same of the same file.
  const s = Session.open(file, agentDir, '/w', true);
  assert.deepEqual(s.header(), typed.header);
  assert.deepEqual(s.report(), typed.report);
  s[Symbol.dispose]();

  // Errors are the same in both interfaces.
  const missing = path.join(root, 'missing.jsonl');
  assert.deepEqual(apiError(() => api.show(missing, agentDir)), apiError(() => json.show(missing, agentDir)));
  assert.equal(apiError(() => api.show(missing, agentDir)).kind, 'not-found');
});

test('the listings, resume, continue, blobs, urls, fork, move, gc and append: typed, equal to the JSON text', (t) => {
  const root = tempRoot(t);
  const agentDir = path.join(root, 'agent');
  const cwd = path.join(root, 'project');
  const files = [];
  for (const name of ['first', 'second']) {
    const s = Session.create(agentDir, cwd, undefined, undefined);
    s.appendMessage(user(`${name} question about parsing`));
    s.appendMessage(reply(`${name} answer`));
    if (name === 'second') s.setName('The second session', 'user');
    files.push(s.file());
    s.close();
  }
  const saver = Session.open(files[0], agentDir, cwd, false);
  saver.saveArtifact('line 1\nline 2\nline 3\n', 'bash');
  saver.close();

  const recent = api.recent(agentDir, cwd, 10);
  assert.equal(recent.length, 2);
  assert.deepEqual(recent.map((r) => {
    const out = { path: r.path, id: r.id, cwd: r.cwd };
    if (r.title !== undefined) out.title = r.title;
    return { ...out, name: r.name, fullName: r.fullName, timeAgo: r.timeAgo, modified: iso(r.modifiedMs) };
  }), JSON.parse(json.recent(agentDir, cwd, 10)));

  const list = api.list(agentDir, cwd);
  assert.deepEqual(list.map(infoAsJson), JSON.parse(json.list(agentDir, cwd)));
  assert.deepEqual(api.list(agentDir, undefined).map(infoAsJson), JSON.parse(json.list(agentDir, undefined)));
  assert.equal(list.find((i) => i.title === 'The second session').firstMessage, 'second question about parsing');
  assert.ok(list.every((i) => i.allMessagesText.includes('answer') && i.messageCount === 2));

  const hits = api.search(agentDir, cwd, 'second');
  assert.ok(hits.length >= 1 && hits[0].session.title === 'The second session');
  // A hit holds no text (each session's is read a piece at a time, and not kept).
  assert.ok(hits.every((h) => h.session.allMessagesText === ''));
  const withoutText = ({ allMessagesText, ...rest }) => rest;
  assert.deepEqual(hits.map((h) => ({ score: h.score, ...withoutText(infoAsJson(h.session)) })), JSON.parse(json.search(agentDir, cwd, 'second')));
  // The same search a step at a time, with progress.
  const search = json.openSearch(agentDir, cwd, 'second');
  let progress;
  do progress = search.step(1n); while (!search.done());
  assert.equal(progress.filesDone, progress.files);
  assert.equal(progress.bytesDone, progress.bytes);
  assert.equal(search.hits(), json.search(agentDir, cwd, 'second'));
  assert.deepEqual(JSON.parse(json.listFirst(agentDir, cwd, 1)), JSON.parse(json.listWithoutText(agentDir, cwd)).slice(0, 1));

  const id = list[0].id;
  assert.equal(api.resume(agentDir, cwd, id, false), JSON.parse(json.resume(agentDir, cwd, id, false)).path);
  assert.equal(api.resume(agentDir, cwd, id, false), list[0].path);
  const ambiguous = apiError(() => api.resume(agentDir, cwd, '', false));
  assert.deepEqual(ambiguous, apiError(() => json.resume(agentDir, cwd, '', false)));

  const continued = api.continueRecent(agentDir, cwd, undefined, []);
  const continuedText = JSON.parse(json.continueRecent(agentDir, cwd, undefined, []));
  assert.deepEqual({ path: continued.path, source: { 'most-recent': 'mostRecent', breadcrumb: 'breadcrumb', new: 'new' }[continued.source] }, continuedText);
  assert.equal(continued.source, 'most-recent');
  assert.equal(api.continueRecent(agentDir, path.join(root, 'elsewhere'), undefined, []).source, 'new');

  const bytes = new TextEncoder().encode('blob bytes');
  const blob = api.putBlob(agentDir, bytes);
  assert.deepEqual({ ...blob }, JSON.parse(json.putBlob(agentDir, bytes)));
  assert.equal(blob.ref, `blob:sha256:${blob.hash}`);
  assert.deepEqual(api.getBlob(agentDir, blob.ref), bytes);

  const url = api.resolveUrl(files[0], 'artifact://0', 2, 1);
  assert.deepEqual({ content: url.content, mimeType: url.mimeType, size: Number(url.size) }, JSON.parse(json.resolveUrl(files[0], 'artifact://0', 2, 1)));
  assert.equal(url.content, 'line 2');
  assert.deepEqual(apiError(() => api.resolveUrl(files[0], 'artifact://9', undefined, undefined)), apiError(() => json.resolveUrl(files[0], 'artifact://9', undefined, undefined)));

  const fork = api.fork(agentDir, files[1]);
  const forkText = JSON.parse(json.fork(agentDir, files[1]));
  assert.equal(fork.oldFile, forkText.oldFile);
  assert.deepEqual(fork.warnings, forkText.warnings);
  assert.ok(fs.existsSync(fork.newFile) && fs.existsSync(forkText.newFile) && fork.newFile !== forkText.newFile);
  const moved = api.moveSession(agentDir, fork.newFile, path.join(root, 'moved'));
  const movedText = JSON.parse(json.moveSession(agentDir, forkText.newFile, path.join(root, 'moved')));
  assert.equal(path.dirname(moved), path.dirname(movedText.newFile));
  assert.ok(fs.existsSync(moved) && !fs.existsSync(fork.newFile));

  const gc = api.gc(agentDir, true, false);
  assert.deepEqual({ ...gc }, JSON.parse(json.gc(agentDir, true, false)));
  assert.deepEqual([gc.keptPinned, gc.missing, gc.forgotten, gc.staleFiles, gc.staleIndexes], [[], [], [], [], []]);
  assert.equal(gc.dryRun, true);
  assert.deepEqual(gc.keptRecent, [blob.hash], 'a new unreferenced blob is kept');

  const entry = JSON.stringify({ type: 'custom', customType: 'typed' });
  const appended = api.append(files[0], agentDir, cwd, entry);
  const appendedText = JSON.parse(json.append(files[0], agentDir, cwd, entry));
  const ids = fs.readFileSync(files[0], 'utf8').trim().split('\n').map((l) => JSON.parse(l).id);
  assert.deepEqual(ids.slice(-2), [appended, appendedText.id]);
});

test('history: typed rows and the add outcome equal the JSON text', (t) => {
  const agentDir = path.join(tempRoot(t), 'agent');
  assert.deepEqual(api.historyAdd(agentDir, '  parse the file  ', '/w'), { tag: 'added' });
  assert.deepEqual(api.historyAdd(agentDir, 'parse the file', '/w'), { tag: 'skipped', val: 'duplicate' });
  assert.equal(json.historyAdd(agentDir, 'parse the file', '/w'), '{"added":false,"reason":"duplicate"}');
  assert.deepEqual(api.historyAdd(agentDir, ' \n ', undefined), { tag: 'skipped', val: 'empty' });
  assert.equal(json.historyAdd(agentDir, 'write the tests', undefined), '{"added":true}');
  const asJson = (rows) => rows.map((r) => ({ id: Number(r.id), prompt: r.prompt, createdAt: iso(r.createdAt * 1000n), cwd: r.cwd ?? null }));
  const recent = api.historyRecent(agentDir, 10, undefined);
  assert.deepEqual(recent.map((r) => r.prompt).sort(), ['parse the file', 'write the tests']);
  assert.deepEqual(asJson(recent), JSON.parse(json.historyRecent(agentDir, 10, undefined)));
  assert.ok(recent.every((r) => typeof r.createdAt === 'bigint' && Math.abs(Number(r.createdAt) - Date.now() / 1000) < 600), 'epoch seconds');
  const found = api.historySearch(agentDir, 'parse*', 10, '/w');
  assert.deepEqual(found.map((r) => [r.prompt, r.cwd]), [['parse the file', '/w']]);
  assert.deepEqual(asJson(found), JSON.parse(json.historySearch(agentDir, 'parse*', 10, '/w')));
});

test('tree-nodes: the JSON tree flat in pre-order, without payloads', (t) => {
  const root = tempRoot(t);
  const s = Session.create(path.join(root, 'agent'), '/work/pi', undefined, undefined);
  const q = s.appendMessage(user('question'));
  s.appendMessage(reply('first answer'));
  s.appendLabel(q, 'start');
  s.branch(q);
  s.appendMessage(reply('second answer'));
  s.appendMessage(user('follow-up'));
  const flat = [];
  const walk = (nodes, depth) => nodes.forEach((n) => {
    flat.push({ id: n.entry.id, parentId: opt(n.entry.parentId), entryType: n.entry.type, timestamp: n.entry.timestamp, label: n.label, depth, childCount: n.children.length });
    walk(n.children, depth + 1);
  });
  walk(JSON.parse(s.tree()), 0);
  const nodes = s.treeNodes();
  assert.deepEqual(nodes.map(({ index, ...rest }) => rest), flat);
  assert.equal(nodes.length, s.entryCount());
  assert.equal(nodes[0].label, 'start');
  assert.equal(nodes[0].childCount, 2, 'both answers');
  assert.deepEqual(nodes.map((n) => n.depth), [0, 1, 2, 1, 2], 'the label under the first answer, the follow-up under the second');
  const entries = JSON.parse(s.entries(0, 100));
  assert.ok(nodes.every((n) => entries[n.index].id === n.id), 'index is the position in file order');
  s.close();
});

test('open-context: a context of several MiB read in chunks is the context, byte for byte', (t) => {
  const root = tempRoot(t);
  const agent = path.join(root, 'agent');
  const s = Session.create(agent, '/work/pi', undefined, undefined);
  const big = 'é日本🎉 output line\n'.repeat(4000);
  for (let i = 0; i < 30; i++) {
    s.appendMessage(user(`${i} ${big}`));
    s.appendMessage(reply(`answer ${i}`));
  }
  const file = s.file();
  s.close();
  const whole = api.context(file, agent, undefined);
  assert.ok(whole.length > 2 ** 21, `${whole.length} characters`);
  const reader = api.openContext(file, agent, undefined);
  const expected = Buffer.from(whole, 'utf8');
  assert.equal(reader.byteLength(), BigInt(expected.length));
  const chunks = [];
  for (let chunk; (chunk = reader.read(1n << 20n)).length > 0;) {
    assert.ok(chunk.length <= 2 ** 20);
    chunks.push(chunk);
  }
  assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
  assert.deepEqual(Buffer.concat(chunks), expected);
  assert.equal(reader.read(1n << 20n).length, 0, 'stays at the end');
  // The same errors as `context`.
  assert.equal(apiError(() => api.openContext(path.join(root, 'none.jsonl'), agent, undefined)).kind, 'not-found');
  assert.equal(apiError(() => api.openContext(file, agent, 'nosuchid')).kind, 'entry-not-found');
});

test('open-context through the index: a reopen reads the cached index and, by read-range, only the context\'s lines', (t) => {
  const root = tempRoot(t);
  const agent = path.join(root, 'agent');
  const s = Session.create(agent, '/work/pi', undefined, undefined);
  const ids = [];
  for (let i = 0; i < 200; i++) {
    ids.push(s.appendMessage(user(`${i} ${'question '.repeat(60)}`)));
    s.appendMessage(reply(`answer ${i}`));
  }
  const file = s.file();
  s.close();
  const size = fs.statSync(file).size;
  const leaf = ids[50];
  const expected = native(file, leaf);
  readOps.length = 0;
  assert.equal(api.context(file, agent, leaf), expected, 'the first open scans and keeps the index');
  assert.deepEqual(readOps.filter(([op, p]) => p === file && op !== 'readRange'), [], 'the session file is read by ranges only');
  const cached = fs.readdirSync(path.join(agent, 'cache', 'index'));
  assert.equal(cached.length, 1);
  readOps.length = 0;
  assert.equal(api.context(file, agent, leaf), expected);
  const fileBytes = readOps.filter(([, p]) => p === file).reduce((n, [, , b]) => n + b, 0);
  assert.ok(fileBytes < size / 3, `a reopen read ${fileBytes} of the file's ${size} bytes`);
  assert.ok(readOps.some(([, p]) => p.endsWith(cached[0])), 'the cached index was read');
  const reader = api.openContext(file, agent, leaf);
  const chunks = [];
  for (let chunk; (chunk = reader.read(1n << 16n)).length > 0;) chunks.push(chunk);
  assert.equal(Buffer.concat(chunks).toString('utf8'), expected);
});
