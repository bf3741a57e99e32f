// `AsyncSession`: a `Session` over a storage whose methods return Promises (fs/promises,
// OPFS, anything async), or plain values. The core runs synchronously against a
// StagedStorage (staged-storage.mjs): what it reads is loaded first, what it writes is
// replayed on the storage before the returned Promise resolves. So:
//   - every method that may write returns a Promise, and once it resolves the write is on
//     the storage (an acknowledged append is on disk, with the storage's own fsync);
//   - the reading methods (context, tree, entries, ...) stay synchronous: they read the
//     session in memory;
//   - calls that write run one at a time, in the order they were made;
//   - a failed replay latches: that call and every later write reject with kind
//     `persistence`, as a failed write does in `Session`.
import { Session, checkStorage } from './xcsh_session.js';
import { StagedStorage } from './staged-storage.mjs';
import { parentOf } from './memory-storage.mjs';

/** The `Session` methods that may write: each returns a Promise here. */
const WRITING = [
  'allocateArtifactPath', 'appendCompaction', 'appendContextChange', 'appendCustomEntry',
  'appendCustomMessageEntry', 'appendEntry', 'appendLabelChange', 'appendMcpToolSelection',
  'appendMessage', 'appendModeChange', 'appendModelChange', 'appendServiceTierChange',
  'appendThinkingLevelChange', 'appendTtsrInjection', 'branchWithSummary', 'close',
  'createBranchedSession', 'ensureOnDisk', 'flush', 'fork', 'moveTo', 'replaceEntry',
  'rewriteEntries', 'saveArtifact', 'setSessionName',
];

/** The methods that only read the session in memory: synchronous here too. */
const READING = [
  'branch', 'branchPath', 'children', 'context', 'contextEntryIds', 'contextJson', 'contextJsonBytes',
  'displayTitle', 'entries', 'entriesJson', 'entry', 'getArtifactPath', 'header', 'label',
  'lastModelChangeRole', 'outline', 'report', 'resetLeaf', 'toJsonl', 'tree', 'treeJson',
  'usageStatistics', 'warnings', 'writeContextJson',
];

/** The properties read through to the session. */
const PROPERTIES = ['file', 'leafId', 'needsRewrite', 'sessionId', 'versionOnDisk'];

/**
 * What a session's operations read besides its entries: the file (`fileOp`: its bytes to
 * open it, its size to append), its writer lock and its directory.
 */
function sessionPaths(file, fileOp) {
  return [
    { op: fileOp, path: file },
    { op: 'read', path: `${file}.lock` },
    { op: 'list', path: parentOf(file) },
  ];
}

/** How many times an open loads what it missed and starts again before giving up. */
const MAX_PASSES = 32;

function persistence(cause) {
  const e = new Error(`the async storage failed while writing: ${cause?.message ?? cause}`);
  e.kind = 'persistence';
  e.cause = cause;
  return e;
}

/**
 * Run `make(staged)` (it builds a Session synchronously) until it needs nothing it has
 * not loaded, then replay what it wrote. Each pass starts from scratch, so a pass that
 * missed something leaves no trace.
 */
async function build(storage, make, preload) {
  checkStorage(storage, true);
  const staged = new StagedStorage(storage);
  await staged.load(preload);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    staged.begin();
    let session;
    let error;
    try {
      session = make(staged);
    } catch (e) {
      error = e;
    }
    if (staged.misses.length > 0) {
      session?.free();
      staged.rollback();
      await staged.load();
      continue;
    }
    if (error) {
      staged.rollback();
      throw error;
    }
    try {
      await staged.commit();
    } catch (e) {
      session.free();
      throw persistence(e);
    }
    return new AsyncSession(session, staged);
  }
  throw new Error(`AsyncSession: still missing data after ${MAX_PASSES} passes`);
}

export class AsyncSession {
  #session;
  #staged;
  #queue = Promise.resolve();
  #failed = null;

  /** Use `AsyncSession.open` or `AsyncSession.create`. */
  constructor(session, staged) {
    this.#session = session;
    this.#staged = staged;
  }

  /** Open a session file (as `Session.open`): its bytes and its lock are loaded first. */
  static open(storage, path, options) {
    return build(storage, (staged) => Session.open(staged, path, options), sessionPaths(path, 'read'));
  }

  /** A new session (as `Session.create`); nothing is written until it has an assistant message. */
  static create(storage, options) {
    return build(storage, (staged) => Session.create(staged, options), []);
  }

  /** Bytes of storage content held in memory besides the session (small files only). */
  heldBytes() {
    return this.#staged.heldBytes();
  }

  /** Release the session's memory (as `Session.free`; `close()` first releases the lock). */
  free() {
    this.#session.free();
  }

  /** One writing call: after the ones before it, against fresh disk state, replayed before it resolves. */
  #write(name, args) {
    const run = async () => {
      if (this.#failed) throw this.#failed;
      const staged = this.#staged;
      await staged.refresh();
      // What the session itself will touch that is not loaded yet (a new file's
      // directory, its lock): loaded before the call, which then runs once.
      await staged.load(this.#expected());
      staged.begin();
      let result;
      let error;
      try {
        result = this.#session[name](...args);
      } catch (e) {
        error = e;
      }
      const missed = staged.misses.map((m) => `${m.op} ${m.path}`);
      // As with a synchronous storage, what the call wrote before it failed is written.
      try {
        await staged.commit();
      } catch (e) {
        this.#failed = persistence(e);
        throw this.#failed;
      }
      if (error && missed.length > 0) {
        const e = new Error(`${name}: the async storage had not loaded ${missed.join(', ')} (${error.message})`);
        e.kind = 'storage';
        e.cause = error;
        throw e;
      }
      if (error) throw error;
      return result;
    };
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => {});
    return next;
  }

  /** The paths a write of this session reads: its file, its lock, its directory. */
  #expected() {
    const file = this.#session.file;
    return file ? this.#staged.unloaded(sessionPaths(file, 'stat')) : [];
  }

  static {
    for (const name of WRITING) {
      this.prototype[name] = function write(...args) {
        return this.#write(name, args);
      };
    }
    for (const name of READING) {
      this.prototype[name] = function read(...args) {
        return this.#session[name](...args);
      };
    }
    for (const name of PROPERTIES) {
      Object.defineProperty(this.prototype, name, {
        get() {
          return this.#session[name];
        },
        configurable: true,
      });
    }
  }
}
