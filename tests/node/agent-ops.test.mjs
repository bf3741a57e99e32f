// `xcsh-session/agent` against the agent's SessionManager, operation by operation: naming a
// session, fork, createBranchedSession, forkFrom, and captureState / restoreState. Each
// test states what the agent does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionManager } from '../../pkg/agent.mjs';
import { agentHome } from './helpers.mjs';

function setup(t) {
  const root = agentHome(t, 'xcsh-ops-');
  const cwd = path.join(root, 'project');
  fs.mkdirSync(cwd);
  return { root, cwd };
}

const user = (text) => ({ role: 'user', content: text, timestamp: 1 });
const assistant = (text, extra = {}) => ({
  role: 'assistant', content: [{ type: 'text', text }], api: 'anthropic-messages', provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: 'stop', timestamp: 2, ...extra,
});
const records = (file) => fs.readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));

// ---- setSessionName ----

test('a session name has its control characters turned into spaces and its spaces collapsed', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.inMemory(cwd);
  assert.equal(await s.setSessionName('a\nb'), true);
  assert.equal(s.getSessionName(), 'a b');
  assert.equal(await s.setSessionName('  padded  name '), true);
  assert.equal(s.getSessionName(), 'padded name');
  assert.equal(await s.setSessionName('tab\there\x1b[1m\u0085end'), true);
  assert.equal(s.getSessionName(), 'tab here [1m end');
});

test('a name that is empty once sanitized is refused with false, the old name kept', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.inMemory(cwd);
  assert.equal(await s.setSessionName(''), false);
  assert.equal(s.getSessionName(), undefined);
  await s.setSessionName('kept', 'user');
  assert.equal(await s.setSessionName(' \n\t\u0007 ', 'user'), false);
  assert.equal(s.getSessionName(), 'kept');
  assert.equal(s.titleSource, 'user');
});

test('an automatic title never replaces a name the user set; every other change is taken', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.create(cwd);
  s.appendMessage(user('hi'));
  s.appendMessage(assistant('hello'));
  assert.equal(await s.setSessionName('first auto'), true, 'auto over nothing');
  assert.equal(await s.setSessionName('second auto', 'auto'), true, 'auto over auto');
  assert.equal(await s.setSessionName('mine', 'user'), true, 'user over auto');
  assert.equal(await s.setSessionName('generated', 'auto'), false, 'auto over user');
  assert.equal(s.getSessionName(), 'mine');
  assert.equal(s.titleSource, 'user');
  assert.equal(await s.setSessionName('mine again', 'user'), true, 'user over user');
  assert.equal(await s.setSessionName('mine again', 'user'), true, 'the same name again');
  const header = records(s.getSessionFile())[0];
  assert.equal(header.title, 'mine again');
  assert.equal(header.titleSource, 'user');
  await s.close();
});

// ---- fork ----

test('fork links the new header to the old session by its id and keeps its name', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.create(cwd);
  await s.setSessionName('named', 'user');
  s.appendMessage(user('hi'));
  s.appendMessage(assistant('hello'));
  const oldId = s.getSessionId();
  const { oldSessionFile, newSessionFile } = await s.fork();
  assert.notEqual(newSessionFile, oldSessionFile);
  assert.equal(s.getHeader().parentSession, oldId);
  assert.equal(records(newSessionFile)[0].parentSession, oldId);
  assert.equal(s.getSessionName(), 'named');
  assert.equal(s.titleSource, 'user');
  assert.equal(records(newSessionFile)[0].title, 'named');
  await s.close();
});

// ---- createBranchedSession ----

test('createBranchedSession writes the new file at once, linked to the old file, without a title', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.create(cwd);
  await s.setSessionName('the original', 'user');
  const first = s.appendMessage(user('first'));
  s.appendMessage(user('second'));
  const oldFile = s.getSessionFile();
  assert.equal(fs.existsSync(oldFile), false, 'no assistant message yet: not written');
  const file = s.createBranchedSession(first);
  assert.notEqual(file, oldFile);
  assert.equal(s.getSessionFile(), file);
  const [header, ...entries] = records(file);
  assert.equal(header.parentSession, oldFile);
  assert.equal(header.title, undefined);
  assert.deepEqual(entries.map((e) => e.id), [first]);
  assert.equal(s.getHeader().parentSession, oldFile);
  await s.close();
});

test('in memory, createBranchedSession gives a header with no parentSession', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.inMemory(cwd);
  s.appendMessage(user('hi'));
  const reply = s.appendMessage(assistant('hello'));
  assert.equal(s.createBranchedSession(reply), undefined);
  assert.equal('parentSession' in s.getHeader(), false);
  assert.equal(s.getEntries().length, 2);
});

// ---- forkFrom ----

test('forkFrom keeps the source entries as they are, stale OpenAI Responses replay data dropped', async (t) => {
  const { root, cwd } = setup(t);
  const other = path.join(root, 'other');
  fs.mkdirSync(other);
  const source = SessionManager.create(other);
  const root1 = source.appendMessage(user('question'));
  const stale = source.appendMessage(assistant('answer', {
    api: 'openai-responses', provider: 'openai', model: 'gpt-5',
    content: [{ type: 'thinking', thinking: 'hm', thinkingSignature: '{"id":"rs_1"}' }, { type: 'text', text: 'answer' }],
    providerPayload: { type: 'openaiResponsesHistory', provider: 'openai', items: [{ type: 'reasoning' }] },
  }));
  source.branch(root1);
  const side = source.appendMessage(user('a side branch'));
  await source.close();
  const sourceEntries = records(source.getSessionFile()).slice(1);

  const fork = await SessionManager.forkFrom(source.getSessionFile(), cwd);
  const [header, ...entries] = records(fork.getSessionFile());
  assert.equal(header.parentSession, source.getSessionId());
  assert.deepEqual(entries.map((e) => [e.id, e.parentId, e.timestamp]),
    sourceEntries.map((e) => [e.id, e.parentId, e.timestamp]), 'ids, tree and times kept');
  assert.equal(fork.getLeafId(), side);
  const copied = entries.find((e) => e.id === stale).message;
  assert.equal('providerPayload' in copied, false);
  assert.deepEqual(copied.content, [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: 'answer' }]);
  assert.equal('providerPayload' in fork.getEntry(stale).message, false);
  await fork.close();
});

// ---- captureState / restoreState ----

test('captureState holds fileEntries: the header, then the entries as handed out', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.create(cwd);
  s.appendCustomMessageEntry('proxy-details', 'Proxy metadata', true, new Proxy({ ok: true, nested: { value: 'kept' } }, {}));
  const snapshot = s.captureState();
  assert.equal(snapshot.fileEntries[0].type, 'session');
  assert.equal(snapshot.fileEntries[0].id, s.getSessionId());
  assert.deepEqual(snapshot.fileEntries.slice(1), s.getEntries());
  const custom = snapshot.fileEntries.find((e) => e.type === 'custom_message' && e.customType === 'proxy-details');
  assert.deepEqual(custom.details, { ok: true, nested: { value: 'kept' } });
  await s.close();
});

test('restoreState takes a snapshot of the agent\'s shape, with fileEntries', async (t) => {
  const { root, cwd } = setup(t);
  const s = SessionManager.create(cwd);
  s.appendMessage(user('keep me'));
  s.appendMessage(assistant('ok'));
  const file = s.getSessionFile();
  const { session, cwd: _cwd, sessionDir, ...agentShape } = s.captureState();
  const other = path.join(root, 'other.jsonl');
  await s.setSessionFile(other);
  assert.equal(s.getSessionFile(), other);
  s.restoreState(agentShape);
  assert.equal(s.getSessionFile(), file);
  assert.deepEqual(s.getEntries().map((e) => e.message.content), ['keep me', [{ type: 'text', text: 'ok' }]]);
  s.appendMessage(user('after the rollback'));
  assert.ok(fs.readFileSync(file, 'utf8').includes('after the rollback'));
  await s.close();
});

// ---- newSession ----

test('newSession on an in-memory manager stays in memory: no file, the parent linked in its header', async (t) => {
  const { root, cwd } = setup(t);
  const s = SessionManager.inMemory(cwd);
  s.appendMessage(user('first'));
  const before = s.getSessionId();
  assert.equal(await s.newSession({ parentSession: 'parent.jsonl' }), undefined);
  assert.notEqual(s.getSessionId(), before);
  assert.equal(s.getSessionFile(), undefined);
  assert.equal(s.getHeader().parentSession, 'parent.jsonl');
  s.appendMessage(user('second'));
  s.appendMessage(assistant('reply'));
  await s.flush();
  assert.equal(s.getSessionFile(), undefined);
  assert.deepEqual(fs.readdirSync(root).filter((f) => f !== 'project' && f !== 'agent'), []);
  assert.equal(fs.existsSync(path.join(root, 'agent', 'sessions')), false);
});

// ---- stale OpenAI Responses replay data ----

test('a loaded session hands out its assistant entries without stale Responses replay data; the file keeps its bytes', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.create(cwd);
  s.appendMessage(user('hi'));
  const stale = assistant('old answer', {
    api: 'openai-responses', provider: 'openai', model: 'gpt-5-mini',
    content: [{ type: 'thinking', thinking: 'r', thinkingSignature: '{"id":"rs_1"}' }, { type: 'text', text: 'old answer' }],
    providerPayload: { type: 'openaiResponsesHistory', provider: 'openai', items: [{ type: 'reasoning', encrypted_content: 'enc' }] },
  });
  const id = s.appendMessage(stale);
  await s.flush();
  const file = s.getSessionFile();
  await s.close();
  const bytes = fs.readFileSync(file, 'utf8');

  const again = await SessionManager.open(file);
  const entry = again.getEntries().find((e) => e.id === id);
  assert.equal(entry.message.providerPayload, undefined);
  assert.equal(entry.message.content[0].thinkingSignature, undefined);
  assert.equal(again.getEntry(id).message.providerPayload, undefined);
  assert.equal(again.getBranch().at(-1).message.providerPayload, undefined);
  // Live in this process, a message appended now keeps its payload, as the agent's does.
  const fresh = again.appendMessage({ ...stale, content: [{ type: 'text', text: 'new answer' }] });
  assert.equal(again.getEntry(fresh).message.providerPayload.type, 'openaiResponsesHistory');
  await again.flush();
  assert.ok(fs.readFileSync(file, 'utf8').startsWith(bytes));
});
