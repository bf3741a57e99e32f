// parseSession / buildSessionContext on the four real session files (v1, two with glued
// records), compared byte for byte with the native core when scripts/test-js wrote its
// output to $XCSH_CONTEXT_REF_DIR.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseSession, buildSessionContext, buildSessionContextJson, Session, FIXTURES, fixture } from './helpers.mjs';

const REF_DIR = process.env.XCSH_CONTEXT_REF_DIR;

// What each file holds (counted from the files themselves).
const EXPECT = {
  'before-compaction': { entries: 1002, model: 'anthropic/claude-opus-4-5', glued: [], first: 'compactionSummary', thinking: 'off' },
  'historical-compact': { entries: 1013, model: 'anthropic/claude-opus-4-5', glued: [1013], first: 'compactionSummary', thinking: 'off' },
  'historical-session': { entries: 463, model: 'anthropic/claude-opus-4-5', glued: [440], first: 'compactionSummary', thinking: 'medium' },
  'large-session': { entries: 1018, model: 'anthropic/claude-sonnet-4-5', glued: [], first: 'user', thinking: 'off' },
};

const ROLES = new Set(['user', 'assistant', 'toolResult', 'bashExecution', 'compactionSummary', 'branchSummary', 'custom']);

for (const name of FIXTURES) {
  const text = fixture(name);
  const want = EXPECT[name];

  test(`${name}: parseSession reads a v1 file that needs migration`, () => {
    const firstLine = JSON.parse(text.slice(0, text.indexOf('\n')));
    const p = parseSession(text);
    assert.deepEqual(p.header.id, firstLine.id);
    assert.equal(p.header.type, 'session');
    assert.equal(p.entryCount, want.entries);
    assert.equal(p.version, 1);
    assert.equal(p.migrationNeeded, true);
    assert.deepEqual(p.report.migration, { fromVersion: 1, toVersion: 3, entriesChanged: want.entries });
    assert.deepEqual(p.report.issues.map((i) => [i.line, i.kind]), want.glued.map((l) => [l, 'gluedRecord']));
    assert.equal(p.report.nonEntries, 0);
    assert.match(p.leafId, /^[0-9a-f]{8}$/);
  });

  test(`${name}: buildSessionContext follows the last entry's branch`, () => {
    const ctx = buildSessionContext(text);
    assert.ok(ctx.messages.length > 0);
    assert.equal(ctx.messages[0].role, want.first);
    for (const m of ctx.messages) assert.ok(ROLES.has(m.role), `unexpected role ${m.role}`);
    assert.equal(ctx.messages.filter((m) => m.role === 'compactionSummary').length, want.first === 'compactionSummary' ? 1 : 0);
    assert.deepEqual(ctx.models, { default: want.model });
    assert.equal(ctx.thinkingLevel, want.thinking);
    assert.equal(ctx.mode, 'none');
    assert.equal(ctx.hasPersistedMCPToolSelection, false);
  });

  test(`${name}: context JSON is the same from every entry point`, () => {
    const json = buildSessionContextJson(text);
    const session = Session.fromText(text);
    assert.equal(session.contextJson(), json);
    assert.equal(session.contextJson(session.leafId), json);
    // contextJsonBytes (for a context too large for a JS string): the same text, as UTF-8.
    const bytes = session.contextJsonBytes();
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(Buffer.from(bytes), Buffer.from(json, 'utf8'));
    assert.deepEqual(Buffer.from(session.contextJsonBytes(null)), Buffer.from(session.contextJson(null), 'utf8'));
    // writeContextJson (streamed a chunk at a time): the same bytes again.
    const chunks = [];
    assert.equal(session.writeContextJson((c) => chunks.push(c)), bytes.length);
    assert.deepEqual(Buffer.concat(chunks), Buffer.from(bytes));
    // An unknown leaf falls back to the last entry, as in the agent.
    assert.equal(buildSessionContextJson(text, 'no-such-id'), json);
    assert.deepEqual(buildSessionContext(text), JSON.parse(json));
    assert.deepEqual(buildSessionContext(text, null).messages, []);
  });

  test(`${name}: context JSON equals the native core's`, (t) => {
    const ref = REF_DIR && path.join(REF_DIR, `${name}.json`);
    if (!ref || !fs.existsSync(ref)) {
      t.skip('no native reference (scripts/test-js writes it)');
      return;
    }
    const native = fs.readFileSync(ref, 'utf8').replace(/\n$/, '');
    const json = buildSessionContextJson(text);
    assert.ok(native.length > 1000);
    assert.equal(json.length, native.length);
    assert.ok(json === native, 'context JSON differs from the native core');
  });
}

test('a mid-session leaf gives the branch up to it', () => {
  const text = fixture('large-session');
  const session = Session.fromText(text);
  const entries = session.entries();
  const mid = entries[Math.floor(entries.length / 2)];
  const ctx = buildSessionContext(text, mid.id);
  const path = session.branchPath(mid.id);
  assert.equal(path.at(-1).id, mid.id);
  assert.equal(ctx.messages.length, path.filter((e) => e.type === 'message').length);
  assert.ok(ctx.messages.length < buildSessionContext(text).messages.length);
});

test('buildSessionContextJson on the largest fixture is fast', (t) => {
  const text = fixture('before-compaction');
  buildSessionContextJson(text); // warm up
  const runs = 10;
  const start = performance.now();
  for (let i = 0; i < runs; i++) buildSessionContextJson(text);
  const ms = (performance.now() - start) / runs;
  t.diagnostic(`buildSessionContextJson(before-compaction.jsonl, ${text.length} bytes): ${ms.toFixed(1)} ms`);
  assert.ok(ms < 1000, `${ms} ms`);
});

// A context of several MiB is written in chunks of at most 1 MiB that join into the
// same bytes as contextJsonBytes, for every leaf argument; a chunk may end inside a
// character. Bad writers get clear errors and leave the session usable.
test('writeContextJson streams a large context in chunks of at most 1 MiB', () => {
  const session = Session.inMemory('/w');
  const text = 'é日本🎉 tool output line\n'.repeat(4000);
  for (let i = 0; i < 30; i++) session.appendMessage({ role: 'user', content: `${i} ${text}`, timestamp: i });
  for (const leaf of [undefined, null, session.leafId]) {
    const whole = Buffer.from(session.contextJsonBytes(leaf));
    const chunks = [];
    const total = session.writeContextJson((c) => {
      assert.ok(c instanceof Uint8Array);
      chunks.push(c);
    }, leaf);
    assert.equal(total, whole.length);
    assert.deepEqual(Buffer.concat(chunks), whole);
    if (leaf !== null) {
      assert.ok(whole.length > 3 * 2 ** 20, `${whole.length} bytes`);
      assert.ok(chunks.length >= 4);
      for (const c of chunks) assert.ok(c.length > 0 && c.length <= 2 ** 20);
    }
  }
  assert.throws(() => session.writeContextJson('out.json'), { kind: 'invalidInput', message: /write must be a function/ });
  assert.throws(() => session.writeContextJson(async () => {}), { kind: 'invalidInput', message: /returned a Promise/ });
  assert.throws(() => session.writeContextJson(() => { throw new Error('disk full'); }), /disk full/);
  assert.equal(JSON.parse(session.contextJson()).messages.length, 30);
});

// treeJson(maxStringChars): the same tree with every string value of the entries cut to
// its first maxStringChars characters; keys, numbers, ids, labels and shape unchanged.
test('treeJson(maxStringChars) is the tree with long strings cut', () => {
  const session = Session.fromText(fixture('large-session'));
  const whole = session.treeJson();
  const outline = session.treeJson(400);
  assert.equal(session.treeJson(null), whole);
  assert.equal(session.treeJson(1e9), whole);
  assert.ok(outline.length < whole.length * 0.75, `${outline.length} of ${whole.length}`);
  const same = (w, o, where) => {
    if (typeof w === 'string') {
      assert.equal(typeof o, 'string', where);
      assert.ok(w.startsWith(o), `${where}: not a prefix`);
      assert.equal(o.length, Math.min(w.length, 400), `${where}: ${o.length} characters`); // no escaped surrogate pairs here
    } else if (Array.isArray(w)) {
      assert.equal(o.length, w.length, where);
      w.forEach((x, i) => same(x, o[i], `${where}[${i}]`));
    } else if (w && typeof w === 'object') {
      assert.deepEqual(Object.keys(o), Object.keys(w), where);
      for (const k of Object.keys(w)) same(w[k], o[k], `${where}.${k}`);
    } else assert.equal(o, w, where);
  };
  same(JSON.parse(whole), JSON.parse(outline), 'tree');
  for (const bad of [-1, 1.5, 'x', Number.NaN]) {
    assert.throws(() => session.treeJson(bad), { kind: 'invalidInput', message: /maxStringChars must be a whole number/ });
  }
});
