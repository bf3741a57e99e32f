// The tree: a virtual list of the worker's outline rows, keyboard moves, and selecting an entry's branch.

import { state, TREE_OVERSCAN, TREE_ROW_H } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, h, showBanner } from './dom.js';
import { renderConvMeta } from './sessionbar.js';
import { renderWindow } from './conversation.js';
import { renderInspector } from './inspector.js';

let treeFrame = 0;
export function scheduleTreeRender() {
  if (treeFrame) return;
  treeFrame = requestAnimationFrame(() => {
    treeFrame = 0;
    renderTree();
  });
}

function scrollTreeTo(id) {
  const i = state.rowIndex.get(id);
  if (i === undefined) return;
  const tree = $('tree');
  const top = i * TREE_ROW_H;
  if (top < tree.scrollTop || top + TREE_ROW_H > tree.scrollTop + tree.clientHeight) {
    tree.scrollTop = Math.max(0, top - tree.clientHeight / 2);
  }
}

function renderTree() {
  const tree = $('tree');
  const rows = state.rows;
  if (!rows) return;
  let canvas = tree.firstElementChild;
  if (!canvas) {
    canvas = h('div', { class: 'tree-canvas' });
    tree.append(canvas);
  }
  const n = rows.ids.length;
  canvas.style.height = `${n * TREE_ROW_H}px`;
  const first = Math.max(0, Math.floor(tree.scrollTop / TREE_ROW_H) - TREE_OVERSCAN);
  const last = Math.min(n, Math.ceil((tree.scrollTop + (tree.clientHeight || 600)) / TREE_ROW_H) + TREE_OVERSCAN);
  const nodes = [];
  for (let i = first; i < last; i++) nodes.push(treeRow(i));
  canvas.replaceChildren(...nodes);
  tree.setAttribute('aria-activedescendant', state.selected ? `node-${state.selected}` : '');
}

function treeRow(i) {
  const r = state.rows;
  const id = r.ids[i];
  const [tag, cls] = r.kindTable[r.kind[i]] ?? ['?', 'other'];
  const flags = r.flags[i];
  const fork = flags & 1;
  const branchStart = flags & 2;
  const lastSibling = flags & 4;
  const kids = r.kids[i];
  const label = state.labels.get(i);
  const classes = ['node', `t-${cls}`];
  if (state.pathMask[i] && state.selected && state.rowIndex.get(state.selected) !== undefined) classes.push('on-path');
  if (id === state.selected) classes.push('selected');
  if (id === state.inspected && id !== state.selected) classes.push('inspected');
  if (id === state.pending && id !== state.selected) classes.push('pending');
  const guide = branchStart ? (lastSibling ? '└' : '├') : fork ? '◆' : '';
  return h(
    'div',
    {
      class: classes.join(' '),
      id: `node-${id}`,
      role: 'treeitem',
      'aria-selected': id === state.selected ? 'true' : 'false',
      'aria-level': String(r.depth[i] + 1),
      dataset: { id, index: String(i) },
      title: `${tag} ${id}${kids > 1 ? ` · ${kids} branches` : ''}${label ? ` · label “${label}”` : ''}`,
      style: { top: `${i * TREE_ROW_H}px`, paddingLeft: `${6 + Math.min(r.depth[i], 16) * 14}px` },
    },
    h('span', { class: 'guide' }, guide),
    h('span', { class: 'tag' }, tag),
    h('span', { class: 'preview' }, r.texts[i] || '\u00a0'),
    label ? h('span', { class: 'label-pill', title: `label: ${label}` }, label) : null,
    h('span', { class: 'nid' }, String(id).slice(0, 8)),
  );
}

/** Moves the leaf to `id` (the worker builds that branch's context) and shows it. */
export async function selectEntry(id, { conv = 'end', scrollTree = false } = {}) {
  if (!id || !state.rows) return;
  const gen = ++state.selGen;
  // Show the click at once (as pending); the context follows.
  state.pending = id;
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

export function applySelection(sel, { conv = 'start', scrollTree = false, gen = ++state.selGen } = {}) {
  state.selGen = gen;
  state.pending = null;
  state.selected = sel.leafId;
  state.inspected = sel.leafId;
  state.pathMask = sel.pathMask;
  state.onPath = sel.onPath;
  state.count = sel.count;
  state.meta = sel.meta ?? {};
  if (scrollTree && sel.leafId) scrollTreeTo(sel.leafId);
  renderTree();
  renderConvMeta();
  renderWindow(sel.win, conv);
  renderInspector(sel.leafId);
}

/** Shows an entry in the tree and the inspector without changing the branch. */
export function inspectEntry(id) {
  if (!state.rowIndex.has(id)) return;
  state.inspected = id;
  scrollTreeTo(id);
  renderTree();
  renderInspector(id);
}

let keyTimer = 0;
export function onTreeKey(ev) {
  const n = state.rows?.ids.length ?? 0;
  if (!n) return;
  const cur = state.rowIndex.get(state.pending ?? state.selected) ?? -1;
  let next = null;
  const page = Math.max(1, Math.floor($('tree').clientHeight / TREE_ROW_H) - 1);
  switch (ev.key) {
    case 'ArrowDown':
      next = Math.min(n - 1, cur + 1);
      break;
    case 'ArrowUp':
      next = Math.max(0, cur - 1);
      break;
    case 'PageDown':
      next = Math.min(n - 1, cur + page);
      break;
    case 'PageUp':
      next = Math.max(0, cur - page);
      break;
    case 'Home':
      next = 0;
      break;
    case 'End':
      next = n - 1;
      break;
    default:
      return;
  }
  ev.preventDefault();
  if (next === cur) return;
  // Move the highlight now; build the context once the keys rest.
  const id = state.rows.ids[next];
  state.pending = id;
  scrollTreeTo(id);
  renderTree();
  clearTimeout(keyTimer);
  keyTimer = setTimeout(() => selectEntry(id, { conv: 'end', scrollTree: true }), 120);
}
