// The phone layout's tabs: on a narrow screen (PHONE_QUERY) the tree, the conversation and
// the entry inspector are one column, one panel at a time, chosen with ARIA tabs
// (role=tablist/tab/tabpanel, aria-selected, arrow keys, Home/End). Wider, the tab bar is
// hidden and the panels are plain regions side by side (layout.css).
//
// A hidden panel keeps its layout (layout.css shows it with visibility: hidden), so the
// conversation's scroll position and the tree's virtual list stay right while it is away.
// Picking a row in the tree shows its branch in the Conversation tab; a message's #n link
// shows its entry in the Entry tab.

import { $ } from './dom.js';

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
  for (const t of TABS) $(t.tab).addEventListener('click', () => showTab(t.name));
  list.addEventListener('keydown', onTabKey);
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
