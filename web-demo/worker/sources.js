// The storages ("sources"), each an agent directory (`<agentDir>/sessions/--<cwd>--/*.jsonl`):
//   samples  the bundled samples/agent directory, read-only
//   opened   a folder the user opened (directory picker, <input webkitdirectory>, drop), read-only
//   opfs     the browser storage: OPFS through the package's async opfsStorage() under a
//            StagedStorage (opfs-source.js): kept, and never mirrored in memory
//   memory   a writable in-memory directory, gone on reload ("don't keep")
// Sessions of read-only sources are opened with Session.fromText (never written); edits
// happen on copies imported into opfs or memory, opened with Session.open.
import * as pkg from '../pkg/xcsh_session.js';
import { MemoryStorage, normPath } from '../pkg/memory-storage.mjs';
import { openOpfsSource } from '../opfs-source.js';
import { errMsg } from '../errors.js';
import { fail } from './reply.js';

const OPFS_ROOT = '/xcsh';
const LOCK_NAME = 'xcsh-session-viewer-opfs';

/** key → {key, label, storage, agentDir, writable, persistent, available, note} */
export const sources = new Map([
  ['samples', { key: 'samples', label: 'Samples', storage: new MemoryStorage({ readOnly: true }), agentDir: '/samples/agent', writable: false, persistent: false, available: false }],
  ['opened', { key: 'opened', label: 'Opened folder', storage: null, agentDir: '/opened/agent', writable: false, persistent: false, available: false, note: 'Open a folder: your agent directory (~/.xcsh/agent), its sessions/ directory or one project directory.' }],
  ['opfs', { key: 'opfs', label: 'Browser storage', storage: null, agentDir: `${OPFS_ROOT}/agent`, writable: true, persistent: true, available: false }],
  ['memory', { key: 'memory', label: 'Memory (not kept)', storage: new MemoryStorage(), agentDir: '/memory/agent', writable: true, persistent: false, available: true }],
]);
let opfsReady = null;

/** Starts reading the browser storage's shape (see `opfsLoaded`), and loads the samples. */
export async function startSources() {
  opfsReady = loadOpfs(); // meanwhile: the page may open a session of it as soon as it is read
  await loadSamples();
}

/** Resolves once the browser storage is read (or known unavailable). */
export function opfsLoaded() {
  return opfsReady;
}

async function loadSamples() {
  const src = sources.get('samples');
  try {
    const res = await fetch(new URL('../samples/index.json', import.meta.url));
    if (!res.ok) throw new Error(`samples/index.json: HTTP ${res.status}`);
    const list = await res.json();
    const agent = list.find((s) => s && typeof s.agentDir === 'string' && Array.isArray(s.files));
    if (!agent) return;
    src.label = agent.title ?? src.label;
    await Promise.all(
      agent.files.map(async (f) => {
        const rel = normPath(f.path);
        const url = new URL(`../samples/${agent.agentDir}${rel.split('/').map(encodeURIComponent).join('/')}`, import.meta.url);
        const r = await fetch(url);
        if (!r.ok) throw new Error(`${url.pathname}: HTTP ${r.status}`);
        src.storage.put(`${src.agentDir}${rel}`, new Uint8Array(await r.arrayBuffer()), Date.parse(f.mtime) || 0);
      }),
    );
    src.available = true;
  } catch (e) {
    src.note = `cannot load the sample agent directory: ${errMsg(e)}`;
  }
}

/** Holds the OPFS lock for the worker's lifetime; false when another tab keeps it. */
function acquireLock() {
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve) => {
    navigator.locks
      .request(LOCK_NAME, { signal: AbortSignal.timeout(4000) }, () => {
        resolve(true);
        return new Promise(() => {});
      })
      .catch(() => resolve(false));
  });
}

async function loadOpfs() {
  const src = sources.get('opfs');
  try {
    if (!navigator.storage?.getDirectory) throw new Error('this browser has no Origin Private File System');
    const locked = await acquireLock();
    const opfs = openOpfsSource({ root: OPFS_ROOT });
    await opfs.disk.mkdirAll(OPFS_ROOT);
    src.loaded = await opfs.load();
    src.storage = opfs.storage;
    src.disk = opfs.disk;
    opfs.state.exclusive = locked;
    if (!locked) {
      opfs.state.readOnly = true;
      src.writable = false;
      src.note = 'Another tab of the viewer is using the browser storage: read-only here.';
    }
    src.available = true;
  } catch (e) {
    src.available = false;
    src.writable = false;
    src.note = `Browser storage unavailable: ${errMsg(e)}`;
  }
}

/** The source `key`, once it can be read; fails when it is unknown or unavailable. */
export async function source(key) {
  const src = sources.get(key);
  if (!src) throw fail(`unknown source ${key}`, 'invalidInput');
  if (key === 'opfs') await opfsReady;
  if (!src.available || !src.storage) throw fail(src.note ?? `${src.label} is not available`, 'notFound');
  return src;
}

/** What the page shows of a source: its label, flags, note, number of sessions and bytes. */
export function sourceInfo(src) {
  const sessions = src.available && src.storage ? pkg.sessionFilePaths(src.storage, src.agentDir).length : 0;
  return {
    key: src.key,
    label: src.label,
    writable: src.writable,
    persistent: src.persistent,
    available: src.available,
    note: src.note ?? null,
    sessions,
    bytes: src.available && src.storage ? src.storage.totalBytes() : 0,
  };
}

/** The `sources` request: every source as the page shows it. */
export async function listSources() {
  await opfsReady;
  return [...sources.values()].map(sourceInfo);
}

/** Writes what the request changed in the browser storage to OPFS (elsewhere it is in memory already). */
export async function commit(src) {
  if (src.disk && src.storage) await src.storage.commit();
}

/** Loads what a request reads whole from the browser storage (elsewhere it is all in memory). */
export async function prepare(src, wanted) {
  if (src.disk) await src.storage.load(src.storage.unloaded(wanted));
}
