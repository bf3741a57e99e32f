// Run by special-files.test.mjs in a process of its own (a call that blocks cannot hang
// the test run: the test kills this process). Sets up an agent dir under argv[2] with one
// session and, beside it, a FIFO named like a session and a symlink to another FIFO; then
// runs the calls of group argv[3] on them, printing one JSON line as each starts and one
// with its outcome ({op, ok, value} or {op, ok: false, code, kind, message}).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const [root, group] = process.argv.slice(2);
process.env.PI_CODING_AGENT_DIR = path.join(root, 'agent');
const { AsyncSession, Session, nodeStorage, nodeAsyncStorage } = await import('../../pkg/node.mjs');
const { SessionManager } = await import('../../pkg/agent.mjs');

const print = (record) => console.log(JSON.stringify(record));
async function run(op, f) {
  print({ op, started: true });
  try {
    print({ op, ok: true, value: await f() });
  } catch (e) {
    print({ op, ok: false, code: e.code, kind: e.kind, message: e.message });
  }
}

const cwd = path.join(root, 'project');
fs.mkdirSync(cwd, { recursive: true });
const s = SessionManager.create(cwd);
s.appendMessage({ role: 'user', content: 'the only session', timestamp: 1 });
s.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'ok' }], timestamp: 2 });
await s.close();
const dir = s.getSessionDir();
// Newer than the session by name and by time: a listing that read them would pick them.
const fifo = path.join(dir, '2099-01-01T00-00-00-000Z_fifo.jsonl');
execFileSync('mkfifo', [fifo]);
const elsewhere = path.join(root, 'elsewhere.jsonl');
execFileSync('mkfifo', [elsewhere]);
fs.symlinkSync(elsewhere, path.join(dir, '2099-01-02T00-00-00-000Z_link.jsonl'));
print({ setup: { session: s.getSessionFile(), fifo, dir } });

const bytes = new TextEncoder().encode('{}\n');
const names = (entries) => entries.map((e) => e.name);
const groups = {
  sync: async () => {
    const st = nodeStorage();
    await run('read', () => st.read(fifo));
    await run('readPrefix', () => st.readPrefix(fifo, 4096));
    await run('readInto', () => st.readInto(fifo, new Uint8Array(16), 0));
    await run('readRange', () => st.readRange(fifo, 0, 4096));
    await run('write', () => st.write(fifo, bytes));
    await run('append', () => st.append(fifo, bytes));
    await run('listDir', () => names(st.listDir(dir)));
    await run('Session.open', () => Session.open(st, fifo).file);
  },
  async: async () => {
    const st = nodeAsyncStorage();
    await run('read', () => st.read(fifo));
    await run('readPrefix', () => st.readPrefix(fifo, 4096));
    await run('readRange', () => st.readRange(fifo, 0, 4096));
    await run('write', () => st.write(fifo, bytes));
    await run('append', () => st.append(fifo, bytes));
    await run('listDir', async () => names(await st.listDir(dir)));
    await run('AsyncSession.open', async () => (await AsyncSession.open(st, fifo)).file);
  },
  agent: async () => {
    await run('listAll', async () => (await SessionManager.listAll()).map((i) => i.path));
    await run('list', async () => (await SessionManager.list(cwd)).map((i) => i.path));
    await run('continueRecent', async () => {
      const m = await SessionManager.continueRecent(cwd);
      const file = m.getSessionFile();
      await m.close();
      return file;
    });
    await run('open', async () => (await SessionManager.open(fifo)).getSessionFile());
  },
};
await groups[group]();
print({ done: true });
