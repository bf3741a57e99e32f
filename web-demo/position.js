// Where the reader is in the whole branch: the conversation's footer says which messages
// are in view ("Messages 881–890 of 914"), its slider covers the whole branch (only a
// window of it is loaded: moving the slider loads the window there), and "Go to" takes a
// message number. The first message in view is recorded in the address (location.js).

import { events, state } from './state.js';
import { $, fmtNum } from './dom.js';
import { jumpTo, recordPosition } from './location.js';

let frame = 0;

/**
 * The messages in view in the conversation: `{first, last}` (0-based, as in data-index),
 * or null when none is rendered. A binary search over the rendered list.
 */
export function visibleRange() {
  const conv = $('conversation');
  const items = conv.querySelector('.msg-list')?.children;
  if (!items?.length) return null;
  const view = conv.getBoundingClientRect();
  const top = view.top + 4;
  let lo = 0;
  let hi = items.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].getBoundingClientRect().bottom <= top) lo = mid + 1;
    else hi = mid;
  }
  let last = lo;
  while (last + 1 < items.length && items[last + 1].getBoundingClientRect().top < view.bottom) last++;
  // A call's article may hold its result's card (data-result-index): where the view's edge
  // is past that card's top, the result is the message there.
  const index = (el, edge) => {
    let i = Number(el.dataset.index);
    for (const card of el.querySelectorAll('[data-result-index]')) {
      if (card.getBoundingClientRect().top <= edge) i = Number(card.dataset.resultIndex);
    }
    return i;
  };
  return { first: index(items[lo], top), last: index(items[last], view.bottom - 1) };
}

/** Wires the footer: the slider, "Go to", and the position as the reader scrolls. */
export function wirePosition() {
  const conv = $('conversation');
  conv.addEventListener('scroll', () => schedule(true), { passive: true });
  new ResizeObserver(() => schedule(false)).observe(conv);
  events.addEventListener('window', () => schedule(false));
  const slider = $('conv-slider');
  slider.addEventListener('input', () => {
    $('conv-position').textContent = `Go to message #${fmtNum(Number(slider.value))} of ${fmtNum(state.count)}`;
  });
  // Like scrolling: the address follows, without a history entry per step.
  slider.addEventListener('change', () => jumpTo(Number(slider.value) - 1, { push: false, focus: false }));
  $('goto-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const input = $('goto-input');
    const text = input.value.trim().replace(/^#/, '').replace(/,/g, '');
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < 1 || n > state.count) {
      $('goto-status').textContent = state.count ? `Type a number from 1 to ${fmtNum(state.count)}` : 'This branch has no messages';
      input.setAttribute('aria-invalid', 'true');
      return;
    }
    input.removeAttribute('aria-invalid');
    $('goto-status').textContent = '';
    await jumpTo(n - 1, { push: true, focus: true });
  });
  $('goto-input').addEventListener('input', () => {
    $('goto-status').textContent = '';
    $('goto-input').removeAttribute('aria-invalid');
  });
}

function schedule(scrolled) {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    const r = update();
    if (scrolled && r) recordPosition(r.first);
  });
}

function update() {
  const n = state.count;
  const r = n ? visibleRange() : null;
  const slider = $('conv-slider');
  slider.disabled = n < 2;
  slider.max = String(Math.max(1, n));
  $('goto-input').max = String(Math.max(1, n));
  if (!r) {
    $('conv-position').textContent = n ? '' : 'No messages';
    return null;
  }
  $('conv-position').textContent = r.first === r.last
    ? `Message ${fmtNum(r.first + 1)} of ${fmtNum(n)}`
    : `Messages ${fmtNum(r.first + 1)}–${fmtNum(r.last + 1)} of ${fmtNum(n)}`;
  if (document.activeElement !== slider) slider.value = String(r.first + 1);
  slider.setAttribute('aria-valuetext', `message ${fmtNum(r.first + 1)} of ${fmtNum(n)}`);
  return r;
}
