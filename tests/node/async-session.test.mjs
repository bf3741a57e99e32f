// AsyncSession: the session over a storage whose methods return Promises. Same bytes as
// the synchronous Session, writes on the storage when the Promise resolves, one at a
// time in call order, the same errors (outside changes, a held lock, a failing storage),
// and no copy of the storage in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AsyncSession, Session, MemoryJsStorage, nodeAsyncStorage, nodeStorage, fixturePath, fixture,
} from './helpers.mjs';

const user = (text, t = 1) => ({ role: 'user', content: text, timestamp: t });
const assistant = (text, t = 2) => ({ role: 'assistant', content: [{ type: 'text', text }], timestamp: t });

/** `storage` with every method answering through a Promise, after a random short delay. */
function promised(storage) {
  const out = {};
  let n = 0;
  for (const name of ['read', 'readPrefix', 'write', 'append', 'rename', 'unlink', 'listDir', 'stat', 'mkdirAll', 'fsync', 'rmdir', 'createNew']) {
    if (!storage[name]) continue;
    out[name] = (...args) => new Promise((resolve, reject) => {
      setTimeout(() => {
        try {
          resolve(storage[name](...args));
        } catch (e) {
          reject(e);
        }
      }, (n++ * 7) % 3);
    });
  }
  // The clock and the entropy stay synchronous (the core asks for them mid-operation).
  for (const name of ['nowMs', 'randomU64', 'processIdentity', 'processAlive']) {
    if (storage[name]) out[name] = (...args) => storage[name](...args);
  }
  return out;
}

function scratch(name = 'before-compaction') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-async-'));
  const file = path.join(dir, 'agent', 'sessions', '--w--', 's.jsonl');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.copyFileSync(fixturePath(name), file);
  return { dir, file, agentDir: path.join(dir, 'agent') };
}

/** The same turns, given a session whose writing methods may return Promises. */
async function turns(s) {
  const first = await s.appendMessage(user('what is in this repo?', 10));
  await s.appendMessage(assistant('a Rust crate', 11));
  await s.appendLabelChange(first, 'question');
  await s.appendModelChange('anthropic/claude', 'default');
  await s.branchWithSummary(first, 'tried another answer');
  await s.appendMessage(assistant('a WebAssembly package', 12));
  await s.setSessionName('repo tour', 'user');
  await s.flush();
  return first;
}

test('async and sync storages give byte-identical files for the same turns', async () => {
  const text = fixture('before-compaction');
  const sync = new MemoryJsStorage();
  const backing = new MemoryJsStorage();
  for (const st of [sync, backing]) {
    st.mkdirAll('/a/sessions/--w--');
    st.write('/a/sessions/--w--/s.jsonl', new TextEncoder().encode(text));
  }
  const s = Session.open(sync, '/a/sessions/--w--/s.jsonl');
  await turns(s);
  s.close();
  const a = await AsyncSession.open(promised(backing), '/a/sessions/--w--/s.jsonl');
  await turns(a);
  await a.close();
  assert.equal(backing.text('/a/sessions/--w--/s.jsonl'), sync.text('/a/sessions/--w--/s.jsonl'));
  assert.deepEqual([...backing.files.keys()].sort(), [...sync.files.keys()].sort());

  // A new session too: nothing until the first assistant message, then the same file.
  const fresh = [new MemoryJsStorage(), new MemoryJsStorage()];
  const c1 = Session.create(fresh[0], { agentDir: '/a', cwd: '/w' });
  await turns(c1);
  c1.close();
  const c2 = await AsyncSession.create(promised(fresh[1]), { agentDir: '/a', cwd: '/w' });
  await turns(c2);
  await c2.close();
  assert.equal(c2.file, c1.file);
  assert.equal(fresh[1].text(c2.file), fresh[0].text(c1.file));
});

test('over fs/promises: a write is on disk when its Promise resolves; the lock is held while open', async () => {
  const { file, agentDir, dir } = scratch();
  const s = await AsyncSession.open(nodeAsyncStorage(), file);
  assert.ok(fs.existsSync(`${file}.lock`), 'the writer lock is on disk once open resolves');
  const id = await s.appendMessage(user('written before the Promise resolves'));
  assert.match(fs.readFileSync(file, 'utf8'), /written before the Promise resolves/);
  await s.appendLabelChange(id, 'kept');
  await s.close();
  assert.equal(fs.existsSync(`${file}.lock`), false);
  const back = Session.open(nodeStorage(), file, { readOnly: true });
  assert.equal(back.label(id), 'kept');

  const c = await AsyncSession.create(nodeAsyncStorage(), { agentDir, cwd: '/w2' });
  await c.appendMessage(user('q'));
  assert.equal(fs.existsSync(c.file), false, 'not before the first assistant message, as Session');
  await c.appendMessage(assistant('a'));
  assert.ok(fs.existsSync(c.file));
  const { newFile } = await c.fork();
  assert.equal(Session.open(nodeStorage(), newFile, { readOnly: true }).context().messages.length, 2);
  await c.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('writes run one at a time in call order, without awaiting each', async () => {
  const backing = new MemoryJsStorage();
  const s = await AsyncSession.create(promised(backing), { agentDir: '/a', cwd: '/w' });
  const pending = [];
  for (let i = 0; i < 20; i++) pending.push(s.appendMessage(i % 2 ? assistant(`a${i}`, i) : user(`u${i}`, i)));
  const ids = await Promise.all(pending);
  const onDisk = backing.text(s.file).trim().split('\n').slice(1).map((l) => JSON.parse(l));
  assert.deepEqual(onDisk.map((e) => e.id), ids);
  assert.deepEqual(onDisk.map((e) => e.parentId), [null, ...ids.slice(0, -1)]);
  await s.close();
});

test('the reading methods are synchronous and see every write', async () => {
  const s = await AsyncSession.create(promised(new MemoryJsStorage()), { agentDir: '/a', cwd: '/w' });
  const id = await s.appendMessage(user('hi'));
  assert.equal(s.context().messages.length, 1);
  assert.equal(s.leafId, id);
  assert.equal(s.entry(id).message.content, 'hi');
  s.branch(id);
  assert.ok(s.tree().length === 1 && typeof s.toJsonl() === 'string');
  await s.close();
});

test('a change made on disk by someone else is refused as Session refuses it', async () => {
  const kinds = [];
  for (const make of [(f) => Session.open(nodeStorage(), f), (f) => AsyncSession.open(nodeAsyncStorage(), f)]) {
    const { file } = scratch();
    const s = await make(file);
    await s.appendMessage(user('mine'));
    fs.appendFileSync(file, `${JSON.stringify({ type: 'custom', customType: 'other', id: 'zzzzzzzz', parentId: null, timestamp: new Date().toISOString() })}\n`);
    await assert.rejects(async () => s.appendMessage(user('after theirs')), (e) => {
      kinds.push([e.kind, e.message.replace(file, 'FILE')]);
      return true;
    });
    await Promise.resolve(s.close()).catch(() => {});
  }
  assert.equal(kinds[1][0], kinds[0][0]);
  assert.equal(kinds[1][1], kinds[0][1]);
});

test('a lock taken over by another writer stops the next write, as Session stops it', async () => {
  const seen = [];
  for (const make of [(f) => Session.open(nodeStorage(), f), (f) => AsyncSession.open(nodeAsyncStorage(), f)]) {
    const { file } = scratch();
    const s = await make(file);
    await s.appendMessage(user('mine'));
    fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: 1, host: os.hostname(), startedAt: '2026-12-01T00:00:00.000Z', token: 'fedcba9876543210' }));
    const size = fs.statSync(file).size;
    await assert.rejects(async () => s.appendMessage(user('after the takeover')), (e) => {
      seen.push([e.kind, e.message.replace(file, 'FILE')]);
      return true;
    });
    assert.equal(fs.statSync(file).size, size, 'nothing written after the takeover');
  }
  assert.deepEqual(seen[1], seen[0]);
});

test('a session another writer holds is refused as Session refuses it', async () => {
  const { file } = scratch();
  // Another live process holds it (pid 1 is alive and not ours).
  fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: 1, host: os.hostname(), startedAt: new Date().toISOString(), token: '0123456789abcdef' }));
  let syncError;
  try {
    Session.open(nodeStorage(), file);
  } catch (e) {
    syncError = e;
  }
  assert.ok(syncError, 'Session.open refuses a session held by another writer');
  await assert.rejects(AsyncSession.open(nodeAsyncStorage(), file), { kind: syncError.kind, message: syncError.message });
  fs.unlinkSync(`${file}.lock`);
  const now = await AsyncSession.open(nodeAsyncStorage(), file);
  await now.close();
});

test('a storage failing a write latches: that call and every later write reject with persistence', async () => {
  const backing = new MemoryJsStorage();
  const storage = promised(backing);
  const s = await AsyncSession.create(storage, { agentDir: '/a', cwd: '/w' });
  await s.appendMessage(user('q'));
  await s.appendMessage(assistant('a'));
  const before = backing.text(s.file);
  storage.append = () => Promise.reject(Object.assign(new Error('disk full'), { code: 'ENOSPC' }));
  await assert.rejects(s.appendMessage(user('lost?')), { kind: 'persistence', message: /disk full/ });
  storage.append = (...args) => Promise.resolve(backing.append(...args));
  await assert.rejects(s.appendMessage(user('later')), { kind: 'persistence' });
  assert.equal(backing.text(s.file), before, 'nothing half-written after the failure');
  assert.equal(s.context().messages.length, 3, 'what was appended in memory can still be read');
});

test('an AsyncSession holds no copy of the storage: only small files besides the session', async () => {
  const { file } = scratch('before-compaction');
  const size = fs.statSync(file).size;
  const s = await AsyncSession.open(nodeAsyncStorage(), file);
  assert.ok(size > 1_000_000);
  assert.ok(s.heldBytes() < 8192, `held ${s.heldBytes()} bytes of a ${size}-byte file`);
  await s.appendMessage(user('x'));
  assert.ok(s.heldBytes() < 8192);
  await s.close();
});

test('sync storages work with AsyncSession too; a storage missing a method is refused naming it', async () => {
  const s = await AsyncSession.create(new MemoryJsStorage(), { agentDir: '/a', cwd: '/w' });
  await s.appendMessage(user('q'));
  await s.close();
  const { fsync, ...noFsync } = nodeAsyncStorage();
  assert.ok(fsync);
  await assert.rejects(AsyncSession.create(noFsync, { agentDir: '/a', cwd: '/w' }), { kind: 'invalidInput', message: /missing the method fsync\(path\)/ });
  // Session itself still refuses async methods, and says where they go.
  assert.throws(() => Session.create(nodeAsyncStorage(), { agentDir: '/a', cwd: '/w' }), /returned a Promise|async function/);
});

test('StagedStorage.loadTree reads a tree\'s shape and 4 KiB heads only: enough for listings, no file whole', async () => {
  const { StagedStorage } = await import('../../pkg/staged-storage.mjs');
  const { recentSessions, listSessions } = await import('./helpers.mjs');
  const { agentDir, file } = scratch();
  fs.copyFileSync(fixturePath('historical-compact'), path.join(path.dirname(file), 'second.jsonl'));
  const staged = new StagedStorage(nodeAsyncStorage());
  const { files, bytes } = await staged.loadTree(agentDir, { head: (p) => p.endsWith('.jsonl') });
  assert.equal(files, 2);
  assert.equal(bytes, fs.statSync(file).size + fs.statSync(path.join(path.dirname(file), 'second.jsonl')).size);
  assert.ok(staged.heldBytes() <= 2 * 4096, `held ${staged.heldBytes()} bytes`);
  staged.begin();
  const sync = recentSessions(nodeStorage(), { agentDir, cwd: '/w' });
  assert.equal(sync.length, 2);
  assert.deepEqual(recentSessions(staged, { agentDir, cwd: '/w' }), sync);
  assert.deepEqual(staged.misses, [], 'the recent list reads only the heads loadTree loaded');
  assert.throws(() => staged.read(file), { code: 'EXCSH_NOT_LOADED' });
  // The full list reads each file past its head (its index cache, then its lines): what
  // it missed is loaded, and it runs again.
  staged.begin();
  listSessions(staged, { agentDir });
  const missed = new Set(staged.misses.map((m) => m.path).filter((p) => p.endsWith('.jsonl')));
  assert.deepEqual([...missed].sort(), [file, path.join(path.dirname(file), 'second.jsonl')].sort());
  await staged.load();
  staged.begin();
  assert.deepEqual(listSessions(staged, { agentDir }), listSessions(nodeStorage(), { agentDir }));
  assert.deepEqual(staged.misses, []);
  assert.equal(staged.exists(file), true);
  assert.equal(staged.exists(`${file}.nope`), false);
});
