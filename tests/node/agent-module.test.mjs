// `xcsh-session/agent` beyond the SessionManager class: where the agent's tests put
// sessions of temp and home cwds (and the legacy folders they fold in), its module
// functions (migrateSessionEntries, getLatestCompactionEntry, getRecentSessions,
// resolveResumableSession). Its OutputSink is in agent-output-sink.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  SessionManager, getLatestCompactionEntry, getRecentSessions, migrateSessionEntries,
  resolveResumableSession,
} from '../../pkg/agent.mjs';
import { agentHome } from './helpers.mjs';

/** A fresh agent dir for one test, and its sessions root. */
function setup(t) {
  const root = agentHome(t, 'xcsh-module-');
  return { root, sessions: path.join(root, 'agent', 'sessions') };
}

const legacyName = (cwd) => `--${path.resolve(cwd).replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
const tempName = (cwd) => `-tmp-${path.relative(fs.realpathSync(os.tmpdir()), cwd).replace(/[/\\:]/g, '-')}`;

test('a temp-root cwd gets a -tmp- folder, and its legacy folder is folded in', (t) => {
  const { root, sessions } = setup(t);
  const cwd = path.join(root, 'legacy-cwd');
  fs.mkdirSync(cwd);
  const legacy = path.join(sessions, legacyName(cwd));
  fs.mkdirSync(legacy, { recursive: true });
  fs.writeFileSync(path.join(legacy, 'carried.jsonl'), 'marker\n');

  const session = SessionManager.create(cwd);
  const expected = path.join(sessions, tempName(cwd));
  assert.equal(path.dirname(session.getSessionFile()), expected);
  assert.equal(fs.readFileSync(path.join(expected, 'carried.jsonl'), 'utf8'), 'marker\n');
  assert.equal(fs.existsSync(legacy), false);
});

test('a name both folders have stays in both (the agent deletes the legacy copy)', (t) => {
  const { root, sessions } = setup(t);
  const cwd = path.join(root, 'both');
  fs.mkdirSync(cwd);
  const legacy = path.join(sessions, legacyName(cwd));
  const newer = path.join(sessions, tempName(cwd));
  fs.mkdirSync(legacy, { recursive: true });
  fs.mkdirSync(newer, { recursive: true });
  fs.writeFileSync(path.join(legacy, 'same.jsonl'), 'old\n');
  fs.writeFileSync(path.join(newer, 'same.jsonl'), 'new\n');
  assert.equal(SessionManager.getDefaultSessionDir(cwd), newer);
  assert.equal(fs.readFileSync(path.join(legacy, 'same.jsonl'), 'utf8'), 'old\n');
  assert.equal(fs.readFileSync(path.join(newer, 'same.jsonl'), 'utf8'), 'new\n');
});

test('a cwd reached through a symlink is placed by its real path', (t) => {
  const { root, sessions } = setup(t);
  const real = path.join(root, 'real', 'nested');
  fs.mkdirSync(real, { recursive: true });
  fs.symlinkSync(path.join(root, 'real'), path.join(root, 'alias'), 'dir');
  const dir = SessionManager.getDefaultSessionDir(path.join(root, 'alias', 'nested'));
  assert.equal(dir, path.join(sessions, tempName(real)));
  assert.ok(fs.statSync(dir).isDirectory(), 'created, as the agent creates it');
});

test('migrateSessionEntries gives v1 entries ids in place and leaves current ones alone', () => {
  const user = { type: 'message', timestamp: '2025-01-01T00:00:01Z', message: { role: 'user', content: 'hi', timestamp: 1 } };
  const reply = { type: 'message', timestamp: '2025-01-01T00:00:02Z', message: { role: 'assistant', content: [{ type: 'text', text: 'hello' }], timestamp: 2 } };
  const entries = [{ type: 'session', id: 'sess-1', timestamp: '2025-01-01T00:00:00Z', cwd: '/tmp' }, user, reply];
  migrateSessionEntries(entries);
  assert.equal(entries[0].version, 3);
  assert.equal(entries[1], user, 'the same object, mutated');
  assert.match(user.id, /^[0-9a-f]{8}$/);
  assert.equal(user.parentId, null);
  assert.equal(reply.parentId, user.id);

  const current = [
    { type: 'session', id: 's', version: 2, timestamp: '2025-01-01T00:00:00Z', cwd: '/tmp' },
    { type: 'message', id: 'abc12345', parentId: null, timestamp: '2025-01-01T00:00:01Z', message: { role: 'user', content: 'hi', timestamp: 1 } },
  ];
  migrateSessionEntries(current);
  assert.equal(current[1].id, 'abc12345');
  assert.equal(current[0].version, 3);
  assert.throws(() => migrateSessionEntries('not entries'), (e) => e.kind === 'invalidInput');
});

test('getLatestCompactionEntry is the last compaction, or null', () => {
  const a = { type: 'compaction', id: 'a' };
  const b = { type: 'compaction', id: 'b' };
  assert.equal(getLatestCompactionEntry([a, { type: 'message' }, b, { type: 'message' }]), b);
  assert.equal(getLatestCompactionEntry([{ type: 'message' }]), null);
});

/** A session file in `dir` with one user message, its mtime `ageMs` in the past. */
function writeSession(dir, name, id, { cwd = '/tmp/project', title, ageMs = 0 } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  const header = { type: 'session', id, timestamp: '2025-01-01T00:00:00Z', cwd, ...(title ? { title } : {}) };
  const message = { type: 'message', id: 'm1', parentId: null, timestamp: '2025-01-01T00:00:01Z', message: { role: 'user', content: 'hello there', timestamp: 1 } };
  fs.writeFileSync(file, `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`);
  const when = new Date(Date.now() - ageMs);
  fs.utimesSync(file, when, when);
  return file;
}

test('getRecentSessions lists the newest of a directory with their names', async (t) => {
  const { root } = setup(t);
  const dir = path.join(root, 'sessions');
  writeSession(dir, 'old.jsonl', 'old', { ageMs: 3 * 3600_000 });
  const titled = writeSession(dir, 'new.jsonl', 'new', { title: 'A title that is rather longer than forty characters in all' });
  writeSession(dir, 'mid.jsonl', 'mid', { ageMs: 60_000 });
  const recent = await getRecentSessions(dir, 2);
  assert.deepEqual(recent.map((r) => r.id), ['new', 'mid']);
  assert.equal(recent[0].path, titled);
  assert.equal(recent[0].fullName, 'A title that is rather longer than forty characters in all');
  assert.equal(recent[0].name.length, 40);
  assert.ok(recent[0].name.endsWith('…'));
  assert.equal(recent[1].name, 'hello there', 'no title: the first prompt');
  assert.equal(typeof recent[0].mtime, 'number');
  assert.ok(Math.abs(recent[0].mtime - fs.statSync(titled).mtimeMs) < 2);
  assert.equal(recent[1].timeAgo, '1m ago');
  assert.equal((await getRecentSessions(dir)).length, 3, 'default limit 3');
  assert.deepEqual(await getRecentSessions(path.join(root, 'missing')), []);
});

test('resolveResumableSession matches id, file-name prefix and id suffix, locally first', async (t) => {
  const { root } = setup(t);
  const dir = path.join(root, 'sessions');
  writeSession(dir, '2025-01-01_resume.jsonl', 'resume1234');
  writeSession(dir, '2025-02-03T04-05-06-789Z_legacyabcd.jsonl', 'legacyabcd');
  writeSession(dir, '2025-01-01_moved.jsonl', 'moved1234', { cwd: '/Users/old-user/project' });

  assert.equal(await resolveResumableSession('missing', '/tmp/project', dir), undefined);
  const byId = await resolveResumableSession('resume', '/tmp/project', dir);
  assert.equal(byId.scope, 'local');
  assert.equal(byId.session.id, 'resume1234');
  assert.equal((await resolveResumableSession('2025-02-03T04-05', '/tmp/project', dir)).session.id, 'legacyabcd');
  assert.equal((await resolveResumableSession('LEGACY', '/tmp/project', dir)).session.id, 'legacyabcd');
  const moved = await resolveResumableSession('moved', '/Users/new-user/project', dir);
  assert.equal(moved.scope, 'local', 'whatever the header cwd says');
  assert.equal(moved.session.path, path.join(dir, '2025-01-01_moved.jsonl'));
  await assert.rejects(resolveResumableSession('2025-01-01', '/tmp/project', dir), (e) => {
    assert.equal(e.kind, 'ambiguous');
    assert.equal(e.details.length, 2);
    return true;
  });
});

test('resolveResumableSession without a session dir falls back to every project', async (t) => {
  const { root } = setup(t);
  const cwd = path.join(root, 'here');
  fs.mkdirSync(cwd);
  writeSession(path.join(root, 'agent', 'sessions', '--elsewhere--'), 'x_far1234.jsonl', 'far1234', { cwd: '/elsewhere' });
  const found = await resolveResumableSession('far1', cwd);
  assert.equal(found.scope, 'global');
  assert.equal(found.session.id, 'far1234');
});

test('the SQLite prompt history names what it needs on a Node without node:sqlite', async (t) => {
  const { root } = setup(t);
  const { nodeHistoryStore } = await import('../../pkg/node-history.mjs');
  const file = path.join(root, 'agent', 'history.db');
  if (process.getBuiltinModule?.('node:sqlite')) {
    // This Node has it (the node:sqlite tests in tests/node-sqlite/ run under Node 22).
    const store = nodeHistoryStore(file);
    assert.equal(store.backend, 'node:sqlite');
    store.close();
    return;
  }
  assert.throws(() => nodeHistoryStore(file), (e) => e.kind === 'storage'
    && e.message.includes(`needs the built-in node:sqlite (Node 22.13 or newer); this is Node ${process.versions.node}`));
  assert.equal(fs.existsSync(file), false, 'nothing written');
});
