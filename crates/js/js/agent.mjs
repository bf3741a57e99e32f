// `xcsh-session/agent`: the agent's `SessionManager` (xcsh / oh-my-pi / pi), with its method
// names, signatures and return shapes, over this package's `Session` (no second
// implementation: every rule is the Rust core's). Node only: files go through node:fs.
//
// Its deliberate differences from the agent are listed once, in the package README
// (crates/js/README.md, "Where `xcsh-session/agent` differs from the agent, on purpose").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  Session, blobPut,
  buildSessionContext as contextOfText, continueRecent, fileRecords,
  findMostRecentSession as newestIn, findResumableSession, listSessions, mergeLegacySessionDir, sessionText,
  movedSessionDir, parseRecords, recentSessions, sessionDirForCwd, terminalId,
} from './node.mjs';
import { FileSessionStorage, MemorySessionStorage, packageStorage } from './agent-session-storage.mjs';
import { getAgentDir } from './agent-dir.mjs';

export { getAgentDir };

/**
 * The agent's default `storage` argument: the filesystem. Every function that takes one
 * (as the agent's) also takes a `MemorySessionStorage`, or a storage of this package.
 */
const FILES = new FileSessionStorage();
const storage = packageStorage(FILES);

/** The session file's format version written (older files are migrated to it). */
export const CURRENT_SESSION_VERSION = 3;

export class SessionManager {
  #session;
  #cwd;
  #sessionDir;
  #agentDir;
  #storage;

  /** Use the static constructors (`create`, `open`, `continueRecent`, `inMemory`, `forkFrom`). */
  constructor(session, cwd, sessionDir, agentDir, storage = FILES) {
    this.#session = session;
    this.#cwd = cwd;
    this.#sessionDir = sessionDir;
    this.#agentDir = agentDir;
    this.#storage = storage;
  }

  // ---- constructors ----

  /**
   * Where new sessions of `cwd` go, as the agent places them (by the real path of `cwd`,
   * the home and the temp directory): `-<rel>`, `-tmp-<rel>` or `--<cwd>--`. The legacy
   * `--<cwd>--` folder is folded into it first, keeping whatever cannot be moved; the
   * directory is created.
   */
  static getDefaultSessionDir(cwd, agentDir = getAgentDir(), storage = FILES) {
    const port = packageStorage(storage);
    const resolved = path.resolve(cwd);
    const dir = sessionDirForCwd(agentDir, realPath(resolved), places());
    try {
      mergeLegacySessionDir(port, { agentDir, cwd: resolved, sessionDir: dir });
    } catch {
      // Best effort, as the agent's: both folders stay readable.
    }
    port.mkdirAll(dir);
    return dir;
  }

  /** A new session of `cwd` in `sessionDir` (default: the cwd's directory of the agent dir). */
  static create(cwd, sessionDir, storage = FILES) {
    const agentDir = getAgentDir();
    const dir = sessionDir ?? SessionManager.getDefaultSessionDir(cwd, agentDir, storage);
    const session = Session.create(packageStorage(storage), { agentDir, cwd, sessionDir: dir });
    return new SessionManager(session, cwd, dir, agentDir, storage);
  }

  /** Open a session file; a file that does not exist is written at once with a header. */
  static async open(filePath, sessionDir, storage = FILES) {
    const agentDir = getAgentDir();
    const file = path.resolve(filePath);
    const session = openFile(packageStorage(storage), file, agentDir, process.cwd());
    const cwd = session.header().cwd ?? process.cwd();
    return new SessionManager(session, cwd, sessionDir ?? path.dirname(file), agentDir, storage);
  }

  /** The terminal's last session, else the newest of the directory, else a new one. */
  static async continueRecent(cwd, sessionDir, storage = FILES) {
    const agentDir = getAgentDir();
    const port = packageStorage(storage);
    const dir = sessionDir ?? SessionManager.getDefaultSessionDir(cwd, agentDir, storage);
    const found = continueRecent(port, definedOnly({
      agentDir, cwd: path.resolve(cwd), sessionDir: dir, terminal: currentTerminal(),
    }));
    if (found.source === 'new') return SessionManager.create(cwd, dir, storage);
    return new SessionManager(openFile(port, found.path, agentDir, cwd), cwd, dir, agentDir, storage);
  }

  /** A session that is never written (`storage`: where a later `newSession` goes). */
  static inMemory(cwd = process.cwd(), storage = new MemorySessionStorage()) {
    packageStorage(storage);
    return new SessionManager(Session.inMemory(cwd), cwd, '', getAgentDir(), storage);
  }

  /** A new session of `cwd` holding the history of the session file `sourcePath`. */
  static async forkFrom(sourcePath, cwd, sessionDir, storage = FILES) {
    const agentDir = getAgentDir();
    const port = packageStorage(storage);
    const dir = sessionDir ?? SessionManager.getDefaultSessionDir(cwd, agentDir, storage);
    const session = Session.forkFrom(port, path.resolve(sourcePath), { agentDir, cwd, sessionDir: dir });
    return new SessionManager(session, cwd, dir, agentDir, storage);
  }

  /**
   * `SessionInfo` of every session of `cwd` (or of `sessionDir`), newest first, `created`
   * and `modified` as `Date`s (the package's `listSessions` gives ISO strings). Each
   * session is read through its index (cached in `<agentDir>/cache/index/`): no message
   * text is read here; `allMessagesText` reads that session's on first access.
   */
  static async list(cwd, sessionDir, storage = FILES) {
    const agentDir = getAgentDir();
    const dir = sessionDir === undefined ? SessionManager.getDefaultSessionDir(cwd, agentDir, storage) : path.resolve(sessionDir);
    const port = packageStorage(storage);
    return listSessions(port, { agentDir, sessionDir: dir }).map((i) => agentSessionInfo(i, port, agentDir));
  }

  /** `SessionInfo` of every session of every project (`Date`s and text as `list`). */
  static async listAll(storage = FILES) {
    const agentDir = getAgentDir();
    const port = packageStorage(storage);
    return listSessions(port, { agentDir }).map((i) => agentSessionInfo(i, port, agentDir));
  }

  // ---- where the session lives ----

  getCwd() { return this.#cwd; }
  getSessionDir() { return this.#sessionDir; }
  getSessionId() { return this.#session.sessionId; }
  getSessionFile() { return this.#session.file; }
  isPersisted() { return this.#session.file !== undefined; }
  getSessionName() { return this.#session.header().title; }
  get titleSource() { return this.#session.header().titleSource; }
  getArtifactsDir() {
    const file = this.#session.file;
    return file ? file.slice(0, -'.jsonl'.length) : null;
  }

  /** `{ id, path }` of the next artifact file, `{}` when the session has no file. */
  async allocateArtifactPath(toolType) { return this.#session.allocateArtifactPath(toolType); }
  /** Save `content` as the next artifact; its id (kept in memory without a file). */
  async saveArtifact(content, toolType) { return this.#session.saveArtifact(content, toolType); }
  async getArtifactPath(id) { return this.#session.getArtifactPath(id) ?? null; }

  // ---- reading ----
  // Entries are handed out as live objects, the same object for an entry each time, as the
  // agent's are: `rewriteEntries()` persists what was edited in them. An id names the last
  // entry that has it (as the agent's index does); entries sharing an id with a later one
  // (a file can hold them) are found by their position in the file.

  #live = new Map(); // id -> { entry, json (as handed out) } of the last entry with the id
  #earlier = new Map(); // position -> { entry, json, position } of an entry a later one shares its id with
  #shared; // id -> positions, of the ids several entries share (read once, when needed)

  #keep(map, key, e, extra) {
    const known = map.get(key);
    if (known) return known.entry;
    map.set(key, { entry: e, json: JSON.stringify(e), ...extra });
    return e;
  }
  #liveEntries(entries) {
    return entries.map((e) => this.#keep(this.#live, e.id, e));
  }
  /** The ids several entries share, with their positions (none in most sessions). */
  #sharedIds() {
    if (this.#shared) return this.#shared;
    this.#shared = new Map();
    if (this.#session.report().duplicateIds > 0) {
      const all = this.#session.entries();
      all.forEach((e, i) => this.#shared.set(e.id, [...(this.#shared.get(e.id) ?? []), i]));
      for (const [id, positions] of this.#shared) if (positions.length < 2) this.#shared.delete(id);
    }
    return this.#shared;
  }
  /** Live objects of entries given with their positions. */
  #atPositions(entries, positions) {
    return entries.map((e, k) => {
      const last = this.#sharedIds().get(e.id)?.at(-1) ?? positions[k];
      return positions[k] === last ? this.#keep(this.#live, e.id, e)
        : this.#keep(this.#earlier, positions[k], e, { position: positions[k] });
    });
  }
  #switchTo(session) {
    this.#session = session;
    this.#live = new Map();
    this.#earlier = new Map();
    this.#shared = undefined;
  }

  getHeader() { return this.#session.header(); }
  getEntries() {
    const entries = this.#session.entries();
    return this.#atPositions(entries, entries.map((_, i) => i));
  }
  getEntry(id) {
    const known = this.#live.get(id);
    if (known) return known.entry;
    try {
      return this.#liveEntries([this.#session.entry(id)])[0];
    } catch (e) {
      if (e.kind === 'entryNotFound') return undefined;
      throw e;
    }
  }
  getChildren(parentId) {
    const children = this.#session.children(parentId);
    const shared = this.#sharedIds();
    if (!children.some((e) => shared.has(e.id))) return this.#liveEntries(children);
    // Children in file order: the positions of the entries with their id and this parent.
    const all = this.#session.entries();
    const positions = all.flatMap((e, i) => (e.parentId === parentId ? [i] : []));
    return this.#atPositions(children, positions);
  }
  getLeafId() { return this.#session.leafId; }
  getLeafEntry() {
    const id = this.#session.leafId;
    return id === null ? undefined : this.getEntry(id);
  }
  getBranch(fromId) { return this.#liveEntries(this.#session.branchPath(fromId)); }
  getTree() { return this.#session.tree(); }
  getLabel(id) { return this.#session.label(id); }
  /**
   * The context of the leaf. One larger than a JS string can hold (about 512 MiB of JSON: a
   * session of about 1 GB without compaction, which the agent cannot open at all) is
   * refused with an error saying how to stream it.
   */
  buildSessionContext() {
    try {
      return this.#session.context();
    } catch (e) {
      if (e?.details?.contextBytes !== undefined && this.#session.file !== undefined) {
        e.message += '; from xcsh-session/agent, stream it with openContext(nodeStorage(), '
          + 'manager.getSessionFile(), { agentDir }).writeJson(write) (both from "xcsh-session")';
      }
      throw e;
    }
  }
  getUsageStatistics() { return this.#session.usageStatistics(); }
  /** The TTSR rule names injected on the current branch, each once. */
  getInjectedTtsrRules() { return this.#session.context().injectedTtsrRules; }
  /** Store bytes in the agent dir's content-addressed blob store: `{ hash, path, ref }`. */
  async putBlob(data) { return blobPut(packageStorage(this.#storage), this.#agentDir, data); }
  getLastModelChangeRole() { return this.#session.lastModelChangeRole(); }

  // ---- appending (each returns the new entry's id) ----

  appendMessage(message) { return this.#session.appendMessage(message); }
  appendThinkingLevelChange(level) { return this.#session.appendThinkingLevelChange(level); }
  appendServiceTierChange(tier) { return this.#session.appendServiceTierChange(tier); }
  appendModeChange(mode, data) { return this.#session.appendModeChange(mode, data); }
  appendModelChange(model, role) { return this.#session.appendModelChange(model, role); }
  appendContextChange(name, tenant, namespace) {
    return this.#session.appendContextChange(name, tenant, namespace);
  }
  appendSessionInit(init) { return this.#session.appendEntry({ type: 'session_init', ...init }); }
  appendCompaction(summary, shortSummary, firstKeptEntryId, tokensBefore, details, fromExtension, preserveData) {
    return this.#session.appendCompaction(definedOnly({
      summary, shortSummary, firstKeptEntryId, tokensBefore, details, fromExtension, preserveData,
    }));
  }
  appendCustomEntry(customType, data) { return this.#session.appendCustomEntry(customType, data); }
  appendCustomMessageEntry(customType, content, display, details, attribution) {
    return this.#session.appendCustomMessageEntry(customType, content, display, details, attribution);
  }
  appendMCPToolSelection(names) { return this.#session.appendMcpToolSelection(names); }
  appendTtsrInjection(rules) { return this.#session.appendTtsrInjection(rules); }
  appendLabelChange(targetId, label) { return this.#session.appendLabelChange(targetId, label); }
  async setSessionName(name, source = 'auto') { return this.#session.setSessionName(name, source); }

  // ---- the leaf ----

  branch(id) { this.#session.branch(id); }
  resetLeaf() { this.#session.resetLeaf(); }
  branchWithSummary(fromId, summary, details, fromExtension) {
    return this.#session.branchWithSummary(fromId, summary, details, fromExtension);
  }
  createBranchedSession(leafId) {
    this.#saveEdits();
    const file = this.#session.createBranchedSession(leafId);
    this.#switchTo(this.#session);
    return file;
  }

  // ---- the session as a whole ----

  async ensureOnDisk() { this.#session.ensureOnDisk(); }
  async flush() { this.#session.flush(); }
  /** Persist the whole file, with every entry edited in place since it was handed out. */
  async rewriteEntries() {
    this.#saveEdits();
    this.#session.rewriteEntries();
  }
  /** Hand the session every entry edited in place since it was handed out. */
  #saveEdits() {
    for (const live of [...this.#live.values(), ...this.#earlier.values()]) {
      const json = JSON.stringify(live.entry);
      if (json === live.json) continue;
      this.#session.replaceEntry(live.entry, live.position);
      live.json = json;
    }
  }
  async close() { this.#session.close(); }

  /**
   * What `restoreState` needs to come back to this session if switching away fails (the
   * agent rolls back a failed `/resume`): the agent's fields, `fileEntries` (the header,
   * then the entries as handed out) among them, and the live `session`.
   */
  captureState() {
    return {
      sessionId: this.getSessionId(),
      sessionName: this.getSessionName(),
      titleSource: this.titleSource,
      sessionFile: this.getSessionFile(),
      fileEntries: [this.getHeader(), ...this.getEntries()],
      session: this.#session,
      cwd: this.#cwd,
      sessionDir: this.#sessionDir,
    };
  }

  /**
   * Back to a captured session (it takes its writer lock again at its next write). A
   * snapshot without its live `session` (the agent's shape) comes back through its file.
   */
  restoreState(snapshot) {
    const session = snapshot.session ?? this.#sessionOf(snapshot);
    if (this.#session !== session) {
      this.#session.close();
      this.#switchTo(session);
    }
    this.#cwd = snapshot.cwd ?? this.#cwd;
    this.#sessionDir = snapshot.sessionDir ?? this.#sessionDir;
  }

  #sessionOf({ sessionId, sessionFile }) {
    if (sessionId === this.#session.sessionId) return this.#session;
    if (!sessionFile) throw new Error(`restoreState: in-memory session ${sessionId} is gone`);
    return openFile(packageStorage(this.#storage), sessionFile, this.#agentDir, this.#cwd);
  }

  /** Switch to a new session in the same directory; returns its file. */
  async newSession(options = {}) {
    this.#session.close();
    // A manager made by `inMemory` stays in memory, as the agent's (it names no file).
    if (!this.#sessionDir) {
      this.#switchTo(Session.inMemory(this.#cwd, options.parentSession));
      return undefined;
    }
    this.#switchTo(Session.create(packageStorage(this.#storage), definedOnly({
      agentDir: this.#agentDir, cwd: this.#cwd, sessionDir: this.#sessionDir || undefined,
      parentSession: options.parentSession,
    })));
    return this.#session.file;
  }

  /** Switch to another session file (written at once with a header when it does not exist). */
  async setSessionFile(file) {
    // The agent's MemorySessionStorage rejects reading a file it does not hold ("File not
    // found", not an ENOENT), so its setSessionFile throws there instead of starting one.
    if (this.#storage instanceof MemorySessionStorage && !this.#storage.existsSync(path.resolve(file))) {
      throw Object.assign(new Error(`File not found: ${file}`), { kind: 'notFound' });
    }
    const next = openFile(packageStorage(this.#storage), path.resolve(file), this.#agentDir, this.#cwd);
    this.#session.close();
    this.#switchTo(next);
  }

  /** Continue in a copy under a new id; `{ oldSessionFile, newSessionFile }`. */
  async fork() {
    if (!this.#session.file) return undefined;
    // The agent's fork writes its entries as edited; the copy's entries are handed out anew.
    this.#saveEdits();
    const { oldFile, newFile } = this.#session.fork();
    this.#switchTo(this.#session);
    return { oldSessionFile: oldFile, newSessionFile: newFile };
  }

  /**
   * Move the session (file and artifacts) to the directory of another cwd: in the same
   * sessions root when the session's directory is its cwd's own folder, else in the agent
   * dir's (the agent's `resolveManagedSessionRoot`).
   */
  async moveTo(newCwd) {
    const cwd = path.resolve(newCwd);
    if (cwd === this.#cwd) return;
    const inAgentDir = sessionDirForCwd(this.#agentDir, realPath(cwd), places());
    const dir = movedSessionDir({
      agentDir: this.#agentDir, sessionDir: this.#sessionDir, cwd: realPath(this.#cwd),
      newCwd: realPath(cwd), ...places(),
    });
    // The agent dir's folder has its legacy folder folded in first; any folder is created.
    if (dir === inAgentDir) SessionManager.getDefaultSessionDir(cwd, this.#agentDir, this.#storage);
    else packageStorage(this.#storage).mkdirAll(dir);
    // The agent's moveTo rewrites its entries as edited.
    this.#saveEdits();
    this.#session.moveTo(this.#agentDir, cwd, dir);
    this.#cwd = cwd;
    this.#sessionDir = dir;
  }
}

/**
 * `buildSessionContext(entries, leafId?)`: the context for `leafId` (the last entry when
 * undefined, none when null) of entries given as objects, built by the core.
 */
export function buildSessionContext(entries, leafId) {
  const header = { type: 'session', version: 3, id: 'context', timestamp: new Date(0).toISOString(), cwd: '' };
  const text = [header, ...entries].map((e) => JSON.stringify(e)).join('\n') + '\n';
  return contextOfText(text, leafId);
}

/** The records of a session file as written (no migration), `[]` when it is missing or
 * its first record is not a session header. */
export async function loadEntriesFromFile(filePath) {
  let text;
  try {
    text = fs.readFileSync(filePath, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return [];
    throw e;
  }
  return fileRecords(text);
}

/** Every record of a JSONL text, unreadable lines skipped. */
export function parseSessionEntries(content) {
  return parseRecords(content);
}

/** The newest session file (by mtime) of `sessionDir` with a valid header, or `null`. */
export async function findMostRecentSession(sessionDir, storage = FILES) {
  return newestIn(packageStorage(storage), path.resolve(sessionDir)) ?? null;
}

/**
 * Delete a session file with its artifacts directory and its lock; blobs stay for garbage
 * collection. A session is a `.jsonl` file under `<agentDir>/sessions`, or, elsewhere, a
 * `.jsonl` file that starts with a session header (other files are refused, kind
 * `invalidInput`); a missing file rejects (kind `notFound`), as the agent's unlink. A session a live writer of another process holds is not deleted (kind
 * `conflict`, naming it); a dead writer's lock is recovered. Within this process the
 * delete goes ahead (the agent closes its active session first); a manager of this
 * process that still has it open writes it again whole on its next append.
 */
export async function deleteSessionWithArtifacts(sessionPath) {
  return FILES.deleteSessionWithArtifacts(sessionPath);
}

export { getLatestCompactionEntry, migrateSessionEntries } from './entry-helpers.mjs';

/**
 * The `limit` newest sessions of `sessionDir` for a welcome screen: `path`, `mtime` (ms),
 * `fullName`, `name` (at most 40 characters) and `timeAgo`, with `id`, `cwd`, `title`.
 */
export async function getRecentSessions(sessionDir, limit = 3, storage = FILES) {
  return recentSessions(packageStorage(storage), { sessionDir: path.resolve(sessionDir), limit })
    .map((r) => ({ ...r, mtime: Date.parse(r.modified) }));
}

/**
 * The session `sessionArg` names (id prefix, file name prefix, or the id part of a file
 * name) in `sessionDir` (default: the cwd's), then, without `sessionDir`, in every
 * project: `{ session, scope: 'local' | 'global' }`, or `undefined`. Unlike the agent,
 * which takes the newest of several matches, an ambiguous prefix throws
 * (`kind: "ambiguous"`, the candidates in `details`): resuming the wrong session silently
 * is worse than asking for a longer prefix.
 */
export async function resolveResumableSession(sessionArg, cwd, sessionDir, storage = FILES) {
  const agentDir = getAgentDir();
  const local = sessionDir === undefined ? SessionManager.getDefaultSessionDir(cwd, agentDir, storage) : path.resolve(sessionDir);
  const port = packageStorage(storage);
  const found = findResumableSession(port, {
    agentDir, sessionDir: local, arg: sessionArg, localOnly: sessionDir !== undefined,
  });
  return found ? { ...found, session: agentSessionInfo(found.session, port, agentDir) } : undefined;
}

/**
 * A listed session as the agent's `SessionInfo`: `created` and `modified` as `Date`s, and
 * `allMessagesText` (when the listing left it out) an enumerable getter that reads that
 * session's text on first access (its message lines, through its index) and keeps it; a
 * file gone since reads as `''`. Assigning it replaces it, as a plain property would.
 */
function agentSessionInfo(info, port, agentDir) {
  const out = { ...info, created: new Date(info.created), modified: new Date(info.modified) };
  if ('allMessagesText' in out) return out;
  let text;
  Object.defineProperty(out, 'allMessagesText', {
    enumerable: true,
    configurable: true,
    get() {
      text ??= sessionText(port, { agentDir, path: info.path }) ?? '';
      return text;
    },
    set(v) { text = v; },
  });
  return out;
}

/**
}

/** The real path of `p` when it exists (symlinks resolved), else `p`. */
/** This host's home and temp directories (real paths), which name sessions folders. */
function places() {
  return { home: realPath(os.homedir()), tempDir: realPath(os.tmpdir()) };
}

function realPath(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** This process's terminal (its breadcrumb names `--continue`'s session), if any. */
function currentTerminal() {
  let tty;
  try {
    if (process.stdin.isTTY) tty = fs.readlinkSync('/proc/self/fd/0');
  } catch {
    // No /proc: the terminal variables still tell.
  }
  return terminalId(tty, process.env);
}

/** Open for writing; a missing or empty file is written at once with its header. */
function openFile(port, file, agentDir, cwd) {
  let size = 0;
  try {
    size = port.stat(file).size;
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  // Lazy: the entries stay in the file until something needs them; resuming (the
  // context, appends) reads the leaf's path through the session index.
  const session = Session.open(port, file, { agentDir, cwd, lazy: true });
  if (size === 0) session.ensureOnDisk();
  return session;
}

function definedOnly(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}
