// One `SessionManager.listAll()` of the npm drop-in (`xcsh-session/agent`) over an agent
// directory, timed in process (the module already loaded): prints
// `{"wallMs", "sessions", "bytes"}` (`bytes`: the JSON of the list, its text left unread).
//
//   node bench/list.mjs AGENT_DIR
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [agentDir] = process.argv.slice(2);
process.env.PI_CODING_AGENT_DIR = path.resolve(agentDir);
const { SessionManager } = await import(path.join(here, '..', 'pkg', 'agent.mjs'));

const t = process.hrtime.bigint();
const list = await SessionManager.listAll();
const wallMs = Number(process.hrtime.bigint() - t) / 1e6;
// Without touching `allMessagesText` (a getter that reads the session's text).
const bytes = JSON.stringify(list.map(({ path: p, id, messageCount, firstMessage, title }) => ({ p, id, messageCount, firstMessage, title }))).length;
process.stdout.write(JSON.stringify({ wallMs, sessions: list.length, bytes }));
