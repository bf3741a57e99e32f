// Reading the open session: one entry (the inspector), the target of an artifact:// or
// agent:// link (the links panel), and the whole shown branch (an export).
import * as pkg from '../pkg/xcsh_session.js';
import { MemoryStorage } from '../pkg/memory-storage.mjs';
import { needView } from './view.js';

/** The `entry` request: the entry `id` as JSON, and its label. */
export function entry({ id }) {
  const v = needView();
  return { entry: v.session.entry(id), label: v.session.label(id) ?? null };
}

/** The `resolveUrl` request: what an artifact:// or agent:// link of the open session names. */
export function resolveUrl({ url }) {
  const v = needView();
  if (v.src && v.path) return pkg.resolveUrl(v.src.storage, v.path, url);
  // A single file has no artifacts directory beside it: the package says so.
  return pkg.resolveUrl(new MemoryStorage({ readOnly: true }), `/single/${v.name || 'session.jsonl'}`, url);
}

/**
 * The `exportBranch` request: the whole shown branch (the package's context JSON untouched;
 * showing the whole history, the context's state with every message of the history), and
 * names.
 */
export function exportBranch() {
  const v = needView();
  const s = v.session;
  const json = v.history ? JSON.stringify({ ...s.contextState(), messages: s.historyWindow(0, Infinity).messages }) : s.contextJson();
  return { json, history: Boolean(v.history), name: v.name, title: s.displayTitle(80), sessionId: s.sessionId, leafId: s.leafId ?? null, cwd: s.header()?.cwd ?? null };
}
