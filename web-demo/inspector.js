// The inspector (one entry's JSON, label and branch actions) and the links panel (artifact:// and agent:// content).

import { HIGHLIGHT_MAX, events, state, whenTree } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, fmtBytes, fmtCount, fmtNum, fmtTime, h } from './dom.js';
import { inspectEntry, selectEntry } from './tree.js';
import { importCurrent, newSessionFromBranch, runEdit } from './edits.js';
import { editTarget } from './edit-target.js';
import { linkify, renderText } from './content.js';

/** The inspector follows the branch shown (its leaf) and the entry inspected (state.js `events`). */
export function wireInspector() {
  events.addEventListener('selection', (ev) => renderInspector(ev.detail.leafId));
  events.addEventListener('inspect', (ev) => renderInspector(ev.detail.id));
}

let inspectGen = 0;
/** Shows entry `id` in the inspector: its facts, its actions and its JSON (asked of the worker). */
export async function renderInspector(id) {
  const box = $('inspector');
  const gen = ++inspectGen;
  if (id && !state.rows) {
    box.replaceChildren(h('div', { class: 'muted pad' }, 'The entry is shown once the tree is built.'));
    await whenTree();
    if (gen !== inspectGen) return;
  }
  const i = id ? state.rowIndex.get(id) : undefined;
  if (i === undefined) {
    $('inspector-meta').textContent = '';
    box.replaceChildren(h('div', { class: 'muted pad' }, 'Select an entry in the tree.'));
    return;
  }
  let e;
  let label;
  try {
    ({ entry: e, label } = await call('entry', { id }));
  } catch (err) {
    if (gen === inspectGen) box.replaceChildren(h('div', { class: 'error-box' }, errMsg(err)));
    return;
  }
  if (gen !== inspectGen) return;
  $('inspector-meta').textContent = `${e.type} · ${e.id}`;
  const r = state.rows;
  const parentId = e.parentId;
  const parent = parentId && state.rowIndex.has(parentId)
    ? h('button', { type: 'button', class: 'link mono', onclick: () => inspectEntry(parentId) }, parentId)
    : h('span', { class: 'mono' }, parentId ?? 'null (root)');
  const onPath = Boolean(state.pathMask[i]);
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', null, 'parent'),
    h('dd', null, parent),
    h('dt', null, 'time'),
    h('dd', null, fmtTime(e.timestamp) || '—'),
    h('dt', null, 'children'),
    h('dd', null, String(r.kids[i] ?? 0)),
    h('dt', null, 'branch'),
    h('dd', null, id === state.selected ? `the leaf · ${fmtCount(state.onPath, 'entry', 'entries')} on this path` : onPath ? 'on the shown branch' : 'on another branch'),
    label ? [h('dt', null, 'label'), h('dd', null, h('span', { class: 'label-pill', dataset: { testid: 'inspector-label' } }, String(label)))] : null,
  );
  box.replaceChildren(facts, entryActions(e, label), highlightJson(JSON.stringify(e, null, 2)));
  box.scrollTop = 0;
}

/** Label / branch / new-session actions for an editable session, or the import hint. */
function entryActions(e, label) {
  const v = state.view;
  const wrap = h('div', { class: 'actions', dataset: { testid: 'entry-actions' } });
  if (e.id !== state.selected) {
    wrap.append(h('button', { type: 'button', class: 'btn btn-small', onclick: () => selectEntry(e.id, { conv: 'end', scrollTree: true }) }, 'Show this branch'));
  }
  if (!v?.writable) {
    const target = editTarget();
    wrap.append(
      h('p', { class: 'muted small' }, 'Read-only. ', h('button', { type: 'button', class: 'link', onclick: () => importCurrent() }, target === 'opfs' ? 'Import a copy into browser storage' : 'Copy to memory'), ' to label entries, branch and fork.'),
    );
    return wrap;
  }
  const input = h('input', { type: 'text', name: 'label', value: label ?? '', placeholder: 'label', maxlength: 200, 'aria-label': 'Label of this entry', dataset: { testid: 'label-input' } });
  const labelForm = h(
    'form',
    {
      class: 'label-form',
      onsubmit: (ev) => {
        ev.preventDefault();
        runEdit('label', { id: e.id, label: input.value }, input.value.trim() ? `Labelled ${e.id.slice(0, 8)} “${input.value.trim()}”` : `Cleared the label of ${e.id.slice(0, 8)}`);
      },
    },
    input,
    h('button', { type: 'submit', class: 'btn btn-small', dataset: { testid: 'label-save' } }, label ? 'Relabel' : 'Label'),
    label ? h('button', { type: 'button', class: 'btn btn-small', onclick: () => runEdit('label', { id: e.id, label: null }, `Cleared the label of ${e.id.slice(0, 8)}`) }, 'Clear') : null,
  );
  const summary = h('textarea', { rows: 3, placeholder: 'What happened on the branch you leave (it ends at the current leaf)…', 'aria-label': 'Branch summary', dataset: { testid: 'summary-input' } });
  const branchForm = h(
    'details',
    { class: 'branch-form' },
    h('summary', null, 'Branch from here…'),
    h(
      'form',
      {
        onsubmit: (ev) => {
          ev.preventDefault();
          runEdit('branchWithSummary', { id: e.id, summary: summary.value }, `Branched from ${e.id.slice(0, 8)} with a summary`);
        },
      },
      summary,
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'submit', class: 'btn btn-small', dataset: { testid: 'branch-save' } }, 'Branch with summary'),
        h('button', { type: 'button', class: 'btn btn-small', title: 'A new session file holding the path root → this entry', onclick: () => newSessionFromBranch(e.id) }, 'New session from this branch'),
      ),
    ),
  );
  wrap.append(labelForm, branchForm);
  return wrap;
}

const JSON_TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** Pretty JSON with coloured tokens (string values linkified), built from text nodes only. */
function highlightJson(text, testid = 'raw-json') {
  const pre = h('pre', { class: 'code json', dataset: { testid } });
  if (text.length > HIGHLIGHT_MAX) {
    pre.textContent = text;
    return pre;
  }
  let last = 0;
  let m;
  JSON_TOKEN.lastIndex = 0;
  while ((m = JSON_TOKEN.exec(text))) {
    if (m.index > last) pre.append(text.slice(last, m.index));
    const cls = m[1] ? (m[2] ? 'j-key' : 'j-str') : m[3] ? 'j-lit' : 'j-num';
    pre.append(h('span', { class: cls }, cls === 'j-str' ? linkify(m[1]) : m[1] ?? m[0]));
    if (m[2]) pre.append(m[2]);
    last = JSON_TOKEN.lastIndex;
  }
  if (last < text.length) pre.append(text.slice(last));
  return pre;
}

let urlGen = 0;
/** Where the focus was before the links panel took it (given back when it closes). */
let urlOpener = null;

/**
 * Opens the links panel on `url` (artifact://, agent://) and moves the keyboard into it:
 * its content can be scrolled with the arrow keys, Tab reaches its links and Close, Esc
 * closes it and returns to the link.
 */
export async function openUrl(url) {
  const gen = ++urlGen;
  const panel = $('url-panel');
  const active = document.activeElement;
  if (active && !panel.contains(active) && active !== document.body) urlOpener = active;
  panel.hidden = false;
  panel.dataset.url = url;
  $('url-title').textContent = url;
  const body = $('url-body');
  body.tabIndex = 0;
  body.setAttribute('role', 'region');
  body.setAttribute('aria-label', `Content of ${url}`);
  body.replaceChildren(h('div', { class: 'muted pad' }, 'Loading…'));
  body.focus({ preventScroll: true });
  panel.scrollIntoView({ block: 'nearest' });
  try {
    const r = await call('resolveUrl', { url });
    if (gen !== urlGen) return;
    const kind = r.mimeType === 'application/json' ? 'json' : r.mimeType === 'text/markdown' ? 'markdown' : 'text';
    let content;
    if (kind === 'json') content = highlightJson(r.content, 'url-json');
    else if (kind === 'markdown' && /^\s*[[{]/.test(r.content)) content = highlightJson(r.content, 'url-json');
    else if (kind === 'markdown') content = h('div', { class: 'md-body' }, renderText(r.content));
    else content = h('pre', { class: 'code url-text' }, r.content);
    $('url-body').replaceChildren(
      h('div', { class: 'url-meta', dataset: { testid: 'url-meta' } }, h('span', { class: 'badge' }, r.mimeType), h('span', { class: 'muted' }, fmtBytes(r.size))),
      h('div', { class: 'url-content', dataset: { testid: 'url-content' } }, content),
    );
  } catch (e) {
    if (gen !== urlGen) return;
    const single = !state.view?.source;
    $('url-body').replaceChildren(
      h('div', { class: 'error-box', dataset: { testid: 'url-error' } }, errMsg(e)),
      single ? h('p', { class: 'muted pad' }, 'This session was opened as a single file. Open its folder (the agent directory or its sessions directory) to follow artifact:// and agent:// links.') : null,
    );
  }
}

export function closeUrlPanel() {
  const panel = $('url-panel');
  const hadFocus = panel.contains(document.activeElement);
  panel.hidden = true;
  urlGen++;
  if (hadFocus && urlOpener?.isConnected) urlOpener.focus();
  urlOpener = null;
}
