// The prompt history's database in the browser: SQLite compiled to wasm (npm
// @sqlite.org/sqlite-wasm, vendored into vendor/sqlite-wasm/ by scripts/build-web-vendor),
// persisted on the Origin Private File System with the `opfs-sahpool` VFS (synchronous
// access handles: works in a dedicated Worker without COOP/COEP headers), database
// `/history.db`, with the schema and queries of the core (the CLI host runs the same SQL).
//
// Where OPFS cannot be used, `openMemoryHistory` gives the same database in memory (same
// schema and SQL, real FTS5), gone with the tab.
//
// `SqliteHistoryStore` is a `JsHistoryStore` (pkg/xcsh_session.d.ts): synchronous methods
// the package's `PromptHistory` calls; the core does the rest (trimming, dedupe of
// consecutive prompts, limits, the `[{id, prompt, createdAt, cwd}]` shape).
// Only usable inside a Worker.

import { historyQueries, historySchema } from './pkg/xcsh_session.js';

export const BACKEND = 'sqlite-wasm (opfs-sahpool)';
/** The in-memory database's backend name (the page shows it as "memory ... not kept"). */
export const MEMORY_BACKEND = 'memory';
export const DB_FILE = '/history.db';
/** The OPFS directory the pool keeps its files in (opaque names; the VFS maps them). */
export const POOL_DIR = '.xcsh-history';
const LOCK_NAME = 'xcsh-session-viewer-history';
const VENDOR_URL = new URL('./vendor/sqlite-wasm/index.mjs', import.meta.url);

/**
 * The schema (the agent's table, its indexes, the FTS5 index and its triggers) and the
 * queries: the core's, the same text the CLI host runs, read from the package once it is
 * initialized (the worker does that before opening the history).
 */
let sql;
const SQL = () => (sql ??= { schema: historySchema(), ...historyQueries() });

function withKind(message, kind) {
  const e = new Error(message);
  e.kind = kind;
  return e;
}

/** SQLite's own message, without the wrapper's "SQLITE_ERROR: sqlite3 result code 1: ". */
function sqliteMessage(e) {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/^SQLITE_[A-Z_]+: sqlite3 result code \d+: /, '');
}

/** A `JsHistoryStore` over an open sqlite-wasm database (oo1 API, synchronous). */
export class SqliteHistoryStore {
  constructor(sqlite3, db, backend = BACKEND) {
    this.sqlite3 = sqlite3;
    this.db = db;
    this.backend = backend;
  }

  add(prompt, cwd, createdAt) {
    try {
      this.db.exec({ sql: SQL().insert, bind: [String(prompt), Math.trunc(Number(createdAt)), cwd ?? null] });
    } catch (e) {
      throw withKind(`history.db: ${sqliteMessage(e)}`, 'storage');
    }
  }

  search(query, limit, cwd) {
    try {
      return this.#rows(cwd ? SQL().searchCwd : SQL().search, cwd ? [String(query), limit, cwd] : [String(query), limit]);
    } catch (e) {
      // As the host does: a plain SQLITE_ERROR from a MATCH is a malformed query
      // (`fts5: syntax error near ...`, `no such column: x`, `unterminated string`).
      if (e?.resultCode === this.sqlite3.capi.SQLITE_ERROR) throw withKind(sqliteMessage(e), 'invalidQuery');
      throw withKind(`history.db: ${sqliteMessage(e)}`, 'storage');
    }
  }

  recent(limit, cwd) {
    try {
      return this.#rows(cwd ? SQL().recentCwd : SQL().recent, cwd ? [limit, cwd] : [limit]);
    } catch (e) {
      throw withKind(`history.db: ${sqliteMessage(e)}`, 'storage');
    }
  }

  lastPrompt() {
    try {
      const v = this.db.selectValue(SQL().lastPrompt);
      return typeof v === 'string' ? v : null;
    } catch (e) {
      throw withKind(`history.db: ${sqliteMessage(e)}`, 'storage');
    }
  }

  /** Rows in the database (for the page's status line). */
  count() {
    return Number(this.db.selectValue('SELECT count(*) FROM history') ?? 0);
  }

  #rows(sql, bind) {
    return this.db.selectArrays(sql, bind).map(([id, prompt, createdAt, cwd]) => ({
      id: Number(id),
      prompt: String(prompt),
      createdAt: Number(createdAt),
      cwd: cwd === null || cwd === undefined ? null : String(cwd),
    }));
  }
}

/**
 * Holds a Web Lock for the worker's lifetime, so one viewer tab at a time owns the pool
 * (the VFS keeps its files' access handles open). Waits up to `timeoutMs` for a tab that
 * is closing or reloading to let go; false when another tab keeps it.
 */
function holdLock(timeoutMs) {
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve) => {
    navigator.locks
      .request(LOCK_NAME, { signal: AbortSignal.timeout(timeoutMs) }, () => {
        resolve(true);
        return new Promise(() => {});
      })
      .catch(() => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let loading = null;

/** sqlite-wasm, loaded and initialized once: the `sqlite3` namespace. */
function loadSqlite() {
  loading ??= initSqlite();
  return loading;
}

async function initSqlite() {
  let mod;
  try {
    mod = await import(VENDOR_URL.href);
  } catch (e) {
    throw new Error(`cannot load sqlite-wasm from vendor/sqlite-wasm/ (run scripts/build-web-vendor): ${e?.message ?? e}`);
  }
  // The library warns on the console for every statement that fails; a malformed search is
  // ordinary user input here, and each failure is thrown (and shown) anyway.
  globalThis.sqlite3ApiConfig = {
    warn: (...args) => {
      if (args[0] !== 'sqlite3_step() rc=') console.warn(...args);
    },
  };
  return mod.default({
    print: () => {},
    printErr: (...args) => console.warn('[sqlite3]', ...args),
  });
}

/** Creates the schema in an open database (closing it and throwing when that fails). */
function createSchema(db) {
  try {
    db.exec(SQL().schema);
  } catch (e) {
    db.close();
    throw new Error(`cannot create the history schema: ${sqliteMessage(e)}`);
  }
}

/** The vendored package's version, for the page (null when unknown). */
async function packageVersion() {
  try {
    const res = await fetch(new URL('./vendor/sqlite-wasm/VERSION', import.meta.url));
    if (res.ok) return (await res.text()).trim();
  } catch {
    /* only shown */
  }
  return null;
}

/**
 * Opens the history database: `{store, info}`; throws (with a short reason) where OPFS or
 * sqlite-wasm is not available. `info` = {backend, sqliteVersion, packageVersion, file,
 * directory, rows}.
 */
export async function openSqliteHistory({ lockTimeoutMs = 5000 } = {}) {
  if (!navigator.storage?.getDirectory) throw new Error('this browser has no Origin Private File System');
  if (typeof FileSystemFileHandle === 'undefined' || !('createSyncAccessHandle' in FileSystemFileHandle.prototype)) {
    throw new Error('this browser cannot open OPFS files synchronously (createSyncAccessHandle)');
  }
  if (!(await holdLock(lockTimeoutMs))) throw new Error('another tab of the viewer has the history database open');
  const sqlite3 = await loadSqlite();
  // A tab that is reloading may still hold the pool's access handles for a moment.
  let pool;
  let lastError;
  for (let attempt = 0; attempt < 6 && !pool; attempt++) {
    try {
      pool = await sqlite3.installOpfsSAHPoolVfs({
        directory: POOL_DIR,
        preserveOnInitFailure: true, // never delete the pool because a handle was busy
        forceReinitIfPreviouslyFailed: attempt > 0,
      });
    } catch (e) {
      lastError = e;
      await sleep(100 * 2 ** attempt);
    }
  }
  if (!pool) throw new Error(`cannot open the opfs-sahpool VFS: ${lastError?.message ?? lastError}`);
  const db = new pool.OpfsSAHPoolDb(DB_FILE);
  createSchema(db);
  return {
    store: new SqliteHistoryStore(sqlite3, db),
    info: {
      backend: BACKEND,
      sqliteVersion: sqlite3.version?.libVersion ?? null,
      packageVersion: await packageVersion(),
      file: DB_FILE,
      directory: POOL_DIR,
      files: pool.getFileNames?.() ?? [DB_FILE],
    },
  };
}

/**
 * The same database in memory (`:memory:`, gone with the tab): `{store, info}`; throws when
 * sqlite-wasm cannot be loaded.
 */
export async function openMemoryHistory() {
  const sqlite3 = await loadSqlite();
  const db = new sqlite3.oo1.DB(':memory:', 'c');
  createSchema(db);
  return {
    store: new SqliteHistoryStore(sqlite3, db, MEMORY_BACKEND),
    info: {
      backend: MEMORY_BACKEND,
      sqliteVersion: sqlite3.version?.libVersion ?? null,
      packageVersion: await packageVersion(),
      file: ':memory:',
      directory: null,
      files: [],
    },
  };
}
