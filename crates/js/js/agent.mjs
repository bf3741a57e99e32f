// `xcsh-session/agent`: the agent's `SessionManager` (xcsh / oh-my-pi / pi), with its method
// names, signatures and return shapes, over this package's `Session` (no second
// implementation: every rule is the Rust core's). Node only: files go through node:fs.
//
// Deliberate differences from the agent, each for a reason:
// - One writer per file across processes: a second process gets an Error with
//   `kind: "conflict"` instead of interleaving its lines (the agent has no lock). Within
//   one process the newest open takes over and the older manager's writes fail.
// - `deleteSessionWithArtifacts` is a writer too: it refuses (`kind: "conflict"`) a
//   session a live writer of another process holds, instead of deleting it under that
//   writer, which would write it again without its artifacts.
// - `continueRecent(cwd, sessionDir)` with an explicit directory takes that directory's
//   newest session; the terminal breadcrumb is read only for the default directory.
// - Stale OpenAI Responses replay data is dropped from `buildSessionContext()` of a loaded
//   session as the agent does, but `getEntries()` returns the entries as they are on disk.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  OutputSink as CoreOutputSink, PromptHistory, Session, blobPut,
  buildSessionContext as contextOfText, continueRecent, deleteSession, fileRecords,
  findMostRecentSession as newestIn, findResumableSession, listSessions, mergeLegacySessionDir,
  migrateRecords, parseRecords, recentSessions, sessionDirForCwd, terminalId,
} from './node.mjs';
import { nodeStorage } from './node-storage.mjs';
import { nodeHistoryStore } from './node-history.mjs';

/** `$PI_CODING_AGENT_DIR`, else `~/.xcsh/agent` (where the agent keeps sessions and blobs). */
export function getAgentDir() {
  return process.env.PI_CODING_AGENT_DIR || path.join(os.homedir(), '.xcsh', 'agent');
}

/** The session file's format version written (older files are migrated to it). */
export const CURRENT_SESSION_VERSION = 3;

const storage = nodeStorage();

export class SessionManager {
  #session;
  #cwd;
  #sessionDir;
  #agentDir;

  /** Use the static constructors (`create`, `open`, `continueRecent`, `inMemory`, `forkFrom`). */
  constructor(session, cwd, sessionDir, agentDir) {
    this.#session = session;
    this.#cwd = cwd;
    this.#sessionDir = sessionDir;
    this.#agentDir = agentDir;
  }

  // ---- constructors ----

  /**
   * Where new sessions of `cwd` go, as the agent places them (by the real path of `cwd`,
   * the home and the temp directory): `-<rel>`, `-tmp-<rel>` or `--<cwd>--`. The legacy
   * `--<cwd>--` folder is folded into it first, keeping whatever cannot be moved; the
   * directory is created.
   */
  static getDefaultSessionDir(cwd, agentDir = getAgentDir()) {
    const resolved = path.resolve(cwd);
    const dir = sessionDirForCwd(agentDir, realPath(resolved), {
      home: realPath(os.homedir()), tempDir: realPath(os.tmpdir()),
    });
    try {
      mergeLegacySessionDir(storage, { agentDir, cwd: resolved, sessionDir: dir });
    } catch {
      // Best effort, as the agent's: both folders stay readable.
    }
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** A new session of `cwd` in `sessionDir` (default: the cwd's directory of the agent dir). */
  static create(cwd, sessionDir) {
    const agentDir = getAgentDir();
    const dir = sessionDir ?? SessionManager.getDefaultSessionDir(cwd, agentDir);
    const session = Session.create(storage, { agentDir, cwd, sessionDir: dir });
    return new SessionManager(session, cwd, dir, agentDir);
  }

  /** Open a session file; a file that does not exist is written at once with a header. */
  static async open(filePath, sessionDir) {
    const agentDir = getAgentDir();
    const file = path.resolve(filePath);
    const session = openFile(file, agentDir, process.cwd());
    const cwd = session.header().cwd ?? process.cwd();
    return new SessionManager(session, cwd, sessionDir ?? path.dirname(file), agentDir);
  }

  /** The terminal's last session, else the newest of the directory, else a new one. */
  static async continueRecent(cwd, sessionDir) {
    const agentDir = getAgentDir();
    const dir = sessionDir ?? SessionManager.getDefaultSessionDir(cwd, agentDir);
    const found = continueRecent(storage, definedOnly({
      agentDir, cwd: path.resolve(cwd), sessionDir: dir, terminal: currentTerminal(),
    }));
    if (found.source === 'new') return SessionManager.create(cwd, dir);
    return new SessionManager(openFile(found.path, agentDir, cwd), cwd, dir, agentDir);
  }

  /** A session that is never written. */
  static inMemory(cwd = process.cwd()) {
    return new SessionManager(Session.inMemory(cwd), cwd, '', getAgentDir());
  }

  /** A new session of `cwd` holding the history of the session file `sourcePath`. */
  static async forkFrom(sourcePath, cwd, sessionDir) {
    const agentDir = getAgentDir();
    const dir = sessionDir ?? SessionManager.getDefaultSessionDir(cwd, agentDir);
    const source = Session.open(storage, path.resolve(sourcePath), { readOnly: true, agentDir });
    const session = Session.create(storage, {
      agentDir, cwd, sessionDir: dir, parentSession: source.sessionId,
    });
    const title = source.header().title;
    for (const entry of source.entries()) {
      const { id, parentId, timestamp, ...rest } = entry;
      session.appendEntry(rest);
    }
    if (title) session.setSessionName(title, source.header().titleSource ?? 'auto');
    session.ensureOnDisk();
    return new SessionManager(session, cwd, dir, agentDir);
  }

  /** `SessionInfo` of every session of `cwd` (or of `sessionDir`), newest first. */
  static async list(cwd, sessionDir) {
    const agentDir = getAgentDir();
    const dir = sessionDir === undefined ? SessionManager.getDefaultSessionDir(cwd, agentDir) : path.resolve(sessionDir);
    return listSessions(storage, { agentDir, sessionDir: dir });
  }

  /** `SessionInfo` of every session of every project. */
  static async listAll() {
    return listSessions(storage, { agentDir: getAgentDir() });
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
  // Entries are handed out as live objects, the same object for an id each time, as the
  // agent's are: `rewriteEntries()` persists what was edited in them.

  #live = new Map(); // id -> { entry, json (as handed out) }
  #liveEntries(entries) {
    return entries.map((e) => {
      const known = this.#live.get(e.id);
      if (known) return known.entry;
      this.#live.set(e.id, { entry: e, json: JSON.stringify(e) });
      return e;
    });
  }
  #switchTo(session) {
    this.#session = session;
    this.#live = new Map();
  }

  getHeader() { return this.#session.header(); }
  getEntries() { return this.#liveEntries(this.#session.entries()); }
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
  getChildren(parentId) { return this.#liveEntries(this.#session.children(parentId)); }
  getLeafId() { return this.#session.leafId; }
  getLeafEntry() {
    const id = this.#session.leafId;
    return id === null ? undefined : this.getEntry(id);
  }
  getBranch(fromId) { return this.#liveEntries(this.#session.branchPath(fromId)); }
  getTree() { return this.#session.tree(); }
  getLabel(id) { return this.#session.label(id); }
  buildSessionContext() { return this.#session.context(); }
  getUsageStatistics() { return this.#session.usageStatistics(); }
  /** The TTSR rule names injected on the current branch, each once. */
  getInjectedTtsrRules() { return this.#session.context().injectedTtsrRules; }
  /** Store bytes in the agent dir's content-addressed blob store: `{ hash, path, ref }`. */
  async putBlob(data) { return blobPut(storage, this.#agentDir, data); }
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
  createBranchedSession(leafId) { return this.#session.createBranchedSession(leafId); }

  // ---- the session as a whole ----

  async ensureOnDisk() { this.#session.ensureOnDisk(); }
  async flush() { this.#session.flush(); }
  /** Persist the whole file, with every entry edited in place since it was handed out. */
  async rewriteEntries() {
    for (const live of this.#live.values()) {
      const json = JSON.stringify(live.entry);
      if (json === live.json) continue;
      this.#session.replaceEntry(live.entry);
      live.json = json;
    }
    this.#session.rewriteEntries();
  }
  async close() { this.#session.close(); }

  /**
   * What `restoreState` needs to come back to this session if switching away fails (the
   * agent rolls back a failed `/resume`). The snapshot's `session` is the live object.
   */
  captureState() {
    return {
      sessionId: this.getSessionId(),
      sessionName: this.getSessionName(),
      titleSource: this.titleSource,
      sessionFile: this.getSessionFile(),
      session: this.#session,
      cwd: this.#cwd,
      sessionDir: this.#sessionDir,
    };
  }

  /** Back to a captured session (it takes its writer lock again at its next write). */
  restoreState(snapshot) {
    if (this.#session !== snapshot.session) this.#session.close();
    this.#switchTo(snapshot.session);
    this.#cwd = snapshot.cwd;
    this.#sessionDir = snapshot.sessionDir;
  }

  /** Switch to a new session in the same directory; returns its file. */
  async newSession(options = {}) {
    this.#session.close();
    this.#switchTo(Session.create(storage, definedOnly({
      agentDir: this.#agentDir, cwd: this.#cwd, sessionDir: this.#sessionDir || undefined,
      parentSession: options.parentSession,
    })));
    return this.#session.file;
  }

  /** Switch to another session file (written at once with a header when it does not exist). */
  async setSessionFile(file) {
    const next = openFile(path.resolve(file), this.#agentDir, this.#cwd);
    this.#session.close();
    this.#switchTo(next);
  }

  /** Continue in a copy under a new id; `{ oldSessionFile, newSessionFile }`. */
  async fork() {
    if (!this.#session.file) return undefined;
    const { oldFile, newFile } = this.#session.fork();
    return { oldSessionFile: oldFile, newSessionFile: newFile };
  }

  /** Move the session (file and artifacts) to the directory of another cwd. */
  async moveTo(newCwd) {
    const cwd = path.resolve(newCwd);
    if (cwd === this.#cwd) return;
    const dir = SessionManager.getDefaultSessionDir(cwd, this.#agentDir);
    if (this.#session.file) this.#session.moveTo(this.#agentDir, cwd, dir);
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
export async function findMostRecentSession(sessionDir) {
  return newestIn(storage, path.resolve(sessionDir)) ?? null;
}

/**
 * Delete a session file of the agent dir with its artifacts directory and its lock; blobs
 * stay for garbage collection. Only `.jsonl` files under `<agentDir>/sessions` are
 * sessions. A session a live writer of another process holds is not deleted (kind
 * `conflict`, naming it); a dead writer's lock is recovered. Within this process the
 * delete goes ahead (the agent closes its active session first); a manager of this
 * process that still has it open writes it again whole on its next append.
 */
export async function deleteSessionWithArtifacts(sessionPath) {
  deleteSession(storage, getAgentDir(), path.resolve(sessionPath));
}

/**
 * `migrateSessionEntries(entries)`: a file's records (header first) migrated to the current
 * version in place, each object keeping its identity, as the agent mutates them.
 */
export function migrateSessionEntries(entries) {
  const migrated = migrateRecords(entries);
  migrated.forEach((next, i) => {
    const entry = entries[i];
    for (const key of Object.keys(entry)) if (!(key in next)) delete entry[key];
    Object.assign(entry, next);
  });
}

/** The newest compaction entry of `entries`, or `null`. */
export function getLatestCompactionEntry(entries) {
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type === 'compaction') return entries[i];
  }
  return null;
}

/**
 * The `limit` newest sessions of `sessionDir` for a welcome screen: `path`, `mtime` (ms),
 * `fullName`, `name` (at most 40 characters) and `timeAgo`, with `id`, `cwd`, `title`.
 */
export async function getRecentSessions(sessionDir, limit = 3) {
  return recentSessions(storage, { sessionDir: path.resolve(sessionDir), limit })
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
export async function resolveResumableSession(sessionArg, cwd, sessionDir) {
  const agentDir = getAgentDir();
  const local = sessionDir === undefined ? SessionManager.getDefaultSessionDir(cwd, agentDir) : path.resolve(sessionDir);
  const found = findResumableSession(storage, {
    agentDir, sessionDir: local, arg: sessionArg, localOnly: sessionDir !== undefined,
  });
  return found ?? undefined;
}

/**
 * The agent's `OutputSink`: streaming tool output with a bounded tail, spilled whole to
 * `artifactPath` once past `spillThreshold` bytes. Chunks are sanitized as they arrive
 * (escape sequences split across chunks included) rather than at `dump()`.
 */
export class OutputSink {
  #sink;
  constructor(options = {}) {
    this.#sink = new CoreOutputSink(definedOnly({ ...options, storage: options.artifactPath ? storage : undefined }));
  }
  push(chunk) { this.#sink.push(chunk); }
  /** A `WritableStream` of strings or UTF-8 bytes that pushes into this sink. */
  createInput() {
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    const finish = () => { const rest = decoder.decode(); if (rest) this.push(rest); };
    return new WritableStream({
      write: (chunk) => this.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })),
      close: finish,
      abort: finish,
    });
  }
  async dump(notice) { return this.#sink.dump(notice); }
}

/**
 * The agent's `HistoryStorage`: the prompts the user submitted, in the SQLite file
 * `<agentDir>/history.db` that the agent and the CLI share (`node:sqlite`, Node 22.13 or
 * newer; an older schema is migrated on open). Entries are `{ id, prompt, created_at,
 * cwd? }`, `created_at` in epoch seconds. Unlike the agent's, search ranks the best match
 * first (FTS5 bm25, then newest) rather than newest first, as the CLI and viewer rank it.
 */
export class HistoryStorage {
  static #instance;
  #store;
  #history;

  constructor(dbPath) {
    this.#store = nodeHistoryStore(dbPath);
    this.#history = new PromptHistory(this.#store);
  }

  /** The history of `dbPath` (default `<agentDir>/history.db`), one per process. */
  static open(dbPath = path.join(getAgentDir(), 'history.db')) {
    HistoryStorage.#instance ??= new HistoryStorage(dbPath);
    return HistoryStorage.#instance;
  }

  /** Forget (and close) the process's history, as the agent's tests do between cases. */
  static resetInstance() {
    HistoryStorage.#instance?.#store.close();
    HistoryStorage.#instance = undefined;
  }

  /** Store a prompt (trimmed; blank ones and a repeat of the previous one are skipped). */
  async add(prompt, cwd) {
    this.#history.add(prompt, cwd ?? undefined);
  }

  /** The `limit` newest prompts. */
  getRecent(limit) {
    return this.#history.recent({ limit: safeLimit(limit) }).map(agentEntry);
  }

  /** The prompts whose words start with the words of `query`, best match first. */
  search(query, limit) {
    const q = PromptHistory.prefixQuery(String(query));
    if (!q) return [];
    return this.#history.search(q, { limit: safeLimit(limit) }).map(agentEntry);
  }
}

/** A limit as the agent reads it: not finite → 0, else floored at 0. */
function safeLimit(limit) {
  return Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
}

function agentEntry(e) {
  const entry = { id: e.id, prompt: e.prompt, created_at: Math.floor(Date.parse(e.createdAt) / 1000) };
  if (e.cwd !== null) entry.cwd = e.cwd;
  return entry;
}

/** The real path of `p` when it exists (symlinks resolved), else `p`. */
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
function openFile(file, agentDir, cwd) {
  const before = fs.statSync(file, { throwIfNoEntry: false });
  const session = Session.open(storage, file, { agentDir, cwd });
  if (!before || before.size === 0) session.ensureOnDisk();
  return session;
}

function definedOnly(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}
