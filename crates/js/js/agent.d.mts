// Declarations of `xcsh-session/agent` (agent.mjs): the agent's SessionManager.
import type {
  SessionHeader, SessionEntry, TreeNode, SessionContext, SessionInfo, UsageStatistics,
  AgentMessage, ContentBlock, RecentSessionInfo,
} from './xcsh_session.js';

/** `$PI_CODING_AGENT_DIR`, else `~/.xcsh/agent`. */
export function getAgentDir(): string;

/** The context for `leafId` (the last entry when undefined, none when null). */
export function buildSessionContext(entries: SessionEntry[], leafId?: string | null): SessionContext;

/** A session file's records as written (header first), `[]` when missing or headerless. */
export function loadEntriesFromFile(filePath: string): Promise<Record<string, unknown>[]>;

/** Every record of a JSONL text, unreadable lines skipped. */
export function parseSessionEntries(content: string): Record<string, unknown>[];

/** The newest session file of `sessionDir` with a valid header, or `null`. */
export function findMostRecentSession(sessionDir: string): Promise<string | null>;

/**
 * Delete a session file of the agent dir with its artifacts directory and its lock. A
 * session a live writer of another process holds is refused (kind `conflict`).
 */
export function deleteSessionWithArtifacts(sessionPath: string): Promise<void>;

/** A file's records (header first) migrated to the current version, in place. */
export function migrateSessionEntries(entries: Record<string, unknown>[]): void;

/** The newest compaction entry, or `null`. */
export function getLatestCompactionEntry(entries: SessionEntry[]): SessionEntry | null;

/** The `limit` (default 3) newest sessions of `sessionDir`, with `mtime` in ms. */
export function getRecentSessions(sessionDir: string, limit?: number): Promise<(RecentSessionInfo & { mtime: number })[]>;

/** The session an id or file-name prefix names, locally first; an ambiguous prefix throws. */
export function resolveResumableSession(sessionArg: string, cwd: string, sessionDir?: string): Promise<{ session: SessionInfo; scope: 'local' | 'global' } | undefined>;

/** What `restoreState` comes back to (`session` is the live object; without it, `sessionFile`). */
export interface SessionManagerStateSnapshot {
  sessionId: string;
  sessionName: string | undefined;
  titleSource: 'auto' | 'user' | undefined;
  sessionFile: string | undefined;
  /** The header, then the entries as `getEntries()` hands them out. */
  fileEntries: (SessionHeader | SessionEntry)[];
  readonly session?: unknown;
  cwd?: string;
  sessionDir?: string;
}

export class SessionManager {
  private constructor();
  static getDefaultSessionDir(cwd: string, agentDir?: string): string;
  static create(cwd: string, sessionDir?: string): SessionManager;
  static open(filePath: string, sessionDir?: string): Promise<SessionManager>;
  static continueRecent(cwd: string, sessionDir?: string): Promise<SessionManager>;
  static inMemory(cwd?: string): SessionManager;
  static forkFrom(sourcePath: string, cwd: string, sessionDir?: string): Promise<SessionManager>;
  static list(cwd: string, sessionDir?: string): Promise<SessionInfo[]>;
  static listAll(): Promise<SessionInfo[]>;

  getCwd(): string;
  getSessionDir(): string;
  getSessionId(): string;
  getSessionFile(): string | undefined;
  isPersisted(): boolean;
  getSessionName(): string | undefined;
  readonly titleSource: 'auto' | 'user' | undefined;
  getArtifactsDir(): string | null;
  allocateArtifactPath(toolType: string): Promise<{ id?: string; path?: string }>;
  saveArtifact(content: string, toolType: string): Promise<string | undefined>;
  getArtifactPath(id: string): Promise<string | null>;

  getHeader(): SessionHeader;
  getEntries(): SessionEntry[];
  getEntry(id: string): SessionEntry | undefined;
  getChildren(parentId: string): SessionEntry[];
  getLeafId(): string | null;
  getLeafEntry(): SessionEntry | undefined;
  getBranch(fromId?: string): SessionEntry[];
  getTree(): TreeNode[];
  getLabel(id: string): string | undefined;
  buildSessionContext(): SessionContext;
  getUsageStatistics(): UsageStatistics;
  getInjectedTtsrRules(): string[];
  putBlob(data: Uint8Array): Promise<{ hash: string; path: string; ref: string }>;
  getLastModelChangeRole(): string | undefined;

  appendMessage(message: AgentMessage): string;
  appendThinkingLevelChange(thinkingLevel?: string): string;
  appendServiceTierChange(serviceTier: string | null): string;
  appendModeChange(mode: string, data?: Record<string, unknown>): string;
  appendModelChange(model: string, role?: string): string;
  appendContextChange(contextName: string, tenant: string, namespace: string): string;
  appendSessionInit(init: { systemPrompt: string; task: string; tools: string[]; outputSchema?: unknown }): string;
  appendCompaction(summary: string, shortSummary: string | undefined, firstKeptEntryId: string, tokensBefore: number, details?: unknown, fromExtension?: boolean, preserveData?: Record<string, unknown>): string;
  appendCustomEntry(customType: string, data?: unknown): string;
  appendCustomMessageEntry(customType: string, content: string | ContentBlock[], display: boolean, details?: unknown, attribution?: string): string;
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
  newSession(options?: { parentSession?: string }): Promise<string | undefined>;
  captureState(): SessionManagerStateSnapshot;
  restoreState(snapshot: SessionManagerStateSnapshot): void;
  setSessionFile(sessionFile: string): Promise<void>;
  fork(): Promise<{ oldSessionFile: string; newSessionFile: string } | undefined>;
  moveTo(newCwd: string): Promise<void>;
}
