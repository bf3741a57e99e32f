// Declarations of `xcsh-session/pi` (pi.mjs): pi's session-manager module as a drop-in.
//
// The shapes are pi's as a consumer sees them (names, optional keys, return types),
// written here for this package: nothing is imported from pi. Messages are typed
// structurally and loosely (`PiMessage`): pi takes them from its model packages, and any
// message pi writes passes through unchanged.

export {};

/** Text or image content, as messages and custom messages carry it. */
export interface PiTextContent { type: 'text'; text: string; [key: string]: unknown }
export interface PiImageContent { type: 'image'; data: string; mimeType: string; [key: string]: unknown }

/** A message of any role (`user`, `assistant`, `toolResult`, `custom`, `bashExecution`, ...). */
export interface PiMessage {
  role: string;
  timestamp?: number;
  [key: string]: unknown;
}

export declare const CURRENT_SESSION_VERSION: 3;

export interface SessionHeader {
  type: 'session';
  version?: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
}

export interface NewSessionOptions {
  /** Not supported here: the core makes session ids (passing one throws). */
  id?: string;
  parentSession?: string;
}

export interface SessionEntryBase {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
}
export interface SessionMessageEntry extends SessionEntryBase { type: 'message'; message: PiMessage }
export interface ThinkingLevelChangeEntry extends SessionEntryBase { type: 'thinking_level_change'; thinkingLevel: string }
export interface ModelChangeEntry extends SessionEntryBase { type: 'model_change'; provider: string; modelId: string }
export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: 'compaction';
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: T;
  fromHook?: boolean;
}
export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: 'branch_summary';
  fromId: string;
  summary: string;
  details?: T;
  fromHook?: boolean;
}
export interface CustomEntry<T = unknown> extends SessionEntryBase { type: 'custom'; customType: string; data?: T }
export interface LabelEntry extends SessionEntryBase { type: 'label'; targetId: string; label: string | undefined }
export interface SessionInfoEntry extends SessionEntryBase { type: 'session_info'; name?: string }
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
  type: 'custom_message';
  customType: string;
  content: string | (PiTextContent | PiImageContent)[];
  details?: T;
  display: boolean;
}
export type SessionEntry =
  | SessionMessageEntry | ThinkingLevelChangeEntry | ModelChangeEntry | CompactionEntry
  | BranchSummaryEntry | CustomEntry | CustomMessageEntry | LabelEntry | SessionInfoEntry;
export type FileEntry = SessionHeader | SessionEntry;

export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
  labelTimestamp?: string;
}

export interface SessionContext {
  messages: PiMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  name?: string;
  parentSessionPath?: string;
  created: Date;
  /** The latest user or assistant message's time, else the header's. */
  modified: Date;
  messageCount: number;
  firstMessage: string;
  allMessagesText: string;
}

export type SessionListProgress = (loaded: number, total: number) => void;

export type ReadonlySessionManager = Pick<SessionManager,
  'getCwd' | 'getSessionDir' | 'getSessionId' | 'getSessionFile' | 'getLeafId' | 'getLeafEntry'
  | 'getEntry' | 'getLabel' | 'getBranch' | 'getHeader' | 'getEntries' | 'getTree' | 'getSessionName'>;

export declare function getAgentDir(): string;
export declare function migrateSessionEntries(entries: FileEntry[]): void;
export declare function parseSessionEntries(content: string): FileEntry[];
export declare function getLatestCompactionEntry(entries: SessionEntry[]): CompactionEntry | null;
/** `byId`: an index of the same entries (pi takes it to spare building one; not needed here). */
export declare function buildSessionContext(entries: SessionEntry[], leafId?: string | null, byId?: Map<string, SessionEntry>): SessionContext;
export declare function getDefaultSessionDir(cwd: string, agentDir?: string): string;
export declare function loadEntriesFromFile(filePath: string): FileEntry[];
export declare function findMostRecentSession(sessionDir: string): string | null;

export declare class SessionManager {
  private constructor();
  setSessionFile(sessionFile: string): void;
  newSession(options?: NewSessionOptions): string | undefined;
  isPersisted(): boolean;
  getCwd(): string;
  getSessionDir(): string;
  getSessionId(): string;
  getSessionFile(): string | undefined;
  appendMessage(message: PiMessage): string;
  appendThinkingLevelChange(thinkingLevel: string): string;
  appendModelChange(provider: string, modelId: string): string;
  appendCompaction<T = unknown>(summary: string, firstKeptEntryId: string, tokensBefore: number, details?: T, fromHook?: boolean): string;
  appendCustomEntry(customType: string, data?: unknown): string;
  appendSessionInfo(name: string): string;
  getSessionName(): string | undefined;
  appendCustomMessageEntry<T = unknown>(customType: string, content: string | (PiTextContent | PiImageContent)[], display: boolean, details?: T): string;
  getLeafId(): string | null;
  getLeafEntry(): SessionEntry | undefined;
  getEntry(id: string): SessionEntry | undefined;
  getChildren(parentId: string): SessionEntry[];
  getLabel(id: string): string | undefined;
  appendLabelChange(targetId: string, label: string | undefined): string;
  getBranch(fromId?: string): SessionEntry[];
  buildSessionContext(): SessionContext;
  getHeader(): SessionHeader | null;
  getEntries(): SessionEntry[];
  getTree(): SessionTreeNode[];
  branch(branchFromId: string): void;
  resetLeaf(): void;
  branchWithSummary(branchFromId: string | null, summary: string, details?: unknown, fromHook?: boolean): string;
  createBranchedSession(leafId: string): string | undefined;
  static create(cwd: string, sessionDir?: string): SessionManager;
  static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager;
  static continueRecent(cwd: string, sessionDir?: string): SessionManager;
  static inMemory(cwd?: string): SessionManager;
  static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string): SessionManager;
  static list(cwd: string, sessionDir?: string, onProgress?: SessionListProgress): Promise<SessionInfo[]>;
  static listAll(onProgress?: SessionListProgress): Promise<SessionInfo[]>;
}
