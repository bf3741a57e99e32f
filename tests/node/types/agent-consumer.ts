// A consumer of `xcsh-session/agent` written the way the coding agent uses its own session
// module: typed calls, narrowing on the entry `type` and the message `role` (exhaustively,
// so a missing or extra union member fails), Date methods on SessionInfo,
// ReadonlySessionManager as a parameter type, the optional trailing `storage`, captureState's
// `fileEntries`. tests/node/types.test.mjs checks it with `tsc --strict` (the package's
// declarations included: no skipLibCheck).
import {
  CURRENT_SESSION_VERSION,
  SessionManager,
  buildSessionContext,
  findMostRecentSession,
  getLatestCompactionEntry,
  getRecentSessions,
  loadEntriesFromFile,
  migrateSessionEntries,
  parseSessionEntries,
  resolveResumableSession,
  type BranchSummaryEntry,
  type CompactionEntry,
  type CustomEntry,
  type CustomMessageEntry,
  type FileEntry,
  type LabelEntry,
  type ModelChangeEntry,
  type NewSessionOptions,
  type ReadonlySessionManager,
  type ResolvedSessionMatch,
  type SessionContext,
  type SessionEntry,
  type SessionEntryBase,
  type SessionHeader,
  type SessionInfo,
  type SessionMessageEntry,
  type SessionTreeNode,
  type ThinkingLevelChangeEntry,
  type UsageStatistics,
} from '../../../pkg/agent.mjs';
import type { SessionStorage } from '../../../pkg/agent-session-storage.mjs';

const version: 3 = CURRENT_SESSION_VERSION;

type Message = SessionMessageEntry['message'];

/** One line per message: every role the agent stores, and nothing else. */
function describeMessage(m: Message): string {
  switch (m.role) {
    case 'user':
    case 'developer':
      return typeof m.content === 'string' ? m.content : m.content.map((c) => (c.type === 'text' ? c.text : c.mimeType)).join(' ');
    case 'assistant': {
      const calls = m.content.filter((c) => c.type === 'toolCall').map((c) => c.name);
      return `${m.provider}/${m.model} ${m.stopReason} ${m.usage.totalTokens} ${m.usage.cost.total} ${calls.join(',')}`;
    }
    case 'toolResult':
      return `${m.toolName}${m.isError ? ' failed' : ''} ${m.prunedAt ?? ''}`;
    case 'bashExecution':
      return `$ ${m.command} → ${m.exitCode ?? 'killed'}${m.meta?.truncation?.direction ?? ''}`;
    case 'pythonExecution':
      return `>>> ${m.code} ${m.cancelled}`;
    case 'custom':
    case 'hookMessage':
      return `${m.customType} ${m.display} ${m.attribution ?? 'agent'}`;
    case 'branchSummary':
      return `${m.fromId}: ${m.summary}`;
    case 'compactionSummary':
      return `${m.tokensBefore} ${m.providerPayload?.items.length ?? 0}`;
    case 'fileMention':
      return m.files.map((f) => f.path + (f.skippedReason === 'tooLarge' ? ' (too large)' : '')).join(' ');
    default: {
      const unreachable: never = m;
      return unreachable;
    }
  }
}

/** One line per entry: every entry type, and nothing else. */
function describe(entry: SessionEntry): string {
  const base: SessionEntryBase = entry;
  switch (entry.type) {
    case 'message':
      return describeMessage(entry.message);
    case 'thinking_level_change':
      return entry.thinkingLevel ?? 'off';
    case 'model_change':
      return `${entry.role ?? 'default'}=${entry.model}`;
    case 'context_change':
      return `${entry.contextName}/${entry.tenant}/${entry.namespace}`;
    case 'service_tier_change': {
      const tier: 'auto' | 'default' | 'flex' | 'scale' | 'priority' | null = entry.serviceTier;
      return tier ?? 'none';
    }
    case 'compaction':
      return `${entry.summary} ${entry.firstKeptEntryId} ${entry.tokensBefore} ${entry.fromExtension === true}`;
    case 'branch_summary':
      return `${entry.fromId} ${entry.summary}`;
    case 'custom':
      return entry.customType;
    case 'custom_message':
      return `${entry.customType} ${entry.display}`;
    case 'label':
      return `${entry.targetId} ${entry.label ?? '(removed)'}`;
    case 'ttsr_injection':
      return entry.injectedRules.join(',');
    case 'mcp_tool_selection':
      return entry.selectedToolNames.join(',');
    case 'session_init':
      return `${entry.task} ${entry.tools.length} ${entry.systemPrompt.length}`;
    case 'mode_change':
      return `${entry.mode} ${JSON.stringify(entry.data ?? {})}`;
    default: {
      const unreachable: never = entry;
      return `${base.id} ${unreachable}`;
    }
  }
}

/** What an extension gets: the reading half only. */
async function summarize(sm: ReadonlySessionManager): Promise<string> {
  const header: SessionHeader | null = sm.getHeader();
  const leaf: SessionEntry | undefined = sm.getLeafEntry();
  const tree: SessionTreeNode[] = sm.getTree();
  const usage: UsageStatistics = sm.getUsageStatistics();
  const blob = await sm.putBlob(new Uint8Array([1, 2, 3]));
  const artifact = await sm.allocateArtifactPath('bash');
  return [
    header?.title ?? header?.id,
    header?.titleSource === 'user' ? 'named' : 'auto',
    leaf ? describe(leaf) : '(empty)',
    tree.map((n) => n.label ?? n.entry.id).join(','),
    sm.getBranch().map(describe).join('\n'),
    usage.cost.toFixed(2),
    blob.ref,
    artifact.path ?? sm.getArtifactsDir() ?? '',
    sm.getLabel(sm.getLeafId() ?? '') ?? '',
  ].join('\n');
}

function newest(sessions: SessionInfo[]): SessionInfo | undefined {
  return [...sessions].sort((a, b) => b.modified.getTime() - a.modified.getTime())[0];
}

function age(info: SessionInfo): string {
  return `${info.created.toISOString()} ${Math.round((Date.now() - info.modified.valueOf()) / 1000)}s ${info.parentSessionPath ?? ''} ${info.messageCount} ${info.firstMessage}`;
}

/** A storage of the host's own, passed as the trailing argument. */
function memoryStorage(): SessionStorage {
  const files = new Map<string, string>();
  return {
    ensureDirSync() {},
    existsSync: (p) => files.has(p),
    writeTextSync: (p, c) => void files.set(p, c),
    statSync: (p) => ({ size: files.get(p)?.length ?? 0, mtimeMs: 0, mtime: new Date(0) }),
    listFilesSync: (dir) => [...files.keys()].filter((p) => p.startsWith(dir)),
    exists: async (p) => files.has(p),
    readText: async (p) => files.get(p) ?? '',
    readTextPrefix: async (p, n) => (files.get(p) ?? '').slice(0, n),
    writeText: async (p, c) => void files.set(p, c),
    rename: async (a, b) => void (files.set(b, files.get(a) ?? ''), files.delete(a)),
    unlink: async (p) => void files.delete(p),
    openWriter: (p) => ({
      writeLine: async (line) => void files.set(p, (files.get(p) ?? '') + line),
      flush: async () => {},
      fsync: async () => {},
      close: async () => {},
      getError: () => undefined,
    }),
  };
}

export async function run(cwd: string): Promise<string[]> {
  const storage = memoryStorage();
  const sm = SessionManager.create(cwd, undefined, storage);
  const out: string[] = [String(version), SessionManager.getDefaultSessionDir(cwd, undefined, storage)];

  sm.appendMessage({ role: 'user', content: [{ type: 'text', text: 'fix it' }], attribution: 'user', timestamp: Date.now() });
  sm.appendMessage({
    role: 'assistant',
    content: [{ type: 'thinking', thinking: 'hm' }, { type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: 'ls' } }],
    api: 'openai-responses',
    provider: 'openai',
    model: 'gpt',
    usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: 'toolUse',
    timestamp: Date.now(),
  });
  sm.appendMessage({ role: 'bashExecution', command: 'ls', output: '', exitCode: 0, cancelled: false, truncated: false, timestamp: Date.now() });
  sm.appendThinkingLevelChange('high');
  sm.appendServiceTierChange('flex');
  sm.appendServiceTierChange(null);
  sm.appendModelChange('openai/gpt', 'smol');
  sm.appendCustomMessageEntry<{ n: number }>('note', [{ type: 'image', data: 'AA==', mimeType: 'image/png' }], true, { n: 1 }, 'agent');
  const compactionId = sm.appendCompaction<{ files: string[] }>('summary', undefined, sm.getLeafId() ?? '', 100, { files: [] });
  sm.appendLabelChange(compactionId, 'checkpoint');
  const renamed: boolean = await sm.setSessionName('parser work', 'user');

  const ctx: SessionContext = sm.buildSessionContext();
  out.push(ctx.mode.toUpperCase(), ctx.serviceTier === 'flex' ? 'flex' : 'other', ctx.messages.map(describeMessage).join('\n'));
  out.push(await summarize(sm), String(renamed), sm.titleSource ?? 'untitled');

  const snapshot = sm.captureState();
  const custom = snapshot.fileEntries.find((e) => e.type === 'custom_message' && e.customType === 'note');
  if (custom?.type === 'custom_message') out.push(JSON.stringify(custom.details));
  sm.restoreState(snapshot);

  const file = sm.getSessionFile();
  if (file) {
    const records: FileEntry[] = await loadEntriesFromFile(file, storage);
    migrateSessionEntries(records);
    const entries = records.filter((e): e is SessionEntry => e.type !== 'session');
    const latest: CompactionEntry | null = getLatestCompactionEntry(entries);
    const byId = new Map(entries.map((e) => [e.id, e] as const));
    out.push(latest?.firstKeptEntryId ?? '', String(buildSessionContext(entries, latest?.id ?? null, byId).messages.length));
    out.push(...parseSessionEntries('').map((e) => (e.type === 'session' ? e.cwd : e.parentId ?? 'root')));
  }

  const options: NewSessionOptions = { parentSession: sm.getSessionId() };
  const next: string | undefined = await sm.newSession(options);
  const forked = await sm.fork();
  out.push(next ?? '', forked?.newSessionFile ?? '');

  const sessions = await SessionManager.list(cwd, undefined, storage);
  const last = newest(sessions);
  if (last) out.push(age(last));
  const match: ResolvedSessionMatch | undefined = await resolveResumableSession('abc', cwd, undefined, storage);
  if (match) out.push(`${match.scope}: ${match.session.modified.toLocaleString()}`);
  for (const recent of await getRecentSessions(cwd, 3, storage)) out.push(`${recent.name} ${recent.timeAgo} ${recent.mtime}`);
  out.push((await findMostRecentSession(cwd, storage)) ?? '');

  const reopened = await SessionManager.open(file ?? '', undefined, storage);
  const memory = SessionManager.inMemory(cwd, storage);
  const continued = await SessionManager.continueRecent(cwd, undefined, storage);
  const copied = await SessionManager.forkFrom(file ?? '', cwd, undefined, storage);
  const all = await SessionManager.listAll(storage);
  out.push(await summarize(reopened), await summarize(memory), String(all.length), continued.getCwd(), copied.getSessionId());

  // The entry interfaces are generic over their extension data.
  const typed: [CompactionEntry<{ files: string[] }>?, BranchSummaryEntry<number>?, CustomEntry<string>?, CustomMessageEntry<boolean>?] = [];
  const plain: [LabelEntry?, ModelChangeEntry?, ThinkingLevelChangeEntry?] = [];
  out.push(String(typed.length + plain.length));
  await sm.close();
  return out;
}
