// `openContext`: a session file's context through its index, in Node. Every context it
// gives is `Session.open`'s; a reopen reads the cached index and only the context's lines
// (by readRange), not the file; a storage without readRange still works (each ranged read
// is a whole read sliced); a v1 file is read whole; a large context streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  FIXTURES, Session, agentHome, assistant, fixturePath, nodeStorage, openContext, user,
} from './helpers.mjs';

/** A node storage that counts the bytes its reads return (`readInto` among them: with it,
 * the package reads ranges through it, straight into wasm memory). */
function counting(inner = nodeStorage()) {
  const counts = { bytes: 0, ranges: 0, whole: 0, into: 0 };
  const storage = {
    ...inner,
    read(p) {
      const b = inner.read(p);
      counts.whole++;
      counts.bytes += b.length;
      return b;
    },
    readPrefix(p, n) {
      const b = inner.readPrefix(p, n);
      counts.bytes += b.length;
      return b;
    },
    readRange(p, o, n) {
      const b = inner.readRange(p, o, n);
      counts.ranges++;
      counts.bytes += b.length;
      return b;
    },
    readInto(p, dest, position) {
      const n = inner.readInto(p, dest, position);
      counts.into++;
      counts.bytes += n;
      return n;
    },
  };
  return { storage, counts };
}

/** A session of `turns` user/assistant pairs with long questions, on disk. */
function written(agentDir, turns) {
  const s = Session.create(nodeStorage(), { agentDir, cwd: '/w' });
  for (let i = 0; i < turns; i++) {
    s.appendMessage(user(`question ${i} ${'x'.repeat(500)}`));
    s.appendMessage(assistant(`answer ${i}`));
  }
  return s;
}

/** 300 turns on disk, a leaf two thirds along, its context as Session.open gives it. */
function longSession(t) {
  const agentDir = agentHome(t);
  const s = written(agentDir, 300);
  const leafId = s.entries()[200].id;
  const want = Session.open(nodeStorage(), s.file, { readOnly: true, agentDir }).contextJson(leafId);
  return { agentDir, s, leafId, want, size: fs.statSync(s.file).size };
}

test('a reopen reads the cached index and the path, not the whole file', (t) => {
  const { agentDir, s, leafId, want, size } = longSession(t);
  const { storage, counts } = counting();

  const first = openContext(storage, s.file, { agentDir, leafId });
  assert.equal(first.throughIndex, true);
  assert.equal(first.json(), want);
  assert.ok(counts.bytes >= size, `the first open scans the file: ${counts.bytes} of ${size}`);
  assert.equal(counts.whole, 0, 'the scan reads by ranges');
  assert.deepEqual(fs.readdirSync(path.join(agentDir, 'cache', 'index')).length, 1);

  counts.bytes = 0;
  const again = openContext(storage, s.file, { agentDir, leafId });
  assert.equal(again.json(), want);
  assert.equal(again.uncheckedLines > 0, true);
  // The cache (its own file) and two thirds of the session's lines.
  const cache = fs.statSync(path.join(agentDir, 'cache', 'index', fs.readdirSync(path.join(agentDir, 'cache', 'index'))[0])).size;
  assert.ok(counts.bytes < cache + size * 0.75, `${counts.bytes} bytes read, file ${size}, cache ${cache}`);
  const chunks = [];
  assert.equal(again.writeJson((c) => chunks.push(c)), again.byteLength);
  assert.equal(Buffer.concat(chunks).toString('utf8'), want);
});

test('with readInto, ranged reads go straight into wasm memory: readRange is not called, the contexts are the same', (t) => {
  const { agentDir, s, leafId, want, size } = longSession(t);
  const { storage, counts } = counting();
  const first = openContext(storage, s.file, { agentDir, leafId });
  assert.equal(first.json(), want);
  assert.equal(counts.ranges, 0, 'no readRange');
  assert.equal(counts.whole, 0, 'no whole read');
  assert.ok(counts.into > 0 && counts.bytes >= size, `the scan read ${counts.bytes} of ${size} bytes in ${counts.into} readInto calls`);
  counts.bytes = 0;
  assert.equal(openContext(storage, s.file, { agentDir, leafId }).json(), want);
  assert.ok(counts.bytes < size, `a reopen reads the path through readInto: ${counts.bytes} of ${size}`);
  // A readInto that lies about what it read is refused, naming it.
  const liar = { ...nodeStorage(), readInto: () => 1e12 };
  assert.throws(() => openContext(liar, s.file, { agentDir: agentHome(t) }).json(), (e) => /readInto/.test(e.message));
});

test('without readRange, with the cache off, and for v1 files: the same contexts', (t) => {
  const agentDir = agentHome(t);
  const s = written(agentDir, 20);
  const want = s.contextJson();
  const { readRange, readInto, ...noRange } = nodeStorage();
  const plain = openContext(noRange, s.file, { agentDir });
  assert.equal(plain.throughIndex, true);
  assert.equal(plain.json(), want);
  const off = openContext(nodeStorage(), s.file, { agentDir: agentHome(t), indexCache: false });
  assert.equal(off.json(), want);
  for (const name of FIXTURES) {
    const file = fixturePath(name);
    const opened = openContext(nodeStorage(), file, { agentDir });
    assert.equal(opened.throughIndex, false, `${name} is v1: read whole`);
    assert.equal(opened.json(), Session.open(nodeStorage(), file, { readOnly: true, agentDir }).contextJson());
  }
});

test('a missing file and an unknown leaf are the errors of Session.open', (t) => {
  const agentDir = agentHome(t);
  const s = written(agentDir, 2);
  assert.throws(() => openContext(nodeStorage(), `${s.file}.nope`, { agentDir }), (e) => e.kind === 'notFound');
  assert.throws(() => openContext(nodeStorage(), s.file, { agentDir, leafId: 'nope' }), (e) => e.kind === 'entryNotFound');
  assert.throws(() => openContext(nodeStorage(), s.file, { agentDir }).writeJson(async () => {}), (e) => e.kind === 'invalidInput');
});

test('a window of the messages is that slice of the context, and reads no more than its own lines', (t) => {
  const agentDir = agentHome(t);
  const s = written(agentDir, 300);
  const want = JSON.parse(s.contextJson());
  const ids = s.contextEntryIds();
  openContext(nodeStorage(), s.file, { agentDir }); // the index cached
  const size = fs.statSync(s.file).size;
  const { storage, counts } = counting();
  const opened = openContext(storage, s.file, { agentDir });
  assert.equal(opened.messageCount, 600);
  for (const [a, b] of [[0, 3], [290, 310], [598, 700], [700, 800], [5, 2]]) {
    const w = opened.window(a, b);
    const start = Math.min(a, Math.min(b, 600));
    assert.equal(w.start, start);
    assert.deepEqual(w.messages, want.messages.slice(start, Math.min(b, 600)));
    assert.deepEqual(w.ids, ids.slice(start, Math.min(b, 600)));
  }
  counts.bytes = 0;
  opened.window(300, 320);
  assert.ok(counts.bytes < size / 10, `a window of 20 read ${counts.bytes} bytes of ${size}`);
  assert.throws(() => opened.window(-1, 2), (e) => e.kind === 'invalidInput' && /start/.test(e.message));
  assert.throws(() => opened.window(0, NaN), (e) => e.kind === 'invalidInput' && /end/.test(e.message));
});

test('Session.contextWindow: that slice of the context at any leaf, whole or lazy', (t) => {
  const agentDir = agentHome(t);
  const s = written(agentDir, 40);
  const entries = s.entries();
  const side = entries[30].id;
  for (const leaf of [undefined, side, null]) {
    const want = JSON.parse(s.contextJson(leaf)).messages;
    const ids = s.contextEntryIds(leaf);
    assert.equal(s.contextMessageCount(leaf), want.length);
    for (const [a, b] of [[0, 5], [10, 31], [70, 200], [3, 1]]) {
      const w = s.contextWindow(a, b, leaf);
      const start = Math.min(a, b, want.length);
      assert.equal(w.start, start, `leaf ${leaf}, [${a}, ${b})`);
      assert.deepEqual(w.messages, want.slice(start, Math.min(b, want.length)));
      assert.deepEqual(w.ids, ids.slice(start, Math.min(b, want.length)));
    }
  }
  assert.equal(s.contextMessageCount(null), 0);
  const want = JSON.parse(s.contextJson()).messages;
  const lazy = Session.open(nodeStorage(), s.file, { agentDir, lazy: true, readOnly: true });
  assert.equal(lazy.contextMessageCount(), 80);
  assert.deepEqual(lazy.contextWindow(75, 80).messages, want.slice(75));
  assert.ok(lazy.deferred, 'a window of the current leaf reads no entries');
  assert.deepEqual(lazy.contextWindow(0, 2, side).ids, s.contextEntryIds(side).slice(0, 2));
  assert.throws(() => lazy.contextWindow(-1, 2), (e) => e.kind === 'invalidInput');
});

test('Session.historyWindow: every message of the branch, compactions where they happened', () => {
  const s = Session.open(nodeStorage(), fixturePath('historical-compact'), { readOnly: true });
  const n = s.historyMessageCount();
  const all = s.historyWindow(0, n);
  assert.equal(all.messages.length, n);
  assert.ok(n > s.contextMessageCount() * 3, `${n} messages in the history, ${s.contextMessageCount()} in the context`);
  const compactions = all.messages.filter((m) => m.role === 'compactionSummary').length;
  assert.ok(compactions >= 1);
  // The context's summary is one of them, where its compaction is.
  const [summaryId] = s.contextEntryIds();
  assert.deepEqual(all.messages[all.ids.indexOf(summaryId)], JSON.parse(s.contextJson()).messages[0]);
  assert.deepEqual(s.historyWindow(n - 3, n + 10).ids, all.ids.slice(n - 3));
  assert.throws(() => s.historyWindow(NaN, 1), (e) => e.kind === 'invalidInput');
});

test('a context over 64 MiB streams from the file, and its reopen (which copies the messages the first open checked) writes the bytes Session.open makes', (t) => {
  const agentDir = agentHome(t);
  const s = Session.create(nodeStorage(), { agentDir, cwd: '/w' });
  // Shown lines of ~80 MB (a text is kept whole up to 500,000 characters).
  const big = 'y'.repeat(400_000);
  for (let i = 0; i < 200; i++) {
    s.appendMessage(user(`question ${i} ${big}`));
    s.appendMessage(assistant(`answer ${i}`));
  }
  const file = s.file;
  s.flush();
  const sha = (write) => {
    const h = crypto.createHash('sha256');
    const n = write((chunk) => h.update(chunk));
    return { n, sha: h.digest('hex') };
  };
  const whole = Session.open(nodeStorage(), file, { readOnly: true, agentDir }).contextJsonBytes();
  const want = { n: whole.length, sha: crypto.createHash('sha256').update(whole).digest('hex') };
  assert.ok(want.n > 64 << 20, `${want.n}`);
  for (const open of ['first', 'reopen', 'again']) {
    const c = openContext(nodeStorage(), file, { agentDir });
    assert.equal(c.throughIndex, true, open);
    assert.deepEqual(sha((w) => c.writeJson(w)), want, open);
  }
  const lazy = Session.open(nodeStorage(), file, { readOnly: true, agentDir, lazy: true });
  assert.deepEqual(sha((w) => lazy.writeContextJson(w)), want);
});
