// StagedStorage with snapshots (what the viewer's worker does over OPFS: a `File` of each
// file, read synchronously with FileReaderSync): nothing is loaded before an operation,
// the core reads what it asks for when it asks, and a file written through it is never
// read back from the snapshot taken before the write. Here a snapshot is a copy of the
// file's bytes at the time it was taken (a stale one still answers: the tests see it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session, assistant, nodeAsyncStorage, nodeStorage, user } from './helpers.mjs';
import { StagedStorage } from '../../pkg/staged-storage.mjs';

/** Node's async storage with `snapshot(path)`: the file's bytes now, as a Blob-like. */
function snapshotting() {
  const backend = nodeAsyncStorage();
  backend.snapshots = 0;
  backend.snapshot = async (p) => {
    backend.snapshots++;
    const bytes = new Uint8Array(await fs.promises.readFile(p));
    return { size: bytes.length, bytes };
  };
  return backend;
}

/** The synchronous read of a snapshot's range, counting the bytes it reads. */
function reader() {
  const read = (snap, offset, length) => {
    read.bytes += length;
    return snap.bytes.slice(offset, offset + length);
  };
  read.bytes = 0;
  return read;
}

/** An agent directory holding one session of 200 long exchanges (~1 MB) then a compaction, written by the package. */
function scratch() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-snap-'));
  const agentDir = path.join(dir, 'agent');
  const s = Session.create(nodeStorage(), { agentDir, cwd: '/w' });
  let kept;
  for (let i = 0; i < 200; i++) {
    s.appendMessage(user(`question ${i} ${'x'.repeat(2000)}`, 10 + 2 * i));
    kept = s.appendMessage(assistant(`answer ${i} ${'y'.repeat(2000)}`, 11 + 2 * i));
  }
  // Compacted at the end: the context is the summary and the last exchange.
  s.appendCompaction({ summary: 'earlier work', firstKeptEntryId: kept, tokensBefore: 1000 });
  s.appendMessage(user('go on', 1000));
  const file = s.file;
  s.free();
  return { dir, agentDir, file };
}

test('with snapshots, a lazy open reads nothing before it: no miss; the second open reads its cached index and a few lines, not the file', async () => {
  const { agentDir, file } = scratch();
  const size = fs.statSync(file).size;
  const read = reader();
  const staged = new StagedStorage(snapshotting(), { readSnapshot: read });
  await staged.loadTree(agentDir);
  const opens = [];
  for (let visit = 0; visit < 2; visit++) {
    staged.begin();
    const before = read.bytes;
    const s = Session.open(staged, file, { agentDir, readOnly: true, lazy: true });
    const count = s.contextMessageCount();
    const first = s.contextWindow(0, 5);
    assert.deepEqual(staged.misses, [], `visit ${visit + 1}: every read answered from a snapshot`);
    assert.equal(s.deferred, true);
    opens.push({ bytes: read.bytes - before, count, first: JSON.stringify(first) });
    s.free();
    await staged.commit(); // the first open's index cache is written to the storage
  }
  assert.ok(fs.readdirSync(path.join(agentDir, 'cache', 'index')).some((n) => n.endsWith('.idx')), 'the index cache is on disk');
  assert.ok(opens[0].bytes >= size, `the first open scans the file (read ${opens[0].bytes} of ${size})`);
  assert.ok(opens[1].bytes < size / 2, `the second reads the cache and the lines shown (read ${opens[1].bytes} of ${size})`);
  assert.equal(opens[1].count, opens[0].count);
  assert.equal(opens[1].first, opens[0].first);
});

test('a file written through it is read as written: an append is not read from the snapshot before it, and a commit takes a new one', async () => {
  const { agentDir, file } = scratch();
  const original = new Uint8Array(fs.readFileSync(file));
  const backend = snapshotting();
  const staged = new StagedStorage(backend, { readSnapshot: reader() });
  await staged.loadTree(agentDir);
  const tail = new TextEncoder().encode('{"appended":true}\n');
  staged.begin();
  assert.deepEqual(staged.readRange(file, 0, 100), original.slice(0, 100));
  staged.append(file, tail);
  // The bytes before the append are the snapshot's still; those after are not in it.
  assert.deepEqual(staged.readRange(file, 0, 100), original.slice(0, 100));
  assert.throws(() => staged.readRange(file, original.length, tail.length), { code: 'EXCSH_NOT_LOADED' });
  await staged.commit();
  staged.begin();
  assert.deepEqual(staged.readRange(file, original.length, tail.length), tail, 'read from the snapshot taken at the commit');
  assert.equal(staged.read(file).length, original.length + tail.length);
  // A file replaced whole: what the core wrote, then what is on disk.
  const other = new Uint8Array(200_000).fill(0x61);
  staged.write(file, other);
  assert.deepEqual(staged.read(file), other);
  await staged.commit();
  staged.begin();
  assert.deepEqual(staged.readRange(file, 199_990, 10), other.slice(0, 10));
  assert.equal(staged.stat(file).size, other.length);
  assert.deepEqual(staged.misses, []);
});

test('with snapshots, loading what an open reads loads nothing more: the worker no longer reads the session before a request', async () => {
  const { agentDir, file } = scratch();
  const backend = snapshotting();
  let wholeReads = 0;
  const whole = backend.read;
  backend.read = async (p) => {
    wholeReads++;
    return whole(p);
  };
  const staged = new StagedStorage(backend, { readSnapshot: reader() });
  await staged.loadTree(agentDir);
  assert.deepEqual(staged.unloaded([{ op: 'read', path: file }, { op: 'readRange', path: file, offset: 10, length: 10 }]), []);
  await staged.load([{ op: 'read', path: file }]);
  assert.equal(wholeReads, 0);
});

test('a file created and removed again with nothing written between (a lock an open took and released) is not replayed; one with a write between is', async () => {
  const { agentDir, file } = scratch();
  const backend = snapshotting();
  const calls = [];
  for (const name of ['createNew', 'unlink', 'append', 'write']) {
    const f = backend[name];
    backend[name] = (...args) => {
      calls.push(name);
      return f(...args);
    };
  }
  const staged = new StagedStorage(backend, { readSnapshot: reader() });
  await staged.loadTree(agentDir);
  const lock = `${file}.lock`;
  staged.begin();
  staged.createNew(lock, '{"pid":1}');
  staged.fsync(file);
  staged.unlink(lock);
  await staged.commit();
  assert.deepEqual(calls, []);
  staged.begin();
  staged.createNew(lock, '{"pid":1}');
  staged.append(file, '{"x":1}\n');
  staged.unlink(lock);
  await staged.commit();
  // The lock made (createNew, or a check and a write without one), the append, the unlink.
  assert.deepEqual(calls.slice(-2), ['append', 'unlink'], 'replayed in order');
  assert.ok(['createNew', 'write'].includes(calls[0]));
  assert.equal(fs.existsSync(lock), false);
});

test('a storage\'s synchronous readers answer reads of the files read in large pieces, between openReaders() and the commit, which closes them before it writes', async () => {
  const { agentDir, file } = scratch();
  const backend = snapshotting();
  const log = [];
  backend.openReader = async (p) => {
    const bytes = new Uint8Array(fs.readFileSync(p));
    log.push(`open ${path.basename(p)}`);
    return {
      read: (offset, length) => {
        log.push('read');
        return bytes.slice(offset, offset + length);
      },
      close: () => log.push('close'),
    };
  };
  const append = backend.append;
  backend.append = (...args) => {
    log.push('append');
    return append(...args);
  };
  const staged = new StagedStorage(backend, { readSnapshot: reader() });
  await staged.loadTree(agentDir);
  const size = fs.statSync(file).size;
  staged.begin();
  await staged.openReaders();
  assert.deepEqual(log, [], 'no file was read in large pieces yet');
  // Read in a piece of 8 MiB (as an index's scan asks): from the snapshot; the file is hot now.
  const whole = staged.readRange(file, 0, 8 << 20);
  assert.equal(whole.length, size);
  await staged.commit();
  staged.begin();
  await staged.openReaders();
  assert.deepEqual(staged.readRange(file, 0, 8 << 20), whole);
  staged.append(file, '{"x":1}\n');
  await staged.commit();
  assert.deepEqual(log, [`open ${path.basename(file)}`, 'read', 'close', 'append']);
});
