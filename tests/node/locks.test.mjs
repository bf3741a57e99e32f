// One live writer per session file, through a JS storage over Node's fs: a writer in
// another process gets kind `conflict`, a newer open in this process takes over (the older
// object is fenced), a dead writer's lock is recovered, an external edit is not
// overwritten.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
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

test('a writer in another process is refused with kind conflict; a reader is not', (t) => {
  const storage = fsStorage();
  const s = written(storage, tempAgent(t));
  const lock = JSON.parse(fs.readFileSync(`${s.file}.lock`, 'utf8'));
  assert.equal(lock.pid, process.pid);
  assert.equal(lock.host, os.hostname());
  s.close();
  // A live process of its own holds the lock.
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  t.after(() => other.kill());
  fs.writeFileSync(`${s.file}.lock`, JSON.stringify({ pid: other.pid, host: os.hostname(), startedAt: new Date().toISOString(), token: 'other' }));
  assert.throws(() => Session.open(storage, s.file), (e) => e.kind === 'conflict' && /being written by another process \(pid \d+ on /.test(e.message));
  assert.equal(Session.open(storage, s.file, { readOnly: true }).entries().length, 2);
  fs.unlinkSync(`${s.file}.lock`);
  const next = Session.open(storage, s.file);
  next.appendMessage(user('mine now'));
  next.close();
  assert.equal(fs.existsSync(`${s.file}.lock`), false);
});

test('within one process the newest open takes over; the older object is fenced, its reads keep working', (t) => {
  const storage = fsStorage();
  const older = written(storage, tempAgent(t));
  // The agent switches back to a session it had open: it opens the file again.
  const newer = Session.open(storage, older.file);
  assert.throws(() => older.appendMessage(user('from the old object')), (e) => e.kind === 'conflict' && /opened for writing again by a newer open in this process/.test(e.message));
  assert.equal(older.entries().length, 2, 'reads still work');
  newer.appendMessage(user('from the new object'));
  // Closing the older object leaves the newer one's lock in place.
  older.close();
  assert.equal(JSON.parse(fs.readFileSync(`${newer.file}.lock`, 'utf8')).pid, process.pid);
  newer.appendMessage(assistant('still writing'));
  const texts = fs.readFileSync(newer.file, 'utf8');
  assert.ok(texts.includes('from the new object') && !texts.includes('from the old object'));
  newer.close();
  assert.equal(fs.existsSync(`${newer.file}.lock`), false);
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
