// DOM helpers: element building (text nodes only), formatting, the banner, toasts and the progress bar.

export { errMsg } from './errors.js';

export const $ = (id) => document.getElementById(id);

/** Re-renders a list view (`{dirty, refreshing}`): clears `dirty`, keeps the run's promise. */
export function refreshView(view, run) {
  view.dirty = false;
  view.refreshing = run();
  return view.refreshing;
}

/** Creates an element. Strings among `kids` become text nodes (never parsed as HTML). */
export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'style') Object.assign(el.style, v);
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, kids);
  return el;
}

function append(el, kids) {
  for (const kid of kids) {
    if (kid === undefined || kid === null || kid === false) continue;
    if (Array.isArray(kid)) append(el, kid);
    else el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
}


const nf = new Intl.NumberFormat('en-US');
export const fmtNum = (n) => (typeof n === 'number' && Number.isFinite(n) ? nf.format(n) : String(n ?? ''));

/** `1 message`, `2 messages`: a count and its noun (`plural` when not just noun + s). */
export const fmtCount = (n, noun, plural = `${noun}s`) => `${fmtNum(n)} ${n === 1 ? noun : plural}`;

const nfCompact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
export const fmtTok = (n) => (typeof n === 'number' && Number.isFinite(n) ? nfCompact.format(n) : String(n ?? ''));

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Epoch ms or ISO string -> "2026-02-16 10:21:04" (UTC, so every viewer sees the same). */
export function fmtTime(t, withDate = true) {
  if (t === undefined || t === null || t === '') return '';
  const d = new Date(typeof t === 'number' ? t : String(t));
  if (Number.isNaN(d.getTime())) return String(t);
  const iso = d.toISOString();
  return withDate ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : iso.slice(11, 19);
}

export function shortId(id) {
  const s = String(id);
  return s.length <= 12 ? s : `…${s.slice(-8)}`;
}

export function oneLine(s, max = 140) {
  const str = String(s ?? '').replace(/\s+/g, ' ').trim();
  return str.length > max ? `${str.slice(0, max - 1)}…` : str;
}

export function showBanner(kind, text) {
  const b = $('banner');
  b.className = `banner banner-${kind}`;
  b.replaceChildren(h('span', null, text), h('button', { type: 'button', class: 'banner-close', 'aria-label': 'Dismiss', onclick: clearBanner }, '×'));
  b.hidden = false;
}

export function clearBanner() {
  $('banner').hidden = true;
}

let toastTimer = 0;
export function toast(text, kind = 'ok', testid = 'toast') {
  const t = $('toast');
  t.className = `toast toast-${kind}`;
  t.dataset.testid = testid;
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.hidden = true), 6000);
}

const PHASES = {
  read: ['Reading', 0, 10],
  scan: ['Scanning the folder', 0, 5],
  parse: ['Parsing', 10, 75],
  open: ['Opening', 10, 75],
  tree: ['Building the tree', 75, 88],
  context: ['Building the context', 88, 99],
  import: ['Importing', 0, 100],
};

export function showProgress(label) {
  const p = $('progress');
  p.hidden = false;
  p.dataset.label = label;
  setProgress({ phase: 'read', done: 0, total: 0 });
}

export function setProgress({ phase, done, total }) {
  const p = $('progress');
  const [verb, from, to] = PHASES[phase] ?? ['Working', 0, 100];
  const frac = total > 0 ? Math.min(1, done / total) : 0;
  const pct = Math.round(from + (to - from) * frac);
  p.setAttribute('aria-valuenow', String(pct));
  p.querySelector('.progress-fill').style.width = `${pct}%`;
  const amount = total > 0 ? ` · ${fmtBytes(done)} of ${fmtBytes(total)}` : '…';
  p.querySelector('.progress-text').textContent = `${verb} ${p.dataset.label ?? ''}${amount}`;
}

export function hideProgress() {
  $('progress').hidden = true;
}

export function flash(button, text) {
  const old = button.textContent;
  button.textContent = text;
  setTimeout(() => (button.textContent = old), 1200);
}
