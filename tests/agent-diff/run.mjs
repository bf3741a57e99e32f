// The interpreter of the agent differential test's scripts (tests/agent-diff/README.md): runs
// each script against the `SessionManager` of MODULE and prints one normalized trace per
// script (a JSON line). The same file serves both sides:
//
//   bun  tests/agent-diff/run.mjs <the agent's session-manager.ts> < scripts.jsonl
//   node tests/agent-diff/run.mjs pkg/agent.mjs < scripts.jsonl
//
// PI_CODING_AGENT_DIR must name a fresh, empty directory (the agent reads it at import).
// Each script works in <agentDir>/s<seed>/ (its project dirs `proj`, `proj2` and its session
// dir `sessions`, passed explicitly); `moveTo` goes to the agent's default session dir of
// the new cwd, and images past the blob threshold go to the agent dir's blob store.
//
// After each op the trace records the op's return value (or that it threw, and the
// message), then the manager's state: session file, id, header, leaf, name, entries, tree,
// context, usage statistics. After the last op the manager is closed and every file under
// the agent dir that the script created, changed or deleted is recorded with its bytes.
// Normalized, identically on both sides and nothing else: ids (entry and session ids, by
// order of first appearance: <id:1>, <id:2>...), ISO timestamps (<ts>), file-name
// timestamps (<fts>), `timestamp` numbers of the wall clock (<ms>), and the agent dir (<root>, also in its `-tmp-...` encoded form).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modulePath = process.argv[2];
if (!modulePath) {
  console.error('usage: run.mjs MODULE < scripts.jsonl');
  process.exit(2);
}
const root = process.env.PI_CODING_AGENT_DIR;
if (!root || (fs.existsSync(root) && fs.readdirSync(root).length)) {
  console.error('run.mjs: PI_CODING_AGENT_DIR must name a fresh, empty directory');
  process.exit(2);
}
fs.mkdirSync(root, { recursive: true });
const { SessionManager } = await import(pathToFileURL(path.resolve(modulePath)).href);

// The published agent (oh-my-pi 18.x) takes appendCompaction's optional fields as one
// options object; xcsh (and the drop-in) take them positionally.
const compactionTakesOptions = /\boptions\b/.test(
  String(SessionManager.prototype.appendCompaction).split(')')[0],
);

// ---- normalization ----

const ID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9A-Za-z])(?:[0-9a-f]{16}|[0-9a-f]{8})(?![0-9A-Za-z])/g;
const ISO_RE = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z/g;
const FILE_TS_RE = /\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z/g;

function normalizer(realRoot) {
  const ids = new Map();
  const roots = [realRoot, root];
  const encoded = [];
  for (const r of roots) {
    const tmp = os.tmpdir();
    if (r.startsWith(tmp + '/')) encoded.push('-tmp-' + r.slice(tmp.length + 1).replaceAll('/', '-'));
    encoded.push(r.slice(1).replaceAll('/', '-'));
  }
  const str = (s) => {
    for (const r of roots) s = s.replaceAll(r, '<root>');
    for (const e of encoded) s = s.replaceAll(e, '<root>');
    s = s.replace(ISO_RE, '<ts>').replace(FILE_TS_RE, '<fts>');
    return s.replace(ID_RE, (id) => {
      if (!ids.has(id)) ids.set(id, `<id:${ids.size + 1}>`);
      return ids.get(id);
    });
  };
  // A `timestamp` number of the wall clock (a context message made from an entry takes
  // the entry's time); the scripts' own message timestamps are in 2001.
  const clockMs = (k, v) => k === 'timestamp' && typeof v === 'number' && v >= startedMs - 3_600_000 && v <= Date.now() + 3_600_000;
  const walk = (v) => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out = {};
      for (const [k, x] of Object.entries(v)) if (x !== undefined) out[str(k)] = clockMs(k, x) ? '<ms>' : walk(x);
      return out;
    }
    return v;
  };
  return { str, walk };
}

// ---- the files of the agent dir ----

function scan(dir, out = new Map()) {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) scan(p, out);
    else {
      const st = fs.statSync(p);
      out.set(p, `${st.size}:${st.mtimeMs}:${st.ino}`);
    }
  }
  return out;
}

function fileText(p) {
  const bytes = fs.readFileSync(p);
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? { text } : { base64: bytes.toString('base64') };
}

// ---- one script ----

const realRoot = fs.realpathSync(root);
const startedMs = Date.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function runScript(script) {
  const norm = normalizer(realRoot);
  const base = path.join(root, `s${script.seed}`);
  const dirs = { proj: path.join(base, 'proj'), proj2: path.join(base, 'proj2') };
  const sessions = path.join(base, 'sessions');
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  const before = scan(root);
  const files = [];
  let sm = null;
  const seeFile = (f) => { if (typeof f === 'string' && !files.includes(f)) files.push(f); };
  const entryId = (ref) => {
    // title_change: oh-my-pi's rename entries, which xcsh does not have (differences.mjs).
    const entries = sm.getEntries().filter((e) => e.type !== 'title_change');
    return entries.length ? entries[ref.entry % entries.length].id : 'no-such-entry';
  };
  let setCount = 0, openCount = 0;
  // xcsh persists an entry by a fire-and-forget write (at the first assistant message an
  // atomic rewrite through a temp file, of whatever session is current when it runs), and
  // its close() returns at once when no append writer is open, without waiting for that
  // write (xcsh session-manager.ts `_persist`, `#rewriteFile`, `close`). In the agent a
  // turn's writes are long done before the next operation; here ops follow each other
  // without a pause. So before each op, and before closing, the runner waits for the
  // manager's pending writes: flush(), which queues behind them (its error, if any, is left
  // to the ops that report it; the drop-in writes synchronously and only fsyncs).
  const settle = async () => { if (sm) { try { await sm.flush(); } catch { /* reported by the ops */ } } };
  const closeCurrent = async () => { if (sm) { await settle(); const old = sm; sm = null; await old.close(); } };

  const ops = {
    create: async () => { await closeCurrent(); sm = SessionManager.create(dirs.proj, sessions); },
    appendMessage: (o) => sm.appendMessage(o.message),
    appendThinkingLevelChange: (o) => sm.appendThinkingLevelChange(o.level),
    appendModelChange: (o) => sm.appendModelChange(o.model, o.role),
    appendCompaction: (o) => (compactionTakesOptions
      ? sm.appendCompaction(o.summary, o.shortSummary, entryId(o.firstKept), o.tokensBefore,
        Object.fromEntries(Object.entries({ details: o.details, fromExtension: o.fromExtension }).filter(([, v]) => v !== undefined)))
      : sm.appendCompaction(o.summary, o.shortSummary, entryId(o.firstKept), o.tokensBefore, o.details, o.fromExtension)),
    appendCustomEntry: (o) => sm.appendCustomEntry(o.customType, o.data),
    appendCustomMessageEntry: (o) => sm.appendCustomMessageEntry(o.customType, o.content, o.display, o.details),
    appendLabelChange: (o) => sm.appendLabelChange(entryId(o.target), o.label),
    appendModeChange: (o) => sm.appendModeChange(o.mode, o.data),
    appendSessionInit: (o) => sm.appendSessionInit(o.init),
    appendTtsrInjection: (o) => sm.appendTtsrInjection(o.rules),
    branch: (o) => sm.branch(entryId(o.from)),
    branchWithSummary: (o) => sm.branchWithSummary(o.from === null ? null : entryId(o.from), o.summary, o.details),
    resetLeaf: () => sm.resetLeaf(),
    setSessionName: (o) => (o.source === undefined ? sm.setSessionName(o.name) : sm.setSessionName(o.name, o.source)),
    createBranchedSession: (o) => sm.createBranchedSession(entryId(o.leaf)),
    fork: () => sm.fork(),
    forkFrom: async (o) => {
      if (!files.length) return 'no file yet';
      const source = files[o.source.file % files.length];
      await closeCurrent();
      sm = await SessionManager.forkFrom(source, dirs.proj, sessions);
    },
    moveTo: (o) => sm.moveTo(dirs[o.cwd]),
    reopen: async () => {
      const file = sm.getSessionFile();
      const dir = sm.getSessionDir();
      await closeCurrent();
      sm = await SessionManager.open(file, dir);
    },
    open: async (o) => {
      if (!files.length) return 'no file yet';
      const file = files[o.file.file % files.length];
      await closeCurrent();
      sm = await SessionManager.open(file, path.dirname(file));
    },
    newSession: (o) => (o.options ? sm.newSession(o.options) : sm.newSession()),
    continueRecent: async (o) => {
      await closeCurrent();
      sm = o.defaultDir ? await SessionManager.continueRecent(dirs.proj) : await SessionManager.continueRecent(dirs.proj, sessions);
    },
    // SessionInfo lists: this script's sessions only (listAll sees the whole agent dir),
    // by path; Dates as ISO strings (normalized as every time is).
    list: async (o) => {
      const infos = o.which === 'dir' ? await SessionManager.list(dirs.proj, sessions)
        : o.which === 'default' ? await SessionManager.list(dirs.proj)
          : (await SessionManager.listAll()).filter((i) => [base, path.join(realRoot, `s${script.seed}`)].some((b) => String(i.cwd).startsWith(b + path.sep)));
      return infos
        .map((i) => Object.fromEntries(Object.entries(i).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },
    inMemory: async () => { await closeCurrent(); sm = SessionManager.inMemory(dirs.proj); },
    setSessionFile: async (o) => {
      const file = o.fresh || !files.length ? path.join(sessions, `set-${setCount++}.jsonl`) : files[o.file.file % files.length];
      await sm.setSessionFile(file);
    },
    // An entry handed out by getEntries() edited in place, then the file rewritten.
    rewriteEntries: async (o) => {
      const entries = sm.getEntries().filter((e) => e.type !== 'title_change');
      if (entries.length) {
        const e = entries[o.target.entry % entries.length];
        if (e.type === 'message' && Array.isArray(e.message.content)) {
          e.message.content = e.message.content.map((b) => (b.type === 'text' ? { ...b, text: 'edited in place' } : b));
        } else if (e.type === 'message') e.message.content = 'edited in place';
        else e.edited = 'in place';
      }
      await sm.rewriteEntries();
    },
    // A file written as an older agent wrote it (or with a duplicated id), then opened.
    openV1File: (o) => ops.openFile(o),
    openV2File: (o) => ops.openFile(o),
    openDupIdFile: (o) => ops.openFile(o),
    openFile: async (o) => {
      fs.mkdirSync(sessions, { recursive: true });
      const file = path.join(sessions, `old-${openCount++}.jsonl`);
      fs.writeFileSync(file, o.lines.map((l) => l.replaceAll('"<proj>"', JSON.stringify(dirs.proj))).join('\n') + '\n');
      await closeCurrent();
      sm = await SessionManager.open(file, sessions);
    },
    flush: () => sm.flush(),
    ensureOnDisk: () => sm.ensureOnDisk(),
    close: () => closeCurrent(),
  };
  const managerless = new Set(['create', 'forkFrom', 'open', 'continueRecent', 'list', 'inMemory', 'openV1File', 'openV2File', 'openDupIdFile']);

  const trace = [];
  for (const [i, o] of script.ops.entries()) {
    const step = { i, op: o.op };
    if (!sm && !managerless.has(o.op)) {
      step.skipped = 'no open manager';
      trace.push(norm.walk(step));
      continue;
    }
    await settle();
    try {
      step.ret = await ops[o.op](o);
    } catch (e) {
      step.threw = true;
      step.error = String(e?.message ?? e);
    }
    if (step.ret && typeof step.ret === 'object') {
      seeFile(step.ret.oldSessionFile);
      seeFile(step.ret.newSessionFile);
    }
    if (sm) {
      seeFile(sm.getSessionFile());
      step.state = state(sm);
    }
    trace.push(norm.walk(step));
  }
  await closeCurrent();
  await sleep(0);
  const after = scan(root);
  const written = [];
  for (const [p, sig] of after) {
    if (before.get(p) !== sig) written.push({ path: p, ...fileText(p) });
  }
  for (const p of before.keys()) if (!after.has(p)) written.push({ path: p, deleted: true });
  const normalizedFiles = norm.walk(written).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { seed: script.seed, trace, files: normalizedFiles };
}

function state(sm) {
  const get = (f) => {
    try {
      return f();
    } catch (e) {
      return { threw: String(e?.message ?? e) };
    }
  };
  const shape = (nodes) => nodes.map(({ entry, children, ...rest }) => ({ id: entry.id, ...rest, children: shape(children) }));
  return {
    file: get(() => sm.getSessionFile()),
    sessionId: get(() => sm.getSessionId()),
    header: get(() => sm.getHeader()),
    cwd: get(() => sm.getCwd()),
    sessionDir: get(() => sm.getSessionDir()),
    leaf: get(() => sm.getLeafId()),
    name: get(() => sm.getSessionName()),
    titleSource: get(() => sm.titleSource),
    entries: get(() => sm.getEntries()),
    tree: get(() => shape(sm.getTree())),
    context: get(() => sm.buildSessionContext()),
    usage: get(() => sm.getUsageStatistics()),
  };
}

const input = fs.readFileSync(process.argv[3] ?? 0, 'utf8');
for (const line of input.split('\n')) {
  if (!line.trim()) continue;
  const script = JSON.parse(line);
  let result;
  try {
    result = await runScript(script);
  } catch (e) {
    result = { seed: script.seed, crashed: String(e?.stack ?? e) };
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}
