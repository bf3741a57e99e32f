// `fsync(path)` of the Node storages makes the file durable, and its directory entry: the
// directory is synced the first time, and again only after the storage changed something
// in it (a new file, a rename, an unlink, ...). An append to an existing file changes no
// directory: a session's flush after each append is one sync, not two.
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { nodeAsyncStorage, nodeStorage } from './helpers.mjs';

/** The paths synced while `f` runs (sync and promise APIs both watched). */
async function synced(f) {
  const fds = new Map();
  const paths = [];
  const open = fs.openSync;
  const openSync = mock.method(fs, 'openSync', (p, ...rest) => {
    const fd = open(p, ...rest);
    fds.set(fd, String(p));
    return fd;
  });
  const fsync = fs.fsyncSync;
  const fsyncSync = mock.method(fs, 'fsyncSync', (fd) => {
    paths.push(fds.get(fd));
    return fsync(fd);
  });
  const openAsync = fsp.open;
  const fspOpen = mock.method(fsp, 'open', async (p, ...rest) => {
    const fh = await openAsync(p, ...rest);
    const sync = fh.sync.bind(fh);
    fh.sync = async () => {
      paths.push(String(p));
      return sync();
    };
    return fh;
  });
  try {
    await f();
  } finally {
    openSync.mock.restore();
    fsyncSync.mock.restore();
    fspOpen.mock.restore();
  }
  return paths;
}

for (const [name, make] of [['nodeStorage', nodeStorage], ['nodeAsyncStorage', nodeAsyncStorage]]) {
  test(`${name}: a directory is synced when the storage changed it, not after an append`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-sync-'));
    const s = make();
    const file = path.join(dir, 's.jsonl');
    const other = path.join(dir, 'o.jsonl');
    // A new file: file and directory.
    assert.deepEqual(await synced(async () => {
      await s.createNew(file, new TextEncoder().encode('a\n'));
      await s.fsync(file);
    }), [file, dir]);
    // Appends to it: the file only.
    assert.deepEqual(await synced(async () => {
      await s.append(file, new TextEncoder().encode('b\n'));
      await s.fsync(file);
      await s.append(file, new TextEncoder().encode('c\n'));
      await s.fsync(file);
    }), [file, file]);
    // An append that creates a file changes the directory.
    assert.deepEqual(await synced(async () => {
      await s.append(other, new TextEncoder().encode('x\n'));
      await s.fsync(other);
    }), [other, dir]);
    // A rename into the directory (an atomic rewrite) too, and an unlink.
    for (const change of [
      async () => { await s.write(`${file}.tmp`, new TextEncoder().encode('new\n')); await s.rename(`${file}.tmp`, file); },
      async () => { await s.unlink(other); },
    ]) {
      assert.deepEqual(await synced(async () => {
        await change();
        await s.fsync(file);
      }), [file, dir]);
    }
    assert.equal(fs.readFileSync(file, 'utf8'), 'new\n');
    // Another storage has synced nothing yet: it syncs the directory once.
    const fresh = make();
    assert.deepEqual(await synced(async () => {
      await fresh.fsync(file);
      await fresh.fsync(file);
    }), [file, dir, file]);
    fs.rmSync(dir, { recursive: true });
  });
}
