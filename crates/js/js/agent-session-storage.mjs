// `xcsh-session/agent/session-storage`: the agent's `FileSessionStorage` and
// `MemorySessionStorage` (its module `session/session-storage`), each over one of this
// package's storages (`nodeStorage()`, `memoryStorage()`). The drop-in's SessionManager
// and listing functions take either as their optional `storage` argument, as the agent's
// do; every session rule stays the core's, these classes only carry the files.
//
// The agent's `SessionStorage` methods (`readText`, `openWriter`, ...) are there too, for
// code that uses a storage directly. Another object implementing the agent's interface is
// refused (`kind: "invalidInput"`): the core reads and locks session files synchronously,
// which an interface of promises cannot give. A storage of this package (`JsStorage`) is
// taken as it is.
import path from 'node:path';
import { deleteSession } from './node.mjs';
import { nodeStorage } from './node-storage.mjs';
import { memoryStorage } from './memory-storage.mjs';
import { getAgentDir } from './agent-dir.mjs';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');
const files = nodeStorage();

/** `*` (any), `*.ext` (a suffix) or an exact name, as the agent matches. */
function matches(name, pattern) {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1));
  return name === pattern;
}

function isNotFound(e) {
  return e?.code === 'ENOENT';
}

/** The agent's `SessionStorage` interface over a package storage. */
class PackageSessionStorage {
  #port;
  constructor(port) { this.#port = port; }

  /** The package storage (`JsStorage`) this storage is over. */
  get storage() { return this.#port; }

  ensureDirSync(dir) { this.#port.mkdirAll(dir); }
  existsSync(p) {
    try {
      this.#port.stat(p);
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }
  writeTextSync(p, content) {
    this.#port.mkdirAll(path.dirname(p));
    this.#port.write(p, encoder.encode(content));
  }
  statSync(p) {
    const { size, mtimeMs } = this.#port.stat(p);
    return { size, mtimeMs, mtime: new Date(mtimeMs) };
  }
  /** The files of `dir` (not below) whose name matches `pattern`; `[]` when unreadable. */
  listFilesSync(dir, pattern) {
    try {
      return this.#port.listDir(dir)
        .filter((e) => !e.isDir && matches(e.name, pattern))
        .map((e) => path.join(dir, e.name));
    } catch {
      return [];
    }
  }
  async exists(p) { return this.existsSync(p); }
  async readText(p) { return decoder.decode(this.#port.read(p)); }
  async readTextPrefix(p, maxBytes) { return decoder.decode(this.#port.readPrefix(p, maxBytes)); }
  async writeText(p, content) { this.writeTextSync(p, content); }
  /** As the agent's: a missing source is not an error. */
  async rename(from, to) {
    try {
      this.#port.rename(from, to);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  async unlink(p) { this.#port.unlink(p); }
  /** Lines appended to `p` (`flags: "w"` empties it first). */
  openWriter(p, options = {}) {
    const port = this.#port;
    let closed = false;
    let error;
    const record = (e) => {
      error ??= e;
      options.onError?.(e);
      return e;
    };
    try {
      port.mkdirAll(path.dirname(p));
      if (options.flags === 'w') port.write(p, new Uint8Array(0));
    } catch (e) {
      throw record(e);
    }
    return {
      async writeLine(line) {
        if (closed) throw new Error('Writer closed');
        if (error) throw error;
        try {
          port.append(p, encoder.encode(line));
        } catch (e) {
          throw record(e);
        }
      },
      async flush() { if (error) throw error; },
      async fsync() {
        if (closed) throw new Error('Writer closed');
        if (error) throw error;
        try {
          port.fsync(p);
        } catch (e) {
          throw record(e);
        }
      },
      async close() { closed = true; },
      getError() { return error; },
    };
  }
}

/** Session files on the filesystem (this package's `nodeStorage()`). */
export class FileSessionStorage extends PackageSessionStorage {
  constructor() { super(files); }

  /**
   * Delete a session file with its artifacts directory and its lock (the core's rule: a
   * `.jsonl` file under `<agentDir>/sessions`, or elsewhere one that starts with a session
   * header; a session a live writer of another process holds is refused, kind `conflict`).
   */
  async deleteSessionWithArtifacts(sessionPath) {
    deleteSession(this.storage, getAgentDir(), path.resolve(sessionPath));
  }
}

/** Session files in memory (this package's `memoryStorage()`): nothing is written to disk. */
export class MemorySessionStorage extends PackageSessionStorage {
  constructor() { super(memoryStorage()); }
}

const JS_STORAGE = ['read', 'readPrefix', 'write', 'append', 'rename', 'unlink', 'listDir', 'stat', 'mkdirAll'];

/**
 * The package storage behind the agent's `storage` argument: that of a
 * `FileSessionStorage` or `MemorySessionStorage`, or a package storage (`JsStorage`) as
 * it is. Anything else throws `kind: "invalidInput"`.
 */
export function packageStorage(storage) {
  if (storage instanceof PackageSessionStorage) return storage.storage;
  if (storage && JS_STORAGE.every((m) => typeof storage[m] === 'function')) return storage;
  const what = storage?.constructor?.name ?? typeof storage;
  const e = new TypeError(
    `storage: xcsh-session/agent takes a FileSessionStorage or MemorySessionStorage from xcsh-session/agent/session-storage, or a storage of xcsh-session (nodeStorage(), memoryStorage()); got ${what} (another SessionStorage cannot be used: sessions are read and locked synchronously)`,
  );
  e.kind = 'invalidInput';
  throw e;
}
