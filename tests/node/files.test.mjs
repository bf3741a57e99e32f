// A session's files and the agent directory's rules through the package: the files of a
// session, copying and importing them, deleting, where an opened folder's files go, the
// session files and newest cwd of an agent directory, display names, sessions' prompts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MemoryJsStorage, sessionFiles, copySession, importSessionText, deleteSession, sessionFilePaths,
  newestSessionCwd, sessionDisplayName, openedFolderTargets, sessionPrompts,
} from './helpers.mjs';

const enc = new TextEncoder();
const HASH = 'a'.repeat(64);
const FILE = '/a/sessions/--w--/2026-01-01T00-00-00-000Z_s1.jsonl';
const header = (id, cwd, extra = '') => `{"type":"session","version":3,"id":"${id}","timestamp":"2026-01-01T00:00:00.000Z"${cwd ? `,"cwd":"${cwd}"` : ''}${extra}}\n`;
const userLine = (id, content, ts) => `{"type":"message","id":"${id}","parentId":null,"timestamp":"2026-01-01T00:00:0${id}.000Z","message":{"role":"user","content":${JSON.stringify(content)}${ts === undefined ? '' : `,"timestamp":${ts}`}}}\n`;

function put(storage, path, text) {
  storage.mkdirAll(path.slice(0, path.lastIndexOf('/')));
  storage.write(path, enc.encode(text));
}

/** `/a`: one session with an artifact, a blob reference (stored) and a lock. */
function agent() {
  const st = new MemoryJsStorage();
  put(st, FILE, `${header('s1', '/w')}{"type":"custom","data":"blob:sha256:${HASH}"}\n`);
  put(st, FILE.replace('.jsonl', '/1.bash.log'), 'out');
  put(st, `${FILE}.lock`, '{}');
  put(st, `/a/blobs/${HASH}`, 'png');
  return st;
}

test('a session is its file, its artifacts and the blobs it references', () => {
  assert.deepEqual(sessionFiles(agent(), '/a', FILE), [FILE, FILE.replace('.jsonl', '/1.bash.log'), `/a/blobs/${HASH}`]);
});

test('copySession copies a session once, at the same place in the other agent directory', () => {
  const from = agent();
  const to = new MemoryJsStorage();
  const path = FILE.replace('/a/', '/b/');
  assert.deepEqual(copySession(from, '/a', FILE, to, '/b'), { path, already: false, written: 3 });
  assert.deepEqual(to.read(path), from.read(FILE));
  assert.ok(to.files.has(`/b/blobs/${HASH}`));
  assert.ok(!to.files.has(`${path}.lock`));
  assert.deepEqual(copySession(from, '/a', FILE, to, '/b'), { path, already: true, written: 0 });
});

test('importSessionText files a single session under its cwd and the agent name', () => {
  const st = new MemoryJsStorage();
  const r = importSessionText(st, '/b', header('s9', '/w/p'), 'my download.jsonl');
  assert.deepEqual(r, { path: '/b/sessions/--w-p--/2026-01-01T00-00-00-000Z_s9.jsonl', already: false, written: 1 });
  assert.equal(importSessionText(st, '/b', header('s9', '/w/p'), 'other.jsonl').already, true);
  assert.equal(importSessionText(st, '/b', 'not a session\n', 'a b.jsonl').path, '/b/sessions/--unknown--/a_b.jsonl');
});

test('deleteSession removes the file, its artifacts and a stale lock, and refuses other files', () => {
  const st = agent();
  st.mtimes.set(`${FILE}.lock`, 0); // torn and old: a crash leftover
  deleteSession(st, '/a', FILE);
  assert.deepEqual([...st.files.keys()], [`/a/blobs/${HASH}`]);
  assert.throws(() => deleteSession(st, '/a', `/a/blobs/${HASH}`), (e) => e.kind === 'invalidInput' && /not a session file/.test(e.message));
});

test('the session files of an agent directory and the cwd of the newest one', () => {
  const st = agent();
  assert.equal(newestSessionCwd(st, '/elsewhere'), undefined);
  put(st, '/a/sessions/--v--/2_x.jsonl', header('s2', '/v'));
  put(st, '/a/sessions/--v--/notes.txt', 'no');
  assert.deepEqual(sessionFilePaths(st, '/a'), ['/a/sessions/--v--/2_x.jsonl', FILE]);
  st.mtimes.set('/a/sessions/--v--/2_x.jsonl', 1);
  st.mtimes.set(FILE, 2);
  assert.equal(newestSessionCwd(st, '/a'), '/w');
});

test('a listed session is shown by its name, title, first message or id', () => {
  assert.equal(sessionDisplayName({ id: 'i', name: 'recent  name', title: 't' }), 'recent name');
  assert.equal(sessionDisplayName({ id: 'i', title: 'a\ntitle', firstMessage: 'm' }), 'a title');
  assert.equal(sessionDisplayName({ id: 'i', firstMessage: ' fix  it ' }), 'fix it');
  assert.equal(sessionDisplayName({ id: 'i', firstMessage: '(no messages)' }), 'i');
});

test('openedFolderTargets places an agent directory, a project directory and loose files', () => {
  assert.deepEqual(
    openedFolderTargets('/o', 'agent', [{ rel: 'sessions/--w--/a_b.jsonl' }, { rel: 'blobs/h' }, { rel: 'history.db' }, { rel: '.git/config' }]),
    [['/o/sessions/--w--/a_b.jsonl'], ['/o/blobs/h'], [], []],
  );
  assert.deepEqual(openedFolderTargets('/o', '--w--', [{ rel: 'a_b.jsonl' }]), [['/o/sessions/--w--/a_b.jsonl']]);
  const loose = [{ rel: 'x/s.jsonl', start: enc.encode(header('s', '/p')) }, { rel: 'x/s/1.md' }, { rel: 'readme.txt' }];
  assert.deepEqual(openedFolderTargets('/o', 'downloads', loose), [['/o/sessions/--p--/s.jsonl'], ['/o/sessions/--p--/s/1.md'], []]);
});

test('sessionPrompts gives the user prompts of sessions oldest first, with progress', () => {
  const st = new MemoryJsStorage();
  put(st, '/s/a.jsonl', header('a', '/a') + userLine(2, 'second') + userLine(3, [{ type: 'text', text: '  ' }]));
  put(st, '/s/b.jsonl', header('b', null) + userLine(1, [{ type: 'image' }, { type: 'text', text: 'first' }]));
  const steps = [];
  const found = sessionPrompts(st, [{ path: '/s/a.jsonl' }, { path: '/s/b.jsonl', cwd: '/listed' }, { path: '/s/gone.jsonl' }], (d, t) => steps.push([d, t]));
  assert.deepEqual(found.prompts, [
    { text: 'first', cwd: '/listed', timeMs: Date.parse('2026-01-01T00:00:01.000Z') },
    { text: 'second', cwd: '/a', timeMs: Date.parse('2026-01-01T00:00:02.000Z') },
  ]);
  assert.equal(found.unreadable.length, 1);
  assert.match(found.unreadable[0], /^gone\.jsonl: /);
  assert.deepEqual(steps, [[0, 3], [1, 3], [2, 3]]);
});

test('versionOnDisk is the version the file was written in, before any migration', async () => {
  const { Session } = await import('./helpers.mjs');
  const v1 = Session.fromText('{"type":"session","id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n');
  assert.equal(v1.versionOnDisk, 1);
  assert.equal(v1.header().version, 3);
  assert.equal(Session.fromText(header('y', '/w')).versionOnDisk, 3);
});
