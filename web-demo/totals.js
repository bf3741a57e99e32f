// Session totals of one branch: input/output (and cache) tokens, cost, duration and the
// models used, over the message entries of the path root → leaf (compacted messages
// included: their tokens were spent). Pure functions, no DOM: the package digests each
// entry once as it makes the tree rows (`Session.outline().digests`), and the worker sums
// the digests of the open branch's rows on each selection.

/**
 * The digest of row `i` of the package's outline columns (`Session.outline().digests`, the
 * core reads each entry), or null when it is not a message.
 * @param {import('./pkg/xcsh_session.js').OutlineDigests} d
 * @param {number} i
 * @returns {{t: number|null, assistant: boolean, input: number, output: number, cacheRead: number, cacheWrite: number, cost: number|null, model: string|null}|null}
 */
export function digestOf(d, i) {
  if (!d.message[i]) return null;
  const nan = (x) => (Number.isNaN(x) ? null : x);
  return {
    t: nan(d.time[i]),
    assistant: d.message[i] === 2,
    input: d.input[i],
    output: d.output[i],
    cacheRead: d.cacheRead[i],
    cacheWrite: d.cacheWrite[i],
    cost: nan(d.cost[i]),
    model: d.models[d.model[i]] ?? null,
  };
}

/**
 * Sums digests (nulls skipped) in branch order.
 * @param {Array<ReturnType<typeof digestOf>>} digests
 * @returns {{messages: number, assistantMessages: number, input: number, output: number, cacheRead: number, cacheWrite: number,
 *   cost: number|null, costMessages: number, firstAt: number|null, lastAt: number|null, durationMs: number|null,
 *   models: Array<{name: string, messages: number}>}}
 *   `cost` is null when no message carries `usage.cost`; `models` in order of first use.
 */
export function sumDigests(digests) {
  const out = { messages: 0, assistantMessages: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: null, costMessages: 0, firstAt: null, lastAt: null, durationMs: null, models: [] };
  const models = new Map();
  for (const d of digests) {
    if (!d) continue;
    out.messages++;
    if (d.assistant) out.assistantMessages++;
    out.input += d.input;
    out.output += d.output;
    out.cacheRead += d.cacheRead;
    out.cacheWrite += d.cacheWrite;
    if (d.cost !== null) {
      out.cost = (out.cost ?? 0) + d.cost;
      out.costMessages++;
    }
    if (d.t !== null) {
      if (out.firstAt === null || d.t < out.firstAt) out.firstAt = d.t;
      if (out.lastAt === null || d.t > out.lastAt) out.lastAt = d.t;
    }
    if (d.model) {
      const seen = models.get(d.model);
      if (seen) seen.messages++;
      else models.set(d.model, { name: d.model, messages: 1 });
    }
  }
  if (out.firstAt !== null) out.durationMs = out.lastAt - out.firstAt;
  out.models = [...models.values()];
  return out;
}

/**
 * A duration in plain words: `45 s`, `3 min 20 s`, `2 h 05 min`, `3 d 4 h`.
 * @param {number} ms
 */
export function fmtDuration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${String(s % 60).padStart(2, '0')} s`;
  const hours = Math.floor(min / 60);
  if (hours < 24) return `${hours} h ${String(min % 60).padStart(2, '0')} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/**
 * A cost in dollars: cents from $1 up, else four decimals (`$0.0073`).
 * @param {number} usd
 */
export function fmtCost(usd) {
  return `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`;
}
