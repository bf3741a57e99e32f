// `xcsh-session/agent` as the agent's SessionManager with a second header line in the file,
// in the sessions made by fork() and createBranchedSession() (their context, their live
// entries), and in moveTo (an in-memory session, the sessions root a session is moved to).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionManager } from '../../pkg/agent.mjs';
import { agentHome } from './helpers.mjs';

function setup(t) {
  const root = agentHome(t, 'xcsh-headers-fork-');
  const [a, b] = ['a', 'b'].map((name) => path.join(root, name));
  fs.mkdirSync(a);
  fs.mkdirSync(b);
  return { root, a, b };
}

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (content) => ({ role: 'user', content, timestamp: 1 });
const reply = (text, extra = {}) => ({
  role: 'assistant', content: [{ type: 'text', text }], api: 'anthropic-messages', provider: 'anthropic',
  model: 'claude-sonnet-4-5', usage, stopReason: 'stop', timestamp: 2, ...extra,
});
const replayReply = () => reply('with replay', {
  api: 'openai-responses', provider: 'openai',
  content: [{ type: 'thinking', thinking: 'r', thinkingSignature: 'sig' }, { type: 'text', text: 'done' }],
  providerPayload: { type: 'openaiResponsesHistory', provider: 'openai', items: [{ id: 'rs_1' }] },
});

const lines = (file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const corruptCopies = (file) => fs.readdirSync(path.dirname(file)).filter((n) => n.includes('.corrupt-'));

/** A file of `cwd` in its default directory, written record by record. */
function sessionFile(cwd, records, name = '2026-01-01T00-00-00-000Z_hdr.jsonl') {
  const file = path.join(SessionManager.getDefaultSessionDir(cwd), name);
  fs.writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

const header = (id, cwd, extra = {}) => ({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd, ...extra });
const message = (id, parentId, msg) => ({ type: 'message', id, parentId, timestamp: '2026-01-01T00:00:01.000Z', message: msg });

// ---- a second header line ----

test('a second header line stays in the file at its place: left out of the entries, written back by a rewrite and by moveTo, dropped by fork', async (t) => {
  const { a, b } = setup(t);
  const second = header('h2', '/elsewhere');
  const file = sessionFile(a, [header('h1', a), message('u1', null, user('hi')), second, message('a1', 'u1', reply('hello'))]);
  const s = await SessionManager.open(file);
  // The agent's getEntries() and id index skip every record of type "session".
  assert.deepEqual(s.getEntries().map((e) => e.id), ['u1', 'a1']);
  assert.equal(s.getEntry('h2'), undefined);
  assert.equal(s.getHeader().id, 'h1');
  s.appendMessage(user('again'));
  await s.rewriteEntries();
  const rewritten = lines(file);
  assert.deepEqual(rewritten.map((r) => r.id), ['h1', 'u1', 'h2', 'a1', rewritten[4].id]);
  assert.deepEqual(rewritten[2], second, 'written back as it was');
  assert.deepEqual(corruptCopies(file), [], 'nothing is lost, so no copy is kept aside');

  // moveTo rewrites the agent's file entries: the first header gets the new cwd, the second stays.
  await s.moveTo(b);
  const moved = lines(s.getSessionFile());
  assert.deepEqual(moved.map((r) => r.id), rewritten.map((r) => r.id));
  assert.equal(moved[0].cwd, b);
  assert.deepEqual(moved[2], second);

  // fork() keeps the entries without any header but its new one.
  const { newSessionFile } = await s.fork();
  const forked = lines(newSessionFile);
  assert.deepEqual(forked.filter((r) => r.type === 'session').length, 1);
  assert.deepEqual(forked.slice(1).map((r) => r.id), ['u1', 'a1', rewritten[4].id]);
  await s.close();
});

test('createBranchedSession leaves a second header line behind', async (t) => {
  const { a } = setup(t);
  const file = sessionFile(a, [header('h1', a), message('u1', null, user('hi')), header('h2', a), message('a1', 'u1', reply('hello'))]);
  const s = await SessionManager.open(file);
  const branched = s.createBranchedSession('a1');
  assert.deepEqual(lines(branched).map((r) => r.type), ['session', 'message', 'message']);
  await s.close();
});

test('v1 migration: a second header counts in firstKeptEntryIndex and gets the new version', async (t) => {
  const { a } = setup(t);
  // Index 0 is the first header, 1 `one`, 2 the second header, 3 `two`.
  const file = sessionFile(a, [
    { type: 'session', id: 'v1', timestamp: '2026-01-01T00:00:00.000Z', cwd: a },
    { type: 'message', timestamp: 't1', message: user('one') },
    { type: 'session', id: 'v1b', timestamp: '2026-01-01T00:00:00.000Z', cwd: a },
    { type: 'message', timestamp: 't3', message: user('two') },
    { type: 'compaction', timestamp: 't4', summary: 's', firstKeptEntryIndex: 3, tokensBefore: 1 },
    { type: 'compaction', timestamp: 't5', summary: 's', firstKeptEntryIndex: 2, tokensBefore: 1 },
    { type: 'message', timestamp: 't6', message: reply('three') },
  ]);
  const s = await SessionManager.open(file);
  const entries = s.getEntries();
  assert.equal(entries.length, 5);
  assert.equal(entries[2].firstKeptEntryId, entries[1].id, 'index 3 is `two`');
  assert.equal('firstKeptEntryId' in entries[3], false, 'a header is never kept');
  assert.equal(entries[1].parentId, entries[0].id, 'the header is not in the parent chain');
  await s.rewriteEntries();
  await s.close();
  const written = lines(file);
  assert.deepEqual(written.map((r) => r.type), ['session', 'message', 'session', 'message', 'compaction', 'compaction', 'message']);
  assert.equal(written[2].version, 3);
  assert.equal(written[2].id, 'v1b');
  assert.equal('parentId' in written[2], false);
});

// ---- fork and createBranchedSession: the context ----

/** A session of `a` on disk whose last reply carries OpenAI Responses replay data. */
async function withReplay(cwd) {
  const s = SessionManager.create(cwd);
  s.appendMessage(user('hi'));
  s.appendMessage(replayReply());
  await s.close();
  return SessionManager.open(s.getSessionFile());
}
const stale = (manager) => JSON.stringify(manager.buildSessionContext()).match(/openaiResponsesHistory|thinkingSignature/);

test('fork() of a loaded session hands no stale OpenAI Responses replay data to the model, and writes none', async (t) => {
  const { a } = setup(t);
  const s = await withReplay(a);
  assert.equal(stale(s), null, 'loaded');
  const { newSessionFile } = await s.fork();
  assert.equal(stale(s), null, 'forked');
  // The agent's fork writes its in-memory entries, cleaned at load.
  assert.doesNotMatch(fs.readFileSync(newSessionFile, 'utf8'), /openaiResponsesHistory|thinkingSignature/);
  await s.close();
});

test('createBranchedSession of a loaded session hands no stale OpenAI Responses replay data to the model, and writes none', async (t) => {
  const { a } = setup(t);
  const s = await withReplay(a);
  const file = s.createBranchedSession(s.getLeafId());
  assert.equal(stale(s), null);
  assert.doesNotMatch(fs.readFileSync(file, 'utf8'), /openaiResponsesHistory|thinkingSignature/);
  await s.close();
});

// ---- moveTo ----

test('moveTo of an in-memory session sets the header cwd', async (t) => {
  const { a, b } = setup(t);
  const s = SessionManager.inMemory(a);
  s.appendMessage(user('hi'));
  await s.moveTo(b);
  assert.equal(s.getCwd(), b);
  assert.equal(s.getHeader().cwd, b);
});

test('moveTo keeps a session in its sessions root when its directory is the cwd\'s standard folder', async (t) => {
  const { root, a, b } = setup(t);
  const name = (cwd) => path.basename(SessionManager.getDefaultSessionDir(cwd));
  const otherRoot = path.join(root, 'other-sessions');
  const s = SessionManager.create(a, path.join(otherRoot, name(a)));
  s.appendMessage(user('hi'));
  s.appendMessage(reply('hello'));
  await s.moveTo(b);
  assert.equal(path.dirname(s.getSessionFile()), path.join(otherRoot, name(b)));
  assert.equal(s.getSessionDir(), path.join(otherRoot, name(b)));
  assert.ok(fs.existsSync(s.getSessionFile()));
  await s.close();

  // Any other folder name: the agent dir's sessions root.
  const elsewhere = SessionManager.create(a, path.join(otherRoot, 'custom'));
  elsewhere.appendMessage(user('hi'));
  elsewhere.appendMessage(reply('hello'));
  await elsewhere.moveTo(b);
  assert.equal(path.dirname(elsewhere.getSessionFile()), SessionManager.getDefaultSessionDir(b));
  await elsewhere.close();
});

// ---- live entries after the entries are replaced ----

test('after createBranchedSession the entries handed out are the branched session\'s', async (t) => {
  const { a } = setup(t);
  const s = await SessionManager.open(sessionFile(a, [
    header('h1', a), message('u1', null, user('hi')),
    { type: 'label', id: 'l1', parentId: 'u1', timestamp: 't', targetId: 'u1', label: 'start' },
    message('a1', 'l1', reply('hello')),
  ]));
  assert.equal(s.getEntry('a1').parentId, 'l1');
  assert.equal(s.getEntries().length, 3);
  s.createBranchedSession('a1');
  // The agent's branched session drops the label from the path and re-creates it at the end.
  assert.equal(s.getEntry('a1').parentId, 'u1');
  assert.deepEqual(s.getEntries().map((e) => e.type), ['message', 'message', 'label']);
  assert.equal(s.getEntry('l1'), undefined);
  await s.close();
});

test('an entry edited before fork or createBranchedSession is kept in the new session', async (t) => {
  const { a } = setup(t);
  const s = await SessionManager.open(sessionFile(a, [header('h1', a), message('u1', null, user('hi')), message('a1', 'u1', reply('hello'))]));
  s.getEntry('u1').message.content = 'edited';
  const { newSessionFile } = await s.fork();
  assert.equal(s.getEntry('u1').message.content, 'edited');
  assert.equal(lines(newSessionFile)[1].message.content, 'edited');
  s.getEntry('a1').message.content[0].text = 'edited too';
  const branched = s.createBranchedSession('a1');
  assert.equal(lines(branched)[2].message.content[0].text, 'edited too');
  await s.close();
});
