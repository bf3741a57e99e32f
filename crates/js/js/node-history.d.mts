// Declarations of `xcsh-session/node-history` (node-history.mjs).
import type { HistoryEntry, JsHistoryStore, PromptHistory } from './xcsh_session.js';

/** `"bun:sqlite"` under Bun, else `"node:sqlite"`. */
export const BACKEND: string;

/** A `JsHistoryStore` over a SQLite file with the runtime's SQLite: `node:sqlite` (Node 22.13+) or `bun:sqlite`. */
export class NodeHistoryStore implements JsHistoryStore {
  constructor(dbPath: string);
  readonly path: string;
  readonly backend: string;
  add(prompt: string, cwd: string | null, createdAt: number): void;
  search(query: string, limit: number, cwd: string | null): { id: number; prompt: string; createdAt: number; cwd: string | null }[];
  recent(limit: number, cwd: string | null): { id: number; prompt: string; createdAt: number; cwd: string | null }[];
  lastPrompt(): string | null;
  close(): void;
}

/** A `JsHistoryStore` over the SQLite file `dbPath` (created when missing). */
export function nodeHistoryStore(dbPath: string): NodeHistoryStore;

/** The package's `PromptHistory` over `<agentDir>/history.db`. */
export function openPromptHistory(agentDir: string): PromptHistory;
export type { HistoryEntry };
