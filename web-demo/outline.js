// The outline: the user prompts of the shown branch, a dropdown of links in the
// conversation's head ("Prompts"), each to its message (a real link: it can be opened in
// another tab). ↑/↓, Home/End move, Enter goes, Esc closes; the prompt the reader is at is
// marked. The worker lists the prompts (`outline`) of the whole branch, not just the window.

import { events, state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, fmtCount, fmtNum, h } from './dom.js';
import { hrefOf, jumpTo } from './location.js';
import { visibleRange } from './position.js';

let loadedFor = -1; // state.selGen the list belongs to
let prompts = [];

const panel = () => $('outline');
const button = () => $('outline-open');

/** Wires the Prompts button and its list. */
export function wireOutline() {
  button().addEventListener('click', () => (panel().hidden ? openOutline() : closeOutline(true)));
  panel().addEventListener('keydown', onKey);
  panel().addEventListener('click', (ev) => {
    const a = ev.target.closest('a[data-index]');
    // Ctrl/Cmd/Shift or the middle button: the browser opens the link elsewhere.
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    closeOutline(false);
    jumpTo(Number(a.dataset.index), { push: true, focus: true });
  });
  panel().addEventListener('focusout', (ev) => {
    if (!panel().hidden && ev.relatedTarget && !ev.relatedTarget.closest?.('.outline-wrap')) closeOutline(false);
  });
  document.addEventListener('pointerdown', (ev) => {
    if (!panel().hidden && !ev.target.closest?.('.outline-wrap')) closeOutline(false);
  });
  events.addEventListener('window', () => {
    if (!panel().hidden && loadedFor !== state.selGen) load();
  });
}

/** Opens the list, its current prompt focused. */
export async function openOutline() {
  panel().hidden = false;
  button().setAttribute('aria-expanded', 'true');
  if (loadedFor !== state.selGen) await load();
  else render();
  const links = [...panel().querySelectorAll('a[data-index]')];
  (links.find((a) => a.getAttribute('aria-current')) ?? links[0] ?? panel()).focus();
}

function closeOutline(focusButton) {
  panel().hidden = true;
  button().setAttribute('aria-expanded', 'false');
  if (focusButton) button().focus();
}

async function load() {
  const gen = state.selGen;
  panel().replaceChildren(h('p', { class: 'outline-note' }, 'Loading…'));
  try {
    const out = await call('outline');
    if (gen !== state.selGen) return;
    prompts = out.prompts;
    loadedFor = gen;
    render();
  } catch (e) {
    panel().replaceChildren(h('p', { class: 'outline-note' }, `Cannot list the prompts: ${errMsg(e)}`));
  }
}

function render() {
  const at = visibleRange()?.first ?? 0;
  let current = -1;
  for (let i = 0; i < prompts.length && prompts[i].index <= at; i++) current = i;
  const head = h('p', { class: 'outline-note', id: 'outline-title' }, prompts.length ? `${fmtCount(prompts.length, 'user prompt')} in this branch` : 'No user prompt in this branch');
  const list = h(
    'ol',
    { class: 'outline-list', 'aria-labelledby': 'outline-title' },
    prompts.map((p, i) =>
      h(
        'li',
        null,
        h(
          'a',
          { href: hrefOf(p.index), class: 'outline-link', dataset: { index: String(p.index) }, 'aria-current': i === current ? 'true' : null, tabindex: '-1' },
          h('span', { class: 'ol-idx' }, `#${fmtNum(p.index + 1)}`),
          h('span', { class: 'ol-text' }, p.text),
        ),
      ),
    ),
  );
  panel().replaceChildren(head, list);
  // One tab stop: the current prompt (or the first); the arrows move between them.
  const links = list.querySelectorAll('a');
  (links[Math.max(0, current)] ?? null)?.setAttribute('tabindex', '0');
}

function onKey(ev) {
  if (ev.key === 'Escape') {
    ev.preventDefault();
    closeOutline(true);
    return;
  }
  const links = [...panel().querySelectorAll('a[data-index]')];
  if (!links.length) return;
  const i = links.indexOf(document.activeElement);
  let next = null;
  if (ev.key === 'ArrowDown') next = Math.min(links.length - 1, i + 1);
  else if (ev.key === 'ArrowUp') next = Math.max(0, i - 1);
  else if (ev.key === 'Home') next = 0;
  else if (ev.key === 'End') next = links.length - 1;
  else if (ev.key === 'PageDown') next = Math.min(links.length - 1, i + 10);
  else if (ev.key === 'PageUp') next = Math.max(0, i - 10);
  if (next === null) return;
  ev.preventDefault();
  for (const a of links) a.setAttribute('tabindex', '-1');
  links[next].setAttribute('tabindex', '0');
  links[next].focus();
}
