
// ---- Types of the xcsh-session JS API (written by hand; the values are plain JSON) ----

/** One directory entry returned by `JsStorage.listDir`. */
export interface StorageDirEntry {
  name: string;
  isDir: boolean;
}

/** What `JsStorage.stat` returns. */
export interface StorageStat {
  size: number;
  /** Modification time, epoch milliseconds. */
  mtimeMs: number;
  isDir: boolean;
  /** Optional: the file's device and inode numbers (Node's `fs.Stats` `dev` and `ino`),
   * which `nodeStorage()` gives. With them a session checks its writer lock on each append
   * by a `stat` of the lock file instead of reading it. Leave them out where a replaced
   * file could keep both numbers while the first file is still there. */
  dev?: number;
  ino?: number;
}

/**
 * The storage port, implemented in JS. Every method is synchronous. A thrown error whose
 * `code` is `'ENOENT'` means "not found" (so Node's `fs.*Sync` errors work as they are);
 * `'EEXIST'` and `'EACCES'`/`'EPERM'` map to "already exists" and "permission denied";
 * `'EXCSH_NOT_REGULAR'` to "`<path>` is not a regular file" (a FIFO, socket or device
 * where a file was expected: open it without blocking, check the open handle, and leave
 * such files out of `listDir`, as `nodeStorage()` does); anything else is a plain
 * storage failure. Paths are `/`-separated strings.
 */
export interface JsStorage {
  read(path: string): Uint8Array;
  /** Optional fast path for `read`: copy the file's bytes from `position` into `dest`
   * and return how many were written (0 at the end of the file), e.g.
   * `fs.readSync(fd, dest, 0, dest.length, position)` until `dest` is full or the file
   * ends. When present, whole and ranged reads go straight into wasm memory (one copy
   * of the bytes instead of two, no JS buffer to allocate), and `readRange` is not used. */
  readInto?(path: string, dest: Uint8Array, position: number): number;
  /** At most `maxBytes` from the start of the file. */
  readPrefix(path: string, maxBytes: number): Uint8Array;
  /** At most `length` bytes starting at byte `offset`: fewer at the end of the file, none
   * past it (an empty array, not an error); a missing file throws as `read` does. A
   * positioned read of those bytes only, e.g. `fs.readSync(fd, buf, n, length - n,
   * offset + n)` until done or 0; both numbers are non-negative integers. Optional, but
   * without it every ranged read reads the whole file (`read`) and slices it, slow for
   * large sessions: `checkStorage` warns. All the package's storages have it. */
  readRange?(path: string, offset: number, length: number): Uint8Array;
  /** Create or truncate, then write. `data` is a fresh copy the storage may keep. */
  write(path: string, data: Uint8Array): void;
  /** Append to the end, creating the file when missing. */
  append(path: string, data: Uint8Array): void;
  /** Atomic replace of `to` by `from`. */
  rename(from: string, to: string): void;
  unlink(path: string): void;
  listDir(path: string): StorageDirEntry[];
  stat(path: string): StorageStat;
  mkdirAll(path: string): void;
  fsync(path: string): void;
  /** Remove an empty directory. */
  rmdir(path: string): void;
  /** Wall clock in epoch ms; default `Date.now()`. */
  nowMs?(): number;
  /** Entropy for ids; default `crypto.getRandomValues` (cryptographic in every host). */
  randomU64?(): bigint | number;
  /** A blob store of your own instead of the files `<blobsDir>/<hash>` (each defaults
   * to those files). Directory copies and atomic writes are always built on the file
   * methods above. */
  blobPut?(blobsDir: string, hash: string, data: Uint8Array): void;
  blobGet?(blobsDir: string, hash: string): Uint8Array | null;
  /** Create a file that must not exist (throw with code 'EEXIST' otherwise), e.g.
   * `fs.writeFileSync(path, data, { flag: 'wx' })`. Session writer locks use it. */
  createNew?(path: string, data: Uint8Array): void;
  /** This process, recorded in writer locks; default `{ pid: 0, host: "unknown" }`. */
  processIdentity?(): { pid: number; host: string };
  /** Is `pid` on this host alive? Lets a dead writer's lock be recovered. */
  processAlive?(pid: number): boolean | undefined;
}

/** Error kinds carried by every thrown `Error` as `error.kind`. */
export type SessionErrorKind = "entryNotFound" | "notFound" | "invalidInput" | "readOnly" | "persistence" | "storage" | "ambiguous" | "otherProject" | "conflict";

/** The errors this package throws. */
export interface SessionError extends Error {
  kind: SessionErrorKind;
}

/** The first line of a session file. Unknown keys are kept. */
export interface SessionHeader {
  type: "session";
  version?: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
  title?: string;
  titleSource?: string;
  [key: string]: unknown;
}

export interface TextContent { type: "text"; text: string; [key: string]: unknown }
export interface ThinkingContent { type: "thinking"; thinking: string; thinkingSignature?: string; [key: string]: unknown }
export interface ImageContent { type: "image"; data: string; mimeType: string; [key: string]: unknown }
export interface ToolCallContent { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown>; [key: string]: unknown }
export type ContentBlock = TextContent | ThinkingContent | ImageContent | ToolCallContent;

/** `Session.usageStatistics()`: totals over every assistant message and `task` tool result. */
export interface UsageStatistics {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  premiumRequests: number;
  cost: number;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens?: number;
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  [key: string]: unknown;
}

export interface UserMessage { role: "user"; content: string | ContentBlock[]; timestamp: number; [key: string]: unknown }
export interface AssistantMessage {
  role: "assistant";
  content: ContentBlock[];
  api?: string;
  provider: string;
  model: string;
  usage?: Usage;
  stopReason?: string;
  errorMessage?: string;
  timestamp: number;
  [key: string]: unknown;
}
export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: ContentBlock[];
  isError: boolean;
  details?: unknown;
  timestamp: number;
  [key: string]: unknown;
}
export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode?: number | null;
  cancelled?: boolean;
  truncated?: boolean;
  fullOutputPath?: string;
  timestamp: number;
  [key: string]: unknown;
}
/** Made by `buildSessionContext` from a `custom_message` entry. */
export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | ContentBlock[];
  display: boolean;
  details?: unknown;
  attribution?: string;
  timestamp: number | null;
}
/** Made by `buildSessionContext` from a `branch_summary` entry. */
export interface BranchSummaryMessage { role: "branchSummary"; summary: string; fromId: string; timestamp: number | null }
/** Made by `buildSessionContext` from the compaction on the path. */
export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  shortSummary?: string;
  tokensBefore: number;
  providerPayload?: { type: "openaiResponsesHistory"; provider: string; items: unknown[] };
  timestamp: number | null;
}
/** A message as stored or as sent to the model. Unknown roles pass through. */
export type AgentMessage =
  | UserMessage
  | AssistantMessage
  | ToolResultMessage
  | BashExecutionMessage
  | CustomMessage
  | BranchSummaryMessage
  | CompactionSummaryMessage
  | { role: string; [key: string]: unknown };

/** Fields every entry has. Unknown keys and unknown entry types are kept as they are. */
export interface EntryBase {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
  [key: string]: unknown;
}
export interface MessageEntry extends EntryBase { type: "message"; message: AgentMessage }
export interface ThinkingLevelChangeEntry extends EntryBase { type: "thinking_level_change"; thinkingLevel: string | null }
export interface ModelChangeEntry extends EntryBase { type: "model_change"; model: string; role?: string }
export interface CompactionEntry extends EntryBase, CompactionInput { type: "compaction" }
export interface BranchSummaryEntry extends EntryBase { type: "branch_summary"; fromId: string; summary: string; details?: unknown; fromExtension?: boolean }
export interface CustomEntry extends EntryBase { type: "custom"; customType: string; data?: unknown }
export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | ContentBlock[];
  display: boolean;
  details?: unknown;
  attribution?: string;
}
export interface LabelEntry extends EntryBase { type: "label"; targetId: string; label?: string }
export interface TtsrInjectionEntry extends EntryBase { type: "ttsr_injection"; injectedRules: string[] }
export interface SessionInitEntry extends EntryBase { type: "session_init"; systemPrompt: string; task: string; tools: string[]; outputSchema?: unknown }
export interface ModeChangeEntry extends EntryBase { type: "mode_change"; mode: string; data?: Record<string, unknown> }
export interface ContextChangeEntry extends EntryBase { type: "context_change"; contextName: string; tenant: string; namespace: string }
export interface ServiceTierChangeEntry extends EntryBase { type: "service_tier_change"; serviceTier: string | null }
export interface McpToolSelectionEntry extends EntryBase { type: "mcp_tool_selection"; selectedToolNames: string[] }
/** One entry of a session (the header excluded). */
export type SessionEntry =
  | MessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | TtsrInjectionEntry
  | SessionInitEntry
  | ModeChangeEntry
  | ContextChangeEntry
  | ServiceTierChangeEntry
  | McpToolSelectionEntry
  | EntryBase;

/** An entry for `Session.appendEntry`: `id`, `parentId` and `timestamp` are assigned. */
export type NewEntry = { type: string; [key: string]: unknown };

/** What the agent sends to the model for one branch (`buildSessionContext`). */
export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel: string;
  serviceTier?: string;
  /** role → model ("default" is the model of the last assistant message, `provider/id`). */
  models: Record<string, string>;
  injectedTtsrRules: string[];
  selectedMCPToolNames: string[];
  hasPersistedMCPToolSelection: boolean;
  mode?: string;
  modeData?: Record<string, unknown>;
  activeContextName?: string;
  activeContextTenant?: string;
  /** Pi's model (the pi flavour only): of the last model_change or assistant message on the path. */
  model?: { provider?: string; modelId?: string } | null;
}

/** Whose rules a session writes by: xcsh's (default) or pi's (UUID v7 ids, `--<cwd>--`
 * directories, entries as given, pi's context `model` and listing `modified`). Default:
 * `"pi"` for an agent directory `.../.pi/agent`, else `"xcsh"`. */
export type Flavour = 'xcsh' | 'pi';

/** One node of `Session.tree()`: children are ordered by timestamp. */
export interface TreeNode {
  entry: SessionEntry;
  label?: string;
  children: TreeNode[];
}

/**
 * `Session.outline()`: the tree as outline rows in columns; row `i` of each column is entry
 * `ids[i]`. Depth first; at a fork the smaller branches come first (a side branch right
 * under its branch point, the longest line below it).
 */
export interface Outline {
  ids: string[];
  /** One line of preview per row (at most 140 characters). */
  texts: string[];
  /** The parent's row, -1 for a root. */
  parent: Int32Array;
  /** Indentation: one more under each fork. */
  depth: Uint16Array;
  /** 1 the entry forks, 2 it starts a branch of a fork, 4 it is the last of its siblings. */
  flags: Uint8Array;
  /** Number of children. */
  kids: Uint32Array;
  /** The row after the entry's subtree (collapsing a branch point skips to it). */
  end: Uint32Array;
  /** An index into `kindTable`. */
  kind: Uint16Array;
  /** `[tag, class]` of each kind of row (`["asst", "assistant"]`, `["model", "meta"]`, …). */
  kindTable: Array<[string, string]>;
  /** `[row, label]` of each labelled entry. */
  labels: Array<[number, string]>;
  /** What a branch's totals need of each row. */
  digests: OutlineDigests;
}

/** Per row of an `Outline`: its message's tokens, cost, time and model (`NaN`: none). */
export interface OutlineDigests {
  /** 0 not a message, 1 a message, 2 an assistant message (its usage counts). */
  message: Uint8Array;
  /** The message's time in ms (its own `timestamp`, else the entry's). */
  time: Float64Array;
  input: Float64Array;
  output: Float64Array;
  cacheRead: Float64Array;
  cacheWrite: Float64Array;
  /** `usage.cost.total`, `NaN` when the message carries none. */
  cost: Float64Array;
  /** An index into `models` (`provider/model`), -1 for none. */
  model: Int32Array;
  models: string[];
}

export interface LoadIssue {
  /** 1-based line number in the file. */
  line: number;
  kind: "unparsable" | "tornTail" | "gluedRecord";
  detail: string;
}

/** What loading found and did. */
export interface LoadReport {
  issues: LoadIssue[];
  /** Records that parsed as JSON but are not entries. */
  nonEntries: number;
  headerProblem?: string;
  invalidUtf8?: true;
  duplicateIds?: number;
  migration?: { fromVersion: number; toVersion: number; entriesChanged: number };
  /** Where the original bytes were kept before a rewrite. */
  backupPath?: string;
  missingBlobs?: string[];
}

/** `parseSession`: header, entry count, leaf, version on disk, the load report. */
export interface ParsedSession {
  header: SessionHeader;
  entryCount: number;
  leafId: string | null;
  /** The version written in the file (before migration). */
  version: number;
  migrationNeeded: boolean;
  report: LoadReport;
}

export interface FromTextOptions {
  /** `~/.xcsh/agent`: blob references resolve in `<agentDir>/blobs` of `storage`. */
  agentDir?: string;
  storage?: JsStorage;
  /** Called with (bytes done, total bytes) while a large text loads. */
  onProgress?: (done: number, total: number) => void;
}

export interface OpenContextOptions {
  /** `~/.xcsh/agent`: the index cache is kept in `<agentDir>/cache/` (never beside the
   * sessions), blob references resolve in `<agentDir>/blobs`. */
  agentDir?: string;
  /** The leaf whose context is read; default the last entry. */
  leafId?: string;
  /** `false`: neither read nor write the cached index (every open scans the file). */
  indexCache?: boolean;
}

/** Messages `start..` of a context (`FileContext.window`), each with its entry's id. */
export interface ContextWindow {
  start: number;
  /** As in `buildSessionContext().messages`. */
  messages: unknown[];
  /** The id of the entry each message comes from (a compaction's summary: the compaction's). */
  ids: string[];
}

export interface OpenOptions {
  /** Never write, not even a migration. */
  readOnly?: boolean;
  /** Where blobs (images) are kept: `<agentDir>/blobs`. Default: the agent directory the
   * file's place names (`<agentDir>/sessions/<project>/<file>`); a file elsewhere has
   * none, and writing images it holds inline fails with a message saying to pass one. */
  agentDir?: string;
  /** cwd for a header that has to be created (missing or unreadable file). */
  cwd?: string;
  /** Whose rules later writes follow (default: the agent directory's). */
  flavour?: Flavour;
  /** Called with (bytes done, total bytes) while a large file is parsed (not by a lazy
   * open, which parses only what it reads). */
  onProgress?: (done: number, total: number) => void;
  /** Leave the entries in the file until something needs them (default false): the open
   * reads the session's index (kept in `<agentDir>/cache/index/`, else made by one pass
   * over the file), the header and the last line. `header()`, `leafId`, the current
   * leaf's context (`context()`, `contextJson()`, `writeContextJson()`, streamed from the
   * file when large), the appends, `flush()` and `close()` need nothing more; any other
   * reading (`entries()`, `tree()`, `report()`, another leaf's context, ...) reads the
   * entries first, once (`deferred` turns false). A file the index cannot describe
   * (an older version, a damaged line) is read whole at once, as without `lazy`. */
  lazy?: boolean;
  /** With `lazy`: keep the index in `<agentDir>/cache/index/` (default true); false reads
   * and writes no cache, and every lazy open scans the file. */
  indexCache?: boolean;
}

export interface CreateOptions {
  agentDir: string;
  cwd: string;
  /** Default: `<agentDir>/sessions/<dir>`, `<dir>` being `-<relative>` for a cwd under the agent dir's home, `-tmp-<relative>` under /tmp, else `--<encoded cwd>--`. */
  sessionDir?: string;
  /** The id of the session this one continues (recorded in the header). */
  parentSession?: string;
  /** Whose rules it writes by (default: the agent directory's). */
  flavour?: Flavour;
}

/** A compaction's own fields (`appendCompaction`'s argument; a `CompactionEntry` has them too). */
export interface CompactionInput {
  summary: string;
  shortSummary?: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  fromExtension?: boolean;
  preserveData?: Record<string, unknown>;
}

/** One entry of the light recent list (`recentSessions`). */
export interface RecentSessionInfo {
  path: string;
  id: string;
  cwd: string;
  title?: string;
  /** `fullName`, at most 40 characters. */
  name: string;
  /** Sanitized title → first user text → id → file name without `.jsonl`. */
  fullName: string;
  /** "just now", "5m ago", "3h ago", "2d ago" or a date. */
  timeAgo: string;
  /** File modification time, ISO-8601. */
  modified: string;
}

/** One session of a full listing (`listSessions`, `searchSessions`). */
export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  /** The session's name (the header title, else its latest `session_info` name), else
   * the last compaction's short summary. */
  title?: string;
  parentSessionPath?: string;
  created: string;
  modified: string;
  messageCount: number;
  /** First user text, or "(no messages)". */
  firstMessage: string;
  /**
   * The text of every user and assistant message, joined by spaces: only from
   * `listSessions({ withText: true })` (`sessionText` reads one
   * session's on demand).
   */
  allMessagesText?: string;
}

/** How far a `SessionSearch` has come. */
export interface SearchProgress {
  /** Session files searched, of `files`. */
  filesDone: number;
  files: number;
  /** Bytes of those files searched, of `bytes` (their sizes when the search began). */
  bytesDone: number;
  bytes: number;
  /** Sessions found so far. */
  hits: number;
}

/** One stored prompt (`PromptHistory`). */
export interface HistoryEntry {
  id: number;
  prompt: string;
  /** ISO-8601. */
  createdAt: string;
  cwd: string | null;
}

/** A prompt-history database for `new PromptHistory(store)`: synchronous methods, e.g.
 * over SQLite compiled to wasm (schema: `history(id, prompt, created_at, cwd)` + FTS5
 * `history_fts`). `createdAt` is epoch seconds. Throw with `kind: "invalidQuery"` (or an
 * "fts5:" message) for a malformed query. */
export interface JsHistoryStore {
  /** Shown as `PromptHistory.backend`. */
  backend?: string;
  add(prompt: string, cwd: string | null, createdAt: number): void;
  search(query: string, limit: number, cwd: string | null): { id: number; prompt: string; createdAt: number; cwd: string | null }[];
  recent(limit: number, cwd: string | null): { id: number; prompt: string; createdAt: number; cwd: string | null }[];
  lastPrompt(): string | null;
}

/** The SQL a SQLite `JsHistoryStore` runs (`historyQueries()`), the CLI host's own. */
export interface HistoryQueries {
  /** `?1` prompt, `?2` createdAt (epoch seconds), `?3` cwd or null. */
  insert: string;
  /** `?1` FTS5 query, `?2` limit: `[id, prompt, created_at, cwd]` rows, best match first. */
  search: string;
  /** As `search`, `?3` cwd. */
  searchCwd: string;
  /** `?1` limit: newest first. */
  recent: string;
  /** As `recent`, `?2` cwd. */
  recentCwd: string;
  /** The prompt of the last row. */
  lastPrompt: string;
  /** The `history` table's CREATE text (no row: no table), for `historySchemaUpgrade`. */
  tableSql: string;
  /** The `history` table's column names, for `historySchemaUpgrade`. */
  columns: string;
  /** Every schema object's name, for `historySchemaUpgrade`. */
  objects: string;
}

/** What `copySession` and `importSessionText` did. */
export interface SessionCopy {
  /** The session file's path in the target agent directory. */
  path: string;
  /** The session file was there already: nothing was written. */
  already: boolean;
  /** How many files were written. */
  written: number;
}

/** The fields `sessionDisplayName` reads: any recent, list or search record. */
export interface SessionNameFields {
  id: string;
  name?: string | null;
  title?: string | null;
  firstMessage?: string | null;
}

/** One file of a folder the user opened, for `openedFolderTargets`. */
export interface OpenedFolderFile {
  /** Path relative to the folder, `/`-separated. */
  rel: string;
  /** The start of a `.jsonl` file's content (its header; 64 KiB are enough). Only loose
   * folders use it; without it the file goes to the `/unknown` cwd's directory. */
  start?: Uint8Array | null;
}

/** One prompt found by `sessionPrompts`. */
export interface SessionPrompt {
  text: string;
  /** The session header's cwd, else the cwd given with the session. */
  cwd: string | null;
  /** The message's `timestamp`, else its entry's time (epoch ms), else 0. */
  timeMs: number;
}

/** What `sessionPrompts` returns: prompts oldest first, and the files it could not read. */
export interface SessionPrompts {
  prompts: SessionPrompt[];
  /** `<file name>: <error>` */
  unreadable: string[];
}

/** Options of `new OutputSink(options)` (the agent's `OutputSinkOptions`, plus `storage`). */
export interface OutputSinkOptions {
  /** Where the whole output is written once it is too long (through `storage`). */
  artifactPath?: string;
  /** Reported as `artifactId` when the whole output is in `artifactPath`. */
  artifactId?: string;
  /** The storage `artifactPath` is written through; required with `artifactPath`. */
  storage?: JsStorage;
  /** Bytes kept in memory before spilling (default 51200). */
  spillThreshold?: number;
  /** Lines kept in memory before spilling (default 3000). */
  maxLines?: number;
  /** Called with each raw (masked, unsanitized) chunk, for live display. */
  onChunk?: (chunk: string) => void;
  /** Minimum milliseconds between `onChunk` calls (default 0: every chunk). */
  chunkThrottleMs?: number;
  /** Masks secrets in every chunk before anything else sees it, and in the final output. */
  maskSecrets?: (text: string) => string;
  /**
   * The terminal's image protocol (the agent's `TERMINAL.imageProtocol`): when set (not
   * null), SIXEL, iTerm2 and kitty image sequences are kept whole instead of stripped.
   */
  imageProtocol?: string | null;
}

/** What `OutputSink.dump()` returns (the agent's `OutputSummary`). */
export interface OutputSummary {
  /** The tail to show, sanitized (long lines whole: the tail keeps their end); `[notice]` line first. */
  output: string;
  truncated: boolean;
  /** Of the text pushed, before sanitizing, as the agent counts: LFs plus one (nothing pushed: 0). */
  totalLines: number;
  /** UTF-8 bytes pushed, before sanitizing (a lone surrogate counts as U+FFFD, 3 bytes). */
  totalBytes: number;
  /** Lines and bytes of the tail (without the notice line). */
  outputLines: number;
  outputBytes: number;
  /** Only when the whole output really is in the artifact file (`artifact://<id>`). */
  artifactId?: string;
  /** Why the artifact file could not be written (the tail is all there is). */
  artifactError?: string;
}
