// The session picker: sources, recent / all / search lists of a source, import and delete.

import { SOURCE_NAMES, events, state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, fmtBytes, fmtCount, fmtNum, fmtTime, h, oneLine, refreshView, showBanner, toast } from './dom.js';
import { openPath, stopLoad } from './open.js';
import { editTarget } from './edit-target.js';

export const picker = {
  source: 'samples',
  scope: 'project', // 'project' | 'all'
  cwd: null,
  items: [],
  active: 0,
  dirty: false,
  refreshing: Promise.resolve(),
  gen: 0,
  timer: 0,
  /** The search the worker is running ({loadId}), stopped when a newer one is asked. */
  searching: null,
};
let nextSearch = 1;

/** Stops the worker's search in progress, if any (its request then fails as cancelled). */
function stopSearch() {
  if (!picker.searching) return;
  call('cancel', { loadId: picker.searching.loadId }).catch(() => {});
  picker.searching = null;
}

export function wirePicker() {
  const dlg = $('picker');
  const q = $('picker-query');
  $('picker-close').addEventListener('click', () => dlg.close());
  dlg.addEventListener('close', () => stopSearch());
  $('picker-scope').addEventListener('click', () => toggleScope());
  dlg.addEventListener('click', (ev) => {
    if (ev.target === dlg) dlg.close(); // the backdrop
  });
  q.addEventListener('input', () => {
    clearTimeout(picker.timer);
    stopSearch();
    picker.dirty = true;
    picker.timer = setTimeout(refreshPicker, 120);
  });
  dlg.addEventListener('keydown', (ev) => {
    const inList = ev.target === q || ev.target.closest?.('#picker-list');
    if (ev.key === 'Tab' && !ev.shiftKey && inList && !ev.ctrlKey && !ev.altKey) {
      ev.preventDefault();
      toggleScope();
      q.focus();
    } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      if (!inList) return;
      ev.preventDefault();
      moveActive(ev.key === 'ArrowDown' ? 1 : -1);
    } else if (ev.key === 'Enter' && ev.target === q) {
      ev.preventDefault();
      chooseActive();
    }
  });
  // So the picker opens at once while a later load keeps the worker busy.
  events.addEventListener('load-end', prefetchPicker);
}

/**
 * Opens the picker. While a session loads (the worker is busy), it opens at once from what
 * the page already has (the sources and the last list of each place, or a note when it has
 * none yet) and refreshes when the worker is free: it never waits for the load.
 */
export async function openPicker(source) {
  const dlg = $('picker');
  const fresh = freshSources();
  if (!state.loading) await fresh;
  picker.source = source ?? defaultSource(state.sources);
  picker.cwd = cwdIn(picker.source);
  if (!dlg.open) {
    $('picker-query').value = ''; // a fresh list each time the picker opens
    dlg.showModal();
  }
  $('picker-query').focus();
  await refreshPicker();
}

/** The sources request in flight: opening the picker during a load asks the worker once. */
let sourcesAsked = null;

/** Asks the worker for the sources (queued behind a load); keeps the known ones on failure. */
function freshSources() {
  sourcesAsked ??= call('sources')
    .then(
      (list) => (state.sources = list),
      () => state.sources,
    )
    .finally(() => (sourcesAsked = null));
  return sourcesAsked;
}

/** The source the picker opens on: the open session's, else browser storage if it has sessions, else the samples. */
function defaultSource(sources) {
  const byKey = new Map(sources.map((s) => [s.key, s]));
  const current = state.view?.source;
  return current && byKey.get(current)?.available ? current : byKey.get('opfs')?.sessions ? 'opfs' : 'samples';
}

/** The project a source's list starts in: the open session's, when it belongs to that source. */
const cwdIn = (key) => (state.view?.source === key ? state.view.header?.cwd ?? null : null);

/** Fills the picker's cache (sources, the list it would show first) while the worker is idle. */
function prefetchPicker() {
  if (state.loading) return;
  freshSources()
    .then((list) => {
      const key = defaultSource(list);
      const cwd = cwdIn(key);
      if (!list.find((s) => s.key === key)?.available) return null;
      return call('list', { source: key, scope: picker.scope, cwd, query: '' }).then((res) => remember(key, picker.scope, cwd, '', res));
    })
    .catch(() => {});
}

/** The last list of each (source, scope, cwd, query), shown while the worker is busy. */
const listCache = new Map();
const cacheKey = (source, scope, cwd, query) => JSON.stringify([source, scope, cwd ?? null, query.trim()]);
function remember(source, scope, cwd, query, res) {
  listCache.set(cacheKey(source, scope, cwd, query), res);
  if (listCache.size > 24) listCache.delete(listCache.keys().next().value);
}

function renderSources() {
  const box = $('picker-sources');
  box.replaceChildren(
    ...state.sources.map((s) =>
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          class: `src-tab${s.key === picker.source ? ' active' : ''}`,
          'aria-selected': s.key === picker.source ? 'true' : 'false',
          dataset: { source: s.key },
          title: s.note ?? `${s.label}${s.writable ? ' · editable' : ' · read-only'}`,
          onclick: () => {
            picker.source = s.key;
            picker.cwd = cwdIn(s.key);
            refreshPicker();
            $('picker-query').focus();
          },
        },
        SOURCE_TAB[s.key] ?? s.label,
        h('span', { class: 'count' }, s.available ? fmtNum(s.sessions) : '–'),
      ),
    ),
  );
}

export const SOURCE_TAB = { samples: 'Samples', opened: 'Opened folder', opfs: 'Browser storage', memory: 'Memory' };

function toggleScope() {
  picker.scope = picker.scope === 'project' ? 'all' : 'project';
  refreshPicker();
}

/** Enter: the active session of the list for what is typed now (a pending search runs first). */
async function chooseActive() {
  if (picker.dirty) {
    clearTimeout(picker.timer);
    await refreshPicker();
  } else {
    await picker.refreshing;
  }
  const it = picker.items[picker.active];
  if (it) chooseSession(it); // Enter on an empty list does nothing
}

function refreshPicker() {
  return refreshView(picker, doRefreshPicker);
}

async function doRefreshPicker() {
  const gen = ++picker.gen;
  const query = $('picker-query').value;
  if (!state.sources.length && state.loading) {
    // Opened during the page's first load: nothing to show but a note until the worker answers.
    showWhileBusy(null, query, null);
    await freshSources();
    if (gen !== picker.gen) return;
  }
  renderSources();
  const src = state.sources.find((s) => s.key === picker.source);
  let res = null;
  let error = null;
  if (src?.available) {
    const asked = { source: picker.source, scope: picker.scope, cwd: picker.cwd, query };
    if (state.loading) showWhileBusy(src, query, listCache.get(cacheKey(asked.source, asked.scope, asked.cwd, query)));
    stopSearch();
    const searching = query.trim() ? { loadId: `search-${nextSearch++}` } : null;
    picker.searching = searching;
    try {
      const onProgress = (p) => gen === picker.gen && showSearching(p);
      res = await call('list', searching ? { ...asked, loadId: searching.loadId } : asked, { onProgress });
      remember(asked.source, asked.scope, asked.cwd, query, res);
    } catch (e) {
      error = e;
    } finally {
      if (picker.searching === searching) picker.searching = null;
    }
  }
  if (gen !== picker.gen || error?.kind === 'cancelled') return; // a newer list is coming
  renderPicker(src, res, error, query);
}

/** How far the worker's search has read, in the picker's line of information. */
function showSearching({ done, total }) {
  const info = $('picker-info');
  let el = info.querySelector('[data-testid="picker-searching"]');
  if (!el) {
    el = h('span', { class: 'muted', dataset: { testid: 'picker-searching' } });
    info.append(el);
  }
  el.textContent = ` · searching the sessions' text: ${total > 0 ? Math.floor((100 * done) / total) : 0} %`;
}

/** The list the page has for this place (or a note) while a load keeps the worker busy. */
function showWhileBusy(src, query, cached) {
  const label = state.loading?.label ?? 'a session';
  const stop = h('button', { type: 'button', class: 'link', onclick: () => stopLoad() }, `Stop opening ${label}`);
  if (cached) {
    renderPicker(src, cached, null, query);
    $('picker-info').append(h('span', { class: 'muted', dataset: { testid: 'picker-busy' } }, ` · as listed before; refreshed once ${label} is open · `, stop));
  } else {
    $('picker-list').replaceChildren(h('li', { class: 'picker-empty', dataset: { testid: 'picker-busy' } }, h('p', null, `The list comes once ${label} is open.`), stop));
  }
}

function renderPicker(src, res, error, query) {
  if (res) {
    picker.cwd = res.cwd;
    const i = state.sources.findIndex((s) => s.key === res.source.key);
    if (i >= 0) state.sources[i] = res.source;
    renderSources();
  }
  picker.items = res?.items ?? [];
  picker.active = 0;
  const scopeBtn = $('picker-scope');
  scopeBtn.textContent = picker.scope === 'project' ? 'This project' : 'All projects';
  scopeBtn.dataset.scope = picker.scope;
  scopeBtn.setAttribute('aria-pressed', picker.scope === 'all' ? 'true' : 'false');
  const info = $('picker-info');
  const where = picker.scope === 'project' ? h('span', null, 'This project: ', h('code', null, picker.cwd ?? '—')) : h('span', null, 'All projects');
  const how = res?.how === 'search' ? `${fmtNum(picker.items.length)} match${picker.items.length === 1 ? '' : 'es'}, best first` : res?.how === 'recent' ? 'most recent first' : res ? 'newest first' : '';
  info.replaceChildren(...[where, how ? h('span', { class: 'muted' }, ` · ${how}`) : null].filter(Boolean));
  renderPickerList(src, error, query.trim());
  renderPickerActions(src);
}

function renderPickerList(src, error, query) {
  const list = $('picker-list');
  if (!src?.available || error) {
    const text = error ? errMsg(error) : src?.note ?? 'Nothing here yet.';
    const more = picker.source === 'opened' ? h('button', { type: 'button', class: 'btn btn-primary', onclick: () => $('open-folder').click() }, 'Open folder…') : null;
    list.replaceChildren(h('li', { class: 'picker-empty', dataset: { testid: 'picker-empty' } }, h('p', null, text), more));
    return;
  }
  if (!picker.items.length) {
    let text;
    if (query) text = `No session matches “${query}”${picker.scope === 'project' ? ' in this project. Press Tab to search all projects.' : '.'}`;
    else if (picker.scope === 'project' && src.sessions) text = 'No sessions in this project. Press Tab to view all projects.';
    else if (picker.source === 'opfs' || picker.source === 'memory') text = `No sessions in the ${SOURCE_NAMES[picker.source]} yet. Open a session and use “${picker.source === 'opfs' ? 'Import to browser storage' : 'Copy to memory'}” to edit a copy here.`;
    else text = 'No sessions found.';
    list.replaceChildren(h('li', { class: 'picker-empty', dataset: { testid: 'picker-empty' } }, text));
    return;
  }
  list.replaceChildren(
    ...picker.items.map((it, i) => {
      const current = state.view?.source === picker.source && state.view?.path === it.path;
      const bits = [];
      if (picker.scope === 'all' || query) bits.push(h('code', { class: 'cwd' }, it.cwd));
      bits.push(h('span', null, it.timeAgo ?? fmtTime(it.modified)));
      if (typeof it.messageCount === 'number') bits.push(h('span', null, fmtCount(it.messageCount, 'message')));
      bits.push(h('span', { class: 'mono' }, String(it.id).slice(0, 8)));
      if (typeof it.score === 'number') bits.push(h('span', { class: 'score', title: 'fuzzy match score' }, `score ${fmtNum(it.score)}`));
      const preview = it.firstMessage && it.title && it.firstMessage !== it.name ? h('div', { class: 'pi-preview' }, oneLine(it.firstMessage, 160)) : null;
      return h(
        'li',
        {
          role: 'option',
          id: `pick-${i}`,
          class: `picker-item${i === picker.active ? ' active' : ''}${current ? ' current' : ''}`,
          'aria-selected': i === picker.active ? 'true' : 'false',
          dataset: { path: it.path, id: it.id },
          tabindex: '-1',
          onclick: () => chooseSession(it),
          onmousemove: () => setActive(i),
        },
        h('div', { class: 'pi-title' }, h('span', { class: 'pi-name', title: it.name }, oneLine(it.name || it.title || it.id, 90)), current ? h('span', { class: 'badge' }, 'open') : null),
        preview,
        h('div', { class: 'pi-meta' }, bits),
      );
    }),
  );
  $('picker-query').setAttribute('aria-activedescendant', 'pick-0');
}

function setActive(i) {
  if (i === picker.active) return;
  const list = $('picker-list');
  list.querySelector('.picker-item.active')?.classList.remove('active');
  const el = list.children[i];
  if (!el?.classList.contains('picker-item')) return;
  picker.active = i;
  el.classList.add('active');
  for (const c of list.children) c.setAttribute('aria-selected', c === el ? 'true' : 'false');
  $('picker-query').setAttribute('aria-activedescendant', el.id);
}

function moveActive(step) {
  const n = picker.items.length;
  if (!n) return;
  setActive((picker.active + step + n) % n);
  $('picker-list').children[picker.active]?.scrollIntoView({ block: 'nearest' });
}

function renderPickerActions(src) {
  const box = $('picker-actions');
  box.replaceChildren();
  if (!src) return;
  const target = editTarget();
  if (!src.writable && src.available && src.sessions) {
    box.append(
      h(
        'button',
        {
          type: 'button',
          class: 'btn btn-small',
          title: `Copy every session of this list's source (with artifacts) into the ${SOURCE_NAMES[target]}`,
          onclick: async () => {
            try {
              const r = await call('importAll', { source: src.key, target });
              toast(`Imported ${r.imported} session${r.imported === 1 ? '' : 's'} into the ${SOURCE_NAMES[target]}${r.skipped ? ` (${r.skipped} already there)` : ''}`, 'ok', 'save-status');
              picker.source = target;
              state.sources = await call('sources');
              refreshPicker();
            } catch (e) {
              showBanner('error', `Import failed: ${errMsg(e)}`);
            }
          },
        },
        target === 'opfs' ? 'Import all into browser storage' : 'Copy all to memory',
      ),
    );
  }
  if (src.key === 'opened' || !state.sources.find((s) => s.key === 'opened')?.available) {
    box.append(h('button', { type: 'button', class: 'btn btn-small', onclick: () => $('open-folder').click() }, 'Open folder…'));
  }
  if (src.key === 'opfs' && src.available) box.append(h('span', { class: 'muted small' }, `${fmtBytes(src.bytes)} in browser storage`));
}

async function chooseSession(it) {
  $('picker').close();
  await openPath(picker.source, it.path);
}
