// Declarations of `xcsh-session/agent/history-storage` (agent-history-storage.mjs).

/** A stored prompt, as the agent's `HistoryStorage` returns it. */
export interface HistoryEntry {
  id: number;
  prompt: string;
  /** Epoch seconds. */
  created_at: number;
  cwd?: string;
}

/** The agent's `HistoryStorage` over `<agentDir>/history.db` (node:sqlite, Node 22.13+; bun:sqlite under Bun). */
export class HistoryStorage {
  constructor(dbPath: string);
  static open(dbPath?: string): HistoryStorage;
  static resetInstance(): void;
  add(prompt: string, cwd?: string): Promise<void>;
  getRecent(limit: number): HistoryEntry[];
  search(query: string, limit: number): HistoryEntry[];
}
