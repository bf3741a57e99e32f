// The Session class over JS storage objects: a Map-based one and Node's fs in a temp dir.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session, MemoryJsStorage, user, assistant, lines, fixturePath } from './helpers.mjs';
import { nodeStorage as fsStorage } from '../../pkg/node-storage.mjs';

const STORAGES = {
  'Map storage': () => {
    const storage = new MemoryJsStorage();
    return { storage, root: '/home/me', text: (p) => storage.text(p), exists: (p) => storage.exists(p) };
  },
  'Node fs storage': (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-session-js-'));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    return { storage: fsStorage(), root, text: (p) => fs.readFileSync(p, 'utf8'), exists: (p) => fs.existsSync(p) };
  },
};

for (const [kind, make] of Object.entries(STORAGES)) {
  describe(kind, () => {
    test('the file appears with the first assistant message, then grows one line per entry', (t) => {
      const { storage, root, text, exists } = make(t);
      const agentDir = `${root}/agent`;
      const s = Session.create(storage, { agentDir, cwd: '/work/proj' });
      assert.ok(s.file.startsWith(`${agentDir}/sessions/--work-proj--/`), s.file);
      assert.ok(s.file.endsWith(`_${s.sessionId}.jsonl`), s.file);
      assert.equal(s.leafId, null);

      const u = s.appendMessage(user('hello'));
      assert.equal(exists(s.file), false, 'nothing is written before the first assistant message');
      const a = s.appendMessage(assistant('hi there'));
      assert.equal(exists(s.file), true);
      let written = lines(text(s.file));
      assert.equal(written.length, 3);
      assert.equal(written[0].type, 'session');
      assert.equal(written[0].id, s.sessionId);
      assert.equal(written[0].version, 3);
      assert.equal(written[0].cwd, '/work/proj');
      assert.deepEqual(written.slice(1).map((e) => [e.type, e.id, e.parentId]), [
        ['message', u, null],
        ['message', a, u],
      ]);
      assert.deepEqual(written[2].message, assistant('hi there'));

      const before = text(s.file);
      const m = s.appendModelChange('openai/gpt-5', 'smol');
      assert.equal(text(s.file).slice(0, before.length), before, 'appends keep what is there');
      assert.equal(lines(text(s.file)).length, 4);
      const th = s.appendThinkingLevelChange('high');
      const u2 = s.appendMessage(user('and now?', 3));
      written = lines(text(s.file));
      assert.equal(written.length, 6);
      assert.deepEqual(written.slice(4).map((e) => [e.id, e.parentId]), [
        [th, m],
        [u2, th],
      ]);
      assert.equal(s.leafId, u2);
      s.flush();

      const ctx = s.context();
      assert.deepEqual(ctx.messages.map((x) => x.role), ['user', 'assistant', 'user']);
      assert.deepEqual(ctx.models, { default: 'anthropic/claude-opus-4-5', smol: 'openai/gpt-5' });
      assert.equal(ctx.thinkingLevel, 'high');

      s.close(); // one writer at a time: release the lock before reopening for writing
      const r = Session.open(storage, s.file, { agentDir });
      assert.equal(r.sessionId, s.sessionId);
      assert.equal(r.file, s.file);
      assert.equal(r.leafId, s.leafId);
      assert.deepEqual(r.entries(), s.entries());
      assert.equal(r.entriesJson(), s.entriesJson());
      assert.deepEqual(r.header(), s.header());
      assert.equal(r.contextJson(), s.contextJson());
      assert.equal(r.toJsonl(), text(s.file));
      assert.deepEqual(r.report(), { issues: [], nonEntries: 0 });

      // The reopened session continues the same file.
      const a2 = r.appendMessage(assistant('fine', 4));
      assert.equal(lines(text(s.file)).at(-1).id, a2);
      assert.equal(lines(text(s.file)).at(-1).parentId, u2);
    });

    test('ensureOnDisk writes a session that has no assistant message yet', (t) => {
      const { storage, root, text, exists } = make(t);
      const s = Session.create(storage, { agentDir: `${root}/agent`, cwd: '/w', sessionDir: `${root}/mine` });
      assert.equal(path.dirname(s.file), `${root}/mine`);
      s.appendMessage(user('only me'));
      assert.equal(exists(s.file), false);
      s.ensureOnDisk();
      assert.equal(lines(text(s.file)).length, 2);
      assert.equal(s.setSessionName('Fix the build\nsecond line', 'user'), true);
      assert.equal(lines(text(s.file))[0].title, 'Fix the build second line');
      assert.equal(s.setSessionName('generated', 'auto'), false, "the user's name stays");
      assert.equal(s.setSessionName(' \n ', 'user'), false, 'empty once sanitized');
    });

    test('a missing file opens as a new empty session at that path', (t) => {
      const { storage, root, exists } = make(t);
      const file = `${root}/nope/x.jsonl`;
      const s = Session.open(storage, file, { cwd: '/w' });
      assert.equal(s.file, file);
      assert.deepEqual(s.entries(), []);
      assert.equal(s.header().cwd, '/w');
      assert.equal(s.report().issues.length, 0);
      assert.equal(exists(file), false);
    });

    test('a v3 file with unknown keys and entry types is written back unchanged', (t) => {
      const { storage, root, text } = make(t);
      const input = [
        '{"type":"session","version":3,"id":"sess-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","future":{"b":[1,2.50,12345678901234567890],"a":null}}',
        '{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1,"zeta":true},"extraTop":{"x":"\\u00e9"}}',
        '{"type":"hologram","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","payload":{"deep":[{"n":1e3}]}}',
        '{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"p","model":"m","timestamp":3},"z":null}',
        '',
      ].join('\n');
      assert.equal(Session.fromText(input).toJsonl(), input);

      storage.mkdirAll(`${root}/s`);
      storage.write(`${root}/s/f.jsonl`, new TextEncoder().encode(input));
      const s = Session.open(storage, `${root}/s/f.jsonl`);
      assert.equal(s.toJsonl(), input);
      assert.equal(s.entry('aaaa0002').type, 'hologram');
      assert.deepEqual(s.entry('aaaa0002').payload, { deep: [{ n: 1000 }] });
      assert.equal(s.leafId, 'aaaa0003');
      s.appendCustomEntry('ext', { k: 1 });
      assert.equal(text(`${root}/s/f.jsonl`).slice(0, input.length), input, 'earlier lines are untouched');
      const last = lines(text(`${root}/s/f.jsonl`)).at(-1);
      assert.deepEqual([last.type, last.customType, last.data, last.parentId], ['custom', 'ext', { k: 1 }, 'aaaa0003']);
    });
  });
}

test('errors are Errors with a kind', () => {
  const s = Session.inMemory('/w');
  assert.throws(() => s.entry('nope'), (e) => e instanceof Error && e.kind === 'entryNotFound' && e.message === 'Entry nope not found');
  assert.throws(() => s.branch('nope'), { kind: 'entryNotFound', message: 'Entry nope not found' });
  assert.throws(() => s.appendLabelChange('nope', 'x'), { kind: 'entryNotFound' });
  assert.throws(() => s.appendEntry({ type: 'message' }), { kind: 'invalidInput' });
  assert.throws(() => s.appendEntry({ type: 'custom', id: 'mine' }), { kind: 'invalidInput' });
  assert.throws(() => s.appendEntry({ customType: 'no type' }), { kind: 'invalidInput' });
  assert.throws(() => s.appendMessage('not an object'), { kind: 'invalidInput' });
  assert.throws(() => s.appendCompaction({ summary: 's', firstKeptEntryId: 'x', tokensBefore: -1 }), { kind: 'invalidInput' });
  assert.throws(() => s.context(42), { kind: 'invalidInput' });

  const text = s.toJsonl() + JSON.stringify({ type: 'custom', customType: 'x', id: 'c1', parentId: null, timestamp: '2026-01-01T00:00:00.000Z' }) + '\n';
  const viewer = Session.fromText(text);
  assert.equal(viewer.file, undefined);
  assert.throws(() => viewer.appendEntry({ type: 'custom', customType: 'y' }), { kind: 'readOnly' });
  assert.throws(() => viewer.appendMessage(user('x')), { kind: 'readOnly' });

  const storage = new MemoryJsStorage();
  storage.mkdirAll('/s');
  storage.write('/s/f.jsonl', new TextEncoder().encode(text));
  const ro = Session.open(storage, '/s/f.jsonl', { readOnly: true });
  assert.throws(() => ro.appendCustomEntry('y'), { kind: 'readOnly' });
  assert.equal(storage.text('/s/f.jsonl'), text);
});

test('storage errors map by code: ENOENT is not-found, others are storage failures', () => {
  const storage = new MemoryJsStorage();
  const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
  storage.read = () => {
    throw denied;
  };
  assert.throws(() => Session.open(storage, '/s/f.jsonl'), { kind: 'storage', message: 'EACCES: permission denied: /s/f.jsonl' });
  storage.read = () => {
    throw Object.assign(new Error('gone'), { code: 'ENOENT' });
  };
  assert.deepEqual(Session.open(storage, '/s/f.jsonl').entries(), []);
  storage.read = () => {
    throw 'plain string';
  };
  assert.throws(() => Session.open(storage, '/s/f.jsonl'), { kind: 'storage', message: 'storage.read(/s/f.jsonl) failed: plain string' });
});

test('the storage clock and entropy are used when present', () => {
  const storage = new MemoryJsStorage({ startMs: Date.UTC(2030, 4, 6, 7, 8, 9, 0) });
  const s = Session.create(storage, { agentDir: '/agent', cwd: '/w' });
  const id = s.appendMessage(user('x'));
  assert.match(s.header().timestamp, /^2030-05-06T07:08:09\.\d{3}Z$/);
  assert.match(s.entry(id).timestamp, /^2030-05-06T07:08:09\.\d{3}Z$/);
  // The same seed gives the same ids.
  const again = Session.create(new MemoryJsStorage({ startMs: Date.UTC(2030, 4, 6, 7, 8, 9, 0) }), { agentDir: '/agent', cwd: '/w' });
  assert.equal(again.sessionId, s.sessionId);
  assert.equal(again.appendMessage(user('x')), id);
  // Without them: Date.now and the host's crypto.getRandomValues (never Math.random),
  // drawn 512 bytes at a time (64 ids): more than 64 ids draw at least once.
  const before = Date.now();
  const getRandomValues = crypto.getRandomValues;
  const random = Math.random;
  let draws = 0;
  crypto.getRandomValues = (array) => {
    draws++;
    return getRandomValues.call(crypto, array);
  };
  Math.random = () => {
    throw new Error('Math.random is not a source of ids');
  };
  try {
    const m = Session.inMemory('/w');
    assert.ok(Date.parse(m.header().timestamp) >= before - 1);
    assert.notEqual(Session.inMemory('/w').sessionId, m.sessionId);
    const ids = new Set();
    for (let i = 0; i < 65; i++) ids.add(m.appendMessage(user('x')));
    assert.equal(ids.size, 65);
    assert.ok(draws >= 1, `crypto.getRandomValues drawn ${draws} times`);
  } finally {
    crypto.getRandomValues = getRandomValues;
    Math.random = random;
  }
});

test('a failing write surfaces as persistence on that call and every later append', () => {
  const storage = new MemoryJsStorage();
  const s = Session.create(storage, { agentDir: '/agent', cwd: '/w' });
  s.appendMessage(user('hi'));
  storage.failOn.add('write');
  assert.throws(() => s.appendMessage(assistant('hello')), (e) => e.kind === 'persistence' && /EIO/.test(e.message));
  storage.failOn.clear();
  assert.throws(() => s.appendMessage(user('more')), { kind: 'persistence' });
  assert.throws(() => s.appendModelChange('a/b'), { kind: 'persistence' });
  assert.throws(() => s.ensureOnDisk(), { kind: 'persistence' });
  assert.throws(() => s.flush(), { kind: 'persistence' });
  assert.equal(s.warnings().length, 1);
  assert.match(s.warnings()[0], /session persistence failed/);
  assert.equal(storage.exists(s.file), false);
});

test('a failing append after the first write latches too', () => {
  const storage = new MemoryJsStorage();
  const s = Session.create(storage, { agentDir: '/agent', cwd: '/w' });
  s.appendMessage(user('hi'));
  s.appendMessage(assistant('hello'));
  const onDisk = storage.text(s.file);
  storage.failOn.add('append');
  assert.throws(() => s.appendMessage(user('lost')), { kind: 'persistence' });
  storage.failOn.clear();
  assert.throws(() => s.appendMessage(user('also lost')), { kind: 'persistence' });
  assert.equal(storage.text(s.file), onDisk);
});

test('branch, labels and the tree round-trip through the file', () => {
  const storage = new MemoryJsStorage();
  const s = Session.create(storage, { agentDir: '/agent', cwd: '/w' });
  const u1 = s.appendMessage(user('one'));
  const a1 = s.appendMessage(assistant('two'));
  const u2 = s.appendMessage(user('three'));
  s.branch(a1);
  assert.equal(s.leafId, a1);
  const u3 = s.appendMessage(user('three, again'));
  assert.deepEqual(s.children(a1).map((e) => e.id), [u2, u3]);
  assert.deepEqual(s.branchPath(u2).map((e) => e.id), [u1, a1, u2]);
  assert.deepEqual(s.branchPath().map((e) => e.id), [u1, a1, u3]);

  const l = s.appendLabelChange(a1, 'checkpoint');
  assert.equal(s.label(a1), 'checkpoint');
  assert.equal(s.entry(l).targetId, a1);

  const tree = s.tree();
  assert.equal(tree.length, 1);
  assert.equal(tree[0].entry.id, u1);
  const node = tree[0].children[0];
  assert.equal(node.entry.id, a1);
  assert.equal(node.label, 'checkpoint');
  assert.deepEqual(node.children.map((c) => c.entry.id), [u2, u3]);
  assert.deepEqual(node.children[1].children.map((c) => c.entry.id), [l]);
  assert.equal(JSON.stringify(tree), s.treeJson());

  assert.deepEqual(s.context(u2).messages.map((m) => m.content[0].text), ['one', 'two', 'three']);
  assert.deepEqual(s.context().messages.map((m) => m.content[0].text), ['one', 'two', 'three, again']);
  assert.deepEqual(s.context(null).messages, []);

  s.close();
  const r = Session.open(storage, s.file, { agentDir: '/agent' });
  assert.equal(r.treeJson(), s.treeJson());
  assert.equal(r.label(a1), 'checkpoint');
  assert.equal(r.leafId, l);

  r.appendLabelChange(a1);
  assert.equal(r.label(a1), undefined);
  assert.equal(Session.open(storage, s.file, { readOnly: true }).label(a1), undefined);

  const summary = r.branchWithSummary(u1, 'Tried two answers.', { files: ['a.rs'] }, false);
  const e = r.entry(summary);
  assert.deepEqual([e.type, e.parentId, e.fromId, e.summary, e.details, e.fromExtension], ['branch_summary', u1, u1, 'Tried two answers.', { files: ['a.rs'] }, false]);
  assert.deepEqual(r.context().messages.map((m) => m.role), ['user', 'branchSummary']);
  const root = r.branchWithSummary(null, 'From scratch.');
  assert.equal(r.entry(root).parentId, null);
  assert.equal(r.entry(root).fromId, 'root');

  r.resetLeaf();
  assert.equal(r.leafId, null);
  const fresh = r.appendCustomEntry('ext');
  assert.equal(r.entry(fresh).parentId, null);
  assert.equal(r.tree().length, 3);
});

test('createBranchedSession continues in a new file holding the path', () => {
  const storage = new MemoryJsStorage();
  const s = Session.create(storage, { agentDir: '/agent', cwd: '/w' });
  const u1 = s.appendMessage(user('one'));
  const a1 = s.appendMessage(assistant('two'));
  s.appendLabelChange(u1, 'start');
  s.appendMessage(user('three'));
  const oldFile = s.file;
  const oldId = s.sessionId;
  const file = s.createBranchedSession(a1);
  assert.notEqual(file, oldFile);
  assert.equal(s.file, file);
  assert.notEqual(s.sessionId, oldId);
  assert.equal(s.header().parentSession, oldFile);
  const written = lines(storage.text(file));
  assert.deepEqual(written.slice(1, 3).map((e) => e.id), [u1, a1]);
  assert.equal(s.label(u1), 'start');
  const mem = Session.inMemory('/w');
  const m1 = mem.appendMessage(user('x'));
  assert.equal(mem.createBranchedSession(m1), undefined);
});

test('every append kind writes the agent entry shape', () => {
  const s = Session.inMemory('/w');
  const m = s.appendMessage(user('x'));
  const ids = {
    compaction: s.appendCompaction({ summary: 'S', shortSummary: 's', firstKeptEntryId: m, tokensBefore: 1234, details: { a: 1 }, fromExtension: true, preserveData: { k: [1] } }),
    custom_message: s.appendCustomMessageEntry('note', [{ type: 'text', text: 'n' }], true, { d: 1 }),
    mode_change: s.appendModeChange('plan', { step: 2 }),
    ttsr_injection: s.appendTtsrInjection(['r1', 'r2']),
    mcp_tool_selection: s.appendMcpToolSelection(['grep']),
    thinking_level_change: s.appendThinkingLevelChange(null),
    custom: s.appendCustomEntry('state', [1, 'two']),
    service_tier_change: s.appendServiceTierChange('priority'),
    context_change: s.appendContextChange('prod', 'acme', 'ns'),
    session_init: s.appendEntry({ type: 'session_init', systemPrompt: 'p', task: 't', tools: ['read'] }),
  };
  for (const [type, id] of Object.entries(ids)) assert.equal(s.entry(id).type, type);
  const pick = (id, ...keys) => Object.fromEntries(keys.map((k) => [k, s.entry(id)[k]]));
  assert.deepEqual(pick(ids.compaction, 'summary', 'shortSummary', 'firstKeptEntryId', 'tokensBefore', 'details', 'fromExtension', 'preserveData'), {
    summary: 'S',
    shortSummary: 's',
    firstKeptEntryId: m,
    tokensBefore: 1234,
    details: { a: 1 },
    fromExtension: true,
    preserveData: { k: [1] },
  });
  assert.deepEqual(pick(ids.custom_message, 'customType', 'content', 'display', 'details', 'attribution'), {
    customType: 'note',
    content: [{ type: 'text', text: 'n' }],
    display: true,
    details: { d: 1 },
    attribution: 'agent',
  });
  assert.equal(s.entry(ids.thinking_level_change).thinkingLevel, null);

  const ctx = s.context();
  assert.deepEqual(ctx.messages.map((x) => x.role), ['compactionSummary', 'user', 'custom']);
  assert.equal(ctx.messages[0].tokensBefore, 1234);
  assert.deepEqual(ctx.injectedTtsrRules, ['r1', 'r2']);
  assert.deepEqual(ctx.selectedMCPToolNames, ['grep']);
  assert.equal(ctx.hasPersistedMCPToolSelection, true);
  assert.equal(ctx.mode, 'plan');
  assert.deepEqual(ctx.modeData, { step: 2 });
  assert.equal(ctx.serviceTier, 'priority');
  assert.equal(ctx.activeContextName, 'prod');
  assert.equal(ctx.activeContextTenant, 'acme');
  assert.equal(ctx.thinkingLevel, 'off');
});

test('large images go to the blob store and come back in entries and context', () => {
  const storage = new MemoryJsStorage();
  const s = Session.create(storage, { agentDir: '/agent', cwd: '/w' });
  const data = Buffer.alloc(3000, 7).toString('base64');
  const msg = { role: 'user', content: [{ type: 'image', data, mimeType: 'image/png' }], timestamp: 1 };
  const id = s.appendMessage(msg);
  s.appendMessage(assistant('nice'));
  const line = lines(storage.text(s.file))[1];
  assert.match(line.message.content[0].data, /^blob:sha256:[0-9a-f]{64}$/);
  const hash = line.message.content[0].data.slice('blob:sha256:'.length);
  assert.equal(Buffer.from(storage.files.get(`/agent/blobs/${hash}`)).toString('base64'), data);
  const r = Session.open(storage, s.file, { agentDir: '/agent', readOnly: true });
  assert.equal(r.entry(id).message.content[0].data, data);
  assert.equal(r.context().messages[0].content[0].data, data);
  assert.deepEqual(r.warnings(), []);

  // A viewer without the blobs keeps the reference and says so.
  const viewer = Session.fromText(storage.text(s.file));
  assert.equal(viewer.entry(id).message.content[0].data, `blob:sha256:${hash}`);
  assert.deepEqual(viewer.report().missingBlobs, [hash]);
  // With the storage (fromText options), it resolves them.
  const withBlobs = Session.fromText(storage.text(s.file), { agentDir: '/agent', storage });
  assert.equal(withBlobs.entry(id).message.content[0].data, data);
});

test('optional blob hooks replace the default blob files', () => {
  const storage = new MemoryJsStorage();
  const blobs = new Map();
  storage.blobPut = (dir, hash, bytes) => blobs.set(`${dir}|${hash}`, bytes);
  storage.blobGet = (dir, hash) => blobs.get(`${dir}|${hash}`) ?? null;
  const s = Session.create(storage, { agentDir: '/agent', cwd: '/w' });
  const data = Buffer.alloc(2000, 1).toString('base64');
  const id = s.appendMessage({ role: 'user', content: [{ type: 'image', data, mimeType: 'image/png' }], timestamp: 1 });
  s.appendMessage(assistant('ok'));
  assert.equal(blobs.size, 1);
  assert.equal([...blobs.keys()][0].split('|')[0], '/agent/blobs');
  assert.equal([...storage.files.keys()].some((k) => k.startsWith('/agent/blobs')), false);
  assert.equal(Session.open(storage, s.file, { agentDir: '/agent', readOnly: true }).entry(id).message.content[0].data, data);
});

test('readInto: a session is read straight into wasm memory, whole even when it grew after stat', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-session-js-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const base = fsStorage();
  const agentDir = `${root}/agent`;
  const s = Session.create(base, { agentDir, cwd: '/work/proj' });
  for (let i = 0; i < 50; i++) {
    s.appendMessage(user(`question ${i} ${'é'.repeat(i)}`));
    s.appendMessage(assistant(`answer ${i}`));
  }
  s.flush();
  const file = s.file;
  s.free();
  let calls = 0;
  const direct = {
    ...base,
    // Under-report the size, as if the file grew between stat and read.
    stat: (p) => ({ ...base.stat(p), size: Math.max(0, base.stat(p).size - 700) }),
    readInto(p, dest, position) {
      calls++;
      return base.readInto(p, dest, position);
    },
  };
  const { readInto, ...plain } = base;
  assert.equal(typeof readInto, 'function');
  const a = Session.open(direct, file, { agentDir, readOnly: true });
  const b = Session.open(plain, file, { agentDir, readOnly: true });
  assert.ok(calls >= 2, `readInto called ${calls} times`);
  assert.equal(a.entries().length, 100);
  assert.equal(a.contextJson(), b.contextJson());
  assert.equal(a.toJsonl(), fs.readFileSync(file, 'utf8'));
  a.free();
  b.free();

  const liar = { ...base, readInto: () => 1e12 };
  assert.throws(() => Session.open(liar, file, { agentDir, readOnly: true }), (e) => e.kind === 'storage' && /readInto/.test(e.message));
});

test('fromText of a JS string: surrogate pairs across encoding chunks survive, lone surrogates become U+FFFD', () => {
  const CHUNK = 1 << 20; // UTF-16 units per encodeInto call in the package
  const header = JSON.stringify({ type: 'session', version: 3, id: 'chunky', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' });
  const head = `${header}\n{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"`;
  // The emoji's high surrogate is the last unit of the first chunk.
  const text = `${head}${'a'.repeat(CHUNK - 1 - head.length)}😀 tail","timestamp":1}}\n`
    + '{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"lone \uD800 here","timestamp":2}}\n';
  assert.equal(text.charCodeAt(CHUNK - 1), 0xd83d);
  const fromString = Session.fromText(text);
  const fromBytes = Session.fromText(new TextEncoder().encode(text));
  const context = fromString.contextJson();
  assert.equal(context, fromBytes.contextJson());
  assert.ok(context.includes('a😀 tail'));
  assert.ok(context.includes('lone \uFFFD here'));
  assert.equal(fromString.entries().length, 2);
  fromString.free();
  fromBytes.free();
});

test('Session.open reports parse progress from 0 to the total, never backwards', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-session-js-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const lines = [JSON.stringify({ type: 'session', version: 3, id: 'p', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' })];
  let parent = null;
  for (let i = 0; i < 20000; i++) {
    const id = i.toString(16).padStart(8, '0');
    lines.push(JSON.stringify({ type: 'message', id, parentId: parent, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: `m${i}`, timestamp: i } }));
    parent = id;
  }
  const current = path.join(root, 'current.jsonl');
  fs.writeFileSync(current, lines.join('\n') + '\n');
  const v1 = path.join(root, 'v1.jsonl');
  fs.copyFileSync(new URL('../fixtures/real/large-session.jsonl', import.meta.url), v1);
  for (const file of [current, v1]) {
    const seen = [];
    const s = Session.open(fsStorage(), file, { readOnly: true, onProgress: (done, total) => seen.push([done, total]) });
    const total = fs.statSync(file).size;
    assert.deepEqual(seen[0], [0, total], file);
    assert.deepEqual(seen.at(-1), [total, total], file);
    assert.ok(seen.length >= 3, `${seen.length} progress reports for ${file}`);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i][0] >= seen[i - 1][0], 'monotonic');
    s.free();
  }
  // A throwing callback does not abort the load.
  const s = Session.open(fsStorage(), current, { readOnly: true, onProgress: () => { throw new Error('boom'); } });
  assert.equal(s.entries().length, 20000);
  s.free();
});

test('displayTitle: the header title, else the first user message, capped; null without either', () => {
  const s = Session.inMemory('/w');
  assert.equal(s.displayTitle(), null);
  s.appendMessage(assistant('hello'));
  assert.equal(s.displayTitle(), null, 'an assistant message is no title');
  s.appendMessage(user(`  fix the parser\nthen ${'x'.repeat(100)}`));
  assert.equal(s.displayTitle(), 'fix the parser');
  assert.equal(s.displayTitle(6), 'fix t…');
  s.setSessionName('Parser work', 'user');
  assert.equal(s.displayTitle(), 'Parser work');
  assert.throws(() => s.displayTitle(0), (e) => e.kind === 'invalidInput' && /maxChars/.test(e.message));
});

test('Session.open without agentDir takes the one the file\'s place names; elsewhere, writing images says to pass one', () => {
  // historical-compact holds images inline: its first write keeps them in the blob store.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-agentdir-'));
  const inLayout = path.join(root, 'agent', 'sessions', '--w--', 's.jsonl');
  fs.mkdirSync(path.dirname(inLayout), { recursive: true });
  fs.copyFileSync(fixturePath('historical-compact'), inLayout);
  const s = Session.open(fsStorage(), inLayout);
  s.appendMessage(user('after the images'));
  s.close();
  assert.ok(fs.readdirSync(path.join(root, 'agent', 'blobs')).length > 0, 'the images are in <agentDir>/blobs');
  assert.equal(fs.existsSync('blob-referrers.jsonl'), false, 'nothing written relative to the process');

  const loose = path.join(root, 'loose', 's.jsonl');
  fs.mkdirSync(path.dirname(loose), { recursive: true });
  fs.copyFileSync(fixturePath('historical-compact'), loose);
  const before = fs.readFileSync(loose);
  const l = Session.open(fsStorage(), loose);
  assert.throws(() => l.appendMessage(user('x')), { kind: 'persistence', message: /opened without one \(pass agentDir\)/ });
  assert.throws(() => l.close(), { kind: 'persistence' }, 'the failure stays latched');
  assert.equal(fs.existsSync(`${loose}.lock`), false, 'close released the lock all the same');
  assert.deepEqual(fs.readFileSync(loose), before, 'the file is as it was');
  assert.equal(fs.existsSync(path.join(root, 'loose', 'blobs')), false);
  fs.rmSync(root, { recursive: true, force: true });
});
