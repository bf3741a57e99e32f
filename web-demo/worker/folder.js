// An opened folder (directory picker, <input webkitdirectory>, drop) made the "opened"
// source: the package decides which files are kept and where they go
// (`openedFolderTargets`, from each file's path and first 64 KiB); the files are listed in
// a FileStorage, which reads their bytes only when the package asks for them.
import * as pkg from '../pkg/xcsh_session.js';
import { FileStorage } from './file-storage.js';
import { opfsLoaded, sources, sourceInfo } from './sources.js';
import { withFolderCache } from './folder-cache.js';
import { progress } from './reply.js';

async function filesOfHandle(handle, prefix = '') {
  const out = [];
  for await (const [name, child] of handle.entries()) {
    if (child.kind === 'directory') out.push(...(await filesOfHandle(child, `${prefix}${name}/`)));
    else out.push({ rel: `${prefix}${name}`, file: await child.getFile() });
  }
  return out;
}

/** How much of each file the placement reads. */
const START = 65536;

/** The `loadFolder` request: the folder's session files become the "opened" source. */
export async function loadFolder({ handle, files, name }, reqId) {
  const t0 = performance.now();
  let list;
  let rootName = name ?? 'folder';
  if (handle) {
    rootName = handle.name;
    progress(reqId, 'scan', 0, 0);
    list = await filesOfHandle(handle);
  } else {
    // <input webkitdirectory> and drops give paths that start with the folder's name.
    list = (files ?? []).map(({ path, file }) => {
      const parts = String(path || file.name).split('/').filter(Boolean);
      if (parts.length > 1) rootName = parts[0];
      return { rel: parts.length > 1 ? parts.slice(1).join('/') : parts[0], file };
    });
  }
  const storage = new FileStorage();
  const A = sources.get('opened').agentDir;
  storage.putDir(`${A}/sessions`, 0);
  // Which files are kept (the package knows the layouts), then the start of those; a loose
  // folder's sessions are placed by their header, so the files are placed again with it.
  const kept = pkg.openedFolderTargets(A, rootName, list.map((f) => ({ rel: f.rel })));
  const total = list.reduce((n, f, i) => n + (kept[i].length ? Math.min(f.file.size, START) : 0), 0);
  let done = 0;
  const starts = [];
  for (const [i, f] of list.entries()) {
    if (!kept[i].length) continue;
    starts[i] = new Uint8Array(await f.file.slice(0, START).arrayBuffer());
    done += starts[i].length;
    progress(reqId, 'read', done, total);
  }
  const targets = pkg.openedFolderTargets(A, rootName, list.map((f, i) => ({ rel: f.rel, start: starts[i] ?? null })));
  let placed = 0;
  for (const [i, f] of list.entries()) {
    for (const target of targets[i]) {
      storage.putFile(target, f.file);
      placed++;
    }
  }
  const src = sources.get('opened');
  await opfsLoaded(); // where its index cache is kept
  src.storage = withFolderCache(storage, A);
  src.available = true;
  src.label = `Opened: ${rootName}`;
  src.note = null;
  const info = sourceInfo(src);
  if (!info.sessions) {
    src.note = `No session files (.jsonl) found in ${rootName}.`;
  }
  return { ...info, note: src.note, files: placed, ms: performance.now() - t0 };
}
