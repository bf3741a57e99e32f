// Declarations of `AsyncSession` (async-session.mjs).
import type {
  AgentMessage, CompactionInput, ContentBlock, CreateOptions, JsStorage, LoadReport, NewEntry,
  OpenOptions, Outline, Session, SessionContext, SessionEntry, SessionHeader, TreeNode, UsageStatistics,
} from './xcsh_session.js';

type Awaitable<T> = T | Promise<T>;

/** A storage whose methods may return Promises (or plain values): `JsStorage`, async. */
export type AsyncStorage = { [K in keyof JsStorage]: JsStorage[K] extends ((...args: infer A) => infer R) | undefined
  ? undefined extends JsStorage[K] ? ((...args: A) => Awaitable<R>) | undefined : (...args: A) => Awaitable<R>
  : JsStorage[K] };

/**
 * A `Session` over an async storage. The writing methods return Promises that resolve
 * once the write is on the storage; they run one at a time, in call order. The reading
 * methods are synchronous. A failed write latches: later writes reject with kind
 * `persistence`.
 */
export class AsyncSession {
  private constructor();
  static open(storage: AsyncStorage, path: string, options?: OpenOptions): Promise<AsyncSession>;
  static create(storage: AsyncStorage, options: CreateOptions): Promise<AsyncSession>;
  /** Bytes of storage content held besides the session itself (small files only). */
  heldBytes(): number;
  free(): void;

  readonly file: string | undefined;
  readonly leafId: string | null;
  readonly needsRewrite: boolean;
  readonly sessionId: string;
  readonly versionOnDisk: number;

  allocateArtifactPath(toolType: string): Promise<ReturnType<Session['allocateArtifactPath']>>;
  appendCompaction(c: CompactionInput): Promise<string>;
  appendContextChange(contextName: string, tenant: string, namespace: string): Promise<string>;
  appendCustomEntry(customType: string, data?: unknown): Promise<string>;
  appendCustomMessageEntry(customType: string, content: string | ContentBlock[], display: boolean, details?: unknown): Promise<string>;
  appendEntry(entry: NewEntry): Promise<string>;
  appendLabelChange(targetId: string, label?: string | null): Promise<string>;
  appendMcpToolSelection(names: string[]): Promise<string>;
  appendMessage(message: AgentMessage): Promise<string>;
  appendModeChange(mode: string, data?: Record<string, unknown>): Promise<string>;
  appendModelChange(model: string, role?: string | null): Promise<string>;
  appendServiceTierChange(tier?: string | null): Promise<string>;
  appendThinkingLevelChange(level?: string | null): Promise<string>;
  appendTtsrInjection(rules: string[]): Promise<string>;
  branchWithSummary(fromId: string | null, summary: string, details?: unknown, fromExtension?: boolean): Promise<string>;
  close(): Promise<void>;
  createBranchedSession(leafId: string): Promise<string | undefined>;
  ensureOnDisk(): Promise<void>;
  flush(): Promise<void>;
  fork(): Promise<ReturnType<Session['fork']>>;
  moveTo(agentDir: string, newCwd: string, sessionDir?: string | null): Promise<string>;
  replaceEntry(entry: SessionEntry): Promise<void>;
  rewriteEntries(): Promise<void>;
  saveArtifact(content: string, toolType: string): Promise<string>;
  setSessionName(name: string, source: string): Promise<boolean>;

  branch(id: string): void;
  branchPath(fromId?: string | null): SessionEntry[];
  children(id: string): SessionEntry[];
  context(leafId?: string | null): SessionContext;
  contextEntryIds(leafId?: string | null): string[];
  contextJson(leafId?: string | null): string;
  contextJsonBytes(leafId?: string | null): Uint8Array;
  writeContextJson(write: (chunk: Uint8Array) => void, leafId?: string | null): number;
  displayTitle(maxChars?: number): string | null;
  entries(): SessionEntry[];
  entriesJson(): string;
  entry(id: string): SessionEntry;
  getArtifactPath(id: string): string | undefined;
  header(): SessionHeader;
  label(id: string): string | undefined;
  lastModelChangeRole(): string | undefined;
  report(): LoadReport;
  resetLeaf(): void;
  toJsonl(): string;
  outline(previewChars?: number | null): Outline;
  tree(): TreeNode[];
  treeJson(maxStringChars?: number | null): string;
  usageStatistics(): UsageStatistics;
  warnings(): string[];
}
