// The phone layout's tabs: on a narrow screen (PHONE_QUERY) the tree, the conversation and
// the entry inspector are one column, one panel at a time, chosen with ARIA tabs
// (role=tablist/tab/tabpanel, aria-selected, arrow keys, Home/End). Wider, the tab bar is
// hidden and the panels are plain regions side by side (layout.css).
//
// A hidden panel keeps its layout (layout.css shows it with visibility: hidden), so the
// conversation's scroll position and the tree's virtual list stay right while it is away.
// Picking a row in the tree shows its branch in the Conversation tab; a message's #n link
// shows its entry in the Entry tab.
//
// Once the reader scrolls the conversation down (wheel, touch, keys), the session bar (title,
// totals, the file's details) folds away, so that the conversation gets most of the screen;
// it comes back at the top of the branch or with a tap on the Conversation tab
// (`body.conv-folded`, layout.css). A jump (a tree row, Go to, find) does not fold it: only
// the reader's own scrolling does.

import { $ } from './dom.js';
import { events, state } from './state.js';

/** Keep in sync with the phone @media rule of layout.css. */
export const PHONE_QUERY = '(max-width: 760px)';

const TABS = [
  { name: 'conv', tab: 'tab-conv', panel: 'conv-panel', focus: 'conversation' },
  { name: 'tree', tab: 'tab-tree', panel: 'tree-panel', focus: 'tree' },
  { name: 'entry', tab: 'tab-entry', panel: 'inspector-panel', focus: 'inspector' },
];

let current = 'conv';
let phone = null;

/** Wires the tab bar and follows the screen width (call once at start). */
export function wireTabs() {
  phone = window.matchMedia(PHONE_QUERY);
  phone.addEventListener('change', apply);
  const list = $('panel-tabs');
  for (const t of TABS) {
    $(t.tab).addEventListener('click', () => {
      setFolded(false); // a tap on the Conversation tab brings the session bar back
      showTab(t.name);
    });
  }
  list.addEventListener('keydown', onTabKey);
  wireFold();
  // Picking something shows where it goes (only where one panel shows at a time).
  $('tree').addEventListener('click', (ev) => {
    if (ev.target.closest('.node')) showTab('conv', { focusPanel: true });
  });
  $('conversation').addEventListener('click', (ev) => {
    if (ev.target.closest('.entry-link')) showTab('entry', { focusPanel: true });
  });
  apply();
}

/** True when the panels are tabs (a narrow screen). */
export function isTabbed() {
  return Boolean(phone?.matches);
}

/**
 * Shows one panel (`conv`, `tree` or `entry`) on a narrow screen; does nothing wider.
 * @param {string} name
 * @param {{focusTab?: boolean, focusPanel?: boolean}} [opts] where the keyboard goes
 */
export function showTab(name, { focusTab = false, focusPanel = false } = {}) {
  if (!isTabbed() || !TABS.some((t) => t.name === name)) return;
  current = name;
  apply();
  const t = TABS.find((x) => x.name === name);
  if (focusTab) $(t.tab).focus();
  else if (focusPanel) $(t.focus)?.focus({ preventScroll: true });
}

function apply() {
  const tabbed = isTabbed();
  if (!tabbed || current !== 'conv') setFolded(false);
  for (const t of TABS) {
    const tab = $(t.tab);
    const panel = $(t.panel);
    const on = t.name === current;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    if (tabbed) {
      panel.setAttribute('role', 'tabpanel');
      panel.setAttribute('aria-labelledby', t.tab);
      panel.hidden = !on;
    } else {
      panel.removeAttribute('role');
      panel.removeAttribute('aria-labelledby');
      panel.hidden = false;
    }
  }
}

function onTabKey(ev) {
  const i = TABS.findIndex((t) => t.name === current);
  let next = null;
  if (ev.key === 'ArrowRight') next = (i + 1) % TABS.length;
  else if (ev.key === 'ArrowLeft') next = (i - 1 + TABS.length) % TABS.length;
  else if (ev.key === 'Home') next = 0;
  else if (ev.key === 'End') next = TABS.length - 1;
  else return;
  ev.preventDefault();
  showTab(TABS[next].name, { focusTab: true });
}

const FOLD_AFTER = 48; // px the conversation is scrolled past the session bar's height before it folds
const GESTURE_MS = 400; // a scroll this soon after the reader's wheel, touch or key (or their last scroll) is theirs
let folded = false;

/** Folds the session bar away (or back) keeping the text on screen where it was. */
function setFolded(on) {
  if (on === folded) return;
  folded = on;
  const conv = $('conversation');
  const top = conv.getBoundingClientRect().top;
  document.body.classList.toggle('conv-folded', on);
  // The conversation's box moved up (or down): scroll by as much, so the text stays put
  // (at the very top it stays at the top).
  if (on || conv.scrollTop > 0) conv.scrollTop += conv.getBoundingClientRect().top - top;
}

function wireFold() {
  const conv = $('conversation');
  let gesture = -Infinity;
  const byReader = () => performance.now() - gesture < GESTURE_MS;
  const mark = () => (gesture = performance.now());
  conv.addEventListener('wheel', mark, { passive: true });
  conv.addEventListener('touchmove', mark, { passive: true });
  conv.addEventListener('keydown', (ev) => {
    if (['ArrowDown', 'ArrowUp', 'PageDown', 'PageUp', 'Home', 'End', ' '].includes(ev.key)) mark();
  });
  const atTop = () => conv.scrollTop <= 0 && state.win.start === 0;
  conv.addEventListener(
    'scroll',
    () => {
      if (!isTabbed() || current !== 'conv') return;
      if (atTop()) setFolded(false);
      else if (!folded && byReader()) {
        mark(); // a touch fling goes on scrolling after the finger left
        const bar = $('session-bar').offsetHeight;
        // Only when the conversation stays scrolled once it has the room.
        if (conv.scrollTop > bar + FOLD_AFTER && conv.scrollHeight - conv.clientHeight > bar + FOLD_AFTER) setFolded(true);
      }
    },
    { passive: true },
  );
  // Another window of messages (a session opened, a branch picked, a jump): its scrolling is
  // not the reader's; shown from its start, the session bar is back.
  events.addEventListener('window', () => {
    gesture = -Infinity;
    if (atTop()) setFolded(false);
  });
}
