// `xcsh-session/agent`: the agent's SessionManager over the package, used the way the agent
// uses it (its own session tests check these): where new sessions go, opening a missing
// file, continuing the last non-empty session, switching back to a session that is still
// open, forking from another project, statistics, labels and moving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SessionManager, getAgentDir } from '../../pkg/agent.mjs';
import { agentHome } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A fresh agent dir (PI_CODING_AGENT_DIR) and a project dir for one test. */
function setup(t) {
  const root = agentHome(t, 'xcsh-manager-');
  const cwd = path.join(root, 'project');
  fs.mkdirSync(cwd);
  return { root, cwd };
}

const assistantMessage = (text) => ({
  role: 'assistant', content: [{ type: 'text', text }], api: 'anthropic-messages', provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: 'stop', timestamp: Date.now(),
});

test('a new session goes to the cwd directory of the agent dir and is written with the first reply', async (t) => {
  const { cwd } = setup(t);
  const session = SessionManager.create(cwd);
  assert.equal(getAgentDir(), process.env.PI_CODING_AGENT_DIR);
  assert.equal(session.getCwd(), cwd);
  assert.equal(session.getSessionDir(), SessionManager.getDefaultSessionDir(cwd));
  assert.ok(session.getSessionDir().startsWith(path.join(getAgentDir(), 'sessions')));
  session.appendMessage({ role: 'user', content: 'hello', timestamp: Date.now() });
  const file = session.getSessionFile();
  assert.equal(path.dirname(file), session.getSessionDir());
  assert.equal(fs.existsSync(file), false, 'not before the first reply');
  session.appendMessage(assistantMessage('hi'));
  await session.flush();
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines[0].type, 'session');
  assert.equal(lines[0].id, session.getSessionId());
  assert.equal(session.getArtifactsDir(), file.slice(0, -6));
  assert.deepEqual(session.buildSessionContext().messages.map((m) => m.role), ['user', 'assistant']);
  await session.close();
});

test('opening a path that does not exist writes a header-only file at once', async (t) => {
  const { root } = setup(t);
  const file = path.join(root, 'explicit', 'chosen.jsonl');
  fs.mkdirSync(path.dirname(file));
  const session = await SessionManager.open(file);
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  assert.equal(lines.length, 1);
  assert.equal(JSON.parse(lines[0]).type, 'session');
  assert.equal(session.getSessionFile(), file);
  assert.equal(session.getSessionDir(), path.dirname(file));
  await session.close();
});

test('the last non-empty session stays resumable after starting a fresh one', async (t) => {
  const { cwd } = setup(t);
  const session = SessionManager.create(cwd);
  session.appendMessage({ role: 'user', content: 'hello', timestamp: Date.now() - 1 });
  session.appendMessage(assistantMessage('hi'));
  await session.flush();
  const previous = session.getSessionFile();
  const fresh = await session.newSession();
  assert.ok(fresh && fresh !== previous);
  assert.equal(fs.existsSync(fresh), false);
  const resumed = await SessionManager.continueRecent(cwd);
  assert.equal(resumed.getSessionFile(), previous);
  // Explicit directory: its newest session.
  const inDir = await SessionManager.continueRecent(cwd, path.dirname(previous));
  assert.equal(inDir.getSessionFile(), previous);
  await inDir.close();
  await resumed.close();
  await session.close();
});

test('switching back to a session that is still open reopens it; the older manager is fenced', async (t) => {
  const { cwd } = setup(t);
  const first = SessionManager.create(cwd);
  first.appendMessage({ role: 'user', content: 'one', timestamp: 1 });
  first.appendMessage(assistantMessage('two'));
  const file = first.getSessionFile();
  const again = await SessionManager.open(file);
  again.appendMessage({ role: 'user', content: 'three', timestamp: 3 });
  assert.throws(() => first.appendMessage({ role: 'user', content: 'stale', timestamp: 4 }),
    (e) => e.kind === 'conflict' && /newer open in this process/.test(e.message));
  assert.equal(first.getEntries().length, 2, 'the fenced manager still reads');
  assert.equal(again.getEntries().length, 3);
  await again.close();
});

test('forkFrom copies another session into this project, linked to its parent, title kept', async (t) => {
  const { root, cwd } = setup(t);
  const otherCwd = path.join(root, 'other');
  fs.mkdirSync(otherCwd);
  const source = SessionManager.create(otherCwd);
  source.appendMessage({ role: 'user', content: 'from elsewhere', timestamp: 1 });
  source.appendMessage(assistantMessage('ok'));
  await source.setSessionName('the source', 'user');
  await source.close();
  const fork = await SessionManager.forkFrom(source.getSessionFile(), cwd);
  assert.equal(fork.getSessionDir(), SessionManager.getDefaultSessionDir(cwd));
  assert.equal(fork.getHeader().parentSession, source.getSessionId());
  assert.equal(fork.getSessionName(), 'the source');
  assert.deepEqual(fork.buildSessionContext().messages.map((m) => m.role), ['user', 'assistant']);
  assert.ok(fs.existsSync(fork.getSessionFile()), 'written at once');
  const listed = await SessionManager.list(cwd);
  assert.deepEqual(listed.map((s) => s.path), [fork.getSessionFile()]);
  // An explicit directory lists that directory, whatever the cwd.
  const inDir = await SessionManager.list(cwd, path.dirname(source.getSessionFile()));
  assert.deepEqual(inDir.map((s) => s.path), [source.getSessionFile()]);
  assert.equal((await SessionManager.listAll()).length, 2);
  await fork.close();
});

test('statistics, model roles and labels read as the agent returns them', async (t) => {
  setup(t);
  const s = SessionManager.inMemory('/work');
  const id = s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
  s.appendModelChange('anthropic/claude', 'smol');
  s.appendMessage(assistantMessage('hello'));
  assert.equal(s.getUsageStatistics().input, 1);
  assert.equal(s.getLastModelChangeRole(), 'smol');
  s.appendLabelChange(id, 'start');
  assert.equal(s.getLabel(id), 'start');
  assert.equal(s.getTree()[0].label, 'start');
  s.appendLabelChange(id, undefined);
  assert.equal(s.getLabel(id), undefined);
  assert.equal(s.getLeafEntry().type, 'label');
  assert.equal(s.getBranch().length, 5);
  assert.equal(s.getSessionFile(), undefined);
  assert.equal(s.isPersisted(), false);
});

test('moveTo relocates the file to the new project directory', async (t) => {
  const { root, cwd } = setup(t);
  const s = SessionManager.create(cwd);
  s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
  s.appendMessage(assistantMessage('hello'));
  const before = s.getSessionFile();
  const target = path.join(root, 'moved');
  fs.mkdirSync(target);
  await s.moveTo(target);
  assert.equal(s.getCwd(), target);
  assert.equal(s.getSessionDir(), SessionManager.getDefaultSessionDir(target));
  assert.equal(fs.existsSync(before), false);
  assert.ok(fs.existsSync(s.getSessionFile()));
  assert.equal(s.getHeader().cwd, target);
  await s.close();
});

test('the declarations of xcsh-session/agent type-check', () => {
  const tsc = path.join(ROOT, 'tests', 'node_modules', '.bin', 'tsc');
  execFileSync(tsc, ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext',
    '--skipLibCheck', 'false', path.join(ROOT, 'pkg', 'agent.d.mts')], { stdio: 'pipe' });
});

test('artifacts: allocated, saved and found under the session file, in memory for a session never written', async (t) => {
  const { cwd } = setup(t);
  const memory = SessionManager.inMemory(cwd);
  assert.deepEqual(await memory.allocateArtifactPath('bash'), {});
  assert.equal(await memory.saveArtifact('kept in memory', 'bash'), '0');
  assert.equal(await memory.getArtifactPath('0'), null);
  const s = SessionManager.create(cwd);
  const { id, path: p } = await s.allocateArtifactPath('bash');
  assert.equal(id, '0');
  assert.equal(p, path.join(s.getArtifactsDir(), '0.bash.log'));
  const saved = await s.saveArtifact('tool output', 'python');
  assert.equal(saved, '1');
  assert.equal(fs.readFileSync(await s.getArtifactPath(saved), 'utf8'), 'tool output');
  assert.equal(await s.getArtifactPath('7'), null);
  await s.close();
});

test('a failed switch rolls back with captureState / restoreState', async (t) => {
  const { root, cwd } = setup(t);
  const s = SessionManager.create(cwd);
  s.appendMessage({ role: 'user', content: 'keep me', timestamp: 1 });
  s.appendMessage(assistantMessage('ok'));
  const file = s.getSessionFile();
  const snapshot = s.captureState();
  assert.equal(snapshot.sessionFile, file);
  // The target is a directory: opening it fails, and the manager goes back.
  const bad = path.join(root, 'not-a-file.jsonl');
  fs.mkdirSync(bad);
  await assert.rejects(s.setSessionFile(bad));
  s.restoreState(snapshot);
  assert.equal(s.getSessionFile(), file);
  s.appendMessage({ role: 'user', content: 'after the rollback', timestamp: 2 });
  assert.ok(fs.readFileSync(file, 'utf8').includes('after the rollback'));
  await s.close();
});

test('deleteSessionWithArtifacts removes the file and its artifacts directory', async (t) => {
  const { cwd } = setup(t);
  const { deleteSessionWithArtifacts } = await import('../../pkg/agent.mjs');
  const s = SessionManager.create(cwd);
  s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
  s.appendMessage(assistantMessage('ok'));
  await s.saveArtifact('output', 'bash');
  const file = s.getSessionFile();
  await s.close();
  assert.ok(fs.existsSync(s.getArtifactsDir()));
  await deleteSessionWithArtifacts(file);
  assert.equal(fs.existsSync(file), false);
  assert.equal(fs.existsSync(s.getArtifactsDir()), false);
  await assert.rejects(deleteSessionWithArtifacts('/etc/passwd'), /not a session file/);
});

test('entries are live objects: pruning one in place and rewriteEntries persists it', async (t) => {
  const { cwd } = setup(t);
  const s = SessionManager.create(cwd);
  s.appendMessage({ role: 'user', content: 'run it', timestamp: 1 });
  s.appendMessage({ role: 'toolResult', toolCallId: 't1', toolName: 'bash', content: [{ type: 'text', text: 'a very long output' }], isError: false, timestamp: 2 });
  s.appendMessage(assistantMessage('done'));
  const file = s.getSessionFile();
  const entries = s.getEntries();
  assert.equal(s.getEntries()[1], entries[1], 'the same object each time');
  assert.equal(s.getEntry(entries[1].id), entries[1]);
  assert.equal(s.getEntry('no-such-id'), undefined);
  entries[1].message.content[0].text = '[pruned]';
  assert.ok(fs.readFileSync(file, 'utf8').includes('a very long output'), 'nothing written before');
  await s.rewriteEntries();
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.includes('[pruned]') && !text.includes('a very long output'));
  assert.equal(s.buildSessionContext().messages[1].content[0].text, '[pruned]');
  await s.close();
  const reopened = await SessionManager.open(file);
  assert.equal(reopened.getEntries()[1].message.content[0].text, '[pruned]');
  await reopened.close();
});

test('buildSessionContext over entry objects follows the leaf; findMostRecentSession of a directory', async (t) => {
  const { cwd } = setup(t);
  const { buildSessionContext, findMostRecentSession } = await import('../../pkg/agent.mjs');
  const msg = (id, parentId, role, text) => ({
    type: 'message', id, parentId, timestamp: `2026-01-01T00:00:0${id}.000Z`,
    message: role === 'user' ? { role, content: text, timestamp: 1 } : { role, content: [{ type: 'text', text }], provider: 'p', model: 'm', timestamp: 1 },
  });
  const entries = [msg('1', null, 'user', 'start'), msg('2', '1', 'assistant', 'reply'), msg('3', '2', 'user', 'branch A'), msg('4', '2', 'user', 'branch B')];
  assert.deepEqual(buildSessionContext(entries).messages.map((m) => m.content), ['start', [{ type: 'text', text: 'reply' }], 'branch B']);
  assert.equal(buildSessionContext(entries, '3').messages.at(-1).content, 'branch A');
  assert.equal(buildSessionContext(entries, null).messages.length, 0);
  assert.equal(await findMostRecentSession(path.join(cwd, 'none')), null);
  const s = SessionManager.create(cwd);
  s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
  s.appendMessage(assistantMessage('ok'));
  assert.equal(await findMostRecentSession(s.getSessionDir()), s.getSessionFile());
  await s.close();
});

test('loadEntriesFromFile returns a file\'s records as written, [] without a session header', async (t) => {
  const { root } = setup(t);
  const { loadEntriesFromFile, parseSessionEntries } = await import('../../pkg/agent.mjs');
  const file = (name, text) => { const p = path.join(root, name); fs.writeFileSync(p, text); return p; };
  assert.deepEqual(await loadEntriesFromFile(path.join(root, 'missing.jsonl')), []);
  assert.deepEqual(await loadEntriesFromFile(file('empty.jsonl', '')), []);
  assert.deepEqual(await loadEntriesFromFile(file('no-header.jsonl', '{"type":"message","id":"1"}\n')), []);
  assert.deepEqual(await loadEntriesFromFile(file('garbage.jsonl', 'not json\n{broken\n')), []);
  const header = { type: 'session', id: 'abc', timestamp: '2025-01-01T00:00:00Z', cwd: '/tmp' };
  const entry = { type: 'message', timestamp: '2025-01-01T00:00:01Z', message: { role: 'user', content: 'hi', timestamp: 1 } };
  const mixed = file('mixed.jsonl', `${JSON.stringify(header)}\nnot json\n${JSON.stringify(entry)}\n`);
  const records = await loadEntriesFromFile(mixed);
  assert.deepEqual(records, [header, entry], 'as written: a v1 record keeps no id');
  assert.deepEqual(parseSessionEntries('{"a":1}\nnope\n{"b":2}\n'), [{ a: 1 }, { b: 2 }]);
});

test('injected TTSR rules of the branch, each once, and blobs put in the agent dir', async (t) => {
  const { cwd } = setup(t);
  const session = SessionManager.create(cwd);
  session.appendMessage({ role: 'user', content: 'hi', timestamp: Date.now() });
  session.appendTtsrInjection(['no-console', 'tests-first']);
  const fork = session.getLeafId();
  session.appendTtsrInjection(['tests-first', 'small-commits']);
  assert.deepEqual(session.getInjectedTtsrRules(), ['no-console', 'tests-first', 'small-commits']);
  session.branch(fork);
  assert.deepEqual(session.getInjectedTtsrRules(), ['no-console', 'tests-first'], 'the branch only');

  const bytes = new TextEncoder().encode('a picture');
  const put = await session.putBlob(bytes);
  assert.match(put.hash, /^[0-9a-f]{64}$/);
  assert.equal(put.ref, `blob:sha256:${put.hash}`);
  assert.equal(put.path, path.join(getAgentDir(), 'blobs', put.hash));
  assert.deepEqual(new Uint8Array(fs.readFileSync(put.path)), bytes);
});

test('an image of a custom message is in the context after a reopen, not its blob reference', async (t) => {
  const { cwd } = setup(t);
  const data = 'QUJD'.repeat(300);
  const session = SessionManager.create(cwd);
  session.appendCustomMessageEntry('note', [{ type: 'image', data, mimeType: 'image/png' }], true);
  session.appendMessage(assistantMessage('seen'));
  const file = session.getSessionFile();
  await session.close();
  assert.match(fs.readFileSync(file, 'utf8'), /blob:sha256:/, 'the image is externalized');
  const reopened = await SessionManager.open(file);
  assert.equal(reopened.getEntries()[0].content[0].data, data);
  const [message] = reopened.buildSessionContext().messages;
  assert.equal(message.role, 'custom');
  assert.equal(message.content[0].data, data, 'the agent resolves custom_message content on load');
  await reopened.close();
});

test('usage totals are the agent\'s double sums, message by message', async (t) => {
  setup(t);
  const s = SessionManager.inMemory('/work');
  const withCost = (total) => {
    const m = assistantMessage('hi');
    return { ...m, usage: { ...m.usage, cost: { ...m.usage.cost, total } } };
  };
  s.appendMessage({ role: 'user', content: 'hi', timestamp: 1 });
  s.appendMessage(withCost(0.2 + 1e-7));
  assert.equal(s.getUsageStatistics().cost, 0.20000010000000001);
  s.appendMessage(withCost(1e-7));
  assert.equal(s.getUsageStatistics().cost, 0.2 + 1e-7 + 1e-7);
});
