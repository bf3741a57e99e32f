// setSessionFile on a manager over the agent's MemorySessionStorage (inMemory()): a file
// the storage does not hold is not found, as the agent's MemorySessionStorage rejects
// reading it (xcsh's setSessionFile then throws; it starts a session only on ENOENT).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

test('setSessionFile of a file the memory storage does not hold throws', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-setfile-'));
  process.env.PI_CODING_AGENT_DIR = path.join(dir, 'agent');
  const { SessionManager } = await import('../../pkg/agent.mjs');
  const sm = SessionManager.inMemory(dir);
  const before = sm.getSessionId();
  await assert.rejects(sm.setSessionFile(path.join(dir, 'missing.jsonl')), /not found/i);
  assert.equal(sm.getSessionId(), before);
  assert.equal(sm.getSessionFile(), undefined);
  assert.equal(fs.existsSync(path.join(dir, 'missing.jsonl')), false);
  fs.rmSync(dir, { recursive: true, force: true });
});
