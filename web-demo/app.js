// The viewer's entry module: wires the views (one module each, see web-demo/README.md) and
// starts the page.
//
// The in-browser session viewer renders what the worker (worker.js) answers; the worker
// runs the xcsh-session wasm package and owns the storages (samples, opened folder,
// browser storage = OPFS, memory). The page never holds a whole large session: it gets the
// tree as compact columns and the conversation in windows of messages.
//
// Safety: session content is untrusted. It only reaches the DOM through text nodes and
// element properties (never innerHTML), and images only as `data:image/...;base64` URLs.

import { DEFAULT_SAMPLE, SOURCE_NAMES, state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, flash, h, showBanner } from './dom.js';
import { openFile, openPath, openSample, wireLoad } from './open.js';
import { openFolder, wireDrop } from './open-folder.js';
import { onTreeKey, scheduleTreeRender, selectEntry, wireTree } from './tree.js';
import { renderSessionBar, wireSessionBar } from './sessionbar.js';
import { showWindow, wireConversation } from './conversation.js';
import { closeUrlPanel, openUrl, renderInspector, wireInspector } from './inspector.js';
import { openPicker, wirePicker } from './picker.js';
import { openHistory, wireHistory } from './history-box.js';
import { wireTabs } from './tabs.js';
import { wireMenu } from './menu.js';
import { clearPlace, restorePlace, urlNamesView, wireLocation } from './location.js';
import { wireFind } from './find.js';
import { wireOutline } from './outline.js';
import { wirePosition } from './position.js';
import { wireToolToggle } from './tools.js';
import { wireExport } from './export.js';

async function main() {
  wireUi();
  $('edit-target').value = localStorage.getItem('xcsh-viewer-edit-target') === 'memory' ? 'memory' : 'opfs';
  try {
    await call('init', { history: new URLSearchParams(location.search).get('history') === 'memory' ? 'memory' : undefined });
  } catch (e) {
    $('session-bar').replaceChildren(h('span', { class: 'muted' }, 'No session loaded.'));
    showBanner('error', `Cannot load the WebAssembly package (./pkg/xcsh_session.js): ${errMsg(e)}. Build it with scripts/build-js.`);
    return;
  }
  // Fetched meanwhile: a session named in the address opens without waiting for it.
  const samples = loadSampleList();
  await openFromUrl(samples);
  // Back and Forward move between the sessions opened in this tab, and between the places
  // (branch, message) in one (location.js).
  window.addEventListener('popstate', () => (urlNamesView() ? restoreFromUrl(() => restorePlace({ popped: true })) : openFromUrl(samples)));
}

/** Runs `fn` as a restore: what it shows does not add history entries. */
async function restoreFromUrl(fn) {
  state.restoring = true;
  try {
    await fn();
  } finally {
    state.restoring = false;
  }
}

/**
 * Opens what the address names (a stored session, a sample) and the place in it, as at
 * start-up; `samples`: the list of samples, or a Promise of it.
 */
function openFromUrl(samples) {
  return restoreFromUrl(async () => {
    const params = new URLSearchParams(location.search);
    const source = params.get('source');
    const path = params.get('path');
    let note = null;
    if (source && path) {
      if (await openPath(source, path, { quietFail: true })) {
        await restorePlace();
        return;
      }
      note = source === 'memory' ? 'The session you had open was kept in memory only: it is gone after a reload.' : `Cannot reopen ${path} from the ${SOURCE_NAMES[source] ?? source}: ${state.lastError ?? 'not found'}.`;
    }
    // A file opened from the disk cannot be read again without the user picking it.
    const opened = params.get('opened');
    if (opened && !note) note = `${opened} was opened from your disk: a reload cannot read it again. Open it again with “Open file…” (the sample is shown meanwhile).`;
    const wanted = params.get('sample');
    const known = !wanted || (await samples).some((s) => s.file === wanted);
    if (!known && !note) note = `There is no sample “${wanted}”: the default sample is shown.`;
    await openSample(known && wanted ? wanted : DEFAULT_SAMPLE);
    if (note) {
      clearPlace(); // it named a place in the session that could not be opened
      showBanner('warn', note);
    } else {
      await restorePlace();
    }
  });
}

function wireUi() {
  $('file-input').addEventListener('change', async (ev) => {
    const file = ev.target.files?.[0];
    ev.target.value = '';
    if (file) await openFile(file);
  });
  $('open-folder').addEventListener('click', async () => {
    if (typeof window.showDirectoryPicker === 'function') {
      let handle;
      try {
        handle = await window.showDirectoryPicker({ id: 'xcsh-agent', mode: 'read' });
      } catch (e) {
        if (e?.name !== 'AbortError') $('folder-input').click();
        return;
      }
      await openFolder({ handle }, handle.name);
    } else {
      $('folder-input').click();
    }
  });
  $('folder-input').addEventListener('change', async (ev) => {
    const files = [...(ev.target.files ?? [])].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
    ev.target.value = '';
    if (files.length) await openFolder({ files }, files[0].path.split('/')[0]);
  });
  $('sample-select').addEventListener('change', (ev) => {
    if (ev.target.value) openSample(ev.target.value);
  });
  $('edit-target').addEventListener('change', (ev) => {
    localStorage.setItem('xcsh-viewer-edit-target', ev.target.value);
    if (state.view) renderSessionBar();
    if (state.inspected) renderInspector(state.inspected);
  });
  $('open-picker').addEventListener('click', () => openPicker());
  $('open-history').addEventListener('click', () => openHistory());
  window.addEventListener('keydown', (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 'k') {
      ev.preventDefault();
      openPicker();
    } else if ((ev.ctrlKey || ev.metaKey) && ev.shiftKey && ev.key.toLowerCase() === 'h') {
      ev.preventDefault();
      openHistory();
    } else if (ev.key === 'Escape' && !$('url-panel').hidden && !$('picker').open) {
      closeUrlPanel();
    }
  });
  // The views that follow the session and the branch shown (state.js `events`), in this order.
  wireSessionBar();
  wireConversation();
  wireInspector();
  wirePicker();
  wireHistory();
  wireDrop();
  wireMenu();
  wireTabs();
  wireLocation();
  wireFind();
  wireOutline();
  wirePosition();
  wireLoad();
  wireToolToggle();
  wireExport();

  const tree = $('tree');
  tree.addEventListener('scroll', () => scheduleTreeRender());
  tree.addEventListener('click', (ev) => {
    const row = ev.target.closest('.node');
    if (row) selectEntry(row.dataset.id, { conv: 'end' });
  });
  tree.addEventListener('keydown', onTreeKey);
  wireTree();
  new ResizeObserver(() => scheduleTreeRender()).observe(tree);

  $('jump-start').addEventListener('click', () => showWindow('start'));
  $('jump-end').addEventListener('click', () => showWindow('end'));
  $('copy-json').addEventListener('click', async () => {
    const json = $('inspector').querySelector('[data-testid=raw-json]')?.textContent;
    if (!json) return;
    try {
      await navigator.clipboard.writeText(json);
      flash($('copy-json'), 'Copied');
    } catch {
      flash($('copy-json'), 'Not allowed');
    }
  });
  $('url-close').addEventListener('click', closeUrlPanel);
  // artifact:// and agent:// links anywhere in the conversation or the inspector.
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest?.('.int-link');
    if (a) {
      ev.preventDefault();
      openUrl(a.dataset.url);
    }
  });
}

async function loadSampleList() {
  const select = $('sample-select');
  let samples = [];
  try {
    const res = await fetch('samples/index.json');
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    samples = (await res.json()).filter((s) => s && typeof s.file === 'string');
  } catch (e) {
    showBanner('warn', `Cannot read the sample list: ${errMsg(e)}`);
  }
  select.replaceChildren(
    // Shown when the open session is not a sample (a file, a folder, the browser storage).
    h('option', { value: '', disabled: true }, 'None (not a sample)'),
    ...samples.map((s) => h('option', { value: s.file, title: s.description ?? '' }, s.title ?? s.file)),
  );
  // A session may be open already (the list is fetched as it opens): the sample it is, or none.
  const v = state.view;
  select.value = v?.origin === 'sample' ? v.name : '';
  return samples;
}

main();
