// The conversation: the selected branch's messages in windows of MSG_CHUNK, loaded as the reader scrolls.
// Each message has a heading (role, #n) and a Copy button (the message as Markdown); a tool
// result joins its call's card when that call is on the page (tools.js).

import { MSG_CHUNK, events, inTree, state } from './state.js';
import { call } from './rpc.js';
import { $, fmtCount, fmtNum, fmtTime, fmtTok, h, shortId } from './dom.js';
import { applySelection, inspectEntry, selectEntry } from './tree.js';
import { clampBlock, copyText, jsonDetails, renderContent, renderText } from './content.js';
import { attachToolResult, renderLoneToolResult, renderToolCall, resetToolCards } from './tools.js';
import { messageTitle, messageToMarkdown } from './to-markdown.js';
import { drawVisible, setLazyRoot } from './lazy.js';

let convObserver = null;
let msgBusy = false;

/** The conversation follows the branch shown (state.js `events`): its first window of messages. */
export function wireConversation() {
  events.addEventListener('selection', (ev) => renderWindow(ev.detail.win, ev.detail.conv));
}

/** Renders a window of messages the worker sent, at the start or the end of the branch. */
function renderWindow(win, where) {
  const n = state.count;
  state.win = { start: win.start, end: win.end };
  const conv = $('conversation');
  convObserver?.disconnect();
  resetToolCards();
  setLazyRoot(conv);
  const list = h('div', { class: 'msg-list' });
  win.items.forEach((it, k) => list.append(renderMessage(it.m, win.start + k, it.id)));
  const parts = [h('div', { class: 'sentinel sentinel-top' }), list, h('div', { class: 'sentinel sentinel-bottom' })];
  if (!n) parts.splice(1, 1, h('div', { class: 'empty' }, state.selected ? 'This branch has no messages yet (only settings entries).' : 'Empty session.'));
  conv.replaceChildren(...parts);
  updateSentinels();
  conv.scrollTop = where === 'end' ? conv.scrollHeight : 0;
  // The messages on screen are drawn in full before the first paint; the rest as they come near.
  // At the end, the whole window is drawn now: drawn later, the messages above the reader
  // would grow and push the end out of view.
  drawVisible(list, { all: where === 'end' });
  if (where === 'end') stickToEnd(conv);

  const gen = state.selGen;
  convObserver = new IntersectionObserver(
    (items) => {
      for (const it of items) {
        if (!it.isIntersecting || gen !== state.selGen) continue;
        if (it.target.classList.contains('sentinel-top')) loadEarlier();
        else loadLater();
      }
    },
    { root: conv, rootMargin: '800px 0px' },
  );
  // Observe after the scroll position is set, so the far end does not load at once.
  requestAnimationFrame(() => {
    for (const s of conv.querySelectorAll('.sentinel')) convObserver?.observe(s);
  });
  events.dispatchEvent(new Event('window'));
}

/**
 * Scrolls to the end, and again for a few frames while the messages on screen take their
 * real heights (`content-visibility: auto` estimates them until drawn), unless the reader
 * has scrolled meanwhile.
 */
function stickToEnd(conv, frames = 4) {
  conv.scrollTop = conv.scrollHeight;
  let at = conv.scrollTop;
  const again = (left) => requestAnimationFrame(() => {
    if (!conv.isConnected || Math.abs(conv.scrollTop - at) > 1) return; // the reader moved
    conv.scrollTop = conv.scrollHeight;
    at = conv.scrollTop;
    if (left > 1) again(left - 1);
  });
  again(frames);
}

export async function showWindow(where) {
  const n = state.count;
  const [start, end] = where === 'end' ? [Math.max(0, n - MSG_CHUNK), n] : [0, Math.min(n, MSG_CHUNK)];
  const gen = state.selGen;
  const win = await call('messages', { start, end });
  if (gen === state.selGen) renderWindow(win, where);
}

/**
 * Shows the branch's whole history (`on`: every message from its root, compactions where
 * they happened) or the model's context again, at the compaction `at` when it is in the
 * new list.
 */
export async function showHistory(on, at = null) {
  const gen = ++state.selGen;
  const sel = await call('history', { on, at });
  if (gen !== state.selGen) return;
  applySelection(sel, { conv: sel.index === null ? 'end' : 'start', gen });
  if (sel.index !== null) await showMessage(sel.index, { focus: false });
}

/** Messages before the target when a jump loads the window holding it. */
const JUMP_BEFORE = 8;

/**
 * Shows message `index` (0-based) of the branch: loads the window holding it when it is not
 * rendered, marks it as the target (focused too, unless `focus` is false) and scrolls it to
 * the top of the conversation. `highlight(el)` may mark a match in it and return the node
 * to scroll to (centred) instead. Resolves to the message's element, or null when the
 * index is out of range or the branch changed meanwhile.
 */
export async function showMessage(index, { focus = true, highlight = null } = {}) {
  const n = state.count;
  if (!Number.isInteger(index) || index < 0 || index >= n) return null;
  const conv = $('conversation');
  // A tool result drawn inside its call's card leaves an empty marker: the card is the message.
  const find = () => {
    const el = conv.querySelector(`.msg[data-index="${index}"]`);
    return el?.classList.contains('msg-merged') ? conv.querySelector(`[data-result-index="${index}"]`) ?? el : el;
  };
  if (!find()) {
    const start = Math.max(0, Math.min(index - JUMP_BEFORE, n - MSG_CHUNK));
    const gen = state.selGen;
    const win = await call('messages', { start, end: Math.min(n, start + MSG_CHUNK) });
    if (gen !== state.selGen) return null;
    renderWindow(win, 'start');
  }
  const el = find();
  if (!el) return null;
  for (const old of conv.querySelectorAll('.msg-target')) if (old !== el) old.classList.remove('msg-target');
  el.classList.add('msg-target');
  el.tabIndex = -1;
  // What the window draws lazily is drawn now: the target must be there to be marked, and
  // the messages around it must have their real heights, or the place moves after the jump.
  drawVisible(conv.querySelector('.msg-list') ?? el, { all: true });
  const node = highlight?.(el) ?? null;
  const place = () => (node ? node.scrollIntoView({ block: 'center' }) : el.scrollIntoView({ block: 'start' }));
  place();
  if (focus) el.focus({ preventScroll: true });
  // Messages above it may only now get their real height (content-visibility): keep it in view.
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const box = (node ?? el).getBoundingClientRect();
    const view = conv.getBoundingClientRect();
    if (el.isConnected && (box.top < view.top || box.top > view.top + view.height * 0.6)) place();
  }));
  return el;
}

function updateSentinels() {
  const conv = $('conversation');
  const n = state.count;
  const top = conv.querySelector('.sentinel-top');
  const bottom = conv.querySelector('.sentinel-bottom');
  if (top) {
    top.replaceChildren(state.win.start > 0 ? h('button', { type: 'button', class: 'btn btn-small', onclick: loadEarlier }, `Show ${fmtCount(state.win.start, 'earlier message')}`) : '');
  }
  if (bottom) {
    const rest = n - state.win.end;
    bottom.replaceChildren(rest > 0 ? h('button', { type: 'button', class: 'btn btn-small', onclick: loadLater }, `Show ${fmtCount(rest, 'more message')}`) : '');
  }
}

async function loadEarlier() {
  const { start } = state.win;
  if (start <= 0 || msgBusy) return;
  msgBusy = true;
  const gen = state.selGen;
  try {
    const newStart = Math.max(0, start - MSG_CHUNK);
    const win = await call('messages', { start: newStart, end: start });
    if (gen !== state.selGen) return;
    const conv = $('conversation');
    const list = conv.querySelector('.msg-list');
    if (!list) return;
    const frag = document.createDocumentFragment();
    win.items.forEach((it, k) => frag.append(renderMessage(it.m, newStart + k, it.id)));
    // Keep the reader's place: whatever the browser's scroll anchoring did, the message
    // that was first must stay where it was on screen.
    const anchor = list.firstElementChild;
    const before = anchor?.getBoundingClientRect().top ?? 0;
    list.prepend(frag);
    state.win.start = newStart;
    updateSentinels();
    if (anchor) conv.scrollTop += anchor.getBoundingClientRect().top - before;
  } finally {
    msgBusy = false;
  }
}

async function loadLater() {
  const { end } = state.win;
  if (end >= state.count || msgBusy) return;
  msgBusy = true;
  const gen = state.selGen;
  try {
    const newEnd = Math.min(state.count, end + MSG_CHUNK);
    const win = await call('messages', { start: end, end: newEnd });
    if (gen !== state.selGen) return;
    const list = $('conversation').querySelector('.msg-list');
    if (!list) return;
    const frag = document.createDocumentFragment();
    win.items.forEach((it, k) => frag.append(renderMessage(it.m, end + k, it.id)));
    list.append(frag);
    state.win.end = newEnd;
    updateSentinels();
  } finally {
    msgBusy = false;
  }
}

const KNOWN_ROLES = new Set(['user', 'assistant', 'toolResult', 'custom', 'branchSummary', 'compactionSummary', 'bashExecution']);
const CONTENT_OPTS = { toolCall: (b) => renderToolCall(b) };

/**
 * Message `m` (number `index` of the branch, entry `entryId`) as an `<article class="msg">`
 * with `data-index`, `data-role` and `data-entry`. A tool result whose call's card is on the
 * page goes into that card; its article is then an empty marker (`.msg-merged`).
 */
export function renderMessage(m, index, entryId) {
  if (!m || typeof m !== 'object') {
    return h('article', { class: 'msg role-other', dataset: { index: String(index), role: 'invalid', entry: entryId ?? '' } }, h('header', { class: 'msg-head' }, h('h3', { class: 'msg-title' }, h('span', { class: 'role' }, 'Invalid message'))), h('pre', { class: 'code' }, String(m)));
  }
  const role = typeof m.role === 'string' ? m.role : 'unknown';
  const known = KNOWN_ROLES.has(role);
  if (role === 'toolResult') {
    const card = attachToolResult(m, index, { indexEl: indexLink(index, entryId), entryId });
    if (card) return mergedResult(m, index, entryId, card);
  }
  // The model is in the heading for screen readers; on screen it is in the meta line.
  const model = role === 'assistant' ? messageTitle(m).slice(messageTitle({ role }).length) : '';
  const title = h('h3', { class: 'msg-title', id: `msg-h-${index}` }, h('span', { class: 'role' }, messageTitle(role === 'assistant' ? { role } : m)), model ? h('span', { class: 'visually-hidden' }, model) : null);
  const head = h('header', { class: 'msg-head' }, title);
  const meta = h('span', { class: 'msg-meta' });
  const body = h('div', { class: 'msg-body' });
  const classes = ['msg', `role-${known ? role : 'other'}`];

  switch (role) {
    case 'user':
      renderContent(body, m.content, CONTENT_OPTS);
      break;
    case 'assistant': {
      const model = [m.provider, m.model].filter(Boolean).join('/');
      if (model) meta.append(h('span', { class: 'model' }, model));
      const u = m.usage;
      if (u && typeof u === 'object') {
        const bits = [`↑${fmtTok(u.input ?? 0)}`, `↓${fmtTok(u.output ?? 0)}`];
        if (u.cacheRead) bits.push(`cache ${fmtTok(u.cacheRead)}`);
        if (u.cost?.total) bits.push(`$${Number(u.cost.total).toFixed(4)}`);
        meta.append(h('span', { class: 'usage', title: `usage ${JSON.stringify(u)}` }, bits.join(' ')));
      }
      if (m.stopReason && m.stopReason !== 'stop' && m.stopReason !== 'toolUse') meta.append(h('span', { class: 'badge badge-warn' }, m.stopReason));
      renderContent(body, m.content, CONTENT_OPTS);
      if (m.errorMessage) body.append(h('div', { class: 'error-box' }, String(m.errorMessage)));
      if (!body.childNodes.length) body.append(h('div', { class: 'muted' }, '(empty response)'));
      break;
    }
    case 'toolResult':
      if (m.isError) {
        classes.push('is-error');
        meta.append(h('span', { class: 'badge badge-error' }, 'error'));
      }
      if (m.toolCallId) meta.append(h('span', { class: 'mono muted', title: `toolCallId ${m.toolCallId}` }, shortId(m.toolCallId)));
      body.append(renderLoneToolResult(m));
      break;
    case 'custom':
      if (m.display === false) meta.append(h('span', { class: 'badge' }, 'hidden in the agent UI'));
      if (m.attribution && m.attribution !== 'agent') meta.append(h('span', { class: 'badge' }, `by ${m.attribution}`));
      renderContent(body, m.content, CONTENT_OPTS);
      if (m.details !== undefined && m.details !== null) body.append(jsonDetails('details', m.details));
      break;
    case 'branchSummary': {
      const from = inTree(m.fromId)
        ? h('button', { type: 'button', class: 'link mono', title: `Show the branch ending at ${m.fromId}`, onclick: () => selectEntry(m.fromId, { conv: 'end', scrollTree: true }) }, String(m.fromId))
        : h('span', { class: 'mono' }, String(m.fromId ?? '?'));
      meta.append(h('span', { title: 'fromId: the entry this branch summary was recorded from' }, 'from '), from);
      body.append(renderText(m.summary ?? ''));
      break;
    }
    case 'compactionSummary':
      if (m.tokensBefore) meta.append(h('span', null, `${fmtCount(m.tokensBefore, 'token')} compacted`));
      if (m.shortSummary) body.append(h('div', { class: 'short-summary' }, String(m.shortSummary)));
      body.append(
        h(
          'div',
          { class: 'compaction-note' },
          state.history ? 'Here the messages above were replaced by this summary in the model’s context. ' : 'Earlier messages were replaced by this summary in the model’s context. ',
          h(
            'button',
            { type: 'button', class: 'link', dataset: { testid: state.history ? 'history-collapse' : 'history-expand' }, onclick: () => showHistory(!state.history, entryId) },
            state.history ? 'Show the model’s context' : 'Show the messages it replaced',
          ),
        ),
      );
      body.append(clampBlock(String(m.summary ?? ''), { markdown: true }));
      if (m.providerPayload) body.append(jsonDetails('provider payload', m.providerPayload));
      break;
    case 'bashExecution': {
      if (m.exitCode !== undefined && m.exitCode !== null) meta.append(h('span', { class: `badge ${m.exitCode === 0 ? 'badge-ok' : 'badge-error'}` }, `exit ${m.exitCode}`));
      if (m.cancelled) meta.append(h('span', { class: 'badge badge-warn' }, 'cancelled'));
      if (m.truncated) meta.append(h('span', { class: 'badge' }, 'truncated'));
      body.append(h('div', { class: 'bash-command' }, h('span', { class: 'prompt' }, '$ '), String(m.command ?? '')));
      if (m.output) body.append(clampBlock(String(m.output), { monospace: true }));
      break;
    }
    default: {
      if (m.content !== undefined) renderContent(body, m.content, CONTENT_OPTS);
      const rest = { ...m };
      delete rest.content;
      body.append(jsonDetails('fields', rest, true));
    }
  }
  if (m.timestamp !== undefined) meta.append(h('time', { title: fmtTime(m.timestamp) }, fmtTime(m.timestamp, false)));
  title.append(' ', indexLink(index, entryId));
  const copy = h(
    'button',
    { type: 'button', class: 'btn btn-small msg-copy', 'aria-label': `Copy message #${index + 1} as Markdown`, title: 'Copy this message as Markdown', onclick: () => copyText(messageToMarkdown(m, index), `Message #${index + 1} copied as Markdown`) },
    'Copy',
  );
  head.append(meta, copy);
  return h('article', { class: classes.join(' '), 'aria-labelledby': `msg-h-${index}`, dataset: { index: String(index), role, entry: entryId ?? '' } }, head, body);
}

/** "#n": a button showing the message's entry in the tree (plain text when it has none). */
function indexLink(index, entryId) {
  return inTree(entryId)
    ? h('button', { type: 'button', class: 'idx entry-link', title: `Show entry ${entryId} in the tree`, dataset: { entry: entryId }, onclick: () => inspectEntry(entryId) }, `#${index + 1}`)
    : h('span', { class: 'idx' }, `#${index + 1}`);
}

/** The marker left where a tool result was: its result is in its call's card (message #n). */
function mergedResult(m, index, entryId, card) {
  const callMsg = card.closest('article.msg');
  const at = callMsg ? ` #${Number(callMsg.dataset.index) + 1}` : '';
  return h(
    'article',
    { class: `msg role-toolResult msg-merged${m.isError ? ' is-error' : ''}`, dataset: { index: String(index), role: 'toolResult', entry: entryId ?? '', merged: '1' } },
    h('h3', { class: 'visually-hidden' }, `Tool result #${index + 1} · ${m.toolName ?? 'tool'}: shown with its call in message${at}`),
  );
}
