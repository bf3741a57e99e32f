// What the agent's SessionManager offers that the package gives it too, through Node's fs:
// usage statistics, the last model change's role, a legacy file migrated in memory until
// the next persisted write (or rewriteEntries), and the newest session of a directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session, findMostRecentSession, user, assistant } from './helpers.mjs';
import { nodeStorage } from '../../pkg/node-storage.mjs';

function tempDir(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-agent-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return root;
}

const usage = (premiumRequests) => ({
  input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
  ...(premiumRequests === undefined ? {} : { premiumRequests }),
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.1 },
});

test('usageStatistics adds assistant usage and task tool results; premium requests keep fractions', () => {
  const s = Session.inMemory('/work');
  s.appendMessage({ role: 'user', content: 'hello', timestamp: 1 });
  s.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'hi' }], provider: 'github-copilot', model: 'claude-haiku-4.5', usage: usage(0.33), stopReason: 'stop', timestamp: 2 });
  s.appendMessage({ role: 'toolResult', toolCallId: 'task_1', toolName: 'task', content: [{ type: 'text', text: 'out' }], details: { usage: { ...usage(3), input: 2, output: 3 } }, isError: false, timestamp: 3 });
  const u = s.usageStatistics();
  assert.equal(u.input, 12);
  assert.equal(u.output, 8);
  assert.ok(Math.abs(u.premiumRequests - 3.33) < 1e-9, String(u.premiumRequests));
  assert.ok(Math.abs(u.cost - 0.2) < 1e-9);
  const plain = Session.inMemory('/work');
  plain.appendMessage({ role: 'assistant', content: [], provider: 'openai', model: 'gpt-4o', usage: usage(undefined), timestamp: 2 });
  assert.equal(plain.usageStatistics().premiumRequests, 0);
});

test('lastModelChangeRole is the nearest model change on the branch', () => {
  const s = Session.inMemory('/work');
  assert.equal(s.lastModelChangeRole(), undefined);
  s.appendModelChange('anthropic/claude');
  const first = s.appendMessage(user('hi'));
  s.appendModelChange('openai/gpt-5', 'smol');
  assert.equal(s.lastModelChangeRole(), 'smol');
  s.branch(first);
  assert.equal(s.lastModelChangeRole(), 'default');
});

test('a legacy file stays migrated in memory until the next write; rewriteEntries writes it at once', (t) => {
  const dir = tempDir(t);
  const legacy = [
    { type: 'session', id: 'legacy-session', timestamp: '2025-01-01T00:00:00Z', cwd: dir },
    { type: 'message', timestamp: '2025-01-01T00:00:01Z', message: { role: 'user', content: 'hello', timestamp: 1 } },
  ].map((r) => JSON.stringify(r)).join('\n') + '\n';
  const storage = nodeStorage();
  for (const how of ['append', 'rewriteEntries']) {
    const file = path.join(dir, `${how}.jsonl`);
    fs.writeFileSync(file, legacy);
    const mtime = fs.statSync(file).mtimeMs;
    const s = Session.open(storage, file, { agentDir: path.join(dir, 'agent'), cwd: dir });
    assert.equal(s.needsRewrite, true);
    const [entry] = s.entries();
    assert.ok(entry.id && entry.parentId === null);
    s.flush();
    assert.equal(fs.readFileSync(file, 'utf8'), legacy, 'opening and flushing never rewrite');
    assert.equal(fs.statSync(file).mtimeMs, mtime);
    if (how === 'append') s.appendMessage(user('follow up'));
    else s.rewriteEntries();
    assert.equal(s.needsRewrite, false);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].version, 3);
    assert.equal(lines.length, how === 'append' ? 3 : 2);
    assert.ok(lines.slice(1).every((e) => typeof e.id === 'string'));
    s.close();
  }
});

test('findMostRecentSession picks the newest valid session file of a directory', (t) => {
  const dir = tempDir(t);
  const storage = nodeStorage();
  assert.equal(findMostRecentSession(storage, dir), undefined, 'an empty directory');
  assert.equal(findMostRecentSession(storage, path.join(dir, 'missing')), undefined, 'a missing directory');
  const header = (id) => JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' }) + '\n';
  fs.writeFileSync(path.join(dir, 'notes.txt'), header('txt'));
  fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"type":"message"}\n');
  assert.equal(findMostRecentSession(storage, dir), undefined, 'no valid session file');
  const older = path.join(dir, 'older.jsonl');
  const newer = path.join(dir, 'newer.jsonl');
  fs.writeFileSync(older, header('a'));
  fs.writeFileSync(newer, header('b'));
  fs.utimesSync(older, new Date(2026, 0, 1), new Date(2026, 0, 1));
  fs.utimesSync(newer, new Date(2026, 0, 2), new Date(2026, 0, 2));
  assert.equal(findMostRecentSession(storage, dir), newer);
  fs.utimesSync(older, new Date(2026, 0, 3), new Date(2026, 0, 3));
  assert.equal(findMostRecentSession(storage, dir), older);
});
