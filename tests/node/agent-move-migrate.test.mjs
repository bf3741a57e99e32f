// `xcsh-session/agent` as the agent's SessionManager in moving, migrating and rewriting a
// session: moveTo in every state of the file, v1 files, numbers written as JavaScript
// writes them, a second header line, and entries sharing an id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionManager } from '../../pkg/agent.mjs';
import { agentHome } from './helpers.mjs';

/** A fresh agent dir (PI_CODING_AGENT_DIR) and two project dirs for one test. */
function setup(t) {
  const root = agentHome(t, 'xcsh-move-migrate-');
  const [a, b] = ['a', 'b'].map((name) => path.join(root, name));
  fs.mkdirSync(a);
  fs.mkdirSync(b);
  return { root, a, b };
}

const reply = (text, extra = {}) => ({
  role: 'assistant', content: [{ type: 'text', text }], api: 'anthropic-messages', provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: 'stop', timestamp: 2, ...extra,
});

const lines = (file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** A session of `a` with a user message and a reply, on disk. */
async function written(cwd, sessionDir) {
  const s = SessionManager.create(cwd, sessionDir);
  s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
  s.appendMessage(reply('hello'));
  await s.flush();
  return s;
}

test('moveTo a cwd whose directory already holds the file updates the header cwd there', async (t) => {
  const { a, b } = setup(t);
  // A session of `a` kept in `b`'s directory (as `create(cwd, sessionDir)` allows).
  const s = await written(a, SessionManager.getDefaultSessionDir(b));
  await s.close();
  const file = s.getSessionFile();
  const opened = await SessionManager.open(file);
  assert.equal(opened.getCwd(), a);
  await opened.moveTo(b);
  assert.equal(opened.getSessionFile(), file);
  assert.equal(opened.getCwd(), b);
  assert.equal(opened.getHeader().cwd, b);
  assert.equal(lines(file)[0].cwd, b);
  assert.equal(lines(file).length, 3);
  await opened.close();
});

test('moveTo after the file was deleted behind the manager writes the session from memory', async (t) => {
  const { a, b } = setup(t);
  const s = await written(a);
  const old = s.getSessionFile();
  fs.rmSync(old);
  await s.moveTo(b);
  const moved = s.getSessionFile();
  assert.equal(path.dirname(moved), SessionManager.getDefaultSessionDir(b));
  assert.equal(fs.existsSync(old), false);
  const [header, ...entries] = lines(moved);
  assert.equal(header.cwd, b);
  assert.deepEqual(entries.map((e) => e.message.role), ['user', 'assistant']);
  await s.close();
});

test('a moved session never hands stale OpenAI Responses replay data to the model', async (t) => {
  const { a, b } = setup(t);
  const s = await written(a);
  s.appendMessage({ role: 'user', content: 'again', timestamp: 3 });
  s.appendMessage(reply('with replay', {
    api: 'openai-responses', provider: 'openai',
    content: [{ type: 'thinking', thinking: 'r', thinkingSignature: 'sig' }, { type: 'text', text: 'done' }],
    providerPayload: { type: 'openaiResponsesHistory', provider: 'openai', items: [{ id: 'rs_1' }] },
  }));
  await s.close();
  const stale = (manager) => JSON.stringify(manager.buildSessionContext()).match(/openaiResponsesHistory|thinkingSignature/);
  const opened = await SessionManager.open(s.getSessionFile());
  assert.equal(stale(opened), null, 'loaded');
  await opened.moveTo(b);
  assert.equal(stale(opened), null, 'moved');
  await opened.close();
  const reopened = await SessionManager.open(opened.getSessionFile());
  assert.equal(stale(reopened), null, 'reopened after the move');
  await reopened.close();
});

/** A v1 session file (entries without ids) of `cwd` in its default directory. */
function v1File(cwd, records) {
  const file = path.join(SessionManager.getDefaultSessionDir(cwd), '2026-01-01T00-00-00-000Z_v1.jsonl');
  const header = { type: 'session', id: 'v1', timestamp: '2026-01-01T00:00:00.000Z', cwd };
  fs.writeFileSync(file, [header, ...records].map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

test('a migrated file is written with its numbers as JSON.stringify writes them', async (t) => {
  const { a } = setup(t);
  const file = v1File(a, [{ type: 'message', timestamp: 't', message: reply('old') }]);
  // As Python writes 0.000041: the agent parses the record and writes 0.000041.
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"total":0}', '"total":4.1e-05}'));
  const s = await SessionManager.open(file);
  await s.rewriteEntries();
  await s.close();
  const text = fs.readFileSync(file, 'utf8');
  assert.match(text, /"total":0\.000041\}/);
  assert.doesNotMatch(text, /4\.1e-05/);
});

test('v1 migration: a compaction keeping entries from a later index gets the id that entry had then', async (t) => {
  const { a } = setup(t);
  // Index 0 is the header. The agent gives ids in file order and reads the target's id
  // when it reaches the compaction: an entry after it has none yet, or the one it was
  // written with.
  const file = v1File(a, [
    { type: 'message', timestamp: 't1', message: { role: 'user', content: 'one', timestamp: 1 } },
    { type: 'compaction', timestamp: 't2', summary: 's', firstKeptEntryIndex: 3, tokensBefore: 1 },
    { type: 'message', timestamp: 't3', message: { role: 'user', content: 'two', timestamp: 3 } },
    { type: 'compaction', timestamp: 't4', summary: 's', firstKeptEntryIndex: 5, tokensBefore: 1 },
    { type: 'message', id: 'written', timestamp: 't5', message: reply('three') },
    { type: 'compaction', timestamp: 't6', summary: 's', firstKeptEntryIndex: 1, tokensBefore: 1 },
  ]);
  const s = await SessionManager.open(file);
  const entries = s.getEntries();
  const compactions = entries.filter((e) => e.type === 'compaction');
  assert.equal('firstKeptEntryId' in compactions[0], false);
  assert.equal(compactions[1].firstKeptEntryId, 'written');
  assert.notEqual(entries[4].id, 'written', 'the target itself gets a new id');
  assert.equal(compactions[2].firstKeptEntryId, entries[0].id);
  assert.ok(compactions.every((c) => !('firstKeptEntryIndex' in c)));
  await s.close();
});

test('entries sharing an id are each handed out, each as its own live object', async (t) => {
  const { a } = setup(t);
  const file = path.join(SessionManager.getDefaultSessionDir(a), '2026-01-01T00-00-00-000Z_dup.jsonl');
  const header = { type: 'session', version: 3, id: 'dup', timestamp: '2026-01-01T00:00:00.000Z', cwd: a };
  const user = (id, parentId, content) => ({ type: 'message', id, parentId, timestamp: 't', message: { role: 'user', content, timestamp: 1 } });
  fs.writeFileSync(file, [header, user('r', null, 'root'), user('x', 'r', 'first'), user('x', 'r', 'second')]
    .map((r) => JSON.stringify(r)).join('\n') + '\n');
  const s = await SessionManager.open(file);
  const entries = s.getEntries();
  assert.deepEqual(entries.map((e) => e.message.content), ['root', 'first', 'second']);
  assert.equal(s.getEntries()[1], entries[1], 'the same object each time');
  assert.equal(s.getEntry('x'), entries[2], 'an id names the last entry that has it');
  assert.deepEqual(s.getChildren('r').map((e) => e.message.content), ['first', 'second']);
  assert.equal(s.getChildren('r')[0], entries[1]);
  entries[1].message.content = 'first, edited';
  entries[2].message.content = 'second, edited';
  await s.rewriteEntries();
  await s.close();
  assert.deepEqual(lines(file).slice(1).map((e) => e.message.content), ['root', 'first, edited', 'second, edited']);
});
