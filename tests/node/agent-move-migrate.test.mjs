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
