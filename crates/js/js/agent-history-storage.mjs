// `xcsh-session/agent/history-storage`: the agent's `HistoryStorage` (its module
// `session/history-storage`), over this package's `PromptHistory` and the SQLite file the
// agent and the CLI share (node-history.mjs: `node:sqlite` under Node, `bun:sqlite` under
// Bun).
import path from 'node:path';
import { PromptHistory } from './node.mjs';
import { nodeHistoryStore } from './node-history.mjs';
import { getAgentDir } from './agent-dir.mjs';

/**
 * The agent's `HistoryStorage`: the prompts the user submitted, in the SQLite file
 * `<agentDir>/history.db` that the agent and the CLI share (an older schema is migrated on
 * open). Entries are `{ id, prompt, created_at, cwd? }`, `created_at` in epoch seconds. Unlike the agent's, search ranks the best match
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
