// In-session search: the find bar over the conversation (Ctrl/Cmd+F, Esc closes). The
// worker searches every message of the shown branch (`search`: text, thinking, tool calls
// and their arguments, tool results), case-insensitively, with a role and a tool filter;
// the bar says "n of m", Enter / Shift+Enter (or the arrows) step through the hits, and the
// conversation goes to each (loading its window) with the matches marked. `#914` in the
// field goes to that message instead.
//
// Session text reaches the DOM only as text nodes: snippets are built with h(), and marks
// split existing text nodes (never innerHTML).

import { events, state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, fmtCount, fmtNum, h } from './dom.js';
import { jumpTo } from './location.js';
import { visibleRange } from './position.js';

const DEBOUNCE_MS = 150;
const HITS_SHOWN = 200; // rows of the hit list (the counts cover every hit)
const MARKS_MAX = 500; // marks in one message
const ROLE_NAMES = { user: 'User', assistant: 'Assistant', toolResult: 'Tool result', other: 'Other' };

const find = {
  result: null, // the worker's answer for the field as it is
  current: -1, // the hit shown
  gen: 0, // bumps with each search, so late answers are dropped
  ctx: -1, // state.selGen the tools and the result belong to
  pushed: false, // the first jump of a search is a new history entry, the next ones replace it
  timer: 0,
  returnFocus: null,
  running: null, // the loadId of the worker's search in progress
  toolsCtx: -1, // state.selGen the tool filter lists the tools of
  toolsRunning: null, // the loadId of the worker's count of the tools, in progress
  toolsSeq: 0,
};

const bar = () => $('find-bar');
const field = () => $('find-query');

/** Wires the find bar: its controls, Ctrl/Cmd+F, and new branches (searched again). */
export function wireFind() {
  $('find-open').addEventListener('click', () => (bar().hidden ? openFind() : closeFind()));
  $('find-close').addEventListener('click', () => closeFind());
  bar().addEventListener('submit', (ev) => ev.preventDefault());
  field().addEventListener('input', () => {
    clearTimeout(find.timer);
    stopSearch(); // the worker is free for the next one at once
    find.timer = setTimeout(runSearch, DEBOUNCE_MS);
  });
  field().addEventListener('keydown', (ev) => {
    if (ev.key !== 'Enter') return;
    ev.preventDefault();
    enter(ev.shiftKey ? -1 : 1);
  });
  $('find-role').addEventListener('change', () => runSearch());
  $('find-tool').addEventListener('change', () => runSearch());
  $('find-next').addEventListener('click', () => enter(1));
  $('find-prev').addEventListener('click', () => enter(-1));
  bar().addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      ev.preventDefault();
      closeFind();
    }
  });
  $('find-hits').addEventListener('click', (ev) => {
    const b = ev.target.closest('[data-hit]');
    if (b) goToHit(Number(b.dataset.hit), { focus: false });
  });
  window.addEventListener('keydown', (ev) => {
    if (!(ev.ctrlKey || ev.metaKey) || ev.shiftKey || ev.altKey || ev.key.toLowerCase() !== 'f') return;
    if (document.querySelector('dialog[open]')) return; // the picker and the history box have their own fields
    if (document.activeElement === field()) return; // a second Ctrl+F: the browser's own find
    ev.preventDefault();
    openFind();
  });
  events.addEventListener('window', () => {
    if (!bar().hidden && find.ctx !== state.selGen) refresh();
  });
}

/** Opens the find bar (its field focused, its text selected). */
export function openFind() {
  if (bar().hidden) find.returnFocus = document.activeElement;
  bar().hidden = false;
  $('find-open').setAttribute('aria-expanded', 'true');
  field().focus();
  field().select();
  if (find.ctx !== state.selGen) refresh();
}

/** Closes the find bar and takes the marks away; the focus goes back where it was. */
export function closeFind() {
  bar().hidden = true;
  $('find-open').setAttribute('aria-expanded', 'false');
  clearTimeout(find.timer);
  find.timer = 0;
  // A search still running stops (the worker is free at once); its partial hits are
  // dropped, so the next Enter searches again. So does a count of the tools.
  if (find.running) {
    find.gen++;
    find.result = null;
    renderHits();
    setStatus('');
  }
  stopSearch();
  clearMarks();
  const back = find.returnFocus;
  find.returnFocus = null;
  (back?.isConnected && back !== document.body ? back : $('find-open')).focus();
}

/** The branch changed: the search again, and its tools. */
async function refresh() {
  find.ctx = state.selGen;
  find.result = null;
  find.current = -1;
  renderHits();
  await runSearch();
  loadTools();
}

/**
 * Lists the shown branch's tools in the tool filter. Counting them reads every message, so
 * a search started meanwhile stops the count (the worker runs one request at a time and
 * the search would wait for it); the search counts them as it goes, and its answer fills
 * the list.
 */
async function loadTools() {
  if (find.toolsCtx === state.selGen || find.toolsRunning) return;
  const ctx = state.selGen;
  const loadId = `tools-${++find.toolsSeq}`;
  find.toolsRunning = loadId;
  try {
    const { tools } = await call('tools', { loadId });
    if (ctx === state.selGen) fillTools(tools);
  } catch (e) {
    if (e.kind !== 'cancelled') setStatus(`Cannot list the tools: ${errMsg(e)}`);
  } finally {
    if (find.toolsRunning === loadId) find.toolsRunning = null;
  }
}

/** The tool filter's options: any tool, then each tool with its calls; the choice kept. */
function fillTools(tools) {
  find.toolsCtx = state.selGen;
  const select = $('find-tool');
  const was = select.value;
  select.replaceChildren(
    h('option', { value: '' }, 'any tool'),
    ...tools.map((t) => h('option', { value: t.name }, `${t.name} (${fmtNum(t.calls)})`)),
  );
  select.value = tools.some((t) => t.name === was) ? was : '';
}

/** `#914` (or `# 914`, `#1,204`): a message number to go to. */
function gotoNumber(text) {
  const m = text.trim().match(/^#\s*([\d,]+)$/);
  return m ? Number(m[1].replace(/,/g, '')) : null;
}

async function runSearch() {
  clearTimeout(find.timer);
  find.timer = 0;
  const query = field().value;
  const role = $('find-role').value;
  const tool = $('find-tool').value;
  stopSearch();
  const gen = ++find.gen;
  find.current = -1;
  find.pushed = false;
  find.result = null;
  const n = gotoNumber(query);
  if (n !== null) {
    renderHits();
    setStatus(n >= 1 && n <= state.count ? `Enter: go to message #${fmtNum(n)}` : `No message #${fmtNum(n)}: this branch has ${fmtCount(state.count, 'message')}`);
    return;
  }
  if (!query.trim() && !tool) {
    renderHits();
    clearMarks();
    setStatus('');
    return;
  }
  setStatus('Searching…');
  const loadId = `find-${gen}`;
  find.running = loadId;
  try {
    const onProgress = ({ done, total, found, matches, first }) => {
      if (gen !== find.gen) return;
      if (first?.length) {
        // The hits so far: listed at once, and Enter already steps through them.
        find.result = { query, hits: first, messages: found, matches, capped: found > first.length, partial: true };
        find.ctx = state.selGen;
        renderHits();
        markCurrentRow();
      }
      if (total) setStatus(`Searching… ${Math.floor((100 * done) / total)} %${found ? ` · ${fmtCount(found, 'message')} so far` : ''}`);
    };
    const ctx = state.selGen;
    const res = await call('search', { query, role, tool, loadId }, { onProgress });
    if (ctx === state.selGen && res.tools) fillTools(res.tools);
    if (gen !== find.gen) return;
    find.result = res;
    find.ctx = state.selGen;
    renderHits();
    if (!res.messages) setStatus('No matches in this branch');
    else if (find.current >= 0 && res.hits[find.current]) {
      // The reader already stepped to a hit while the search ran: it stays the current one.
      markCurrentRow();
      setStatus(`${fmtNum(find.current + 1)} of ${fmtNum(res.messages)}`);
    } else setStatus(`${fmtCount(res.messages, 'message')}${query.trim() ? ` · ${fmtCount(res.matches, 'match', 'matches')}` : ''} · Enter for the first`);
    $('find-status').title = `searched in ${Math.round(res.ms)} ms`;
  } catch (e) {
    if (gen === find.gen) setStatus(`Search failed: ${errMsg(e)}`);
  } finally {
    if (find.running === loadId) find.running = null;
    // A count of the tools this search stopped starts again (unless the search counted them).
    if (!bar().hidden && !find.running && !find.timer) loadTools();
  }
}

/** Stops the worker's search (and count of the tools) in progress, if any: a newer one is coming. */
function stopSearch() {
  for (const loadId of [find.running, find.toolsRunning]) if (loadId) call('cancel', { loadId }).catch(() => {});
  find.running = null;
  find.toolsRunning = null;
}

/** Enter / Shift+Enter / the arrows: the next (`dir` 1) or previous (-1) hit, or the `#n` message. */
async function enter(dir) {
  const n = gotoNumber(field().value);
  if (n !== null) {
    if (n >= 1 && n <= state.count) await jumpTo(n - 1, { push: true, focus: true });
    return;
  }
  if (find.timer || !find.result || find.ctx !== state.selGen) await runSearch();
  const hits = find.result?.hits ?? [];
  if (!hits.length) return;
  let i;
  if (find.current < 0) {
    // The first step goes from where the reader is.
    const at = visibleRange()?.first ?? 0;
    i = dir > 0 ? hits.findIndex((x) => x.index >= at) : hits.findLastIndex((x) => x.index < at);
    if (i < 0) i = dir > 0 ? 0 : hits.length - 1;
  } else {
    i = (find.current + dir + hits.length) % hits.length;
  }
  await goToHit(i, { focus: false });
}

async function goToHit(i, { focus }) {
  const res = find.result;
  const hit = res?.hits[i];
  if (!hit) return;
  find.current = i;
  const query = res.query;
  setStatus(`${fmtNum(i + 1)} of ${fmtNum(res.messages)}${res.capped ? ' (the first shown)' : ''}${hit.count > 1 ? ` · ${fmtNum(hit.count)} matches in #${fmtNum(hit.index + 1)}` : ''}`);
  markCurrentRow();
  const push = !find.pushed;
  find.pushed = true;
  await jumpTo(hit.index, { push, focus, highlight: (el) => markIn(el, query) });
}

function setStatus(text) {
  $('find-status').textContent = text;
}

// ---------------------------------------------------------------- the hit list

function renderHits() {
  const list = $('find-hits');
  const hits = find.result?.hits ?? [];
  list.hidden = hits.length === 0;
  const rows = hits.slice(0, HITS_SHOWN).map((hit, i) =>
    h(
      'li',
      null,
      h(
        'button',
        { type: 'button', class: 'find-hit-row', dataset: { hit: String(i) }, title: `Go to message #${hit.index + 1}` },
        h('span', { class: 'fh-idx' }, `#${fmtNum(hit.index + 1)}`),
        h('span', { class: 'fh-role' }, hit.tool && hit.role !== 'user' ? `${ROLE_NAMES[hit.role] ?? ROLE_NAMES.other} · ${hit.tool}` : ROLE_NAMES[hit.role] ?? hit.role),
        h('span', { class: 'fh-text' }, hit.before, hit.match ? h('mark', null, hit.match) : null, hit.after),
      ),
    ),
  );
  if (hits.length > HITS_SHOWN) rows.push(h('li', { class: 'fh-more' }, `and ${fmtCount(hits.length - HITS_SHOWN, 'more message')}: Enter steps through all of them`));
  list.replaceChildren(...rows);
}

function markCurrentRow() {
  for (const b of $('find-hits').querySelectorAll('[aria-current]')) b.removeAttribute('aria-current');
  const row = $('find-hits').querySelector(`[data-hit="${find.current}"]`);
  if (!row) return;
  row.setAttribute('aria-current', 'true');
  row.scrollIntoView({ block: 'nearest' });
}

// ---------------------------------------------------------------- marks in the conversation

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Marks the matches of `query` in a message's text (expanding its shortened blocks and
 * opening its closed sections when the match is only there); returns the first mark.
 */
function markIn(el, query) {
  clearMarks();
  if (!query.trim()) return null;
  const re = new RegExp(escapeRe(query), 'giu');
  let marks = markText(el, re);
  if (!marks.length) {
    for (const b of el.querySelectorAll('.clamped > .expand')) b.click();
    marks = markText(el, re);
  }
  for (const m of marks) {
    for (let d = m.closest('details:not([open])'); d; d = d.parentElement?.closest('details:not([open])')) d.open = true;
  }
  marks[0]?.classList.add('current');
  return marks[0] ?? null;
}

function markText(root, re) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.parentElement?.closest('.msg-head, button, mark, summary') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const found = [];
  let total = 0;
  for (let n = walker.nextNode(); n && total < MARKS_MAX; n = walker.nextNode()) {
    const ranges = [];
    re.lastIndex = 0;
    for (let m = re.exec(n.data); m && total < MARKS_MAX; m = re.exec(n.data)) {
      if (!m[0].length) {
        re.lastIndex++;
        continue;
      }
      ranges.push([m.index, m[0].length]);
      total++;
    }
    if (ranges.length) found.push([n, ranges]);
  }
  const marks = [];
  for (const [node, ranges] of found) {
    let rest = node;
    let offset = 0;
    for (const [at, len] of ranges) {
      const hit = rest.splitText(at - offset);
      rest = hit.splitText(len);
      offset = at + len;
      const mark = h('mark', { class: 'find-hit' });
      hit.replaceWith(mark);
      mark.append(hit);
      marks.push(mark);
    }
  }
  return marks;
}

function clearMarks() {
  for (const mark of $('conversation').querySelectorAll('mark.find-hit')) {
    const parent = mark.parentNode;
    mark.replaceWith(...mark.childNodes);
    parent?.normalize();
  }
}
