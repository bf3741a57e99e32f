// The prompt history: the package's PromptHistory over SQLite (wasm) on OPFS
// (history-store.js), or over the same database in memory where that cannot start; and
// the sessions where a prompt was typed.
import * as pkg from '../pkg/xcsh_session.js';
import { openMemoryHistory, openSqliteHistory } from '../history-store.js';
import { errMsg } from '../errors.js';
import { opfsLoaded, prepare, source, sources } from './sources.js';
import { list, plainInfo } from './listing.js';
import { fail, progress } from './reply.js';

/** The prompt history: {history: PromptHistory, store, info}; see openHistory(). */
let historyReady = null;

/** Starts opening the prompt history (`mode` 'memory': in memory, as `?history=memory` asks). */
export function startHistory(mode) {
  historyReady = openHistory(mode);
}

/**
 * `PromptHistory` over SQLite (wasm) on OPFS; where that cannot start, over the same
 * database in memory, with the reason (the page says so). Without sqlite-wasm at all
 * there is no history (`history: null`; the history operations fail with the reasons).
 */
async function openHistory(mode) {
  let reason;
  if (mode === 'memory') {
    reason = 'asked for by ?history=memory in the address';
  } else {
    try {
      const { store, info } = await openSqliteHistory();
      return { history: new pkg.PromptHistory(store), store, info: { ...info, persistent: true, fallback: null } };
    } catch (e) {
      reason = errMsg(e);
    }
  }
  try {
    const { store, info } = await openMemoryHistory();
    return { history: new pkg.PromptHistory(store), store, info: { ...info, persistent: false, fallback: reason } };
  } catch (e) {
    return { history: null, store: null, info: { backend: 'unavailable', persistent: false, fallback: `${reason}; ${errMsg(e)}` } };
  }
}

/** The prompt history, opening it on first use; fails (saying why) when there is none. */
async function historyState() {
  if (!historyReady) historyReady = openHistory();
  const h = await historyReady;
  if (!h.history) throw fail(`The prompt history is unavailable: ${h.info.fallback}`, 'notFound');
  return h;
}

/** What the page shows of history `h`: its backend, whether it is kept, why not, its rows. */
function infoOf(h) {
  let rows = null;
  try {
    rows = h.store ? h.store.count() : null;
  } catch {
    /* only shown */
  }
  return { ...h.info, backend: h.history?.backend ?? h.info.backend, rows };
}

const HISTORY_LIMIT = 100;

/** FTS5 syntax in a query: quotes, `*`, parentheses, `col:`, `^`, or an operator word. */
const FTS_SYNTAX = /["*():^]|(^|\s)(AND|OR|NOT|NEAR)(\s|$)/;

/**
 * Search or, for an empty field, recent. A query of plain words (no FTS5 syntax) is made a
 * prefix query, each word a prefix (`pars` finds "parser"); "plain words" takes any text
 * that way; anything else is FTS5 syntax as typed.
 */
export async function historyQuery({ query = '', plain = false, cwd = null, limit = HISTORY_LIMIT }) {
  const h = await historyState();
  const text = String(query ?? '').trim();
  const options = { limit, ...(cwd ? { cwd } : {}) };
  if (!text) return { how: 'recent', query: '', items: h.history.recent(options), info: infoOf(h) };
  const words = plain || !FTS_SYNTAX.test(text);
  const fts = words ? pkg.PromptHistory.prefixQuery(text) : text;
  const items = fts ? h.history.search(fts, options) : [];
  return { how: 'search', query: fts, words, items, info: infoOf(h) };
}

/**
 * Adds the user prompts of the sessions a picker list shows (same arguments as `list`),
 * all branches, in time order, each with its session's cwd.
 */
export async function historyImport(args, reqId) {
  const h = await historyState();
  const listed = await list(args);
  const src = await source(args.source);
  const sessions = listed.items.map((item) => ({ path: item.path, cwd: item.cwd || null }));
  await prepare(src, sessions.map(({ path }) => ({ op: 'read', path })));
  const { prompts, unreadable } = pkg.sessionPrompts(src.storage, sessions, (done, total) => progress(reqId, 'import', done, total));
  let added = 0;
  let duplicates = 0;
  for (const p of prompts) {
    const r = h.history.add(p.text, p.cwd);
    if (r.added) added++;
    else if (r.reason === 'duplicate') duplicates++;
  }
  return { sessions: listed.items.length, prompts: prompts.length, added, duplicates, unreadable, source: listed.source.label, scope: listed.scope, cwd: listed.cwd, info: infoOf(h) };
}

/**
 * The sessions, in every source, where `prompt` was typed as a user message (any branch):
 * those of its project when it has a cwd, else all. Newest first, at most `limit`.
 */
export async function promptSessions({ prompt, cwd = null, limit = 20 }) {
  await opfsLoaded();
  const text = String(prompt ?? '');
  const found = [];
  for (const src of sources.values()) {
    if (!src.available || !src.storage) continue;
    const { storage, agentDir } = src;
    let items;
    if (!cwd) items = pkg.listSessions(storage, { agentDir });
    else if (storage.exists(pkg.sessionDirForCwd(agentDir, cwd))) items = pkg.recentSessions(storage, { agentDir, cwd, limit: 200 });
    else continue;
    await prepare(src, items.map((item) => ({ op: 'read', path: item.path })));
    for (const item of items) {
      const { prompts } = pkg.sessionPrompts(storage, [{ path: item.path, cwd: item.cwd || null }]);
      if (prompts.some((p) => p.text === text)) found.push({ source: src.key, sourceLabel: src.label, ...plainInfo(item) });
    }
  }
  found.sort((a, b) => String(b.modified ?? '').localeCompare(String(a.modified ?? '')));
  return { items: found.slice(0, limit), total: found.length };
}

/** The `historyInfo` request: the history's backend and state, also when there is none (the page says why). */
export async function historyInfo() {
  if (!historyReady) historyReady = openHistory();
  return infoOf(await historyReady);
}

/** The `historyAdd` request: adds `prompt` (with its project `cwd`) unless the history refuses it. */
export async function historyAdd({ prompt, cwd }) {
  const h = await historyState();
  const result = h.history.add(String(prompt ?? ''), cwd ? String(cwd) : null);
  return { ...result, info: infoOf(h) };
}
