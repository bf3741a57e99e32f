// What the pi write differential test (tests/node/pi-write-diff.test.mjs) compares of a
// manager, and how two runs are made comparable: every id (entry ids, session ids, the
// ids entries point at) is named by its first appearance, every time an entry or header
// was written at is `T`, and paths lose their agent directory and their file's time.

/** A manager's answers (pi's or ours, through the module `mod` it came from). */
export function managerView(mod, m) {
  const entries = m.getEntries();
  const leaves = [undefined, null, ...entries.map((e) => e.id)];
  return {
    header: m.getHeader(),
    entries,
    leaf: m.getLeafId(),
    leafEntry: m.getLeafEntry() ?? null,
    tree: m.getTree(),
    contexts: leaves.map((l) => mod.buildSessionContext(entries, l)),
    context: m.buildSessionContext(),
    branch: m.getBranch(),
    labels: entries.map((e) => m.getLabel(e.id) ?? null),
    children: entries.map((e) => m.getChildren(e.id).map((c) => ({ id: c.id }))),
    name: m.getSessionName() ?? null,
    sessionId: m.getSessionId(),
    file: m.getSessionFile() ?? null,
    dir: m.getSessionDir(),
    cwd: m.getCwd(),
    persisted: m.isPersisted(),
  };
}

const ID_KEYS = new Set(['id', 'parentId', 'targetId', 'firstKeptEntryId', 'fromId', 'sessionId', 'leaf']);
const PATH_KEYS = new Set(['file', 'path', 'parentSession', 'parentSessionPath', 'dir', 'continueRecent', 'memoryBranched']);
const TIME_KEYS = new Set(['timestamp', 'labelTimestamp', 'created']);
const FILE_NAME = /\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_([0-9a-f-]{36})\.jsonl/;

/** A listing (`SessionInfo`s) newest first, sessions of the same time by path: pi
 * leaves those in the order the directory lists them, which is no order. */
export function byTime(infos) {
  return [...infos].sort((a, b) => b.modified - a.modified || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A function making values of one run (agent dir `root`) comparable with another's. */
export function normalizer(root) {
  const ids = new Map();
  const id = (v) => {
    if (!ids.has(v)) ids.set(v, `#${ids.size}`);
    return ids.get(v);
  };
  const normPath = (p) => p.split(root).join('<agent>').replace(FILE_NAME, (_, u) => `T_${id(u)}.jsonl`);
  const walk = (v, key) => {
    if (v instanceof Date) return TIME_KEYS.has(key) ? 'T' : v.toISOString();
    if (Array.isArray(v)) return v.map((x) => walk(x, key === 'lines' ? 'line' : undefined));
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    }
    // Times made from when an entry was written (a summary message's): now-ish, never a
    // script's (those are from 2023).
    if (key === 'timestamp' && typeof v === 'number' && v > 1.75e12) return 'T';
    if (typeof v !== 'string') return v;
    if (key === 'line') {
      // A file's line: normalized as an object, compared as its text (key order counts).
      if (!v) return v;
      return JSON.stringify(walk(JSON.parse(v)));
    }
    if (ID_KEYS.has(key) && v !== 'root') return id(v);
    if (TIME_KEYS.has(key)) return 'T';
    if (PATH_KEYS.has(key)) return normPath(v);
    return v;
  };
  return (value) => walk(value);
}
