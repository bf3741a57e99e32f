// `nodeHistoryStore(dbPath)`: a JsHistoryStore over a SQLite file with the runtime's
// built-in SQLite (Node's `node:sqlite`, Node 22.13 and newer; Bun's `bun:sqlite`), the
// same `history.db` the agent and the CLI keep: the core's schema and queries, an older
// schema migrated as the CLI migrates it (the core decides, `historySchemaUpgrade`), WAL
// and a busy timeout so the agent, the CLI and this process can write at once.
// `openPromptHistory(agentDir)` is the package's `PromptHistory` over
// `<agentDir>/history.db`.
import fs from 'node:fs';
import path from 'node:path';
import { PromptHistory, historyQueries, historySchemaUpgrade } from './node.mjs';

/** The SQLite this runtime has: `"bun:sqlite"` under Bun, else `"node:sqlite"`. */
export const BACKEND = process.versions.bun ? 'bun:sqlite' : 'node:sqlite';

function withKind(message, kind) {
  const e = new Error(message);
  e.kind = kind;
  return e;
}

/**
 * A database of `dbPath` (created when missing) from the runtime's SQLite, or a clear
 * error on a runtime without one. Both have the same `exec`, `prepare` (`all`, `get`,
 * `run`) and `close`.
 */
function openDatabase(dbPath) {
  if (BACKEND === 'bun:sqlite') {
    const { Database } = process.getBuiltinModule('bun:sqlite');
    return new Database(dbPath);
  }
  const mod = process.getBuiltinModule?.('node:sqlite');
  if (!mod) {
    throw withKind(
      `the prompt history under Node needs the built-in node:sqlite (Node 22.13 or newer); this is Node ${process.versions.node}`,
      'storage',
    );
  }
  return new mod.DatabaseSync(dbPath);
}

/** SQLite's result code of an error of either runtime (`SQLITE_ERROR` is 1). */
function resultCode(e) {
  return e.errcode ?? e.errno;
}

/** Run `f` in one write transaction. */
function immediate(db, f) {
  db.exec('BEGIN IMMEDIATE');
  try {
    f();
    db.exec('COMMIT');
  } catch (e) {
    db.exec('ROLLBACK');
    throw e;
  }
}

export class NodeHistoryStore {
  #db;
  #sql;
  #statements = new Map();
  backend = BACKEND;

  constructor(dbPath) {
    fs.mkdirSync(path.dirname(dbPath), { recursive: true });
    this.path = dbPath;
    this.#sql = historyQueries();
    try {
      this.#db = openDatabase(dbPath);
      this.#db.exec('PRAGMA busy_timeout=10000; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;');
      this.#ensureSchema();
    } catch (e) {
      this.#db?.close();
      throw withKind(`${dbPath}: ${e.message}`, 'storage');
    }
  }

  /** The core's verdict on the schema, re-read inside the transaction that applies it. */
  #ensureSchema() {
    const upgrade = () => {
      const table = this.#db.prepare(this.#sql.tableSql).get();
      const names = (q) => this.#db.prepare(q).all().map((r) => r.name);
      return historySchemaUpgrade(table?.sql, names(this.#sql.columns), names(this.#sql.objects));
    };
    if (upgrade() === undefined) return;
    immediate(this.#db, () => {
      const sql = upgrade();
      if (sql !== undefined) this.#db.exec(sql);
    });
  }

  #statement(key) {
    let s = this.#statements.get(key);
    if (!s) this.#statements.set(key, (s = this.#db.prepare(this.#sql[key])));
    return s;
  }

  #rows(key, ...args) {
    return this.#statement(key).all(...args).map((r) => ({
      id: Number(r.id), prompt: String(r.prompt), createdAt: Number(r.created_at), cwd: r.cwd ?? null,
    }));
  }

  add(prompt, cwd, createdAt) {
    try {
      this.#statement('insert').run(String(prompt), Math.trunc(Number(createdAt)), cwd ?? null);
    } catch (e) {
      throw withKind(`${this.path}: ${e.message}`, 'storage');
    }
  }

  search(query, limit, cwd) {
    try {
      return cwd ? this.#rows('searchCwd', String(query), limit, cwd) : this.#rows('search', String(query), limit);
    } catch (e) {
      // As the CLI host: a plain SQLITE_ERROR from a MATCH is a malformed query.
      if (resultCode(e) === 1) throw withKind(e.message, 'invalidQuery');
      throw withKind(`${this.path}: ${e.message}`, 'storage');
    }
  }

  recent(limit, cwd) {
    try {
      return cwd ? this.#rows('recentCwd', limit, cwd) : this.#rows('recent', limit);
    } catch (e) {
      throw withKind(`${this.path}: ${e.message}`, 'storage');
    }
  }

  lastPrompt() {
    const row = this.#statement('lastPrompt').get();
    return typeof row?.prompt === 'string' ? row.prompt : null;
  }

  /** Close the database (a second close does nothing). */
  close() {
    try {
      this.#db.close();
    } catch {
      // Already closed.
    }
  }
}

/** A `JsHistoryStore` over the SQLite file `dbPath` (created when missing). */
export function nodeHistoryStore(dbPath) {
  return new NodeHistoryStore(dbPath);
}

/** The package's `PromptHistory` over `<agentDir>/history.db`. */
export function openPromptHistory(agentDir) {
  return new PromptHistory(nodeHistoryStore(path.join(agentDir, 'history.db')));
}
