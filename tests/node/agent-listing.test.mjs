// `xcsh-session/agent`'s listing as the agent builds it: the recent list's names, the
// fields of `SessionInfo` (`firstMessage`, `allMessagesText`, `created` and `modified` as
// `Date`s), and a session file holding only its header, which the agent lists and resumes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionManager, getRecentSessions, resolveResumableSession } from '../../pkg/agent.mjs';
import { agentHome } from './helpers.mjs';

const line = (o) => `${JSON.stringify(o)}\n`;
const header = (id, cwd, extra = {}) => line({ type: 'session', version: 3, id, timestamp: '2026-03-01T10:00:00.000Z', cwd, ...extra });
const message = (id, role, content) => line({
  type: 'message', id, parentId: null, timestamp: '2026-03-01T10:00:01.000Z', message: { role, content, timestamp: 1 },
});

/** A fresh agent dir, and the default session directory of a project in it. */
function setup(t) {
  const root = agentHome(t, 'xcsh-listing-');
  const cwd = path.join(root, 'project');
  fs.mkdirSync(cwd);
  return { cwd, dir: SessionManager.getDefaultSessionDir(cwd) };
}

test('the recent list names a session by the first text block of its first prompt', async (t) => {
  const { dir } = setup(t);
  fs.writeFileSync(path.join(dir, 'a.jsonl'), header('aaaa', '/w') + message('u', 'user', [
    { type: 'image', data: 'AA==', mimeType: 'image/png' },
    { type: 'text', text: 'fix the parser' },
    { type: 'text', text: 'and the lexer' },
  ]));
  const [recent] = await getRecentSessions(dir);
  assert.equal(recent.fullName, 'fix the parser');
  assert.equal(recent.name, 'fix the parser');
  assert.equal(typeof recent.mtime, 'number');
});

test('messages without text add nothing to firstMessage and allMessagesText', async (t) => {
  const { cwd, dir } = setup(t);
  fs.writeFileSync(path.join(dir, 'e.jsonl'), header('eeee', cwd)
    + message('u0', 'user', '')
    + message('u1', 'user', [{ type: 'text', text: '' }])
    + message('u2', 'user', 'the real question')
    + message('a1', 'assistant', [{ type: 'text', text: 'an answer' }]));
  const [info] = await SessionManager.list(cwd);
  assert.equal(info.messageCount, 4);
  assert.equal(info.firstMessage, 'the real question');
  assert.equal(info.allMessagesText, 'the real question an answer');
});

test('a session file with a header alone is listed, everywhere, and resumable', async (t) => {
  const { cwd, dir } = setup(t);
  const file = path.join(dir, '2026-03-01T10-00-00-000Z_0badc0de.jsonl');
  fs.writeFileSync(file, header('0badc0de', cwd));
  const [local] = await SessionManager.list(cwd);
  assert.equal(local?.path, file);
  assert.equal(local.messageCount, 0);
  assert.equal(local.firstMessage, '(no messages)');
  assert.equal(local.allMessagesText, '');
  assert.deepEqual((await SessionManager.listAll()).map((i) => i.path), [file]);
  const found = await resolveResumableSession('0bad', cwd);
  assert.equal(found?.scope, 'local');
  assert.equal(found.session.path, file);
});

test('SessionInfo dates are Date objects in list, listAll and resolveResumableSession', async (t) => {
  const { cwd, dir } = setup(t);
  const file = path.join(dir, 'd.jsonl');
  fs.writeFileSync(file, header('d1d1d1d1', cwd) + message('u', 'user', 'hello'));
  const mtime = fs.statSync(file).mtimeMs;
  const infos = [
    ...(await SessionManager.list(cwd)),
    ...(await SessionManager.list(cwd, dir)),
    ...(await SessionManager.listAll()),
    (await resolveResumableSession('d1d1', cwd)).session,
    (await resolveResumableSession('d1d1', cwd, dir)).session,
  ];
  assert.equal(infos.length, 5);
  for (const info of infos) {
    assert.ok(info.created instanceof Date && info.modified instanceof Date);
    assert.equal(info.created.getTime(), Date.parse('2026-03-01T10:00:00.000Z'));
    assert.equal(info.modified.getTime(), Math.floor(mtime));
  }
});

test('list reads no message text: allMessagesText is read from the file on first access', async (t) => {
  const { cwd, dir } = setup(t);
  const file = path.join(dir, 'l.jsonl');
  fs.writeFileSync(file, header('1a2y1a2y', cwd)
    + message('u', 'user', 'the question')
    + message('a', 'assistant', [{ type: 'text', text: 'the answer' }]));
  const [info] = await SessionManager.list(cwd);
  const [all] = await SessionManager.listAll();
  const found = (await resolveResumableSession('1a2y', cwd)).session;
  assert.equal(info.firstMessage, 'the question');
  // Read now, then kept.
  assert.equal(info.allMessagesText, 'the question the answer');
  fs.rmSync(file);
  assert.equal(info.allMessagesText, 'the question the answer');
  // Never read by the listing: the file is gone before the first access.
  assert.equal(all.allMessagesText, '');
  assert.equal(found.allMessagesText, '');
  // An own, enumerable property, as the agent's: spread, keys and JSON see it.
  assert.ok(Object.keys(info).includes('allMessagesText'));
  assert.equal({ ...info }.allMessagesText, 'the question the answer');
  assert.equal(JSON.parse(JSON.stringify(info)).allMessagesText, 'the question the answer');
  info.allMessagesText = 'replaced';
  assert.equal(info.allMessagesText, 'replaced');
});
