// A storage that is not one: a missing method, a method that is not a function, an async
// method, a method that returns a Promise, a method that throws. Each gets an error that
// names the method, and nothing on disk changes. What works but slowly (no readRange) is
// a warning checkStorage returns, not an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  Session, AsyncSession, checkStorage, nodeStorage, nodeAsyncStorage, memoryStorage, listSessions, fixturePath,
} from './helpers.mjs';
import { StagedStorage } from '../../pkg/staged-storage.mjs';

const user = (text) => ({ role: 'user', content: text, timestamp: 1 });

/** A fresh directory with one real session in it; `snapshot()` lists every file's bytes. */
function scratch() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-shape-'));
  const file = path.join(dir, 'agent', 'sessions', '--w--', 's.jsonl');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.copyFileSync(fixturePath('before-compaction'), file);
  const snapshot = () => {
    const out = {};
    for (const f of fs.readdirSync(dir, { recursive: true })) {
      const p = path.join(dir, f);
      out[f] = fs.statSync(p).isDirectory() ? 'dir' : fs.readFileSync(p, 'hex');
    }
    return out;
  };
  return { dir, file, agentDir: path.join(dir, 'agent'), snapshot };
}

/** Each way in: open for writing, create and append, a listing. */
function attempts(storage, s) {
  return [
    () => Session.open(storage, s.file),
    () => {
      const created = Session.create(storage, { agentDir: s.agentDir, cwd: '/w' });
      created.appendMessage(user('a'));
      created.appendMessage(user('b'));
    },
    () => listSessions(storage, { agentDir: s.agentDir, cwd: '/w' }),
  ];
}

test('a storage missing a method is refused before anything is read or written, naming it', () => {
  const s = scratch();
  const before = s.snapshot();
  const { fsync, mkdirAll, ...storage } = nodeStorage();
  for (const attempt of attempts(storage, s)) {
    assert.throws(attempt, (e) => {
      assert.equal(e.kind, 'invalidInput');
      assert.match(e.message, /^invalid input: storage is missing the methods mkdirAll\(path\), fsync\(path\): a storage needs read, readPrefix, write/);
      assert.match(e.message, /nodeStorage\(\), nodeAsyncStorage\(\), memoryStorage\(\) and opfsStorage\(\) are ready ones/);
      return true;
    });
  }
  assert.ok(fsync && mkdirAll);
  assert.deepEqual(s.snapshot(), before);
});

test('a method that is not a function is refused, naming it', () => {
  const s = scratch();
  const before = s.snapshot();
  for (const [value, what] of [['fs.appendFileSync', 'the string "fs.appendFileSync"'], [42, 'number'], [null, 'null']]) {
    const storage = { ...nodeStorage(), append: value };
    for (const attempt of attempts(storage, s)) {
      assert.throws(attempt, { kind: 'invalidInput', message: `invalid input: storage.append is not a function (it is ${what})` });
    }
  }
  // An optional method too, when it is there.
  assert.throws(() => Session.open({ ...nodeStorage(), createNew: true }, s.file), { kind: 'invalidInput', message: 'invalid input: storage.createNew is not a function (it is boolean)' });
  assert.deepEqual(s.snapshot(), before);
});

test('an async method is refused before any call: the port is synchronous', () => {
  const s = scratch();
  const before = s.snapshot();
  const sync = nodeStorage();
  let calls = 0;
  const storage = {
    ...sync,
    async append(p, d) {
      calls++;
      return fsp.appendFile(p, d);
    },
  };
  for (const attempt of attempts(storage, s)) {
    assert.throws(attempt, (e) => {
      assert.equal(e.kind, 'invalidInput');
      assert.match(e.message, /^invalid input: storage\.append is an async function: storage methods must be synchronous/);
      return true;
    });
  }
  assert.equal(calls, 0);
  assert.deepEqual(s.snapshot(), before);
});

test('a storage over fs/promises (plain functions returning Promises) fails at its first answer, naming the method', async () => {
  const s = scratch();
  const before = s.snapshot();
  const sync = nodeStorage();
  const promised = {};
  for (const name of Object.keys(sync)) {
    promised[name] = (...args) => Promise.resolve().then(() => sync[name](...args));
  }
  // Rejections too: none may reach Node as an unhandled rejection.
  promised.stat = () => Promise.reject(Object.assign(new Error('gone'), { code: 'ENOENT' }));
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    assert.throws(() => Session.open(promised, s.file), (e) => {
      assert.equal(e.kind, 'storage');
      assert.match(e.message, /storage\.(stat|read|readPrefix) returned a Promise: storage methods must be synchronous/);
      return true;
    });
    assert.throws(() => listSessions(promised, { agentDir: s.agentDir, cwd: '/w' }), /returned a Promise/);
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  assert.deepEqual(unhandled, []);
  assert.deepEqual(s.snapshot(), before);
});

test('a method that throws is a storage error naming the method and the path', () => {
  const s = scratch();
  const before = s.snapshot();
  const storage = {
    ...nodeStorage(),
    read() {
      throw new Error('disk on fire');
    },
    readInto: undefined,
  };
  assert.throws(() => Session.open(storage, s.file, { readOnly: true }), { kind: 'storage', message: `storage.read(${s.file}) failed: disk on fire` });
  assert.deepEqual(s.snapshot(), before);
});

test('the shipped storages pass the check', () => {
  const s = scratch();
  const session = Session.open(nodeStorage(), s.file, { readOnly: true });
  assert.ok(session.context().messages.length > 0);
  const mem = memoryStorage();
  const created = Session.create(mem, { agentDir: '/agent', cwd: '/w' });
  created.appendMessage(user('a'));
  created.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'b' }], timestamp: 2 });
  assert.equal(Session.open(mem, created.file, { readOnly: true }).context().messages.length, 2);
});

const NO_READ_RANGE = 'storage has no readRange(path, offset, length): every ranged read reads the whole file and slices it, which is slow for large sessions (nodeStorage(), nodeAsyncStorage(), memoryStorage() and opfsStorage() have one)';

test('checkStorage returns its warnings: none for the shipped storages, one for a storage without readRange or readInto', async () => {
  assert.deepEqual(checkStorage(nodeStorage()), []);
  assert.deepEqual(checkStorage(memoryStorage()), []);
  assert.deepEqual(checkStorage(nodeAsyncStorage(), true), []);
  assert.deepEqual(checkStorage(new StagedStorage(nodeAsyncStorage())), []);
  for (const storage of [{ ...nodeStorage(), readRange: undefined, readInto: undefined }, (({ readRange, readInto, ...rest }) => rest)(nodeStorage())]) {
    assert.deepEqual(checkStorage(storage), [NO_READ_RANGE]);
  }
  // readInto alone serves ranged reads too (straight into wasm memory): no warning.
  assert.deepEqual(checkStorage({ ...nodeStorage(), readRange: undefined }), []);
  const { readRange, ...asyncPlain } = nodeAsyncStorage();
  assert.ok(readRange);
  assert.deepEqual(checkStorage(asyncPlain, true), [NO_READ_RANGE]);
  // A warning, not an error: such a storage is used (its ranges are whole reads sliced).
  const s = scratch();
  const plain = { ...nodeStorage(), readRange: undefined, readInto: undefined };
  assert.ok(Session.open(plain, s.file, { readOnly: true }).context().messages.length > 0);
  assert.ok((await AsyncSession.open(asyncPlain, s.file, { readOnly: true })).context().messages.length > 0);
});

test('a readRange that is not a function, or async for a synchronous Session, is refused', () => {
  const s = scratch();
  const before = s.snapshot();
  assert.throws(() => checkStorage({ ...nodeStorage(), readRange: 42 }), { kind: 'invalidInput', message: 'invalid input: storage.readRange is not a function (it is number)' });
  for (const attempt of attempts({ ...nodeStorage(), readRange: 'pread' }, s)) {
    assert.throws(attempt, { kind: 'invalidInput', message: 'invalid input: storage.readRange is not a function (it is the string "pread")' });
  }
  const asyncRange = { ...nodeStorage(), readRange: nodeAsyncStorage().readRange };
  for (const attempt of attempts(asyncRange, s)) {
    assert.throws(attempt, { kind: 'invalidInput', message: /^invalid input: storage\.readRange is an async function/ });
  }
  assert.deepEqual(checkStorage(asyncRange, true), []);
  assert.deepEqual(s.snapshot(), before);
});
