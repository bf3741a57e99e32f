// Declarations of `xcsh-session/agent` (agent.mjs): the agent's session module as a drop-in.
//
// The types follow the agent's own as a consumer sees them: the same names, the same
// unions and optional keys, so that code written against the agent's module type-checks
// unchanged. The message and content types the agent takes from its model packages are
// written out here structurally (nothing is imported from the agent): each one has the
// same keys and types as the agent's, so a value passes from one side to the other in
// both directions. They are module-private (only reachable through the entry types, e.g.
// `SessionMessageEntry['message']`), so that a host re-exporting this module next to its
// own message module gets no duplicate names.
//
// Moved out of this module: `OutputSink` (`xcsh-session/agent/streaming-output`),
// `HistoryStorage` (`xcsh-session/agent/history-storage`), and the storages
// `FileSessionStorage` / `MemorySessionStorage` and the `SessionStorage` interface they
// implement (`xcsh-session/agent/session-storage`), the type of the optional trailing
// `storage` parameter.

export {};

// ---- Content and messages (module-private; see above) ----

type MessageAttribution = 'user' | 'agent';
type ServiceTier = 'auto' | 'default' | 'flex' | 'scale' | 'priority';
type StopReason = 'stop' | 'length' | 'toolUse' | 'error' | 'aborted';

interface TextContent {
  type: 'text';
  text: string;
  /** Provider metadata of the text (e.g. an OpenAI Responses message id). */
  textSignature?: string;
}
interface ThinkingContent {
  type: 'thinking';
  thinking: string;
  thinkingSignature?: string;
}
interface RedactedThinkingContent {
  type: 'redactedThinking';
  data: string;
}
interface ImageContent {
  type: 'image';
  /** Base64 bytes (or a blob reference while stored). */
  data: string;
  mimeType: string;
}
interface ToolCall {
  type: 'toolCall';
  id: string;
  name: string;
  arguments: Record<string, any>;
  thoughtSignature?: string;
  intent?: string;
}

interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  premiumRequests?: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** Provider-native history kept to replay a conversation (OpenAI Responses). */
interface ProviderPayload {
  type: 'openaiResponsesHistory';
  provider?: string;
  dt?: boolean;
  items: Array<Record<string, unknown>>;
}

interface UserMessage {
  role: 'user';
  content: string | (TextContent | ImageContent)[];
  synthetic?: boolean;
  attribution?: MessageAttribution;
  providerPayload?: ProviderPayload;
  /** Epoch milliseconds. */
  timestamp: number;
}
interface DeveloperMessage {
  role: 'developer';
  content: string | (TextContent | ImageContent)[];
  attribution?: MessageAttribution;
  providerPayload?: ProviderPayload;
  timestamp: number;
}
interface AssistantMessage {
  role: 'assistant';
  content: (TextContent | ThinkingContent | RedactedThinkingContent | ToolCall)[];
  api: string;
  provider: string;
  model: string;
  responseId?: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  providerPayload?: ProviderPayload;
  timestamp: number;
  /** Milliseconds the request took, and to the first token. */
  duration?: number;
  ttft?: number;
}
interface ToolResultMessage<TDetails = any> {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError: boolean;
  isWarning?: boolean;
  attribution?: MessageAttribution;
  /** Epoch milliseconds at which the output was pruned from the context. */
  prunedAt?: number;
  timestamp: number;
}
/** What the model itself sees. */
type LlmMessage = UserMessage | DeveloperMessage | AssistantMessage | ToolResultMessage;

/** Notices the agent's tools attach to an output. */
interface OutputMeta {
  truncation?: {
    direction: 'head' | 'tail';
    truncatedBy: 'lines' | 'bytes';
    totalLines: number;
    totalBytes: number;
    outputLines: number;
    outputBytes: number;
    maxBytes?: number;
    shownRange?: { start: number; end: number };
    artifactId?: string;
    nextOffset?: number;
  };
  source?: { type: 'path' | 'url' | 'internal'; value: string };
  diagnostics?: { summary: string; messages: string[] };
  limits?: {
    matchLimit?: { reached: number; suggestion: number };
    resultLimit?: { reached: number; suggestion: number };
    headLimit?: { reached: number; suggestion: number };
    columnTruncated?: { maxColumn: number };
  };
}

/** What a command the user ran (bash, python) left: its output and how it ended. */
interface ExecutionResult {
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  meta?: OutputMeta;
  timestamp: number;
  excludeFromContext?: boolean;
}
interface BashExecutionMessage extends ExecutionResult {
  role: 'bashExecution';
  command: string;
}
interface PythonExecutionMessage extends ExecutionResult {
  role: 'pythonExecution';
  code: string;
}
interface CustomMessage<T = unknown> {
  role: 'custom';
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: T;
  attribution?: MessageAttribution;
  timestamp: number;
}
/** The v2 name of `custom` (files are migrated to `custom`). */
interface HookMessage<T = unknown> extends Omit<CustomMessage<T>, 'role'> {
  role: 'hookMessage';
}
interface BranchSummaryMessage {
  role: 'branchSummary';
  summary: string;
  fromId: string;
  timestamp: number;
}
interface CompactionSummaryMessage {
  role: 'compactionSummary';
  summary: string;
  shortSummary?: string;
  tokensBefore: number;
  providerPayload?: ProviderPayload;
  timestamp: number;
}
interface FileMentionMessage {
  role: 'fileMention';
  files: Array<{
    path: string;
    content: string;
    lineCount?: number;
    byteSize?: number;
    skippedReason?: 'tooLarge';
    image?: ImageContent;
  }>;
  timestamp: number;
}

/** Every message a session holds, discriminated by `role`. */
type AgentMessage =
  | LlmMessage
  | BashExecutionMessage
  | PythonExecutionMessage
  | CustomMessage
  | HookMessage
  | BranchSummaryMessage
  | CompactionSummaryMessage
  | FileMentionMessage;

/** What `appendMessage` takes: summaries come from `appendCompaction` / `branchWithSummary`. */
type AppendableMessage =
  | LlmMessage
  | CustomMessage
  | HookMessage
  | BashExecutionMessage
  | PythonExecutionMessage
  | FileMentionMessage;

// ---- The session file ----

/** The session file's format version this module writes (older files are migrated). */
export const CURRENT_SESSION_VERSION: 3;

/** The first record of a session file. */
export interface SessionHeader {
  type: 'session';
  /** Missing in version 1 files. */
  version?: number;
  id: string;
  title?: string;
  /** Who set the title: generated from the conversation, or named by the user. */
  titleSource?: 'auto' | 'user';
  timestamp: string;
  cwd: string;
  /** The session this one was forked or continued from. */
  parentSession?: string;
}

export interface NewSessionOptions {
  parentSession?: string;
}

/** Keys every entry has: entries form a tree through `parentId`. */
export interface SessionEntryBase {
  type: string;
  id: string;
  parentId: string | null;
  /** ISO-8601. */
  timestamp: string;
}

export interface SessionMessageEntry extends SessionEntryBase {
  type: 'message';
  message: AgentMessage;
}

export interface ThinkingLevelChangeEntry extends SessionEntryBase {
  type: 'thinking_level_change';
  thinkingLevel?: string | null;
}

export interface ModelChangeEntry extends SessionEntryBase {
  type: 'model_change';
  /** `provider/modelId`. */
  model: string;
  /** `default` when absent; else e.g. `smol` or `slow`. */
  role?: string;
}

export interface ContextChangeEntry extends SessionEntryBase {
  type: 'context_change';
  contextName: string;
  tenant: string;
  namespace: string;
}

export interface ServiceTierChangeEntry extends SessionEntryBase {
  type: 'service_tier_change';
  serviceTier: ServiceTier | null;
}

export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: 'compaction';
  summary: string;
  shortSummary?: string;
  /** The first entry the context keeps after the summary. */
  firstKeptEntryId: string;
  tokensBefore: number;
  /** An extension's own data about the compaction. */
  details?: T;
  /** Data hooks asked to keep across the compaction. */
  preserveData?: Record<string, unknown>;
  /** Made by an extension rather than by the agent. */
  fromExtension?: boolean;
}

export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: 'branch_summary';
  /** The entry the abandoned branch left from. */
  fromId: string;
  summary: string;
  details?: T;
  fromExtension?: boolean;
}

/** An extension's state, kept in the file and never sent to the model. */
export interface CustomEntry<T = unknown> extends SessionEntryBase {
  type: 'custom';
  customType: string;
  data?: T;
}

/** A label on another entry (`label` undefined removes it). */
export interface LabelEntry extends SessionEntryBase {
  type: 'label';
  targetId: string;
  label: string | undefined;
}

/** The rules injected so far (time-traveling stream rules). */
export interface TtsrInjectionEntry extends SessionEntryBase {
  type: 'ttsr_injection';
  injectedRules: string[];
}

/** The MCP tools chosen through discovery on this branch. */
export interface MCPToolSelectionEntry extends SessionEntryBase {
  type: 'mcp_tool_selection';
  selectedToolNames: string[];
}

/** What a subagent session started with. */
export interface SessionInitEntry extends SessionEntryBase {
  type: 'session_init';
  systemPrompt: string;
  task: string;
  tools: string[];
  outputSchema?: unknown;
}

/** A change of the agent's mode (`none` when leaving one). */
export interface ModeChangeEntry extends SessionEntryBase {
  type: 'mode_change';
  mode: string;
  data?: Record<string, unknown>;
}

/** An extension's message, sent to the model; `display` says whether the UI shows it. */
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
  type: 'custom_message';
  customType: string;
  content: string | (TextContent | ImageContent)[];
  details?: T;
  display: boolean;
  attribution?: MessageAttribution;
}

/** One entry of a session (the header excluded), discriminated by `type`. */
export type SessionEntry =
  | SessionMessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | ContextChangeEntry
  | ServiceTierChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | TtsrInjectionEntry
  | MCPToolSelectionEntry
  | SessionInitEntry
  | ModeChangeEntry;

/** One record of a session file, the header included. */
export type FileEntry = SessionHeader | SessionEntry;

/** A node of `getTree()` (a copy: changing it changes nothing in the session). */
export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
}

/** What is sent to the model for one branch, and the state that branch has reached. */
export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel?: string;
  serviceTier?: ServiceTier;
  /** Role → `provider/modelId`. */
  models: Record<string, string>;
  activeContextName?: string;
  activeContextTenant?: string;
  injectedTtsrRules: string[];
  selectedMCPToolNames: string[];
  /** Whether the branch holds an `mcp_tool_selection` entry. */
  hasPersistedMCPToolSelection: boolean;
  /** `none` when no mode is active. */
  mode: string;
  modeData?: Record<string, unknown>;
}

/** One session of `SessionManager.list` / `listAll`. */
export interface SessionInfo {
  path: string;
  id: string;
  /** Empty for sessions older than the `cwd` header key. */
  cwd: string;
  title?: string;
  parentSessionPath?: string;
  created: Date;
  modified: Date;
  messageCount: number;
  firstMessage: string;
  /** Read from the session file on first access (`list()` reads no message text). */
  allMessagesText: string;
}

/** Token and cost totals of a session. */
export interface UsageStatistics {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  premiumRequests: number;
  cost: number;
}

export interface ResolvedSessionMatch {
  session: SessionInfo;
  /** Found in the cwd's session directory, or in another project's. */
  scope: 'local' | 'global';
}

/** One session of `getRecentSessions` (newest first). */
export interface RecentSessionInfo {
  readonly path: string;
  /** Modification time, epoch milliseconds. */
  readonly mtime: number;
  /** Title, else first user prompt, else id, else file name. */
  readonly fullName: string;
  /** `fullName` cut to 40 characters. */
  readonly name: string;
  /** e.g. `5m ago`. */
  readonly timeAgo: string;
}

/** What `putBlob` stored: `ref` is what a session records in place of the bytes. */
export interface BlobPutResult {
  hash: string;
  path: string;
  readonly ref: string;
}

// ---- Storage (the optional trailing `storage` parameter) ----

// The agent's `SessionStorage` interface lives in its own module, as in the agent
// (`xcsh-session/agent/session-storage`, with `FileSessionStorage` and `MemorySessionStorage`).
import type { SessionStorage } from './agent-session-storage.mjs';

// ---- Functions ----

/** `$PI_CODING_AGENT_DIR`, else `~/.xcsh/agent`. */
export function getAgentDir(): string;

/** The context for `leafId` (the last entry when undefined, none when null). */
export function buildSessionContext(entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>): SessionContext;

/** A session file's records as written (header first), `[]` when missing or headerless. */
export function loadEntriesFromFile(filePath: string, storage?: SessionStorage): Promise<FileEntry[]>;

/** Every record of a JSONL text, unreadable lines skipped. */
export function parseSessionEntries(content: string): FileEntry[];

/** The newest session file of `sessionDir` with a valid header, or `null`. */
export function findMostRecentSession(sessionDir: string, storage?: SessionStorage): Promise<string | null>;

/**
 * Delete a session file of the agent dir with its artifacts directory and its lock. A
 * session a live writer of another process holds is refused (kind `conflict`).
 */
export function deleteSessionWithArtifacts(sessionPath: string): Promise<void>;

/** A file's records (header first) migrated to the current version, in place. */
export function migrateSessionEntries(entries: FileEntry[]): void;

/** The newest compaction entry, or `null`. */
export function getLatestCompactionEntry(entries: SessionEntry[]): CompactionEntry | null;

/** The `limit` (default 3) newest sessions of `sessionDir`. */
export function getRecentSessions(sessionDir: string, limit?: number, storage?: SessionStorage): Promise<RecentSessionInfo[]>;

/** The session an id or file-name prefix names, locally first; an ambiguous prefix throws. */
export function resolveResumableSession(sessionArg: string, cwd: string, sessionDir?: string, storage?: SessionStorage): Promise<ResolvedSessionMatch | undefined>;

// ---- SessionManager ----

/** What `restoreState` comes back to (`session` is the live object; without it, `sessionFile`). */
export interface SessionManagerStateSnapshot {
  sessionId: string;
  sessionName: string | undefined;
  titleSource: 'auto' | 'user' | undefined;
  sessionFile: string | undefined;
  /** The records at capture time (header first), the objects themselves, not copies. */
  fileEntries: FileEntry[];
  /** The live session object (a snapshot of the agent's shape has none). */
  readonly session?: unknown;
  readonly cwd?: string;
  readonly sessionDir?: string;
}

export class SessionManager {
  private constructor();
  static getDefaultSessionDir(cwd: string, agentDir?: string, storage?: SessionStorage): string;
  static create(cwd: string, sessionDir?: string, storage?: SessionStorage): SessionManager;
  static open(filePath: string, sessionDir?: string, storage?: SessionStorage): Promise<SessionManager>;
  static continueRecent(cwd: string, sessionDir?: string, storage?: SessionStorage): Promise<SessionManager>;
  static inMemory(cwd?: string, storage?: SessionStorage): SessionManager;
  static forkFrom(sourcePath: string, cwd: string, sessionDir?: string, storage?: SessionStorage): Promise<SessionManager>;
  static list(cwd: string, sessionDir?: string, storage?: SessionStorage): Promise<SessionInfo[]>;
  static listAll(storage?: SessionStorage): Promise<SessionInfo[]>;

  getCwd(): string;
  getSessionDir(): string;
  getSessionId(): string;
  getSessionFile(): string | undefined;
  isPersisted(): boolean;
  getSessionName(): string | undefined;
  get titleSource(): 'auto' | 'user' | undefined;
  getArtifactsDir(): string | null;
  allocateArtifactPath(toolType: string): Promise<{ id?: string; path?: string }>;
  saveArtifact(content: string, toolType: string): Promise<string | undefined>;
  getArtifactPath(id: string): Promise<string | null>;

  getHeader(): SessionHeader | null;
  getEntries(): SessionEntry[];
  getEntry(id: string): SessionEntry | undefined;
  getChildren(parentId: string): SessionEntry[];
  getLeafId(): string | null;
  getLeafEntry(): SessionEntry | undefined;
  getBranch(fromId?: string): SessionEntry[];
  getTree(): SessionTreeNode[];
  getLabel(id: string): string | undefined;
  buildSessionContext(): SessionContext;
  getUsageStatistics(): UsageStatistics;
  getInjectedTtsrRules(): string[];
  putBlob(data: Uint8Array): Promise<BlobPutResult>;
  getLastModelChangeRole(): string | undefined;

  appendMessage(message: AppendableMessage): string;
  appendThinkingLevelChange(thinkingLevel?: string): string;
  appendServiceTierChange(serviceTier: ServiceTier | null): string;
  appendModeChange(mode: string, data?: Record<string, unknown>): string;
  appendModelChange(model: string, role?: string): string;
  appendContextChange(contextName: string, tenant: string, namespace: string): string;
  appendSessionInit(init: { systemPrompt: string; task: string; tools: string[]; outputSchema?: unknown }): string;
  appendCompaction<T = unknown>(summary: string, shortSummary: string | undefined, firstKeptEntryId: string, tokensBefore: number, details?: T, fromExtension?: boolean, preserveData?: Record<string, unknown>): string;
  appendCustomEntry(customType: string, data?: unknown): string;
  appendCustomMessageEntry<T = unknown>(customType: string, content: string | (TextContent | ImageContent)[], display: boolean, details?: T, attribution?: MessageAttribution): string;
  appendMCPToolSelection(selectedToolNames: string[]): string;
  appendTtsrInjection(ruleNames: string[]): string;
  appendLabelChange(targetId: string, label: string | undefined): string;
  setSessionName(name: string, source?: 'auto' | 'user'): Promise<boolean>;

  branch(branchFromId: string): void;
  resetLeaf(): void;
  branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromExtension?: boolean): string;
  createBranchedSession(leafId: string): string | undefined;

  ensureOnDisk(): Promise<void>;
  flush(): Promise<void>;
  rewriteEntries(): Promise<void>;
  close(): Promise<void>;
  newSession(options?: NewSessionOptions): Promise<string | undefined>;
  captureState(): SessionManagerStateSnapshot;
  restoreState(snapshot: SessionManagerStateSnapshot): void;
  setSessionFile(sessionFile: string): Promise<void>;
  fork(): Promise<{ oldSessionFile: string; newSessionFile: string } | undefined>;
  moveTo(newCwd: string): Promise<void>;
}

/** The reading half of `SessionManager`, what the agent hands to extensions and tools. */
export type ReadonlySessionManager = Pick<
  SessionManager,
  | 'getCwd'
  | 'getSessionDir'
  | 'getSessionId'
  | 'getSessionFile'
  | 'getSessionName'
  | 'getArtifactsDir'
  | 'allocateArtifactPath'
  | 'saveArtifact'
  | 'getArtifactPath'
  | 'getLeafId'
  | 'getLeafEntry'
  | 'getEntry'
  | 'getLabel'
  | 'getBranch'
  | 'getHeader'
  | 'getEntries'
  | 'getTree'
  | 'getUsageStatistics'
  | 'putBlob'
>;
