// The worker's answers to the page: results (typed arrays transferred, not copied), errors
// as {message, kind, code}, progress reports, and the cancel of a load in progress.
import { errMsg } from '../errors.js';

/** Request id → its last progress report sent: {t, phase}. */
const lastReport = new Map();

/** Posts the answer of request `id`; the typed arrays in it are transferred. */
export function answer(id, out) {
  lastReport.delete(id);
  const transfer = [];
  collectTransfer(out, transfer, 0);
  self.postMessage({ id, ok: true, result: out }, transfer);
}

/** Posts the failure of request `id`: the error's text, kind and code. */
export function answerError(id, e) {
  lastReport.delete(id);
  self.postMessage({ id, ok: false, error: { message: errMsg(e), kind: e?.kind, code: e?.code } });
}

function collectTransfer(value, out, depth) {
  if (!value || typeof value !== 'object' || depth > 3) return;
  if (ArrayBuffer.isView(value)) {
    if (!out.includes(value.buffer)) out.push(value.buffer);
    return;
  }
  if (Array.isArray(value)) return;
  for (const v of Object.values(value)) collectTransfer(v, out, depth + 1);
}

/** An `Error` with `message` and, when given, its `kind` (the page reads it). */
export function fail(message, kind) {
  const e = new Error(message);
  if (kind) e.kind = kind;
  return e;
}

/**
 * Progress reports for request `id`, at most every 40 ms per request (and always the
 * last); `extra()` adds fields to a report that is sent (a search's hits so far). Each
 * request keeps its own pace: a search running beside the outline's scan reports its
 * first hits at once.
 */
export function progress(id, phase, done = 0, total = 0, extra = null) {
  const now = performance.now();
  let p = lastReport.get(id);
  if (!p) lastReport.set(id, (p = { t: 0, phase: '' }));
  if (phase === p.phase && now - p.t < 40 && done < total) return;
  p.t = now;
  p.phase = phase;
  self.postMessage({ type: 'progress', id, phase, done, total, ...extra?.() });
}

/** The page's ids of the loads it cancelled, and the load id of each request; a load looks between its phases. */
const cancelled = new Set();
const loadOf = new Map();

/** Marks the load `loadId` cancelled (answered at once, not queued: the load is running). */
export function cancelLoad(loadId) {
  cancelled.add(loadId);
}

/** Records that request `id` runs the page's load `loadId` (a request without one is no load). */
export function trackLoad(id, loadId) {
  if (loadId !== undefined) loadOf.set(id, loadId);
}

/** Forgets request `id` and its load's cancel once the request is answered. */
export function untrackLoad(id) {
  cancelled.delete(loadOf.get(id));
  loadOf.delete(id);
}

/**
 * Lets waiting messages in (a cancel), then stops load `reqId` if the page cancelled it
 * (`why`: the error's message). A parse is one call into the package and cannot be
 * stopped halfway; a search stops between its steps.
 */
export async function checkpoint(reqId, why = 'The opening was cancelled.') {
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (loadOf.has(reqId) && cancelled.has(loadOf.get(reqId))) throw fail(why, 'cancelled');
}
