// Comparison of two traces of tests/agent-diff/run.mjs (the agent's, the drop-in's): the
// first divergence of a script, as { seed, i (op index), op, path, agent, dropin }.
import { isDeepStrictEqual } from 'node:util';

/**
 * Number the ids of a trace again by order of first appearance (<id:1>, <id:2>...), after
 * the tables dropped entries that only one side has.
 */
export function renumber(t) {
  const ids = new Map();
  const str = (s) => s.replace(/<id:\d+>/g, (id) => {
    if (!ids.has(id)) ids.set(id, `<id:${ids.size + 1}>`);
    return ids.get(id);
  });
  const walk = (v) => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [str(k), walk(x)]));
    return v;
  };
  return walk(t);
}

/** The first path where `a` and `b` differ (objects compared by keys, not key order). */
export function firstDiff(a, b, at = '') {
  if (isDeepStrictEqual(a, b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if (i >= a.length || i >= b.length) return { path: `${at}[${i}]`, agent: a[i], dropin: b[i] };
        const d = firstDiff(a[i], b[i], `${at}[${i}]`);
        if (d) return d;
      }
      return null;
    }
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) {
      const d = firstDiff(a[k], b[k], at ? `${at}.${k}` : k);
      if (d) return d;
    }
    return null;
  }
  return { path: at, agent: a, dropin: b };
}

/**
 * The first divergence of one script's traces, or null. The ops are compared in order
 * (return value, then state), then the files written.
 */
export function scriptDiff(agent, dropin) {
  const seed = agent.seed;
  if (agent.crashed || dropin.crashed) {
    const d = firstDiff(agent.crashed, dropin.crashed, 'crashed');
    return d && { seed, i: -1, op: 'runner', ...d };
  }
  for (let i = 0; i < Math.max(agent.trace.length, dropin.trace.length); i++) {
    const a = agent.trace[i], b = dropin.trace[i];
    const d = firstDiff(a, b);
    if (d) return { seed, i, op: (a ?? b).op, ...d };
  }
  const byPath = (files) => new Map(files.map((f) => [f.path, f]));
  const fa = byPath(agent.files), fb = byPath(dropin.files);
  for (const p of [...new Set([...fa.keys(), ...fb.keys()])].sort()) {
    const a = fa.get(p), b = fb.get(p);
    if (!a || !b) return { seed, i: 'files', op: 'files', path: p, agent: a ? 'written' : 'not written', dropin: b ? 'written' : 'not written' };
    if (a.text !== undefined && b.text !== undefined && a.text !== b.text) {
      const la = a.text.split('\n'), lb = b.text.split('\n');
      for (let l = 0; l < Math.max(la.length, lb.length); l++) {
        if (la[l] !== lb[l]) return { seed, i: 'files', op: 'files', path: `${p} line ${l + 1}`, agent: la[l], dropin: lb[l] };
      }
    }
    const d = firstDiff(a, b);
    if (d) return { seed, i: 'files', op: 'files', path: `${p} ${d.path}`, agent: d.agent, dropin: d.dropin };
  }
  return null;
}

/** One line per value, cut at `max` characters. */
export function show(v, max = 400) {
  const s = v === undefined ? 'undefined' : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s;
}

export function describe(d) {
  return `seed ${d.seed}, op ${d.i} (${d.op}), ${d.path}:\n    agent:   ${show(d.agent)}\n    drop-in: ${show(d.dropin)}`;
}
