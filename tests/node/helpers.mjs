// Shared by the Node tests of the npm package: the package itself, the real fixtures, and
// a Map-based JsStorage that behaves like Node's fs (errors carry `code`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export * from '../../pkg/node.mjs';

/** `tests/fixtures/real/`: the four real session files kept in the repository. */
export const FIXTURES_DIR = new URL('../fixtures/real/', import.meta.url);
export const FIXTURES = ['before-compaction', 'historical-compact', 'historical-session', 'large-session'];

export function fixture(name) {
  return fs.readFileSync(new URL(`${name}.jsonl`, FIXTURES_DIR), 'utf8');
}

export function fixturePath(name) {
  return fileURLToPath(new URL(`${name}.jsonl`, FIXTURES_DIR));
}

function fsError(code, op, path) {
  const e = new Error(`${code}: ${op} '${path}'`);
  e.code = code;
  return e;
}

function parentOf(path) {
  const i = path.replace(/\/+$/, '').lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/**
 * A JsStorage over two Maps. Its clock starts at `startMs` and ticks one ms per call,
 * its entropy is a seeded xorshift (so ids are reproducible), and `failOn` makes the
 * named methods throw (`storage.failOn.add('append')`).
 */
export class MemoryJsStorage {
  constructor({ startMs = Date.UTC(2026, 0, 2, 3, 4, 5, 6), seed = 0x9e3779b97f4a7c15n } = {}) {
    this.files = new Map();
    this.mtimes = new Map(); // path -> mtimeMs, set by writes as a filesystem does
    this.dirs = new Set(['/']);
    this.clock = startMs;
    this.rng = seed;
    this.failOn = new Set();
    this.calls = [];
  }

  #enter(op, path) {
    this.calls.push(op);
    if (this.failOn.has(op)) throw fsError('EIO', op, path);
  }

  #needParent(op, path) {
    if (!this.dirs.has(parentOf(path))) throw fsError('ENOENT', op, path);
  }

  read(path) {
    this.#enter('read', path);
    const data = this.files.get(path);
    if (!data) throw fsError(this.dirs.has(path) ? 'EISDIR' : 'ENOENT', 'open', path);
    return data.slice();
  }

  readPrefix(path, maxBytes) {
    return this.read(path).subarray(0, maxBytes);
  }

  write(path, data) {
    this.#enter('write', path);
    this.#needParent('open', path);
    this.files.set(path, data);
    this.mtimes.set(path, this.clock);
  }

  append(path, data) {
    this.#enter('append', path);
    this.#needParent('open', path);
    const old = this.files.get(path) ?? new Uint8Array();
    const joined = new Uint8Array(old.length + data.length);
    joined.set(old);
    joined.set(data, old.length);
    this.files.set(path, joined);
    this.mtimes.set(path, this.clock);
  }

  rename(from, to) {
    this.#enter('rename', from);
    this.#needParent('rename', to);
    if (this.dirs.has(from)) {
      // A directory moves with everything under it, as fs.renameSync does.
      const under = (k) => k === from || k.startsWith(`${from}/`);
      for (const d of [...this.dirs].filter(under)) {
        this.dirs.delete(d);
        this.dirs.add(to + d.slice(from.length));
      }
      for (const [k, v] of [...this.files].filter(([k]) => under(k))) {
        this.files.delete(k);
        this.files.set(to + k.slice(from.length), v);
        this.mtimes.set(to + k.slice(from.length), this.mtimes.get(k));
      }
      return;
    }
    const data = this.files.get(from);
    if (!data) throw fsError('ENOENT', 'rename', from);
    this.files.delete(from);
    this.files.set(to, data);
    this.mtimes.set(to, this.mtimes.get(from));
  }

  unlink(path) {
    this.#enter('unlink', path);
    if (!this.files.delete(path)) throw fsError('ENOENT', 'unlink', path);
  }

  listDir(path) {
    this.#enter('listDir', path);
    if (!this.dirs.has(path)) throw fsError('ENOENT', 'scandir', path);
    const prefix = path.endsWith('/') ? path : `${path}/`;
    const out = [];
    for (const [set, isDir] of [[this.dirs, true], [this.files, false]]) {
      for (const key of set.keys()) {
        if (key.startsWith(prefix) && key.length > prefix.length && !key.slice(prefix.length).includes('/')) {
          out.push({ name: key.slice(prefix.length), isDir });
        }
      }
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  stat(path) {
    this.#enter('stat', path);
    if (this.dirs.has(path)) return { size: 0, mtimeMs: 0, isDir: true };
    const data = this.files.get(path);
    if (!data) throw fsError('ENOENT', 'stat', path);
    return { size: data.length, mtimeMs: this.mtimes.get(path) ?? 0, isDir: false };
  }

  mkdirAll(path) {
    this.#enter('mkdirAll', path);
    let acc = '';
    for (const part of path.split('/').filter(Boolean)) {
      acc += `/${part}`;
      if (this.files.has(acc)) throw fsError('ENOTDIR', 'mkdir', acc);
      this.dirs.add(acc);
    }
  }

  fsync(path) {
    this.#enter('fsync', path);
    if (!this.files.has(path)) throw fsError('ENOENT', 'fsync', path);
  }

  rmdir(path) {
    this.#enter('rmdir', path);
    if (this.listDir(path).length > 0) throw fsError('ENOTEMPTY', 'rmdir', path);
    this.dirs.delete(path);
  }

  nowMs() {
    return ++this.clock;
  }

  randomU64() {
    let x = this.rng;
    x ^= (x << 13n) & 0xffffffffffffffffn;
    x ^= x >> 7n;
    x ^= (x << 17n) & 0xffffffffffffffffn;
    this.rng = x;
    return x;
  }

  text(path) {
    return new TextDecoder().decode(this.files.get(path));
  }

  exists(path) {
    return this.files.has(path);
  }
}

/** Messages as the agent writes them. */
export const user = (text, timestamp = 1) => ({ role: 'user', content: [{ type: 'text', text }], timestamp });
export const assistant = (text, timestamp = 2) => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  api: 'anthropic-messages',
  provider: 'anthropic',
  model: 'claude-opus-4-5',
  usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
  stopReason: 'stop',
  timestamp,
});

/** The lines of a JSONL text, parsed. */
export function lines(text) {
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/**
 * A fresh temp root for one test with `PI_CODING_AGENT_DIR` at `<root>/agent` (restored
 * and removed after it), for the drop-in's tests.
 */
export function agentHome(t, prefix = 'xcsh-agent-') {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const before = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = path.join(root, 'agent');
  t.after(() => {
    if (before === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = before;
    fs.rmSync(root, { recursive: true, force: true });
  });
  return root;
}
