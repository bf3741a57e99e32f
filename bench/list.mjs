// A listing of an agent directory through the npm package, timed in process (the module
// already loaded). Prints one JSON object with `wallMs`:
//
//   node bench/list.mjs AGENT_DIR                 the drop-in's SessionManager.listAll():
//                                                 {wallMs, sessions, bytes} (`bytes`: the
//                                                 JSON of the list, its text left unread)
//   node bench/list.mjs AGENT_DIR first N         listSessions({ limit: N }) of every
//                                                 project, a picker's first screen:
//                                                 {wallMs, sessions}
//   node bench/list.mjs AGENT_DIR search QUERY    a SessionSearch of every project, stepped
//                                                 to its end: {wallMs, firstStepMs, steps,
//                                                 hits, bytesRead, bytes, maxRssBytes}
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [agentDir, mode = 'all', arg] = process.argv.slice(2);
const pkg = path.join(here, '..', 'pkg');
const elapsed = (t) => Number(process.hrtime.bigint() - t) / 1e6;

if (mode === 'all') {
  process.env.PI_CODING_AGENT_DIR = path.resolve(agentDir);
  const { SessionManager } = await import(path.join(pkg, 'agent.mjs'));
  const t = process.hrtime.bigint();
  const list = await SessionManager.listAll();
  const wallMs = elapsed(t);
  // Without touching `allMessagesText` (a getter that reads the session's text).
  const bytes = JSON.stringify(list.map(({ path: p, id, messageCount, firstMessage, title }) => ({ p, id, messageCount, firstMessage, title }))).length;
  process.stdout.write(JSON.stringify({ wallMs, sessions: list.length, bytes }));
} else if (mode === 'first') {
  const { listSessions, nodeStorage } = await import(path.join(pkg, 'node.mjs'));
  const t = process.hrtime.bigint();
  const list = listSessions(nodeStorage(), { agentDir: path.resolve(agentDir), limit: Number(arg) });
  process.stdout.write(JSON.stringify({ wallMs: elapsed(t), sessions: list.length }));
} else if (mode === 'search') {
  const { SessionSearch, nodeStorage } = await import(path.join(pkg, 'node.mjs'));
  const t = process.hrtime.bigint();
  const search = new SessionSearch(nodeStorage(), { agentDir: path.resolve(agentDir), query: arg });
  let steps = 0;
  let firstStepMs = null;
  let progress = search.progress;
  while (!search.done) {
    progress = search.step();
    steps++;
    firstStepMs ??= elapsed(t);
  }
  const hits = search.hits().length;
  const wallMs = elapsed(t);
  process.stdout.write(JSON.stringify({
    wallMs, firstStepMs, steps, hits, bytesRead: progress.bytesDone, bytes: progress.bytes,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  }));
} else {
  console.error(`bench/list.mjs: unknown mode '${mode}' (want all, first N or search QUERY)`);
  process.exit(2);
}
