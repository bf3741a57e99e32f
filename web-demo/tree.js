// The tree: a virtual list of the worker's outline rows (depth first, a side branch right
// under its branch point), collapsible branch points, the filter (text / entry type),
// "Jump to current leaf", keyboard moves, and selecting an entry's branch.
//
// The keyboard moves the active row only (aria-activedescendant, always a row in the DOM);
// Enter or Space shows that entry's branch.

import { events, state, TREE_OVERSCAN, TREE_ROW_H, whenTree } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, fmtNum, h, showBanner } from './dom.js';

/** What the tree shows of `state.rows`: visible rows in order, collapsed forks, filter, active row. */
const tv = {
  rows: null, // the state.rows these were built for
  order: new Int32Array(0), // visible row indexes, top to bottom
  pos: new Int32Array(0), // row index → visible position, -1 when hidden
  collapsed: new Set(), // row indexes of collapsed branch points
  text: '',
  type: '',
  lower: null, // lower-case previews, made on the first text filter
  active: -1, // row index of the keyboard's row
};

const filtering = () => Boolean(tv.text || tv.type);

/** Recomputes the visible rows (after new rows, a collapse or a filter change). */
function layout() {
  const r = state.rows ?? { ids: [] };
  if (tv.rows !== state.rows) {
    tv.rows = state.rows;
    tv.collapsed = new Set();
    tv.lower = null;
    tv.active = -1;
  }
  const n = r.ids.length;
  const order = new Int32Array(n);
  let m = 0;
  if (filtering() && n) {
    const q = tv.text.toLowerCase();
    if (q && !tv.lower) tv.lower = r.texts.map((t) => String(t).toLowerCase());
    for (let i = 0; i < n; i++) {
      if (tv.type && r.kindTable[r.kind[i]]?.[1] !== tv.type) continue;
      if (q && !tv.lower[i].includes(q) && !r.ids[i].toLowerCase().startsWith(q)) continue;
      order[m++] = i;
    }
  } else {
    for (let i = 0; i < n; ) {
      order[m++] = i;
      i = tv.collapsed.has(i) ? r.end[i] : i + 1;
    }
  }
  tv.order = order.subarray(0, m);
  tv.pos = new Int32Array(n).fill(-1);
  for (let p = 0; p < m; p++) tv.pos[tv.order[p]] = p;
  const meta = $('tree-filter-count');
  if (meta) meta.textContent = filtering() ? `${fmtNum(m)} of ${fmtNum(n)} shown` : '';
}

let treeFrame = 0;
export function scheduleTreeRender() {
  if (treeFrame) return;
  treeFrame = requestAnimationFrame(() => {
    treeFrame = 0;
    renderTree();
  });
}

/** Scrolls the tree so that row `i` is in view (it must be visible). */
function scrollRowIntoView(i) {
  const p = tv.pos[i];
  if (p === undefined || p < 0) return;
  const tree = $('tree');
  const top = p * TREE_ROW_H;
  if (top < tree.scrollTop || top + TREE_ROW_H > tree.scrollTop + tree.clientHeight) {
    tree.scrollTop = Math.max(0, top - tree.clientHeight / 2);
  }
}

/** Makes row `i` visible: expands its collapsed branch points, drops a filter that hides it. */
function reveal(i) {
  if (i === undefined || i < 0) return;
  if (filtering() && tv.pos[i] < 0) {
    tv.text = '';
    tv.type = '';
    $('tree-filter').value = '';
    $('tree-type').value = '';
  }
  let changed = false;
  for (let a = state.rows.parent[i]; a >= 0; a = state.rows.parent[a]) if (tv.collapsed.delete(a)) changed = true;
  if (changed || tv.pos[i] < 0) layout();
}

function scrollTreeTo(id) {
  const i = state.rowIndex.get(id);
  if (i === undefined) return;
  reveal(i);
  scrollRowIntoView(i);
}

function renderTree() {
  const tree = $('tree');
  const rows = state.rows;
  if (!rows) {
    if (state.view && !tree.querySelector('.tree-building')) showTreeProgress(0, 0);
    return;
  }
  if (tv.rows !== rows) layout();
  let canvas = tree.firstElementChild;
  if (!canvas?.classList.contains('tree-canvas')) {
    canvas = h('div', { class: 'tree-canvas', role: 'presentation' });
    tree.replaceChildren(canvas);
  }
  const n = tv.order.length;
  canvas.style.height = `${n * TREE_ROW_H}px`;
  const first = Math.max(0, Math.floor(tree.scrollTop / TREE_ROW_H) - TREE_OVERSCAN);
  const last = Math.min(n, Math.ceil((tree.scrollTop + (tree.clientHeight || 600)) / TREE_ROW_H) + TREE_OVERSCAN);
  const nodes = [];
  for (let p = first; p < last; p++) nodes.push(treeRow(tv.order[p], p));
  // The active row stays in the DOM when scrolled away, so aria-activedescendant names it.
  const ap = tv.active >= 0 ? tv.pos[tv.active] : -1;
  if (ap >= 0 && (ap < first || ap >= last)) nodes.push(treeRow(tv.active, ap));
  canvas.replaceChildren(...nodes);
  const active = ap >= 0 ? rows.ids[tv.active] : null;
  if (active) tree.setAttribute('aria-activedescendant', `node-${active}`);
  else tree.removeAttribute('aria-activedescendant');
  const empty = $('tree-empty');
  if (empty) empty.hidden = n > 0 || !filtering();
}

/** The tree pane while the open session's tree is built: `done` of `total` entries (0: not known yet). */
export function showTreeProgress(done, total) {
  const text = total ? `Building the tree… ${fmtNum(done)} of ${fmtNum(total)} entries` : 'Building the tree…';
  let box = $('tree').querySelector('.tree-building');
  if (!box) {
    box = h('div', { class: 'tree-building muted pad', role: 'status', dataset: { testid: 'tree-building' } });
    $('tree').replaceChildren(box);
  }
  box.textContent = text;
}

function treeRow(i, p) {
  const r = state.rows;
  const id = r.ids[i];
  const [tag, cls] = r.kindTable[r.kind[i]] ?? ['?', 'other'];
  const flags = r.flags[i];
  const fork = flags & 1;
  const branchStart = flags & 2;
  const lastSibling = flags & 4;
  const kids = r.kids[i];
  const label = state.labels.get(i);
  const text = r.texts[i] || '';
  const classes = ['node', `t-${cls}`];
  if (state.pathMask[i] && state.selected && state.rowIndex.get(state.selected) !== undefined) classes.push('on-path');
  if (id === state.selected) classes.push('selected');
  if (id === state.inspected && id !== state.selected) classes.push('inspected');
  if (id === state.pending && id !== state.selected) classes.push('pending');
  if (i === tv.active) classes.push('active');
  const collapsible = fork && !filtering();
  const collapsed = collapsible && tv.collapsed.has(i);
  if (collapsed) classes.push('collapsed');
  const guide = branchStart ? (lastSibling ? '└' : '├') : '';
  const hidden = collapsed ? r.end[i] - i - 1 : 0;
  const depth = Math.min(r.depth[i], 16);
  const tip = [text, `${tag} · ${id}`];
  if (kids > 1) tip.push(`${kids} branches${collapsed ? ` · ${fmtNum(hidden)} entries hidden` : ''}`);
  if (label) tip.push(`label “${label}”`);
  const el = h(
    'div',
    {
      class: classes.join(' '),
      id: `node-${id}`,
      role: 'treeitem',
      'aria-selected': id === state.selected ? 'true' : 'false',
      'aria-level': String(r.depth[i] + 1),
      'aria-expanded': collapsible ? String(!collapsed) : null,
      dataset: { id, index: String(i) },
      title: tip.join('\n'),
      style: { top: `${p * TREE_ROW_H}px`, paddingLeft: `${6 + depth * 14}px` },
    },
    collapsible
      ? h('span', { class: 'twisty', 'aria-hidden': 'true', title: collapsed ? 'Expand this branch point' : 'Collapse this branch point', onclick: (ev) => onTwisty(ev, i) }, collapsed ? '▸' : '▾')
      : h('span', { class: 'guide', 'aria-hidden': 'true' }, guide),
    h('span', { class: 'tag' }, tag),
    h('span', { class: 'preview' }, text || '\u00a0'),
    collapsed ? h('span', { class: 'hidden-count' }, `+${fmtNum(hidden)}`) : null,
    label ? h('span', { class: 'label-pill', title: `label: ${label}` }, label) : null,
  );
  el.style.setProperty('--depth', String(depth)); // the indent guides (tree.css)
  return el;
}

function onTwisty(ev, i) {
  ev.stopPropagation(); // a toggle, not a selection
  tv.active = i;
  setCollapsed(i, !tv.collapsed.has(i));
  $('tree').focus({ preventScroll: true });
}

function setCollapsed(i, collapsed) {
  if (collapsed) tv.collapsed.add(i);
  else tv.collapsed.delete(i);
  layout();
  renderTree();
}

/** Moves the leaf to `id` (the worker builds that branch's context) and shows it. */
export async function selectEntry(id, { conv = 'end', scrollTree = false } = {}) {
  if (!id) return;
  if (!state.rows) {
    const before = state.view;
    await whenTree();
    if (!state.rows || state.view !== before) return;
  }
  const gen = ++state.selGen;
  // Show the click at once (as pending); the context follows.
  state.pending = id;
  const i = state.rowIndex.get(id);
  if (i !== undefined) tv.active = i;
  renderTree();
  try {
    const sel = await call('select', { id, where: conv });
    if (gen !== state.selGen) return;
    applySelection(sel, { conv, scrollTree, gen });
  } catch (e) {
    if (gen !== state.selGen) return;
    state.pending = null;
    renderTree();
    showBanner('error', `Cannot show the branch of ${id}: ${errMsg(e)}`);
  }
}

/**
 * Shows the branch the worker selected (`sel`): the tree marks it, and the views that follow
 * the `selection` event show it (the conversation from its `conv` end, see state.js).
 */
export function applySelection(sel, { conv = 'start', scrollTree = false, gen = ++state.selGen } = {}) {
  state.selGen = gen;
  state.pending = null;
  state.selected = sel.leafId;
  state.inspected = sel.leafId;
  state.pathMask = sel.pathMask;
  state.onPath = sel.onPath;
  state.count = sel.count;
  state.history = Boolean(sel.history);
  state.meta = sel.meta ?? {};
  // How the worker built the context and how long it took (read by the e2e tests).
  $('tree').dataset.selectMs = String(Math.round(sel.ms ?? 0));
  $('tree').dataset.selectHow = sel.how ?? '';
  if (tv.rows !== state.rows) layout();
  const leafRow = sel.leafId ? state.rowIndex.get(sel.leafId) ?? -1 : -1;
  if (leafRow >= 0) tv.active = leafRow;
  if (scrollTree && sel.leafId) scrollTreeTo(sel.leafId);
  renderTree();
  events.dispatchEvent(new CustomEvent('selection', { detail: { leafId: sel.leafId, win: sel.win, conv } }));
}

/** Shows an entry in the tree and the inspector without changing the branch. */
export async function inspectEntry(id) {
  if (!state.rows) {
    const before = state.view;
    await whenTree();
    if (state.view !== before) return;
  }
  if (!state.rowIndex.has(id)) return;
  state.inspected = id;
  tv.active = state.rowIndex.get(id);
  scrollTreeTo(id);
  renderTree();
  events.dispatchEvent(new CustomEvent('inspect', { detail: { id } }));
}

/** Scrolls to the shown branch's leaf (revealing it) and puts the keyboard on it. */
export function jumpToLeaf() {
  if (!state.selected || !state.rowIndex.has(state.selected)) return;
  tv.active = state.rowIndex.get(state.selected);
  scrollTreeTo(state.selected);
  renderTree();
  $('tree').focus({ preventScroll: true });
}

/** The branch point a row belongs to: its nearest ancestor that forks (its level's parent). */
function branchPointOf(i) {
  const r = state.rows;
  for (let a = r.parent[i]; a >= 0; a = r.parent[a]) if (r.flags[a] & 1) return a;
  return -1;
}

export function onTreeKey(ev) {
  const r = state.rows;
  const n = tv.order.length;
  if (!n || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  let p = tv.active >= 0 ? tv.pos[tv.active] : -1;
  if (p < 0) p = Math.max(0, tv.pos[state.rowIndex.get(state.selected) ?? 0] ?? 0);
  const cur = tv.order[p];
  const page = Math.max(1, Math.floor($('tree').clientHeight / TREE_ROW_H) - 1);
  let next = null;
  const fork = (r.flags[cur] & 1) && !filtering();
  switch (ev.key) {
    case 'ArrowDown':
      next = Math.min(n - 1, p + 1);
      break;
    case 'ArrowUp':
      next = Math.max(0, p - 1);
      break;
    case 'PageDown':
      next = Math.min(n - 1, p + page);
      break;
    case 'PageUp':
      next = Math.max(0, p - page);
      break;
    case 'Home':
      next = 0;
      break;
    case 'End':
      next = n - 1;
      break;
    case 'ArrowRight':
      if (fork && tv.collapsed.has(cur)) {
        ev.preventDefault();
        setCollapsed(cur, false);
        return;
      }
      next = fork ? Math.min(n - 1, p + 1) : p;
      break;
    case 'ArrowLeft': {
      if (fork && !tv.collapsed.has(cur)) {
        ev.preventDefault();
        setCollapsed(cur, true);
        return;
      }
      const up = branchPointOf(cur);
      next = up >= 0 && tv.pos[up] >= 0 ? tv.pos[up] : p;
      break;
    }
    case 'Enter':
    case ' ':
      ev.preventDefault();
      if (r.ids[cur] !== state.selected) selectEntry(r.ids[cur], { conv: 'end', scrollTree: true });
      return;
    default:
      return;
  }
  ev.preventDefault();
  tv.active = tv.order[next];
  scrollRowIntoView(tv.active);
  renderTree();
}

let filterTimer = 0;
/** Wires the tree's filter box, entry-type menu and "Jump to current leaf". */
export function wireTree() {
  // The open session's rows arrived (after its first screen): the keyboard on its leaf.
  events.addEventListener('tree', () => {
    layout();
    const leafRow = state.selected ? state.rowIndex.get(state.selected) ?? -1 : -1;
    if (leafRow >= 0) tv.active = leafRow;
    renderTree();
  });
  const apply = () => {
    tv.text = $('tree-filter').value.trim();
    tv.type = $('tree-type').value;
    if (!state.rows) return;
    layout();
    $('tree').scrollTop = 0;
    if (tv.active >= 0 && tv.pos[tv.active] >= 0) scrollRowIntoView(tv.active);
    renderTree();
  };
  $('tree-filter').addEventListener('input', () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(apply, 150);
  });
  $('tree-filter').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      clearTimeout(filterTimer);
      apply();
    } else if (ev.key === 'ArrowDown') {
      ev.preventDefault();
      $('tree').focus();
    }
  });
  $('tree-type').addEventListener('change', apply);
  $('tree-jump').addEventListener('click', jumpToLeaf);
}
