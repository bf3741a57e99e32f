// Appends through a `SessionManager`: the agent's own (its session-manager.ts, run by Bun)
// or the drop-in's (xcsh-session/agent, run by Node), on a copy of a real session, in one
// process, as the agent appends while it works.
//
//   bun  bench/agent-append.mjs <session-manager.ts> <file> <agentDir> <reps> [fsync]
//   node bench/agent-append.mjs <pkg>/agent.mjs     <file> <agentDir> <reps>
//
// `fsync`: after each flush() the file is also fsynced through a descriptor opened once,
// as xcsh's own flush() does (its writer's fsync; the oh-my-pi release installed for the
// bench never fsyncs: "software-crash safe but not power-loss safe"). The drop-in's
// flush() fsyncs, as xcsh's does, so this is the like-for-like comparison.
//
// Prints { appendFlushMs: [...], batchMs }: each of `reps` appends of a user message
// followed by flush() (ms each), then `reps` appends and one flush() (ms in all).
// PI_CODING_AGENT_DIR is set to agentDir before the module loads (the agent reads it then).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modulePath, file, agentDir, repsArg, mode] = process.argv.slice(2);
const reps = Number(repsArg ?? 200);
process.env.PI_CODING_AGENT_DIR = agentDir;
const { SessionManager } = await import(pathToFileURL(path.resolve(modulePath)).href);

const manager = await SessionManager.open(file);
const fd = mode === 'fsync' ? fs.openSync(file, 'r') : null;
const flush = async () => {
  await manager.flush();
  if (fd !== null) fs.fsyncSync(fd);
};
const message = (i) => ({ role: 'user', content: [{ type: 'text', text: `a question ${i} ${'x'.repeat(300)}` }], timestamp: 1760000000000 + i });
// Warm up (the first append may set up a writer).
manager.appendMessage(message(-1));
await flush();

const appendFlushMs = [];
for (let i = 0; i < reps; i++) {
  const t = performance.now();
  manager.appendMessage(message(i));
  await flush();
  appendFlushMs.push(performance.now() - t);
}
const t = performance.now();
for (let i = 0; i < reps; i++) manager.appendMessage(message(reps + i));
await flush();
const batchMs = performance.now() - t;
await manager.close?.();
if (fd !== null) fs.closeSync(fd);
console.log(JSON.stringify({ appendFlushMs, batchMs }));
