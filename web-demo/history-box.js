// The prompt history box: search (FTS5), recent prompts, adding prompts and importing them from sessions.

import { state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, flash, fmtNum, fmtTime, h, oneLine, refreshView } from './dom.js';
import { picker, SOURCE_TAB } from './picker.js';
import { openPath } from './open.js';

// The worker keeps a PromptHistory (the package's logic) over SQLite compiled to wasm on
// OPFS (history-store.js), or in memory where that cannot start; the page says which.

const hist = {
  gen: 0,
  timer: 0,
  dirty: false,
  refreshing: Promise.resolve(),
  info: null,
  items: [],
  /** Ids of the prompts whose sessions are shown (kept when the list is drawn again). */
  sessionsShown: new Set(),
};

/** The project of the open session (else the picker's). */
function projectCwd() {
  return state.view?.header?.cwd || picker.cwd || null;
}

export function wireHistory() {
  const dlg = $('history');
  $('history-close').addEventListener('click', () => dlg.close());
  dlg.addEventListener('click', (ev) => {
    if (ev.target === dlg) dlg.close(); // the backdrop
  });
  $('history-query').addEventListener('input', () => {
    clearTimeout(hist.timer);
    hist.dirty = true;
    hist.timer = setTimeout(refreshHistory, 120);
  });
  $('history-query').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      clearTimeout(hist.timer);
      refreshHistory();
    }
  });
  for (const id of ['history-plain', 'history-project']) $(id).addEventListener('change', () => refreshHistory());
  $('history-add').addEventListener('submit', (ev) => {
    ev.preventDefault();
    addPrompt();
  });
  $('history-import').addEventListener('click', () => importPrompts());
}

export async function openHistory() {
  const dlg = $('history');
  const cwd = projectCwd();
  $('history-cwd').textContent = cwd ?? '(no project)';
  $('history-project').disabled = !cwd;
  if (!cwd) $('history-project').checked = false;
  if (!dlg.open) {
    $('history-add-cwd').value = cwd ?? '';
    setHistoryStatus('');
    dlg.showModal();
  }
  renderImportHint();
  $('history-query').focus();
  await refreshHistory();
}

function refreshHistory() {
  return refreshView(hist, doRefreshHistory);
}

async function doRefreshHistory() {
  const gen = ++hist.gen;
  const query = $('history-query').value;
  const plain = $('history-plain').checked;
  const cwd = $('history-project').checked ? projectCwd() : null;
  let res = null;
  let error = null;
  try {
    res = await call('historyQuery', { query, plain, cwd });
  } catch (e) {
    error = e;
  }
  if (gen !== hist.gen) return;
  if (res?.info) renderHistoryBackend(res.info);
  else if (!hist.info) call('historyInfo').then(renderHistoryBackend, () => {});
  hist.items = res?.items ?? [];
  const info = $('history-info');
  const where = cwd ? h('span', null, ' · in ', h('code', null, cwd)) : h('span', null, ' · all projects');
  if (error) {
    info.replaceChildren(h('span', { class: 'muted' }, 'Search failed'));
  } else if (res.how === 'recent') {
    info.replaceChildren(h('span', null, 'Recent prompts, newest first'), where);
  } else {
    const n = hist.items.length;
    const parts = [h('span', null, `${fmtNum(n)} match${n === 1 ? '' : 'es'}, best first (bm25)`), where];
    if (res.words) parts.push(h('span', { class: 'muted' }, ' · FTS5 query ', h('code', { dataset: { testid: 'history-fts-query' } }, res.query || '(no words)')));
    info.replaceChildren(...parts);
  }
  renderHistoryList(error, query.trim(), res?.how);
}

function renderHistoryBackend(info) {
  hist.info = info;
  const el = $('history-backend');
  const memory = !info.persistent; // SQLite in memory (or no history at all)
  el.className = `history-backend ${memory ? 'mem' : 'ok'}`;
  // In words a reader knows; the backend's own name is in the tooltip.
  const bits = [memory ? 'this tab only' : 'saved in this browser'];
  if (!memory) {
    if (info.sqliteVersion) bits.push(`SQLite ${info.sqliteVersion}`);
    if (info.file) bits.push(info.file.replace(/^\//, ''));
    if (typeof info.rows === 'number') bits.push(`${fmtNum(info.rows)} prompt${info.rows === 1 ? '' : 's'}`);
  } else {
    if (info.sqliteVersion) bits.push(`SQLite ${info.sqliteVersion}`);
    bits.push('not kept');
  }
  el.textContent = bits.join(' · ');
  el.title = memory
    ? `The prompt history is in this tab only (SQLite in memory, ${info.backend}): it is gone on reload.`
    : `Kept in this browser's private storage (${info.backend}: SQLite ${info.packageVersion ?? ''} in the Origin Private File System, folder ${info.directory ?? ''})`;
  const fb = $('history-fallback');
  fb.hidden = !memory;
  const none = info.backend === 'unavailable';
  fb.textContent = memory ? `${none ? 'No prompt history' : 'History kept in memory only'}: ${info.fallback ?? 'no persistent store'}` : '';
}

function renderHistoryList(error, query, how) {
  const list = $('history-list');
  if (error) {
    const invalid = error.kind === 'invalidInput' || /invalid history query|fts5|syntax error/i.test(errMsg(error));
    list.replaceChildren(
      h(
        'li',
        { class: 'history-error', role: 'alert', dataset: { testid: 'history-error' } },
        invalid ? h('strong', null, 'Invalid search: ') : h('strong', null, 'The history failed: '),
        errMsg(error).replace(/^invalid history query: /, ''),
        invalid ? h('div', { class: 'small' }, 'FTS5 syntax: ', h('code', null, 'pars*'), ', ', h('code', null, '"exact phrase"'), ', ', h('code', null, 'a OR b'), ', ', h('code', null, 'a NOT b'), ' — or tick “plain words” to search the words as typed.') : null,
      ),
    );
    return;
  }
  if (!hist.items.length) {
    const text = how === 'search' ? `No prompt matches “${query}”.` : 'No prompts yet. Add one below, or import the prompts of the listed sessions.';
    list.replaceChildren(h('li', { class: 'picker-empty', dataset: { testid: 'history-empty' } }, text));
    return;
  }
  list.replaceChildren(
    ...hist.items.map((it, i) =>
      h(
        'li',
        { class: 'history-item', dataset: { id: String(it.id) } },
        how === 'search' ? h('span', { class: 'hi-rank', title: 'rank' }, `${i + 1}.`) : null,
        h(
          'div',
          { class: 'hi-body' },
          h('div', { class: 'hi-prompt', title: it.prompt }, it.prompt),
          h(
            'div',
            { class: 'pi-meta' },
            h('span', { class: 'hi-time', title: it.createdAt }, fmtTime(it.createdAt)),
            it.cwd ? h('code', { class: 'cwd hi-cwd' }, it.cwd) : h('span', { class: 'hi-cwd muted' }, 'no cwd'),
            h('span', { class: 'mono' }, `#${it.id}`),
          ),
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'btn btn-small',
            title: 'The sessions where this prompt was typed',
            'aria-expanded': 'false',
            onclick: (ev) => toggleSessionsOf(ev.currentTarget, it),
          },
          'Sessions',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'btn btn-small',
            title: 'Copy this prompt',
            onclick: async (ev) => {
              const btn = ev.currentTarget;
              try {
                await navigator.clipboard.writeText(it.prompt);
                flash(btn, 'Copied');
              } catch {
                flash(btn, 'Not allowed');
              }
            },
          },
          'Copy',
        ),
      ),
    ),
  );
  for (const it of hist.items) {
    if (!hist.sessionsShown.has(it.id)) continue;
    const row = list.querySelector(`.history-item[data-id="${it.id}"]`);
    if (row) showSessionsOf(row, it);
  }
}

/** Shows (or hides again) under a prompt's row the sessions where it was typed. */
function toggleSessionsOf(button, item) {
  const row = button.closest('.history-item');
  const shown = row.querySelector('.hi-sessions');
  if (shown) {
    shown.remove();
    hist.sessionsShown.delete(item.id);
    button.setAttribute('aria-expanded', 'false');
    return;
  }
  hist.sessionsShown.add(item.id);
  showSessionsOf(row, item);
}

/**
 * Fills a box under `row` with the sessions where `item`'s prompt was typed, each a
 * button that opens it; the search runs in the worker over every source.
 */
async function showSessionsOf(row, item) {
  row.querySelector('button[aria-expanded]')?.setAttribute('aria-expanded', 'true');
  const box = h('div', { class: 'hi-sessions', role: 'group', 'aria-label': 'Sessions where this prompt was typed', dataset: { testid: 'prompt-sessions' } }, h('span', { class: 'muted small' }, 'Looking in the sessions…'));
  row.append(box);
  try {
    const { items, total } = await call('promptSessions', { prompt: item.prompt, cwd: item.cwd ?? null });
    if (!items.length) {
      box.replaceChildren(h('span', { class: 'muted small' }, item.cwd ? `No session of ${item.cwd} here contains this prompt.` : 'No session here contains this prompt.'));
      return;
    }
    box.replaceChildren(
      ...items.map((s) =>
        h(
          'button',
          {
            type: 'button',
            class: 'btn btn-small hi-session',
            title: `${s.path} (${s.sourceLabel})`,
            onclick: async () => {
              $('history').close();
              await openPath(s.source, s.path);
            },
          },
          `${oneLine(s.name, 60)} · ${s.sourceLabel} · ${fmtTime(s.modified)}`,
        ),
      ),
      total > items.length ? h('span', { class: 'muted small' }, `and ${fmtNum(total - items.length)} more`) : null,
    );
  } catch (e) {
    box.replaceChildren(h('span', { class: 'history-error', role: 'alert' }, `Cannot look in the sessions: ${errMsg(e)}`));
  }
}

function setHistoryStatus(text, kind = 'ok') {
  const el = $('history-status');
  el.className = `history-status ${kind}`;
  el.textContent = text;
  el.dataset.seq = String(Number(el.dataset.seq ?? 0) + 1); // each report, even a repeated one
}

async function addPrompt() {
  const input = $('history-add-text');
  const prompt = input.value;
  const cwd = $('history-add-cwd').value.trim() || null;
  try {
    const r = await call('historyAdd', { prompt, cwd });
    renderHistoryBackend(r.info);
    if (r.added) {
      setHistoryStatus(`Added “${oneLine(prompt, 60)}”${cwd ? ` in ${cwd}` : ''}`);
      input.value = '';
    } else if (r.reason === 'duplicate') {
      setHistoryStatus('Not added: the same as the previous prompt (consecutive duplicates are kept once)', 'warn');
    } else {
      setHistoryStatus('Not added: the prompt is empty', 'warn');
    }
  } catch (e) {
    setHistoryStatus(`Cannot add the prompt: ${errMsg(e)}`, 'error');
  }
  await refreshHistory();
  input.focus();
}

/** Which sessions “Import prompts from sessions” reads: what the session picker lists. */
function importArgs() {
  return { source: picker.source, scope: picker.scope, cwd: picker.cwd ?? projectCwd(), query: $('picker-query').value };
}

function renderImportHint(res) {
  const a = importArgs();
  const src = state.sources.find((s) => s.key === a.source);
  const label = res?.source ?? src?.label ?? SOURCE_TAB[a.source] ?? a.source;
  const scope = a.scope === 'project' ? `this project${(res?.cwd ?? a.cwd) ? ` (${res?.cwd ?? a.cwd})` : ''}` : 'all projects';
  $('history-import-hint').textContent = `from the sessions the picker lists: ${label} · ${scope}${a.query.trim() ? ` · “${a.query.trim()}”` : ''}`;
}

async function importPrompts() {
  const btn = $('history-import');
  btn.disabled = true;
  setHistoryStatus('Importing…');
  try {
    const r = await call('historyImport', importArgs());
    renderHistoryBackend(r.info);
    renderImportHint(r);
    const bits = [`Added ${fmtNum(r.added)} of ${fmtNum(r.prompts)} prompt${r.prompts === 1 ? '' : 's'} from ${fmtNum(r.sessions)} session${r.sessions === 1 ? '' : 's'}`];
    if (r.duplicates) bits.push(`${fmtNum(r.duplicates)} consecutive duplicate${r.duplicates === 1 ? '' : 's'} skipped`);
    if (r.unreadable?.length) bits.push(`${r.unreadable.length} unreadable: ${r.unreadable.join('; ')}`);
    setHistoryStatus(bits.join(' · '), r.unreadable?.length ? 'warn' : 'ok');
  } catch (e) {
    setHistoryStatus(`Import failed: ${errMsg(e)}`, 'error');
  } finally {
    btn.disabled = false;
  }
  await refreshHistory();
}
