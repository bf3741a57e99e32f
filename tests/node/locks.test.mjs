// One live writer per session file, through a JS storage over Node's fs: a second writer
// gets kind `conflict`, a dead writer's lock is recovered, an external edit is not
// overwritten.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session, user, assistant } from './helpers.mjs';
import { nodeStorage as fsStorage } from '../../pkg/node-storage.mjs';

function tempAgent(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-locks-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return `${root}/agent`;
}

function written(storage, agentDir) {
  const s = Session.create(storage, { agentDir, cwd: '/work/locks' });
  s.appendMessage(user('hi'));
  s.appendMessage(assistant('hello'));
  return s;
}

test('a second writer is refused with kind conflict; a reader is not', (t) => {
  const storage = fsStorage();
  const s = written(storage, tempAgent(t));
  const lock = JSON.parse(fs.readFileSync(`${s.file}.lock`, 'utf8'));
  assert.equal(lock.pid, process.pid);
  assert.equal(lock.host, os.hostname());
  assert.throws(() => Session.open(storage, s.file), (e) => e.kind === 'conflict' && /being written by another process \(pid \d+ on /.test(e.message));
  assert.equal(Session.open(storage, s.file, { readOnly: true }).entries().length, 2);
  s.close();
  assert.equal(fs.existsSync(`${s.file}.lock`), false);
  const next = Session.open(storage, s.file);
  next.appendMessage(user('mine now'));
  next.close();
});

test("a dead writer's lock is recovered", (t) => {
  const storage = fsStorage();
  const s = written(storage, tempAgent(t));
  s.close();
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const pid = Number(dead.stdout);
  fs.writeFileSync(`${s.file}.lock`, JSON.stringify({ pid, host: os.hostname(), startedAt: new Date().toISOString(), token: 'dead' }));
  const r = Session.open(storage, s.file);
  r.appendMessage(user('recovered'));
  assert.equal(JSON.parse(fs.readFileSync(`${s.file}.lock`, 'utf8')).pid, process.pid);
  r.close();
});

test('an external edit is reported, not overwritten', (t) => {
  const storage = fsStorage();
  const s = written(storage, tempAgent(t));
  fs.appendFileSync(s.file, '{"type":"custom","customType":"by-hand","id":"ext00001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n');
  const before = fs.readFileSync(s.file, 'utf8');
  assert.throws(() => s.appendMessage(user('would clobber')), (e) => e.kind === 'conflict' && /changed by someone else/.test(e.message));
  assert.equal(fs.readFileSync(s.file, 'utf8'), before);
  s.close();
});
