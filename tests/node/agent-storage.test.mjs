// `xcsh-session/agent/session-storage`: the agent's FileSessionStorage and
// MemorySessionStorage, taken by the drop-in's static constructors and listing functions
// as the agent's `storage` argument; and deleting a session file wherever it is, as the
// agent's `deleteSessionWithArtifacts` does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  SessionManager, deleteSessionWithArtifacts, findMostRecentSession, getRecentSessions, resolveResumableSession,
} from '../../pkg/agent.mjs';
import { FileSessionStorage, MemorySessionStorage } from '../../pkg/agent-session-storage.mjs';
import { memoryStorage } from '../../pkg/memory-storage.mjs';
import { agentHome } from './helpers.mjs';

const assistant = (text) => ({
  role: 'assistant', content: [{ type: 'text', text }], provider: 'p', model: 'm', timestamp: 2,
});

/** Every file under `dir` (none when it is missing). */
function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

test('a MemorySessionStorage manager creates, appends, lists and reopens in memory only', async (t) => {
  const agentDir = agentHome(t, 'xcsh-memory-');
  const cwd = path.join(agentDir, 'project');
  const storage = new MemorySessionStorage();
  const s = SessionManager.create(cwd, undefined, storage);
  s.appendMessage({ role: 'user', content: 'remember me', timestamp: 1 });
  s.appendMessage(assistant('done'));
  await s.flush();
  const file = s.getSessionFile();
  const dir = s.getSessionDir();
  assert.ok(storage.existsSync(file));
  assert.match(await storage.readText(file), /remember me/);

  const [info] = await SessionManager.list(cwd, undefined, storage);
  assert.equal(info.path, file);
  assert.equal(info.messageCount, 2);
  assert.ok(info.modified instanceof Date);
  assert.deepEqual((await SessionManager.listAll(storage)).map((i) => i.path), [file]);
  assert.equal((await getRecentSessions(dir, 3, storage))[0].name, 'remember me');
  assert.equal(await findMostRecentSession(dir, storage), file);
  assert.equal((await resolveResumableSession(s.getSessionId().slice(0, 8), cwd, undefined, storage)).session.path, file);
  await s.close();

  const reopened = await SessionManager.open(file, undefined, storage);
  assert.equal(reopened.buildSessionContext().messages.length, 2);
  reopened.appendMessage({ role: 'user', content: 'again', timestamp: 3 });
  await reopened.close();
  const continued = await SessionManager.continueRecent(cwd, undefined, storage);
  assert.equal(continued.getSessionFile(), file);
  assert.equal(continued.getEntries().length, 3);
  const forked = await SessionManager.forkFrom(file, cwd, undefined, storage);
  assert.ok(storage.existsSync(forked.getSessionFile()));
  await forked.newSession();
  assert.ok(forked.getSessionFile().startsWith(dir));

  // The filesystem saw none of it; the default storage does not see it either.
  assert.deepEqual(filesUnder(path.join(agentDir, 'sessions')), []);
  assert.deepEqual(await SessionManager.list(cwd, dir), []);
  assert.equal(SessionManager.inMemory(cwd, storage).isPersisted(), false);
});

test('FileSessionStorage is the filesystem, as the default', async (t) => {
  const agentDir = agentHome(t, 'xcsh-filestorage-');
  const cwd = path.join(agentDir, 'project');
  const storage = new FileSessionStorage();
  const s = SessionManager.create(cwd, undefined, storage);
  s.appendMessage({ role: 'user', content: 'on disk', timestamp: 1 });
  s.appendMessage(assistant('yes'));
  await s.close();
  assert.ok(fs.existsSync(s.getSessionFile()));
  assert.deepEqual((await SessionManager.list(cwd)).map((i) => i.path), [s.getSessionFile()]);
  assert.deepEqual((await SessionManager.list(cwd, undefined, storage)).map((i) => i.path), [s.getSessionFile()]);
});

test('the storages have the agent SessionStorage methods', async () => {
  const storage = new MemorySessionStorage();
  storage.writeTextSync('/m/d/a.jsonl', 'one\n');
  await storage.writeText('/m/d/b.txt', 'two');
  storage.ensureDirSync('/m/d/sub');
  assert.deepEqual(storage.listFilesSync('/m/d', '*.jsonl'), ['/m/d/a.jsonl']);
  assert.deepEqual(storage.listFilesSync('/m/nowhere', '*'), []);
  const stat = storage.statSync('/m/d/a.jsonl');
  assert.equal(stat.size, 4);
  assert.ok(stat.mtime instanceof Date && stat.mtime.getTime() === stat.mtimeMs);
  assert.equal(await storage.readTextPrefix('/m/d/a.jsonl', 2), 'on');
  const writer = storage.openWriter('/m/d/a.jsonl');
  await writer.writeLine('two\n');
  await writer.fsync();
  await writer.close();
  await assert.rejects(writer.writeLine('x'), /Writer closed/);
  assert.equal(await storage.readText('/m/d/a.jsonl'), 'one\ntwo\n');
  const truncating = storage.openWriter('/m/d/a.jsonl', { flags: 'w' });
  assert.equal(await storage.readText('/m/d/a.jsonl'), '');
  assert.equal(truncating.getError(), undefined);
  await storage.rename('/m/d/missing', '/m/d/other');
  await storage.rename('/m/d/b.txt', '/m/d/c.txt');
  assert.equal(await storage.exists('/m/d/b.txt'), false);
  await storage.unlink('/m/d/c.txt');
  assert.equal(storage.existsSync('/m/d/c.txt'), false);
});

test('another SessionStorage is refused by name; a storage of the package is taken as it is', async (t) => {
  const agentDir = agentHome(t, 'xcsh-otherstorage-');
  const cwd = path.join(agentDir, 'project');
  class MySessionStorage {
    ensureDirSync() {} existsSync() { return false; } writeTextSync() {} statSync() {} listFilesSync() { return []; }
    async exists() { return false; } async readText() { return ''; } async readTextPrefix() { return ''; }
    async writeText() {} async rename() {} async unlink() {} openWriter() {}
  }
  const refused = (e) => e.kind === 'invalidInput'
    && /FileSessionStorage or MemorySessionStorage/.test(e.message) && /MySessionStorage/.test(e.message);
  const other = new MySessionStorage();
  assert.throws(() => SessionManager.create(cwd, undefined, other), refused);
  assert.throws(() => SessionManager.inMemory(cwd, other), refused);
  await assert.rejects(SessionManager.list(cwd, undefined, other), refused);
  await assert.rejects(SessionManager.listAll(other), refused);
  await assert.rejects(SessionManager.open(path.join(cwd, 'x.jsonl'), undefined, other), refused);
  await assert.rejects(getRecentSessions(cwd, 3, other), refused);

  const own = memoryStorage();
  const s = SessionManager.create(cwd, '/own/sessions', own);
  s.appendMessage({ role: 'user', content: 'in my storage', timestamp: 1 });
  s.appendMessage(assistant('ok'));
  await s.close();
  assert.deepEqual((await SessionManager.list(cwd, '/own/sessions', own)).map((i) => i.firstMessage), ['in my storage']);
});

test('deleteSessionWithArtifacts deletes a session file wherever it is, and only a session file', async (t) => {
  agentHome(t, 'xcsh-delete-');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-delete-elsewhere-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const session = (name) => {
    const file = path.join(dir, `${name}.jsonl`);
    fs.writeFileSync(file, `${JSON.stringify({ type: 'session', id: name, timestamp: '2026-01-01T00:00:00Z', cwd: dir })}\n`);
    fs.mkdirSync(file.slice(0, -'.jsonl'.length));
    fs.writeFileSync(path.join(file.slice(0, -'.jsonl'.length), 'artifact.txt'), 'payload');
    return file;
  };
  const a = session('picked');
  await deleteSessionWithArtifacts(a);
  assert.equal(fs.existsSync(a) || fs.existsSync(a.slice(0, -6)), false);
  const b = session('other');
  assert.equal(await new FileSessionStorage().deleteSessionWithArtifacts(b), undefined);
  assert.equal(fs.existsSync(b) || fs.existsSync(b.slice(0, -6)), false);

  // Not a session: a .jsonl without a session header, or any other file, stays.
  const notes = path.join(dir, 'notes.jsonl');
  fs.writeFileSync(notes, '{"type":"message"}\n');
  await assert.rejects(deleteSessionWithArtifacts(notes), (e) => e.kind === 'invalidInput' && /not a session file/.test(e.message));
  assert.ok(fs.existsSync(notes));
  // Missing: rejected, as the agent's unlink.
  await assert.rejects(deleteSessionWithArtifacts(path.join(dir, 'gone.jsonl')), (e) => e.kind === 'notFound');
});
