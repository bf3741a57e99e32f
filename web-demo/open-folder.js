// Opening a folder (the directory picker, <input webkitdirectory>, a drop) as the "opened"
// source, then the session picker on it; a single dropped file opens as a file.

import { state } from './state.js';
import { call } from './rpc.js';
import { $, errMsg, fmtBytes, fmtNum, hideProgress, setProgress, showBanner, showProgress, toast } from './dom.js';
import { openFile } from './open.js';
import { openPicker } from './picker.js';

/** Opens what is dropped on the page: a folder or several files as a folder, else one file. */
export function wireDrop() {
  let depth = 0;
  const overlay = $('drop-overlay');
  const hasFiles = (ev) => [...(ev.dataTransfer?.types ?? [])].includes('Files');
  window.addEventListener('dragenter', (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    depth++;
    overlay.hidden = false;
  });
  window.addEventListener('dragover', (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = 'copy';
  });
  window.addEventListener('dragleave', (ev) => {
    if (!hasFiles(ev)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) overlay.hidden = true;
  });
  window.addEventListener('drop', async (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    depth = 0;
    overlay.hidden = true;
    // Folders (and several files) go through the folder path; entries must be taken now.
    const entries = [...(ev.dataTransfer.items ?? [])].map((i) => (i.kind === 'file' ? i.webkitGetAsEntry?.() : null)).filter(Boolean);
    const files = [...(ev.dataTransfer.files ?? [])];
    if (entries.some((e) => e.isDirectory) || files.length > 1) {
      const collected = [];
      for (const e of entries) await collectEntry(e, '', collected);
      if (!entries.length) for (const f of files) collected.push({ path: f.name, file: f });
      const root = entries.length === 1 && entries[0].isDirectory ? entries[0].name : 'dropped';
      const list = entries.length === 1 && entries[0].isDirectory ? collected : collected.map((c) => ({ ...c, path: `${root}/${c.path}` }));
      if (list.length) await openFolder({ files: list }, root);
      return;
    }
    if (files[0]) await openFile(files[0]);
  });
}

/** Files under a dropped FileSystemEntry, with paths relative to the drop. */
async function collectEntry(entry, prefix, out) {
  if (entry.isFile) {
    const file = await new Promise((res, rej) => entry.file(res, rej));
    out.push({ path: `${prefix}${entry.name}`, file });
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const e of batch) await collectEntry(e, `${prefix}${entry.name}/`, out);
    }
  }
}

/** Reads a folder (`{handle}` or `{files}`) into the worker's "opened" source and shows its sessions. */
export async function openFolder(args, name) {
  const gen = ++state.loadGen;
  showProgress(name);
  try {
    const info = await call('loadFolder', args, { onProgress: (p) => gen === state.loadGen && setProgress(p) });
    if (info.note) showBanner('warn', info.note);
    else toast(`Opened ${name}: ${fmtNum(info.sessions)} session${info.sessions === 1 ? '' : 's'}, ${fmtBytes(info.bytes)} (read-only)`);
    await openPicker('opened');
  } catch (e) {
    showBanner('error', `Cannot open the folder ${name}: ${errMsg(e)}`);
  } finally {
    if (gen === state.loadGen) hideProgress();
  }
}
