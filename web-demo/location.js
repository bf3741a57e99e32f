// The address of the place shown. The query names the session, as session-url.js writes it
// (`?sample=<file>`, `?source=<key>&path=<path>`, `?opened=<name>`; none: the default
// sample); the fragment names the place in it:
//
//   #leaf=<entry id>&msg=<n>
//
// `leaf` is the entry whose branch is shown (absent: the session's own leaf), `msg` the
// message number as the conversation shows it (`#914`, counted from 1). Both are encoded
// with URLSearchParams. Selecting another branch and explicit jumps (go to, the outline, a
// search's first hit) are new history entries; scrolling and stepping through hits replace
// the current one. Opening such an address restores the session, the branch and the
// message; Back and Forward move between them; a fragment naming an entry or a message
// that is not there says so in the banner.

import { DEFAULT_SAMPLE, events, state, whenTree } from './state.js';
import { $, fmtCount, fmtNum, showBanner } from './dom.js';
import { showMessage, showWindow } from './conversation.js';
import { selectEntry } from './tree.js';

/** Scrolling records the position once it rests this long (ms). */
const SCROLL_REST_MS = 400;
/** Keys that scroll the conversation. */
const SCROLL_KEYS = new Set(['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', ' ']);

// Only the reader's own scrolling is recorded, not the page's (a jump, a new window): set by
// the wheel, a touch, the scroll bar or a scrolling key in the conversation, reset by a jump.
let readerScrolled = false;
let shownKey = null; // the session the page last showed
let shownLeaf = null;
let defaultLeaf = null; // that session's own leaf when it was opened
let scrollTimer = 0;

/**
 * The place the fragment names: `{leaf, msg, badMsg}`; `msg` counts from 1, `badMsg` is
 * what stood for a message number when it was not one.
 */
export function readPlace(hash = location.hash) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const leaf = p.get('leaf') || null;
  const raw = p.get('msg');
  if (raw === null || raw === '') return { leaf, msg: null, badMsg: null };
  return /^\d{1,9}$/.test(raw) && Number(raw) >= 1 ? { leaf, msg: Number(raw), badMsg: null } : { leaf, msg: null, badMsg: raw };
}

/** The fragment for a place (`''` for none). */
export function placeHash({ leaf = null, msg = null } = {}) {
  const p = new URLSearchParams();
  if (leaf) p.set('leaf', leaf);
  if (msg) p.set('msg', String(msg));
  const s = p.toString();
  return s ? `#${s}` : '';
}

/** The address of message `index` (0-based) of the shown branch, for links. */
export function hrefOf(index) {
  return `${location.pathname}${location.search}${placeHash({ leaf: state.selected, msg: index + 1 })}`;
}

/** Which session a query names (`sample:<file>`, `<source>:<path>`, `file:<name>`). */
function urlKey(search = location.search) {
  const p = new URLSearchParams(search);
  if (p.get('source') && p.get('path')) return `${p.get('source')}:${p.get('path')}`;
  if (p.get('opened')) return `file:${p.get('opened')}`;
  return `sample:${p.get('sample') || DEFAULT_SAMPLE}`;
}

/** The same for the open session. */
function viewKey(view = state.view) {
  if (!view) return null;
  if (view.source && view.path) return `${view.source}:${view.path}`;
  return `${view.origin === 'sample' ? 'sample' : 'file'}:${view.name}`;
}

/** Whether the address names the open session (then only the place in it may differ). */
export function urlNamesView() {
  return state.view !== null && urlKey() === viewKey();
}

/** Writes the place into the address: a new history entry when `push` (not while restoring). */
function writePlace({ msg = null } = {}, { push = false } = {}) {
  if (!urlNamesView()) return;
  const url = new URL(location.href);
  url.hash = placeHash({ leaf: state.selected, msg });
  if (url.href === location.href) return;
  if (push && !state.restoring) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}

/** What scrolls now is the page's doing (a jump, a new window), until the reader scrolls. */
function quiet() {
  readerScrolled = false;
  clearTimeout(scrollTimer);
}

/**
 * Goes to message `index` (0-based) of the shown branch (loading its window) and records it
 * in the address: a new history entry unless `push` is false. `focus` and `highlight` as
 * for showMessage. Resolves to the message's element, or null when there is none.
 */
export async function jumpTo(index, { push = true, focus = true, highlight = null } = {}) {
  quiet();
  const el = await showMessage(index, { focus, highlight });
  if (!el) return null;
  quiet();
  writePlace({ msg: index + 1 }, { push });
  return el;
}

/**
 * The reader scrolled to message `index` (0-based, the first one in view): recorded in the
 * address (replacing it) once the scrolling rests.
 */
export function recordPosition(index) {
  clearTimeout(scrollTimer);
  if (index === null || index === undefined) return;
  if (!readerScrolled) return;
  scrollTimer = setTimeout(() => {
    if (readerScrolled && !state.restoring) writePlace({ msg: index + 1 }, { push: false });
  }, SCROLL_REST_MS);
}

/**
 * Shows the place the fragment names in the open session (at start-up, and on Back and
 * Forward within a session): selects its branch and goes to its message. With `popped`,
 * a fragment without a message shows the branch as it was first shown (the start for the
 * session's own leaf, the end for a selected one). Problems go to the banner.
 */
export async function restorePlace({ popped = false } = {}) {
  const { leaf, msg, badMsg } = readPlace();
  const problems = [];
  let leafOk = true;
  const target = leaf ?? defaultLeaf;
  if (target && target !== state.selected) {
    await whenTree(); // whether the entry is in the session: its tree rows say
    if (state.rowIndex.has(target)) {
      await selectEntry(target, { conv: leaf ? 'end' : 'start', scrollTree: true });
    } else {
      leafOk = false;
      problems.push(`The address names the entry “${leaf}”, which is not in this session: the session's own branch is shown.`);
    }
  } else if (popped && msg === null && badMsg === null) {
    await showWindow(leaf ? 'end' : 'start');
  }
  if (badMsg !== null) {
    problems.push(`The address names the message “${badMsg}”, which is not a message number.`);
  } else if (msg !== null) {
    if (msg > state.count) problems.push(`The address names message #${fmtNum(msg)}, but ${leafOk ? 'this' : 'the shown'} branch has ${fmtCount(state.count, 'message')}.`);
    else await jumpTo(msg - 1, { push: false });
  }
  if (problems.length) showBanner('warn', problems.join(' '));
}

/** Drops the fragment (it named a place in a session that could not be opened). */
export function clearPlace() {
  if (!location.hash) return;
  const url = new URL(location.href);
  url.hash = '';
  history.replaceState(null, '', url);
}

/** Follows the shown branch: a branch the reader selects is a new history entry. */
export function wireLocation() {
  events.addEventListener('window', () => {
    quiet();
    const key = viewKey();
    if (key !== shownKey) {
      shownKey = key;
      shownLeaf = state.selected;
      defaultLeaf = state.selected;
      return;
    }
    if (state.selected === shownLeaf) return;
    shownLeaf = state.selected;
    if (state.restoring) return;
    // After open.js has written the address of an edit's answer (a fork names another file).
    // An address without a leaf names the session's own branch: showing that one (Back to
    // the address of the session just opened, its window shown after the restore ended)
    // writes nothing.
    setTimeout(() => {
      if ((readPlace().leaf ?? defaultLeaf) !== state.selected) writePlace({}, { push: true });
    }, 0);
  });
  const conv = $('conversation');
  const moved = () => {
    readerScrolled = true;
  };
  for (const type of ['wheel', 'touchmove', 'pointerdown']) conv.addEventListener(type, moved, { passive: true });
  conv.addEventListener('keydown', (ev) => {
    if (SCROLL_KEYS.has(ev.key) && !ev.target.closest?.('input, textarea, select')) moved();
  });
}
