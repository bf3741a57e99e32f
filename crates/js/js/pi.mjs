// `xcsh-session/pi`: pi's `SessionManager` (`@mariozechner/pi-coding-agent`'s
// core/session-manager), with its method names, signatures, return shapes and its
// synchronous opening, over this package's `Session` in the pi flavour (src/flavour.rs):
// the files written are pi's (UUID v7 session ids, `--<cwd>--` directories, entries as
// given: no blob store, no truncation, pi's entry shapes), read by pi's rules (context
// `model`, listing `modified`). Every rule is the Rust core's. Node only (node:fs).
//
// Deliberately absent or different (each also in crates/js/README.md):
// - `newSession({ id })`: an explicit session id is refused (the core makes every id).
// - `_persist`, `_buildIndex`, `_rewriteFile`: pi's internals, not its API.
// - `createBranchedSession` re-parents an entry whose parent was a dropped label to the
//   label's parent; pi leaves it pointing at the missing label (the branched session then
//   loses its history before that point).
// - Opening never destroys a file: one whose header is unreadable is copied aside
//   (`<file>.corrupt-<time>`) before it is written again; pi overwrites it.
// - A session file another process writes is refused (`kind: "conflict"`), as every
//   writer of this package; pi appends regardless.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  Session, nodeStorage, buildSessionContext as contextOfText, fileRecords,
  findMostRecentSession as newestIn, listSessions, parseRecords, sessionDirForCwd,
} from './node.mjs';

const PI = 'pi';
const files = nodeStorage();

/** The session file's format version pi writes. */
export const CURRENT_SESSION_VERSION = 3;

/** `$PI_CODING_AGENT_DIR` (a leading `~` is the home), else `~/.pi/agent`, as pi's. */
export function getAgentDir() {
  const dir = process.env.PI_CODING_AGENT_DIR;
  if (!dir) return path.join(os.homedir(), '.pi', 'agent');
  if (dir === '~') return os.homedir();
  if (dir.startsWith('~/')) return os.homedir() + dir.slice(1);
  return dir;
}

/** `<agentDir>/sessions/--<cwd>--` (`/`, `\` and `:` as `-`), created. */
export function getDefaultSessionDir(cwd, agentDir = getAgentDir()) {
  const dir = sessionDirForCwd(agentDir, cwd, { flavour: PI });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export class SessionManager {
  #session;
  #cwd;
  #sessionDir;
  #persist;
  #agentDir;

  /** Use the static constructors (`create`, `open`, `continueRecent`, `inMemory`, `forkFrom`). */
  constructor(cwd, sessionDir, sessionFile, persist, session) {
    this.#cwd = cwd;
    this.#sessionDir = sessionDir;
    this.#persist = persist;
    this.#agentDir = getAgentDir();
    if (persist && sessionDir) fs.mkdirSync(sessionDir, { recursive: true });
    if (session) this.#session = session;
    else if (sessionFile) this.setSessionFile(sessionFile);
    else this.newSession();
  }

  // ---- constructors ----

  /** A new session of `cwd` in `sessionDir` (default: `getDefaultSessionDir(cwd)`). */
  static create(cwd, sessionDir) {
    return new SessionManager(cwd, sessionDir ?? getDefaultSessionDir(cwd), undefined, true);
  }

  /** Open a session file; `cwdOverride` replaces the header's cwd. */
  static open(filePath, sessionDir, cwdOverride) {
    const header = loadEntriesFromFile(filePath).find((e) => e.type === 'session');
    const cwd = cwdOverride ?? header?.cwd ?? process.cwd();
    return new SessionManager(cwd, sessionDir ?? path.resolve(filePath, '..'), filePath, true);
  }

  /** The newest session of the directory (by mtime), else a new one. */
  static continueRecent(cwd, sessionDir) {
    const dir = sessionDir ?? getDefaultSessionDir(cwd);
    return new SessionManager(cwd, dir, findMostRecentSession(dir) ?? undefined, true);
  }

  /** A session that is never written. */
  static inMemory(cwd = process.cwd()) {
    return new SessionManager(cwd, '', undefined, false);
  }

  /** A new session of `targetCwd` holding the entries of the session file `sourcePath`,
   * its `parentSession` the source's path; written at once. */
  static forkFrom(sourcePath, targetCwd, sessionDir) {
    const source = loadEntriesFromFile(sourcePath);
    if (source.length === 0) throw new Error(`Cannot fork: source session file is empty or invalid: ${sourcePath}`);
    const dir = sessionDir ?? getDefaultSessionDir(targetCwd);
    fs.mkdirSync(dir, { recursive: true });
    const session = Session.forkFrom(files, sourcePath, {
      agentDir: getAgentDir(), cwd: targetCwd, sessionDir: dir, flavour: PI,
    });
    return new SessionManager(targetCwd, dir, undefined, true, session);
  }

  /** `SessionInfo` of every session of `cwd` (or of `sessionDir`), newest first. */
  static async list(cwd, sessionDir, onProgress) {
    const dir = sessionDir ?? getDefaultSessionDir(cwd);
    if (!fs.existsSync(dir)) return [];
    return listed({ agentDir: getAgentDir(), sessionDir: path.resolve(dir) }, onProgress);
  }

  /** `SessionInfo` of every session of every project, newest first. */
  static async listAll(onProgress) {
    const agentDir = getAgentDir();
    if (!fs.existsSync(path.join(agentDir, 'sessions'))) return [];
    return listed({ agentDir }, onProgress);
  }

  // ---- the session ----

  /** Switch to a session file; a missing one becomes a new session at that path. */
  setSessionFile(sessionFile) {
    const file = path.resolve(sessionFile);
    this.#session?.close();
    this.#session = Session.open(files, file, { agentDir: this.#agentDir, cwd: this.#cwd, flavour: PI });
  }

  /** Start a new session (its file appears with the first assistant message). */
  newSession(options) {
    if (options?.id !== undefined) throw new Error('xcsh-session/pi: newSession({ id }) is not supported: the core makes session ids');
    this.#session?.close();
    const parentSession = options?.parentSession;
    this.#session = this.#persist
      ? Session.create(files, definedOnly({
        agentDir: this.#agentDir, cwd: this.#cwd, sessionDir: this.#sessionDir, parentSession, flavour: PI,
      }))
      : Session.inMemory(this.#cwd, parentSession, PI);
    return this.#session.file;
  }

  isPersisted() { return this.#persist; }
  getCwd() { return this.#cwd; }
  getSessionDir() { return this.#sessionDir; }
  getSessionId() { return this.#session.sessionId; }
  getSessionFile() { return this.#session.file; }

  // ---- appending (each returns the new entry's id) ----

  appendMessage(message) { return this.#session.appendMessage(message); }
  appendThinkingLevelChange(thinkingLevel) { return this.#session.appendThinkingLevelChange(thinkingLevel); }
  appendModelChange(provider, modelId) {
    return this.#session.appendEntry({ type: 'model_change', provider, modelId });
  }
  appendCompaction(summary, firstKeptEntryId, tokensBefore, details, fromHook) {
    return this.#session.appendEntry(definedOnly({
      type: 'compaction', summary, firstKeptEntryId, tokensBefore, details, fromHook,
    }));
  }
  appendCustomEntry(customType, data) { return this.#session.appendCustomEntry(customType, data); }
  appendSessionInfo(name) { return this.#session.appendEntry({ type: 'session_info', name: name.trim() }); }
  getSessionName() { return this.#session.sessionName() ?? undefined; }
  appendCustomMessageEntry(customType, content, display, details) {
    return this.#session.appendCustomMessageEntry(customType, content, display, details);
  }
  appendLabelChange(targetId, label) {
    this.#mustHave(targetId);
    return this.#session.appendLabelChange(targetId, label);
  }

  // ---- reading ----

  getLeafId() { return this.#session.leafId ?? null; }
  getLeafEntry() {
    const id = this.getLeafId();
    return id === null ? undefined : this.getEntry(id);
  }
  getEntry(id) {
    try {
      return this.#session.entry(id);
    } catch (e) {
      if (e.kind === 'entryNotFound') return undefined;
      throw e;
    }
  }
  getChildren(parentId) { return this.#session.children(parentId); }
  getLabel(id) { return this.#session.label(id) ?? undefined; }
  getBranch(fromId) {
    const id = fromId ?? this.getLeafId();
    if (id === null || this.getEntry(id) === undefined) return [];
    return this.#session.branchPath(id);
  }
  /** What the model sees from the leaf: `{ messages, thinkingLevel, model }`. */
  buildSessionContext() { return piContext(this.#session.context()); }
  getHeader() { return this.#session.header(); }
  getEntries() { return this.#session.entries(); }
  /** The tree, each node `{ entry, children, label?, labelTimestamp? }`. */
  getTree() {
    const stamps = labelTimestamps(this.getEntries());
    const withStamps = (node) => {
      const out = { entry: node.entry, children: node.children.map(withStamps) };
      if (node.label !== undefined) out.label = node.label;
      const at = stamps.get(node.entry.id);
      if (at !== undefined) out.labelTimestamp = at;
      return out;
    };
    return this.#session.tree().map(withStamps);
  }

  // ---- the leaf ----

  branch(branchFromId) {
    this.#mustHave(branchFromId);
    this.#session.branch(branchFromId);
  }
  resetLeaf() { this.#session.resetLeaf(); }
  branchWithSummary(branchFromId, summary, details, fromHook) {
    if (branchFromId === null) this.#session.resetLeaf();
    else this.branch(branchFromId);
    return this.#session.appendEntry(definedOnly({
      type: 'branch_summary', fromId: branchFromId ?? 'root', summary, details, fromHook,
    }));
  }
  /** A new session holding the path from the root to `leafId` (its labels re-applied);
   * its file, `undefined` in memory. */
  createBranchedSession(leafId) {
    if (this.getEntry(leafId) === undefined) throw new Error(`Entry ${leafId} not found`);
    return this.#session.createBranchedSession(leafId) ?? undefined;
  }

  #mustHave(id) {
    if (this.getEntry(id) === undefined) throw new Error(`Entry ${id} not found`);
  }
}

/** A context as pi's `buildSessionContext` returns it. */
function piContext(ctx) {
  return { messages: ctx.messages, thinkingLevel: ctx.thinkingLevel, model: ctx.model ?? null };
}

/** Each labelled entry's label time (its latest label entry's), as pi's tree gives it. */
function labelTimestamps(entries) {
  const stamps = new Map();
  for (const e of entries) {
    if (e.type !== 'label') continue;
    if (e.label) stamps.set(e.targetId, e.timestamp);
    else stamps.delete(e.targetId);
  }
  return stamps;
}

/** A listing as pi's `SessionInfo`s (`created`, `modified` as `Date`s), reporting progress. */
function listed(options, onProgress) {
  const infos = listSessions(files, { ...options, withText: true, flavour: PI });
  infos.forEach((_, i) => onProgress?.(i + 1, infos.length));
  return infos.map((i) => definedOnly({
    path: i.path,
    id: i.id,
    cwd: i.cwd ?? '',
    name: i.title,
    parentSessionPath: i.parentSessionPath,
    created: new Date(i.created),
    modified: new Date(i.modified),
    messageCount: i.messageCount,
    firstMessage: i.firstMessage,
    allMessagesText: i.allMessagesText,
  }));
}

/**
 * `buildSessionContext(entries, leafId?, byId?)`: the context for `leafId` (the last entry
 * when undefined or unknown, none when null) of entries given as objects, as pi builds it.
 * `byId` (pi's index of the same entries, to spare building one) is not needed here.
 */
export function buildSessionContext(entries, leafId, byId) {
  const header = { type: 'session', version: 3, id: 'context', timestamp: new Date(0).toISOString(), cwd: '' };
  const text = [header, ...entries].map((e) => JSON.stringify(e)).join('\n') + '\n';
  return piContext(contextOfText(text, leafId, PI));
}

/** The records of a session file as written (no migration), `[]` when it is missing or
 * its first record is not a session header. */
export function loadEntriesFromFile(filePath) {
  if (!fs.existsSync(filePath)) return [];
  return fileRecords(fs.readFileSync(filePath, 'utf8'));
}

/** Every record of a JSONL text, unreadable lines skipped. */
export function parseSessionEntries(content) {
  return parseRecords(content);
}

/** The newest session file (by mtime) of `sessionDir` with a valid header, or `null`. */
export function findMostRecentSession(sessionDir) {
  try {
    return newestIn(files, path.resolve(sessionDir)) ?? null;
  } catch {
    return null;
  }
}

export { getLatestCompactionEntry, migrateSessionEntries } from './entry-helpers.mjs';

function definedOnly(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}
