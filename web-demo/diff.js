// Line diffs for edit tool calls: the lines an edit removes and adds (Myers' algorithm), shown
// with "-" / "+" signs and a label as well as colour, so colour is never the only cue.

import { fmtCount, h } from './dom.js';

const MAX_EDIT_DISTANCE = 2000; // beyond this many changed lines: all old lines out, all new in
const CONTEXT = 3; // unchanged lines kept around each change
const FIRST_LINES = 40; // a longer diff shows its first lines and a button for the rest

/**
 * The line diff of `a` -> `b`: `[{op: ' ' | '-' | '+', text}]` in order (Myers' O(ND)
 * algorithm; past MAX_EDIT_DISTANCE changed lines, every old line removed then every new added).
 */
export function lineDiff(a, b) {
  const x = String(a ?? '').split('\n');
  const y = String(b ?? '').split('\n');
  // Common head and tail first: edits usually touch a few lines in the middle.
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  const mid = myers(xs, ys) ?? [...xs.map((text) => ({ op: '-', text })), ...ys.map((text) => ({ op: '+', text }))];
  return [...x.slice(0, head).map((text) => ({ op: ' ', text })), ...mid, ...x.slice(x.length - tail).map((text) => ({ op: ' ', text }))];
}

function myers(a, b) {
  const n = a.length;
  const m = b.length;
  if (!n) return b.map((text) => ({ op: '+', text }));
  if (!m) return a.map((text) => ({ op: '-', text }));
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let xk = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let yk = xk - k;
      while (xk < n && yk < m && a[xk] === b[yk]) {
        xk++;
        yk++;
      }
      v[offset + k] = xk;
      if (xk >= n && yk >= m) return backtrack(trace, a, b, offset, d);
    }
  }
  return null;
}

function backtrack(trace, a, b, offset, dEnd) {
  const out = [];
  let x = a.length;
  let y = b.length;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    for (; x > prevX && y > prevY; x--, y--) out.push({ op: ' ', text: a[x - 1] });
    if (x === prevX) out.push({ op: '+', text: b[--y] });
    else out.push({ op: '-', text: a[--x] });
  }
  for (; x > 0 && y > 0; x--, y--) out.push({ op: ' ', text: a[x - 1] });
  return out.reverse();
}

/** The diff's lines, unchanged runs longer than 2·CONTEXT cut to their ends with a gap row. */
export function withContext(rows) {
  const keep = new Uint8Array(rows.length);
  rows.forEach((r, i) => {
    if (r.op === ' ') return;
    for (let j = Math.max(0, i - CONTEXT); j <= Math.min(rows.length - 1, i + CONTEXT); j++) keep[j] = 1;
  });
  const out = [];
  for (let i = 0; i < rows.length; i++) {
    const last = out.at(-1);
    if (keep[i]) out.push(rows[i]);
    else if (last?.op === '…') last.count++;
    else out.push({ op: '…', text: '', count: 1 });
  }
  return out;
}

/** A focusable, labelled line diff of `oldText` -> `newText` (`.diff`); `full`: every line at once. */
export function renderDiff(oldText, newText, { label = 'Changes', full = false } = {}) {
  const rows = lineDiff(oldText, newText);
  let removed = 0;
  let added = 0;
  for (const r of rows) {
    if (r.op === '-') removed++;
    else if (r.op === '+') added++;
  }
  const summary = `${fmtCount(removed, 'line')} removed, ${fmtCount(added, 'line')} added`;
  const shown = withContext(rows);
  const pre = h('pre', { class: 'code diff', tabindex: '0', role: 'region', 'aria-label': `${label}: ${summary}` });
  const wrap = h('div', { class: 'diff-wrap' }, h('div', { class: 'diff-summary' }, summary), pre);
  const fill = (upTo) => {
    const frag = document.createDocumentFragment();
    for (const r of shown.slice(pre.childElementCount, upTo)) frag.append(diffRow(r));
    pre.append(frag);
  };
  fill(full ? shown.length : FIRST_LINES);
  if (shown.length > pre.childElementCount) {
    const more = h('button', { type: 'button', class: 'btn btn-small expand', onclick: () => { fill(shown.length); more.remove(); pre.focus(); } }, `Show all · ${fmtCount(shown.length, 'line')}`);
    wrap.append(more);
  }
  return wrap;
}

const SIGN = { '-': '−', '+': '+', ' ': ' ' };
const NAME = { '-': 'removed', '+': 'added', ' ': 'unchanged' };

function diffRow(r) {
  if (r.op === '…') return h('span', { class: 'diff-line diff-gap' }, `⋯ ${fmtCount(r.count, 'unchanged line')}`);
  return h(
    'span',
    { class: `diff-line diff-${NAME[r.op]}` },
    h('span', { class: 'diff-sign', 'aria-hidden': 'true' }, SIGN[r.op]),
    r.op === ' ' ? null : h('span', { class: 'visually-hidden' }, `${NAME[r.op]}: `),
    r.text,
  );
}

/** A unified diff text (lines starting with "-" / "+"), coloured line by line (`.diff`). */
export function renderDiffText(text, { label = 'Diff' } = {}) {
  const pre = h('pre', { class: 'code diff', tabindex: '0', role: 'region', 'aria-label': label });
  for (const line of String(text ?? '').split('\n')) {
    const op = line[0] === '-' ? 'removed' : line[0] === '+' ? 'added' : 'unchanged';
    pre.append(h('span', { class: `diff-line diff-${op}` }, line));
  }
  return pre;
}
