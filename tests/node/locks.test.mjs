// One live writer per session file, through a JS storage over Node's fs: a writer in
// another process gets kind `conflict`, a newer open in this process takes over (the older
// object is fenced), a dead writer's lock is recovered, an external edit is not
// overwritten, and a delete is a writer too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Session, agentHome, deleteSession, user, assistant } from './helpers.mjs';
import { nodeStorage as fsStorage } from '../../pkg/node-storage.mjs';
import { SessionManager, deleteSessionWithArtifacts } from '../../pkg/agent.mjs';

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

test('a lock file deleted and another put in its place at once is seen at the next append', (t) => {
  // The lock check is a stat of the lock file once a read found it ours. A lock deleted
  // and another created right away has the same size here, and on ext4 can get the same
  // inode number and, within a tick of its clock, the same mtime: the stat is trusted
  // only once the filesystem's clock had passed the lock's mtime when the read found it
  // ours. `coarse`: the storage as such a filesystem shows it at its worst (one inode
  // number for every file, every mtime in the same tick).
  const coarse = (storage) => ({
    ...storage,
    stat(p) {
      const st = storage.stat(p);
      return { ...st, ino: 1, mtimeMs: Math.floor(st.mtimeMs / 1e7) * 1e7 };
    },
  });
  for (const [name, storage] of [['as it is', fsStorage()], ['coarse', coarse(fsStorage())]]) {
    for (let i = 0; i < 5; i++) {
      const s = written(storage, tempAgent(t));
      s.appendMessage(user('the lock checked'));
      s.appendMessage(user('and again'));
      const lockPath = `${s.file}.lock`;
      const ours = fs.readFileSync(lockPath, 'utf8');
      const { token } = JSON.parse(ours);
      fs.unlinkSync(lockPath);
      fs.writeFileSync(lockPath, ours.replace(token, 'f'.repeat(token.length)), { flag: 'wx' });
      const before = fs.readFileSync(s.file, 'utf8');
      assert.throws(() => s.appendMessage(user('after the takeover')), (e) => e.kind === 'conflict' && /opened for writing again/.test(e.message), `${name}, round ${i}`);
      assert.equal(fs.readFileSync(s.file, 'utf8'), before);
    }
  }
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

/**
 * A second Node process holding a session open through the agent's SessionManager: it
 * writes a session with an artifact, prints `{file, artifacts}`, then appends one
 * message for each `append` line on its stdin (printing `appended`).
 */
function holder(agentDir, cwd) {
  const agent = new URL('../../pkg/agent.mjs', import.meta.url).href;
  const code = `
    import readline from 'node:readline';
    const { SessionManager } = await import(${JSON.stringify(agent)});
    const s = SessionManager.create(${JSON.stringify(cwd)});
    s.appendMessage({ role: 'user', content: 'keep me', timestamp: 1 });
    s.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'kept' }], timestamp: 2 });
    await s.saveArtifact('tool output', 'bash');
    console.log(JSON.stringify({ file: s.getSessionFile(), artifacts: s.getArtifactsDir() }));
    for await (const line of readline.createInterface({ input: process.stdin })) {
      if (line === 'append') {
        s.appendMessage({ role: 'user', content: 'after the delete was refused', timestamp: 3 });
        console.log('appended');
      }
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, PI_CODING_AGENT_DIR: agentDir },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    assert.ok(!done, 'the holder exited early');
    return value;
  };
  return { child, next };
}

/** Every file under `dir` (and `dir` itself when it is a file) with its bytes. */
function snapshot(...paths) {
  const out = {};
  const walk = (p) => {
    if (!fs.existsSync(p)) return;
    if (fs.statSync(p).isDirectory()) for (const n of fs.readdirSync(p).sort()) walk(path.join(p, n));
    else out[p] = fs.readFileSync(p, 'base64');
  };
  paths.forEach(walk);
  return out;
}

test('a session a writer in another process holds is not deleted: its file, artifacts and lock stay; once that writer is dead it is', { timeout: 60_000 }, async (t) => {
  const cwd = agentHome(t, 'xcsh-locks-');
  const agentDir = process.env.PI_CODING_AGENT_DIR;
  const { child, next } = holder(agentDir, cwd);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.after(() => child.kill('SIGKILL'));
  const { file, artifacts } = JSON.parse(await next());
  const lock = `${file}.lock`;
  assert.equal(JSON.parse(fs.readFileSync(lock, 'utf8')).pid, child.pid, 'the holder has the lock');
  const before = snapshot(file, artifacts, lock);
  assert.equal(Object.keys(before).length, 3);

  const refused = (e) => e.kind === 'conflict'
    && e.message.includes(`being written by another process (pid ${child.pid} on ${os.hostname()}`)
    && /nothing was deleted/.test(e.message);
  await assert.rejects(deleteSessionWithArtifacts(file), refused);
  assert.throws(() => deleteSession(fsStorage(), agentDir, file), refused);
  assert.deepEqual(snapshot(file, artifacts, lock), before, 'the file, its artifacts and the lock are untouched');

  // The holder goes on writing the whole session, artifacts beside it.
  child.stdin.write('append\n');
  assert.equal(await next(), 'appended');
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.includes('keep me') && text.includes('after the delete was refused'));
  assert.deepEqual(Object.keys(snapshot(artifacts)), Object.keys(before).filter((p) => p.startsWith(`${artifacts}/`)));

  // Killed, its lock is a dead writer's: recovered, and the session deleted with it.
  child.kill('SIGKILL');
  await exited;
  await deleteSessionWithArtifacts(file);
  assert.deepEqual(snapshot(file, artifacts, lock), {});
});

test('within one process a delete goes ahead: the open manager writes the session again whole on its next append', async (t) => {
  const s = SessionManager.create(agentHome(t, 'xcsh-locks-'));
  s.appendMessage(user('hi'));
  s.appendMessage(assistant('hello'));
  await s.saveArtifact('output', 'bash');
  const file = s.getSessionFile();
  assert.equal(JSON.parse(fs.readFileSync(`${file}.lock`, 'utf8')).pid, process.pid);
  await deleteSessionWithArtifacts(file);
  assert.deepEqual(snapshot(file, s.getArtifactsDir(), `${file}.lock`), {});
  s.appendMessage(user('still here'));
  assert.deepEqual(fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).type), ['session', 'message', 'message', 'message']);
  await s.close();
});
