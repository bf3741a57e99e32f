// `nodeStorage()`: a JsStorage over Node's synchronous `node:fs` API, and
// `nodeAsyncStorage()`, the same over `node:fs/promises` for `AsyncSession` (Node, Deno,
// Bun). fs errors are thrown as they are: their `code` ('ENOENT', 'EEXIST', 'EACCES') is
// what the package looks at. Large sessions are read straight into wasm memory
// (`readInto`); writer locks use exclusive create; `fsync` syncs the file, then its
// directory: only the directory's sync makes a rename, or a new file, durable (as the
// native core's FsStorage does). A storage remembers the directories it synced and
// changed nothing in since (an append to an existing file changes no directory), so a
// session's `flush()` after each append costs one sync, not two.
//
// `nodeStorage()` keeps the file it last appended to open (one descriptor per process,
// not on Windows), as the agent keeps its session writer open: the next append and fsync
// of that path use it when the storage's previous call was a `stat` of the path that
// found that very file there (same `dev` and `ino`). A session stats its file right
// before each append (another writer's bytes) and right after (its own), so an append
// and the flush after it cost a write, an fstat and an fsync, no open or close. A file
// replaced, moved or deleted before the stat, or any other call in between, and the path
// is opened again as without it; a file deleted or replaced between the stat and the
// write (the fstat finds no link left to it) gets the bytes written again at the path.
// `stat` gives `dev` and `ino`: the core's lock check compares them.
//
// `readRange` reads only the bytes asked for, by positioned reads (pread), never the whole
// file.
//
// Only regular files are read or written, as in the native core: every file is opened
// without blocking (O_NONBLOCK: a FIFO or a device named like a session cannot hang the
// caller) and checked on the open descriptor; anything else is refused with code
// 'EXCSH_NOT_REGULAR' (the package says "<path> is not a regular file"), and `listDir`
// leaves FIFOs, sockets and devices (and symlinks to them) out, so listings never meet them.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import { joinPath, parentOf, rangeArgs } from './memory-storage.mjs';

// No O_NONBLOCK where the platform has none (Windows has no FIFOs in the filesystem).
const { O_RDONLY, O_WRONLY, O_CREAT, O_TRUNC, O_APPEND, O_NONBLOCK = 0 } = fs.constants;
const READ = O_RDONLY | O_NONBLOCK;
const WRITE = O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK;
const APPEND_EXISTING = O_WRONLY | O_APPEND | O_NONBLOCK;
const APPEND = APPEND_EXISTING | O_CREAT;

/** A FIFO, socket, device or directory where a file was expected. */
function notRegular(path) {
  const e = new Error(`${path} is not a regular file`);
  e.code = 'EXCSH_NOT_REGULAR';
  return e;
}

/** FIFOs, sockets and devices (a Dirent or a Stats): no storage reads them. */
const special = (d) => d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice();

/** `path` opened with `flags` (never blocking), or refused unless it is a regular file. */
function openRegular(path, flags) {
  return openRegularStat(path, flags)[0];
}

/** [`openRegular`, and the descriptor's fstat]. */
function openRegularStat(path, flags) {
  let fd;
  try {
    fd = fs.openSync(path, flags);
  } catch (e) {
    // ENXIO: a FIFO without a reader opened for writing, a socket, a device without its device.
    throw e.code === 'ENXIO' ? notRegular(path) : e;
  }
  let stats;
  try {
    stats = fs.fstatSync(fd);
  } finally {
    if (!stats?.isFile()) fs.closeSync(fd);
  }
  if (!stats.isFile()) throw notRegular(path);
  return [fd, stats];
}

async function openRegularAsync(path, flags) {
  let fh;
  try {
    fh = await fsp.open(path, flags);
  } catch (e) {
    throw e.code === 'ENXIO' ? notRegular(path) : e;
  }
  let regular = false;
  try {
    regular = (await fh.stat()).isFile();
  } finally {
    if (!regular) await fh.close();
  }
  if (!regular) throw notRegular(path);
  return fh;
}

/** `f(fd)` on the regular file `path` opened with `flags`, closed afterwards. */
function withFile(path, flags, f) {
  const fd = openRegular(path, flags);
  try {
    return f(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function withFileAsync(path, flags, f) {
  const fh = await openRegularAsync(path, flags);
  try {
    return await f(fh);
  } finally {
    await fh.close();
  }
}

/** A directory's `dirents` as `listDir` entries, less FIFOs, sockets, devices and links to them. */
function listed(dirents, linksToSpecial) {
  return dirents
    .filter((d, i) => !special(d) && !linksToSpecial[i])
    .map((d) => ({ name: d.name, isDir: d.isDirectory() }));
}

/** Whether the symlink `path` leads to a FIFO, socket or device (a dangling one does not). */
function linkToSpecial(path) {
  try {
    return special(fs.statSync(path));
  } catch {
    return false;
  }
}

async function linkToSpecialAsync(path) {
  try {
    return special(await fsp.stat(path));
  } catch {
    return false;
  }
}

function syncPath(path) {
  const fd = fs.openSync(path, READ);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function syncPathAsync(path) {
  const fh = await fsp.open(path, READ);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}


/** The writer identity both storages record in locks, and whether a writer still runs. */
const identity = {
  processIdentity: () => ({ pid: process.pid, host: os.hostname() }),
  processAlive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return e.code === 'EPERM';
    }
  },
};

/**
 * The directories whose entries are durable: synced by this storage, and changed by
 * nothing it did since. `changed(path)` forgets the directory of `path`.
 */
function durableDirs() {
  const synced = new Set();
  return {
    has: (dir) => synced.has(dir),
    add: (dir) => synced.add(dir),
    changed: (...paths) => paths.forEach((p) => synced.delete(parentOf(p))),
  };
}

/**
 * The file appended to last, kept open: one descriptor per process, whatever the number of
 * storages (a program that makes a storage per session keeps no descriptor per session).
 */
let kept = null; // { path, fd, dev, ino }

function closeKept() {
  if (kept === null) return;
  const { fd } = kept;
  kept = null;
  fs.closeSync(fd);
}

/**
 * A storage's use of the kept file (see the top of this file). `saw(path, stats)`: a
 * `stat` of `path` found `stats`; `take(path)`: the kept descriptor when this storage's
 * call just before was a `stat` of `path` that found the kept file (else null). Every
 * call takes, so that only the call right after the stat can use it.
 */
function appendHandle() {
  let found = null; // the kept file, when this storage's last call was a stat that found it
  return {
    saw(path, stats) {
      found = kept !== null && kept.path === path && stats.isFile()
        && stats.ino === kept.ino && stats.dev === kept.dev ? kept : null;
    },
    take(path) {
      const fd = found !== null && found === kept && kept.path === path ? kept.fd : null;
      found = null;
      return fd;
    },
    /** Keep `fd` (of `path`, fstat `stats`) open; false when it cannot tell files apart. */
    keep(path, fd, stats) {
      if (process.platform === 'win32' || !(stats.ino > 0)) return false;
      closeKept();
      kept = { path, fd, dev: stats.dev, ino: stats.ino };
      return true;
    },
    /** Close the kept file if it is at one of `paths` (written, moved or deleted). */
    drop(...paths) {
      if (kept !== null && paths.includes(kept.path)) closeKept();
    },
  };
}

export function nodeStorage() {
  const durable = durableDirs();
  const handle = appendHandle();
  /** An append to `path`; creating the file changes its directory. */
  const append = (path, data) => {
    const kept = handle.take(path);
    if (kept !== null) {
      try {
        fs.writeFileSync(kept, data);
        // Deleted, or replaced by a rename, since the stat: the bytes went nowhere, and
        // go to the path now, as without the kept file.
        if (fs.fstatSync(kept).nlink > 0) return;
      } catch (e) {
        handle.drop(path);
        throw e;
      }
      handle.drop(path);
    }
    let fd;
    let stats;
    try {
      [fd, stats] = openRegularStat(path, APPEND_EXISTING);
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
      durable.changed(path);
      [fd, stats] = openRegularStat(path, APPEND);
    }
    let keep = false;
    try {
      fs.writeFileSync(fd, data);
      keep = handle.keep(path, fd, stats);
    } finally {
      if (!keep) fs.closeSync(fd);
    }
  };
  const storage = {
    read: (path) => withFile(path, READ, (fd) => fs.readFileSync(fd)),
    readInto: (path, dest, position) => withFile(path, READ, (fd) => {
      let n = 0;
      while (n < dest.length) {
        const got = fs.readSync(fd, dest, n, dest.length - n, position + n);
        if (got === 0) break;
        n += got;
      }
      return n;
    }),
    readPrefix: (path, maxBytes) => withFile(path, READ, (fd) => {
      const buf = Buffer.alloc(Math.min(maxBytes, fs.fstatSync(fd).size));
      return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
    }),
    readRange(path, offset, length) {
      [offset, length] = rangeArgs(offset, length);
      return withFile(path, READ, (fd) => {
        const buf = Buffer.alloc(Math.max(0, Math.min(length, fs.fstatSync(fd).size - offset)));
        let n = 0;
        while (n < buf.length) {
          const got = fs.readSync(fd, buf, n, buf.length - n, offset + n);
          if (got === 0) break; // truncated since the fstat
          n += got;
        }
        return buf.subarray(0, n);
      });
    },
    write: (path, data) => {
      durable.changed(path);
      handle.drop(path);
      withFile(path, WRITE, (fd) => fs.writeFileSync(fd, data));
    },
    append,
    rename: (from, to) => {
      durable.changed(from, to);
      handle.drop(from, to);
      fs.renameSync(from, to);
    },
    unlink: (path) => {
      durable.changed(path);
      handle.drop(path);
      fs.unlinkSync(path);
    },
    listDir(path) {
      const dirents = fs.readdirSync(path, { withFileTypes: true });
      return listed(dirents, dirents.map((d) => d.isSymbolicLink() && linkToSpecial(joinPath(path, d.name))));
    },
    stat(path) {
      handle.take(null);
      const s = fs.statSync(path);
      handle.saw(path, s);
      return { size: s.size, mtimeMs: s.mtimeMs, isDir: s.isDirectory(), dev: s.dev, ino: s.ino };
    },
    mkdirAll: (path) => {
      durable.changed(path);
      fs.mkdirSync(path, { recursive: true });
    },
    fsync(path) {
      const kept = handle.take(path);
      if (kept !== null) fs.fsyncSync(kept);
      // Deleted or replaced since the stat: the file at the path is the one to sync.
      if (kept === null || fs.fstatSync(kept).nlink === 0) syncPath(path);
      const dir = parentOf(path);
      if (durable.has(dir)) return;
      try {
        syncPath(dir);
        durable.add(dir);
      } catch {
        // a directory that cannot be opened or synced: nothing more this host can do
      }
    },
    rmdir: (path) => {
      durable.changed(path);
      fs.rmdirSync(path);
    },
    createNew: (path, data) => {
      durable.changed(path);
      fs.writeFileSync(path, data, { flag: 'wx' });
    },
    ...identity,
  };
  // Any call but a stat ends what the last stat found: only the call right after it may
  // use the kept descriptor (append and fsync take it themselves).
  for (const [name, f] of Object.entries(storage)) {
    if (name === 'stat' || name === 'append' || name === 'fsync') continue;
    storage[name] = function (...args) {
      handle.take(null);
      return f.apply(this, args);
    };
  }
  return storage;
}

/** `nodeAsyncStorage()`: the same storage over `node:fs/promises`; no call blocks the event loop. */
export function nodeAsyncStorage() {
  const durable = durableDirs();
  return {
    read: (path) => withFileAsync(path, READ, (fh) => fh.readFile()),
    readPrefix: (path, maxBytes) => withFileAsync(path, READ, async (fh) => {
      const buf = Buffer.alloc(Math.min(maxBytes, (await fh.stat()).size));
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      return buf.subarray(0, bytesRead);
    }),
    async readRange(path, offset, length) {
      [offset, length] = rangeArgs(offset, length);
      return withFileAsync(path, READ, async (fh) => {
        const buf = Buffer.alloc(Math.max(0, Math.min(length, (await fh.stat()).size - offset)));
        let n = 0;
        while (n < buf.length) {
          const { bytesRead } = await fh.read(buf, n, buf.length - n, offset + n);
          if (bytesRead === 0) break; // truncated since the stat
          n += bytesRead;
        }
        return buf.subarray(0, n);
      });
    },
    write: (path, data) => {
      durable.changed(path);
      return withFileAsync(path, WRITE, (fh) => fh.writeFile(data));
    },
    async append(path, data) {
      let fh;
      try {
        fh = await openRegularAsync(path, APPEND_EXISTING);
      } catch (e) {
        if (e.code !== 'ENOENT') throw e;
        durable.changed(path);
        fh = await openRegularAsync(path, APPEND);
      }
      try {
        await fh.writeFile(data);
      } finally {
        await fh.close();
      }
    },
    rename: (from, to) => {
      durable.changed(from, to);
      return fsp.rename(from, to);
    },
    unlink: (path) => {
      durable.changed(path);
      return fsp.unlink(path);
    },
    async listDir(path) {
      const dirents = await fsp.readdir(path, { withFileTypes: true });
      return listed(dirents, await Promise.all(dirents.map((d) => d.isSymbolicLink() && linkToSpecialAsync(joinPath(path, d.name)))));
    },
    async stat(path) {
      const s = await fsp.stat(path);
      return { size: s.size, mtimeMs: s.mtimeMs, isDir: s.isDirectory() };
    },
    mkdirAll: async (path) => {
      durable.changed(path);
      await fsp.mkdir(path, { recursive: true });
    },
    async fsync(path) {
      await syncPathAsync(path);
      const dir = parentOf(path);
      if (durable.has(dir)) return;
      await syncPathAsync(dir).then(() => durable.add(dir), () => {
        // a directory that cannot be opened or synced: nothing more this host can do
      });
    },
    rmdir: (path) => {
      durable.changed(path);
      return fsp.rmdir(path);
    },
    createNew: (path, data) => {
      durable.changed(path);
      return fsp.writeFile(path, data, { flag: 'wx' });
    },
    ...identity,
  };
}
