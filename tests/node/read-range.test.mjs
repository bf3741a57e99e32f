// `readRange(path, offset, length)` in every storage the package ships: exactly the bytes
// `read(path).slice(offset, offset + length)` gives, at the start, the middle, across and
// past the end, for a length of 0 and a huge one; a missing file fails as `read` does;
// arguments that are not non-negative integers are refused before any file is touched;
// and the file is never read whole (positioned reads, or the loaded range only).
// A FIFO is refused without blocking in special-files.test.mjs (fifo-ops.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  AsyncSession, Session, checkStorage, memoryStorage, nodeAsyncStorage, nodeStorage,
} from './helpers.mjs';
import { StagedStorage, StagedMiss } from '../../pkg/staged-storage.mjs';
import { FileSessionStorage, MemorySessionStorage } from '../../pkg/agent-session-storage.mjs';

/** 100 kB of varied bytes: larger than what StagedStorage loads whole (4 KiB). */
const SIZE = 100_003;
const DATA = Uint8Array.from({ length: SIZE }, (_, i) => (i * 7 + (i >> 8)) & 0xff);

/** [offset, length] pairs: the start, the middle, across the end, at and past it, empty, huge. */
const RANGES = [
  [0, 10], [0, SIZE], [0, 1], [12_345, 4096], [SIZE / 2 | 0, 1],
  [SIZE - 3, 10], [SIZE - 1, 1], [SIZE, 5], [SIZE + 1000, 5], [Number.MAX_SAFE_INTEGER, 5],
  [0, 0], [500, 0], [SIZE, 0], [SIZE + 9, 0], [7, Number.MAX_SAFE_INTEGER], [0, 2 ** 40],
];

const BAD = [-1, 1.5, NaN, Infinity, -Infinity, '3', null, undefined, {}];

function scratchFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-range-'));
  const file = path.join(dir, 'data.bin');
  fs.writeFileSync(file, DATA);
  return { dir, file, missing: path.join(dir, 'missing.jsonl') };
}

/** A storage answering each read from its results, awaited where they are Promises. */
const sync = (storage) => ({
  read: async (p) => storage.read(p),
  readRange: async (p, o, l) => storage.readRange(p, o, l),
});

/**
 * A StagedStorage as the core meets it: each sync call that misses is loaded and made
 * again (what AsyncSession does), counting the loads.
 */
function staged(backend) {
  const st = new StagedStorage(backend);
  const out = { st, loads: 0 };
  const retry = (name) => async (...args) => {
    for (;;) {
      st.begin();
      try {
        return st[name](...args);
      } catch (e) {
        if (!(e instanceof StagedMiss)) throw e;
        out.loads++;
        await st.load();
      }
    }
  };
  out.read = retry('read');
  out.readRange = retry('readRange');
  return out;
}

/** Every shipped storage holding DATA at the returned path. */
async function storages() {
  const { file, missing } = scratchFile();
  const mem = memoryStorage();
  mem.put('/d/data.bin', DATA.slice());
  const agentMem = new MemorySessionStorage();
  agentMem.storage.mkdirAll('/d');
  agentMem.storage.write('/d/data.bin', DATA.slice());
  return [
    { name: 'nodeStorage', ...sync(nodeStorage()), file, missing },
    { name: 'nodeAsyncStorage', ...nodeAsyncStorage(), file, missing },
    { name: 'memoryStorage', ...sync(mem), file: '/d/data.bin', missing: '/d/missing.jsonl' },
    { name: 'FileSessionStorage.storage', ...sync(new FileSessionStorage().storage), file, missing },
    { name: 'MemorySessionStorage.storage', ...sync(agentMem.storage), file: '/d/data.bin', missing: '/d/missing.jsonl' },
    { name: 'StagedStorage over nodeAsyncStorage', ...staged(nodeAsyncStorage()), file, missing },
    { name: 'StagedStorage over memoryStorage', ...staged(mem), file: '/d/data.bin', missing: '/d/missing.jsonl' },
  ];
}

test('every shipped storage answers readRange as a slice of read would', async () => {
  for (const st of await storages()) {
    const whole = new Uint8Array(await st.read(st.file));
    assert.deepEqual(whole, DATA, st.name);
    for (const [offset, length] of RANGES) {
      const got = await st.readRange(st.file, offset, length);
      assert.ok(got instanceof Uint8Array, `${st.name} [${offset}, +${length}]: a Uint8Array`);
      assert.deepEqual(new Uint8Array(got), whole.slice(offset, offset + length), `${st.name} [${offset}, +${length}]`);
    }
  }
});

test('readRange of a missing file fails as read does (ENOENT)', async () => {
  for (const st of await storages()) {
    const code = await Promise.resolve().then(() => st.read(st.missing)).then(() => 'none', (e) => e.code);
    assert.equal(code, 'ENOENT', st.name);
    for (const [offset, length] of [[0, 10], [5, 0]]) {
      await assert.rejects(Promise.resolve().then(() => st.readRange(st.missing, offset, length)), { code }, st.name);
    }
  }
});

test('readRange refuses an offset or length that is not a non-negative integer, naming it, before touching a file', async () => {
  for (const st of await storages()) {
    for (const bad of BAD) {
      for (const [args, which] of [[[bad, 1], 'offset'], [[0, bad], 'length']]) {
        for (const file of [st.file, st.missing]) {
          await assert.rejects(Promise.resolve().then(() => st.readRange(file, ...args)), (e) => {
            assert.ok(e instanceof RangeError, `${st.name} ${which}=${String(bad)}: ${e}`);
            assert.equal(e.code, 'EINVAL');
            assert.match(e.message, new RegExp(`^readRange\\(path, offset, length\\): ${which} must be a non-negative integer, got `));
            return true;
          });
        }
      }
    }
  }
  // A bigint is an integer: taken.
  const mem = memoryStorage();
  mem.put('/f', DATA.slice(0, 10));
  assert.deepEqual(new Uint8Array(mem.readRange('/f', 2n, 3n)), DATA.slice(2, 5));
});

test('the Node storages never read the file whole: positioned reads only', async (t) => {
  const { file } = scratchFile();
  const fh = await fsp.open(file);
  const FileHandle = Object.getPrototypeOf(fh);
  await fh.close();
  const whole = () => {
    throw new Error('a whole read');
  };
  t.mock.method(fs, 'readFileSync', whole);
  t.mock.method(fsp, 'readFile', whole);
  t.mock.method(FileHandle, 'readFile', whole);
  const positions = [];
  const readSync = fs.readSync;
  t.mock.method(fs, 'readSync', (fd, buf, off, len, position) => {
    positions.push(position);
    return readSync(fd, buf, off, len, position);
  });
  assert.throws(() => nodeStorage().read(file), /a whole read/, 'the mocks are in place');
  await assert.rejects(nodeAsyncStorage().read(file), /a whole read/, 'the mocks are in place');
  assert.deepEqual(new Uint8Array(nodeStorage().readRange(file, 12_345, 100)), DATA.slice(12_345, 12_445));
  assert.deepEqual(positions, [12_345]);
  assert.deepEqual(new Uint8Array(await nodeAsyncStorage().readRange(file, SIZE - 5, 100)), DATA.slice(SIZE - 5));
});

test('StagedStorage loads the range asked for, not the file, when its storage has readRange; else it reads the file', async () => {
  const { file } = scratchFile();
  const calls = [];
  const backend = nodeAsyncStorage();
  const spied = {
    ...backend,
    read: (p) => {
      calls.push('read');
      return backend.read(p);
    },
    readRange: (p, o, l) => {
      calls.push(`readRange ${o} ${l}`);
      return backend.readRange(p, o, l);
    },
  };
  const ranged = staged(spied);
  assert.deepEqual(new Uint8Array(await ranged.readRange(file, 50_000, 1000)), DATA.slice(50_000, 51_000));
  assert.deepEqual(calls, ['readRange 50000 1000']);
  assert.ok(ranged.st.heldBytes() <= 1000, `held ${ranged.st.heldBytes()} bytes`);
  // A range inside one loaded is answered without loading; past the end without reading.
  assert.deepEqual(new Uint8Array(await ranged.readRange(file, 50_100, 10)), DATA.slice(50_100, 50_110));
  assert.deepEqual(new Uint8Array(await ranged.readRange(file, SIZE + 5, 10)), new Uint8Array());
  assert.deepEqual(calls, ['readRange 50000 1000']);
  // Past the end of what it holds: a load of that range, clipped to the file's size.
  assert.deepEqual(new Uint8Array(await ranged.readRange(file, SIZE - 10, 1e12)), DATA.slice(SIZE - 10));
  assert.deepEqual(calls, ['readRange 50000 1000', 'readRange 99993 10']);
  // The ranges are held for the operation only.
  await ranged.st.commit();
  assert.equal(ranged.st.heldBytes(), 0);

  // A file's 4 KiB head, loaded for a listing, answers the ranges inside it.
  const headed = staged(spied);
  await headed.st.load([{ op: 'readPrefix', path: file }]);
  calls.length = 0;
  assert.deepEqual(new Uint8Array(await headed.readRange(file, 100, 3996)), DATA.slice(100, 4096));
  assert.deepEqual(calls, []);
  assert.deepEqual(new Uint8Array(await headed.readRange(file, 100, 3997)), DATA.slice(100, 4097));
  assert.deepEqual(calls, ['readRange 100 3997']);

  calls.length = 0;
  const { readRange, ...noRange } = spied;
  assert.ok(readRange);
  const whole = staged(noRange);
  assert.deepEqual(new Uint8Array(await whole.readRange(file, 50_000, 1000)), DATA.slice(50_000, 51_000));
  assert.deepEqual(calls, ['read']);
});

test('a storage without readRange still opens and reads sessions, sync and async (the port reads it whole); checkStorage warns', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-range-'));
  const agentDir = path.join(dir, 'agent');
  const s = Session.create(nodeStorage(), { agentDir, cwd: '/w' });
  s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
  s.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'hello' }], timestamp: 2 });
  s.close();
  const expected = Session.open(nodeStorage(), s.file, { readOnly: true }).entriesJson();

  const { readRange, readInto, ...plain } = nodeStorage();
  assert.ok(readRange && readInto);
  assert.match(checkStorage(plain)[0], /^storage has no readRange/);
  assert.equal(Session.open(plain, s.file, { readOnly: true }).entriesJson(), expected);
  const { readRange: asyncRange, ...asyncPlain } = nodeAsyncStorage();
  assert.ok(asyncRange);
  assert.match(checkStorage(asyncPlain, true)[0], /^storage has no readRange/);
  assert.equal((await AsyncSession.open(asyncPlain, s.file, { readOnly: true })).entriesJson(), expected);
});
