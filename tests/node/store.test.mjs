// Agent-directory functions over a JS storage: listing, picker search, resume (with the
// ambiguity details), continue, internal URLs, blobs, fork/move, GC; plus load progress.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Session, MemoryJsStorage, user, assistant, fixture,
  recentSessions, listSessions, searchSessions, resolveResume, continueRecent,
  resolveUrl, blobPut, blobGet, forkSession, moveSession, collectGarbage, sessionDirForCwd,
  buildSessionContextJson, SessionSearch,
} from './helpers.mjs';

const buildSessionContextJsonBytes = (b) => buildSessionContextJson(b);
const buildSessionContextJsonText = (t) => buildSessionContextJson(t);

const agentDir = '/home/me/.xcsh/agent';

function project(storage, cwd, text) {
  const s = Session.create(storage, { agentDir, cwd });
  s.appendMessage(user(text));
  s.appendMessage(assistant('ok'));
  return s;
}

test('recent, list and search see the sessions of a project and of all projects', () => {
  const storage = new MemoryJsStorage();
  const a = project(storage, '/work/a', 'fix the parser');
  project(storage, '/work/b', 'write docs');
  const recent = recentSessions(storage, { agentDir, cwd: '/work/a' });
  assert.deepEqual(recent.map((r) => r.id), [a.sessionId]);
  assert.equal(recent[0].name, 'fix the parser');
  assert.equal(listSessions(storage, { agentDir }).length, 2);
  assert.equal(listSessions(storage, { agentDir, cwd: '/work/b' })[0].firstMessage, 'write docs');
  const found = searchSessions(storage, { agentDir, query: 'parser' });
  assert.deepEqual(found.map((f) => f.id), [a.sessionId]);
  assert.ok(found[0].score > 0);
  assert.equal(sessionDirForCwd(agentDir, '/work/a'), `${agentDir}/sessions/--work-a--`);
});

test('a search a step at a time: progress, the same hits as searchSessions, and a stop whenever', async () => {
  const storage = new MemoryJsStorage();
  const pad = 'x'.repeat(4000);
  for (let n = 0; n < 3; n++) {
    const s = Session.create(storage, { agentDir, cwd: `/work/p${n}` });
    s.appendMessage(user(`question ${n}`));
    for (let i = 0; i < 50; i++) s.appendMessage(assistant(`${pad} ${i}`));
    s.appendMessage(assistant(`the closing word ${n}`));
  }
  const search = new SessionSearch(storage, { agentDir, query: 'closing' });
  assert.deepEqual(search.progress, { filesDone: 0, files: 3, bytesDone: 0, bytes: search.progress.bytes, hits: 0 });
  const seen = [];
  while (!search.done) {
    seen.push(search.step(16 * 1024));
    await new Promise((r) => setImmediate(r)); // the event loop runs between steps
  }
  assert.ok(seen.length > 3, `${seen.length} steps`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].bytesDone >= seen[i - 1].bytesDone);
  const last = seen.at(-1);
  assert.equal(last.filesDone, 3);
  assert.equal(last.bytesDone, last.bytes);
  assert.equal(last.hits, 3);
  const hits = search.hits();
  assert.deepEqual(hits, searchSessions(storage, { agentDir, query: 'closing' }));
  assert.ok(hits.every((h) => h.score > 0 && !('allMessagesText' in h)));

  // Stopped after one small step: some searched, the hits so far kept.
  const stopped = new SessionSearch(storage, { agentDir, query: 'closing' });
  const p = stopped.step(1);
  assert.ok(!stopped.done && p.bytesDone < p.bytes);
  assert.equal(stopped.hits().length, p.hits);
  stopped.free();

  assert.throws(() => new SessionSearch(storage, { agentDir }), /query/);
  assert.throws(() => search.step(-1), TypeError);
});

test('listSessions with a limit is the head of the listing (a first screen)', () => {
  const storage = new MemoryJsStorage();
  for (const cwd of ['/work/a', '/work/b', '/work/a']) project(storage, cwd, `in ${cwd}`);
  const all = listSessions(storage, { agentDir });
  assert.equal(all.length, 3);
  for (const limit of [0, 1, 2, 3, 5]) {
    assert.deepEqual(listSessions(storage, { agentDir, limit }), all.slice(0, limit));
  }
  const a = listSessions(storage, { agentDir, cwd: '/work/a' });
  assert.deepEqual(listSessions(storage, { agentDir, cwd: '/work/a', limit: 1 }), a.slice(0, 1));
  const dir = sessionDirForCwd(agentDir, '/work/b');
  assert.deepEqual(listSessions(storage, { sessionDir: dir, limit: 1 }), listSessions(storage, { sessionDir: dir }));
  assert.throws(() => listSessions(storage, { agentDir, limit: -1 }), /limit/);
});

test('resume reports ambiguity with candidates and refuses another project without confirm', () => {
  const storage = new MemoryJsStorage();
  const a = project(storage, '/work/a', 'one');
  const b = project(storage, '/work/a', 'two');
  let shared = 0;
  while (a.sessionId[shared] === b.sessionId[shared]) shared++;
  const prefix = a.sessionId.slice(0, shared);
  assert.throws(() => resolveResume(storage, { agentDir, cwd: '/work/a', arg: prefix }), (e) => {
    assert.equal(e.kind, 'ambiguous');
    assert.equal(e.details.length, 2);
    return true;
  });
  assert.equal(resolveResume(storage, { agentDir, cwd: '/work/a', arg: a.sessionId }).path, a.file);
  assert.throws(() => resolveResume(storage, { agentDir, cwd: '/work/z', arg: a.sessionId }), (e) => e.kind === 'otherProject'
    && e.message === `Session "${a.sessionId}" is in another project (/work/a).`);
  const forked = resolveResume(storage, { agentDir, cwd: '/work/z', arg: a.sessionId, confirm: true });
  assert.ok(forked.path.startsWith(`${agentDir}/sessions/--work-z--/`));
  const cont = continueRecent(storage, { agentDir, cwd: '/work/a', terminal: 'pts-7' });
  assert.equal(cont.source, 'mostRecent');
  assert.equal(continueRecent(storage, { agentDir, cwd: '/work/a', terminal: 'pts-7' }).source, 'breadcrumb');
});

test('urls, blobs, fork, move and gc', () => {
  const storage = new MemoryJsStorage();
  const s = project(storage, '/work/a', 'x');
  const dir = s.file.replace(/\.jsonl$/, '');
  storage.mkdirAll(dir);
  storage.write(`${dir}/0.bash.log`, new TextEncoder().encode('full output'));
  s.close(); // forkSession opens the file for writing itself
  assert.deepEqual(resolveUrl(storage, s.file, 'artifact://0'), { content: 'full output', mimeType: 'text/plain', size: 11 });
  assert.throws(() => resolveUrl(storage, s.file, 'artifact://x'), (e) => e.message === 'artifact:// ID must be numeric, got: x' && e.kind === 'invalidInput');
  const put = blobPut(storage, agentDir, new Uint8Array([1, 2, 3]));
  assert.deepEqual([...blobGet(storage, agentDir, put.ref)], [1, 2, 3]);
  const fork = forkSession(storage, agentDir, s.file);
  assert.equal(resolveUrl(storage, fork.newFile, 'artifact://0').content, 'full output');
  const moved = moveSession(storage, agentDir, fork.newFile, '/work/moved');
  assert.ok(moved.newFile.includes('--work-moved--'));
  const gc = collectGarbage(storage, agentDir);
  assert.equal(gc.dryRun, true);
  assert.deepEqual(gc.keptRecent, [put.hash]);
  // A recorded outside session that is gone, its blobs unknown: refused until forgotten.
  storage.write(`${agentDir}/blob-referrers.jsonl`, new TextEncoder().encode('{"path":"/gone/s.jsonl","notedMs":1}\n'));
  assert.throws(() => collectGarbage(storage, agentDir, false), (e) => e.kind === 'storage' && e.message.includes('--forget-missing'));
  const forgot = collectGarbage(storage, agentDir, false, true);
  assert.deepEqual([forgot.missing, forgot.forgotten], [['/gone/s.jsonl'], ['/gone/s.jsonl']]);
  assert.deepEqual(collectGarbage(storage, agentDir, false).missing, []);
});

test('fromText reports load progress from 0 to the total', () => {
  const text = fixture('large-session');
  const seen = [];
  const s = Session.fromText(text, { onProgress: (done, total) => seen.push([done, total]) });
  const total = new TextEncoder().encode(text).length;
  assert.ok(s.entries().length > 1000);
  assert.deepEqual(seen[0], [0, total]);
  assert.deepEqual(seen.at(-1), [total, total]);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i][0] >= seen[i - 1][0], 'monotonic');
  assert.deepEqual(s.contextEntryIds().length, s.context().messages.length);
});

test('session text may be given as UTF-8 bytes', () => {
  const text = fixture('large-session');
  const bytes = new TextEncoder().encode(text);
  assert.equal(buildSessionContextJsonBytes(bytes), buildSessionContextJsonText(text));
  assert.equal(Session.fromText(bytes).entries().length, Session.fromText(text).entries().length);
  assert.throws(() => Session.fromText(42), (e) => e.kind === 'invalidInput');
});
