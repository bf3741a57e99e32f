// Tool cards: a tool call and its result (matched by toolCallId) as one card. The call's
// arguments as a list of names and values (bash commands as code, edits as a line diff,
// written files as code), the result below. A result whose call is not on the page (the
// conversation is loaded in windows) is a card of its own. "Hide tool details" folds every
// card to its one-line summary; the choice is kept in localStorage.

import { $, fmtCount, h, oneLine, shortId } from './dom.js';
import { clampBlock, jsonDetails, renderContent } from './content.js';
import { renderDiff, renderDiffText } from './diff.js';
import { languageOfPath } from './markdown.js';
import { later } from './lazy.js';

const HIDE_KEY = 'xcsh-viewer-hide-tools';
const VALUE_LINES = 8; // long argument values show this many lines until expanded

/** toolCallId -> the card of that call on the page (cleared when the conversation is redrawn). */
let cards = new Map();
/** toolCallId -> the index of its result, when the result was drawn before its call. */
let loneResults = new Map();

/** card -> {status, slot}: the parts of a call's card a result fills in. */
const parts = new WeakMap();

let hidden = localStorage.getItem(HIDE_KEY) === '1';

/** Forgets the cards drawn so far (the conversation is drawn anew). */
export function resetToolCards() {
  cards.clear();
  loneResults.clear();
}

/** Runs `fn` with cards of its own (an export), leaving the page's cards as they were. */
export function withOwnToolCards(fn) {
  const saved = [cards, loneResults];
  cards = new Map();
  loneResults = new Map();
  try {
    return fn();
  } finally {
    [cards, loneResults] = saved;
  }
}

/** Whether tool cards are folded to one line ("Hide tool details"). */
export function toolDetailsHidden() {
  return hidden;
}

/** Wires the "Hide tool details" button (`#toggle-tools`) and applies the kept choice. */
export function wireToolToggle() {
  const btn = $('toggle-tools');
  if (!btn) return;
  const show = () => {
    btn.setAttribute('aria-pressed', String(hidden));
    btn.title = hidden ? 'Tool calls are folded to one line each: press to show their details' : 'Fold every tool call and result to one line';
  };
  show();
  btn.addEventListener('click', () => {
    hidden = !hidden;
    localStorage.setItem(HIDE_KEY, hidden ? '1' : '0');
    show();
    for (const card of document.querySelectorAll('#conversation details.tool-card')) card.open = !hidden;
  });
}

/** Parsed arguments of a tool call block (an object, or the raw string when it is not JSON). */
function argsOf(b) {
  let args = b.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return args;
    }
  }
  return args && typeof args === 'object' ? args : {};
}

/** One line saying what the call does: the command, the file, or the first argument. */
function briefOf(name, args) {
  if (typeof args === 'string') return oneLine(args, 90);
  const str = (k) => (typeof args[k] === 'string' ? args[k] : '');
  if (str('command')) return oneLine(str('command').split('\n')[0], 90);
  const path = str('path') || str('file_path') || str('filePath');
  if (path) {
    const range = [args.offset !== undefined ? `from line ${args.offset}` : '', args.limit !== undefined ? `${args.limit} lines` : ''].filter(Boolean).join(', ');
    return range ? `${path} (${range})` : path;
  }
  const first = Object.values(args).find((v) => typeof v === 'string');
  return first ? oneLine(first, 90) : '';
}

/**
 * The card of a tool call block `b` (`details.tool-card.tool-call`), its result slot empty
 * until `attachToolResult` fills it. `full`: values never clamped (exports).
 */
export function renderToolCall(b, { full = false } = {}) {
  const name = String(b.name ?? 'tool');
  const args = argsOf(b);
  const status = h('span', { class: 'tool-status' });
  const summary = h(
    'summary',
    { class: 'tool-summary' },
    h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
    h('span', { class: 'tool-name' }, name),
    h('span', { class: 'tool-brief' }, briefOf(name, args)),
    status,
    b.id ? h('span', { class: 'mono muted tool-id', title: `toolCallId ${b.id}` }, shortId(b.id)) : null,
  );
  const slot = h('div', { class: 'tool-result-slot' });
  const argsBox = h('div', { class: 'tool-args' });
  // The body is drawn when it comes near the screen (never while the card is folded).
  later(argsBox, () => renderArgs(argsBox, name, args, full));
  const card = h('details', { class: 'tool-card tool-call', open: !hidden, dataset: { toolCallId: b.id ? String(b.id) : '', tool: name }}, summary, argsBox, slot);
  parts.set(card, { status, slot });
  if (b.id) {
    cards.set(String(b.id), card);
    const lone = loneResults.get(String(b.id));
    if (lone !== undefined) {
      status.append(h('span', { class: 'badge' }, `result in #${lone + 1}`));
      slot.append(h('div', { class: 'muted small' }, `The result is shown below, as message #${lone + 1}.`));
    }
  }
  return card;
}

/** Fills `box` with the arguments: diff for edits, code for commands and written files, names and values for the rest. */
function renderArgs(box, name, args, full) {
  if (typeof args === 'string') {
    box.append(clampBlock(args, { monospace: true, lines: 16, full, label: 'Arguments' }));
    return box;
  }
  const rest = { ...args };
  const path = typeof args.path === 'string' ? args.path : typeof args.file_path === 'string' ? args.file_path : '';
  if (typeof args.oldText === 'string' || typeof args.newText === 'string' || typeof args.old_string === 'string') {
    const oldText = args.oldText ?? args.old_string ?? '';
    const newText = args.newText ?? args.new_string ?? '';
    for (const k of ['oldText', 'newText', 'old_string', 'new_string']) delete rest[k];
    box.append(kvList(rest, full));
    box.append(renderDiff(String(oldText), String(newText), { label: path ? `Changes to ${path}` : 'Changes', full }));
    return box;
  }
  if (typeof args.command === 'string') {
    delete rest.command;
    box.append(clampBlock(args.command, { monospace: true, lines: 16, lang: 'bash', full, label: 'Command' }));
    if (Object.keys(rest).length) box.append(kvList(rest, full));
    return box;
  }
  if (typeof args.content === 'string' && path) {
    delete rest.content;
    box.append(kvList(rest, full));
    box.append(clampBlock(args.content, { monospace: true, lines: 16, lang: languageOfPath(path), full, label: `Content of ${path}` }));
    return box;
  }
  box.append(kvList(rest, full));
  return box;
}

/** Argument names and values as a description list; long values clamped. */
function kvList(obj, full) {
  const dl = h('dl', { class: 'tool-kv' });
  for (const [k, v] of Object.entries(obj)) {
    let value;
    if (typeof v === 'string') value = v.includes('\n') || v.length > 160 ? clampBlock(v, { monospace: true, lines: VALUE_LINES, full, label: k }) : h('span', { class: 'kv-str' }, v);
    else {
      const json = JSON.stringify(v, null, 2) ?? String(v);
      value = json.includes('\n') ? clampBlock(json, { monospace: true, lines: VALUE_LINES, full, label: k }) : h('span', { class: 'kv-lit' }, json);
    }
    dl.append(h('dt', null, k), h('dd', null, value));
  }
  return dl;
}

/** The body of a tool result: its output (text as output, images), the edit diff, details. */
export function renderToolResultBody(m, { full = false } = {}) {
  const box = h('div', { class: 'tool-result' });
  renderContent(box, m.content, { monospace: true, full });
  const d = m.details;
  if (d && typeof d === 'object' && typeof d.diff === 'string' && Object.keys(d).length === 1) {
    // Drawn when opened: most readers never look at it.
    const more = h('details', { class: 'json-details', ontoggle: () => more.open && !more.querySelector('pre') && more.append(renderDiffText(d.diff, { label: 'Diff with line numbers' })) }, h('summary', null, 'diff with line numbers'));
    if (full) {
      more.append(renderDiffText(d.diff, { label: 'Diff with line numbers' }));
      more.open = true;
    }
    box.append(more);
  } else if (d !== undefined && d !== null && !(typeof d === 'object' && !Object.keys(d).length)) {
    box.append(jsonDetails('details', d));
  }
  return box;
}

/**
 * Puts tool result `m` (message `index`, entry `entryId`, `indexEl` its "#n" link) into its
 * call's card when that card is on the page; returns the card, or null (the result is then
 * drawn as a card of its own).
 */
export function attachToolResult(m, index, { full = false, indexEl = null, entryId = null } = {}) {
  const id = m.toolCallId ? String(m.toolCallId) : '';
  const card = id ? cards.get(id) : null;
  if (!card) {
    if (id) loneResults.set(id, index);
    return null;
  }
  cards.delete(id);
  card.dataset.resultIndex = String(index);
  if (m.isError) card.classList.add('is-error');
  const { status, slot } = parts.get(card);
  status.replaceChildren(m.isError ? h('span', { class: 'badge badge-error' }, 'error') : h('span', { class: 'badge badge-ok' }, resultWord(m)));
  if (entryId) slot.dataset.entry = entryId;
  slot.replaceChildren(h('div', { class: 'tool-result-head' }, m.isError ? 'Error' : 'Result', h('span', { class: 'muted' }, ' · message '), indexEl ?? h('span', { class: 'idx' }, `#${index + 1}`)));
  later(slot, () => slot.append(renderToolResultBody(m, { full })));
  return card;
}

/** The text blocks of a message's content, joined. */
function textOf(m) {
  return Array.isArray(m.content) ? m.content.filter((c) => c?.type === 'text').map((c) => String(c.text ?? '')).join('\n') : String(m.content ?? '');
}

function resultWord(m) {
  const text = textOf(m);
  if (!text) return 'done';
  const lines = text.split('\n').length;
  return lines > 1 ? fmtCount(lines, 'line') : 'done';
}

/** A tool result whose call is not on the page: a card of its own (`details.tool-card`). */
export function renderLoneToolResult(m, { full = false } = {}) {
  const name = String(m.toolName ?? 'tool');
  return h(
    'details',
    { class: `tool-card tool-lone${m.isError ? ' is-error' : ''}`, open: !hidden, dataset: { toolCallId: m.toolCallId ? String(m.toolCallId) : '', tool: name }},
    h(
      'summary',
      { class: 'tool-summary' },
      h('span', { class: 'arrow', 'aria-hidden': 'true' }, '←'),
      h('span', { class: 'tool-name' }, name),
      h('span', { class: 'tool-brief' }, oneLine(textOf(m).split('\n')[0], 90) || 'result (its call is in an earlier message)'),
      h('span', { class: 'tool-status' }, m.isError ? h('span', { class: 'badge badge-error' }, 'error') : h('span', { class: 'badge badge-ok' }, resultWord(m))),
    ),
    lazyBox('tool-result-lazy', () => renderToolResultBody(m, { full })),
  );
}

/** A div drawn with `make()`'s element when it comes near the screen. */
function lazyBox(cls, make) {
  const box = h('div', { class: cls });
  later(box, () => box.append(make()));
  return box;
}
