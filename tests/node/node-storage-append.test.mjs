// `nodeStorage()` keeps the file it last appended to open, as the agent keeps its writer
// open: the next append or fsync of that path uses the descriptor only when the storage's
// previous call was a `stat` of the path that found that very file there. Whatever
// happened to the path since (replaced, moved, deleted), the bytes go where the path leads,
// never into a file that is no longer there.
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeStorage } from './helpers.mjs';

const bytes = (text) => new TextEncoder().encode(text);

function tempFile(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-append-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 's.jsonl');
}

/** The paths `fs.openSync` opened while `f` ran. */
function opened(f) {
  const paths = [];
  const open = fs.openSync;
  const spy = mock.method(fs, 'openSync', (p, ...rest) => {
    paths.push(String(p));
    return open(p, ...rest);
  });
  try {
    f();
  } finally {
    spy.mock.restore();
  }
  return paths;
}

test('an append and an fsync right after a stat that found the appended file open nothing', (t) => {
  const file = tempFile(t);
  fs.writeFileSync(file, '');
  const s = nodeStorage();
  assert.deepEqual(opened(() => s.append(file, bytes('a\n'))), [file]);
  s.fsync(file); // the directory too, this first time
  assert.deepEqual(opened(() => {
    s.stat(file);
    s.append(file, bytes('b\n'));
    s.stat(file);
    s.fsync(file);
  }), []);
  assert.equal(fs.readFileSync(file, 'utf8'), 'a\nb\n');
});

test('without a stat right before, or after another call, the path is opened again', (t) => {
  const file = tempFile(t);
  const other = `${file}.lock`;
  fs.writeFileSync(other, 'x');
  const s = nodeStorage();
  s.append(file, bytes('a\n'));
  assert.deepEqual(opened(() => s.append(file, bytes('b\n'))), [file]);
  assert.deepEqual(opened(() => {
    s.stat(file);
    s.readPrefix(other, 10);
    s.append(file, bytes('c\n'));
  }), [other, file]);
  assert.deepEqual(opened(() => {
    s.stat(file);
    s.stat(other);
    s.append(file, bytes('d\n'));
  }), [file]);
  assert.equal(fs.readFileSync(file, 'utf8'), 'a\nb\nc\nd\n');
});

test('a file replaced, moved away or deleted since the append gets the next bytes at its path', (t) => {
  // Before the stat (the stat finds another file, or none), or between the stat and the
  // append (the kept file has no link left: the bytes are written again at the path).
  const changes = {
    'replaced by a rename': (file) => {
      fs.writeFileSync(`${file}.tmp`, 'theirs\n');
      fs.renameSync(`${file}.tmp`, file);
    },
    'moved away': (file) => fs.renameSync(file, `${file}.moved`),
    'moved away, another put in its place': (file) => {
      fs.renameSync(file, `${file}.moved`);
      fs.writeFileSync(file, 'theirs\n');
    },
    deleted: (file) => fs.unlinkSync(file),
  };
  for (const [change, apply] of Object.entries(changes)) {
    for (const when of ['before the stat', 'after the stat']) {
      // Moved between the stat and the write, the bytes follow the file.
      if (change.startsWith('moved away') && when === 'after the stat') continue;
      const file = tempFile(t);
      const s = nodeStorage();
      s.append(file, bytes('ours\n'));
      if (when === 'after the stat') s.stat(file);
      apply(file);
      if (when === 'before the stat') {
        try {
          s.stat(file);
        } catch (e) {
          assert.equal(e.code, 'ENOENT', change);
        }
      }
      s.append(file, bytes('next\n'));
      s.stat(file);
      s.fsync(file);
      // Where another file took its place, the bytes follow that file's.
      const expected = ['replaced by a rename', 'moved away, another put in its place'].includes(change)
        ? 'theirs\nnext\n' : 'next\n';
      assert.equal(fs.readFileSync(file, 'utf8'), expected, `${change}, ${when}`);
      if (change.startsWith('moved away')) assert.equal(fs.readFileSync(`${file}.moved`, 'utf8'), 'ours\n', change);
    }
  }
});

test('a write, rename or unlink of the path through the storage closes the kept file', (t) => {
  const file = tempFile(t);
  const s = nodeStorage();
  s.append(file, bytes('a\n'));
  s.write(`${file}.tmp`, bytes('whole\n'));
  s.rename(`${file}.tmp`, file);
  s.stat(file);
  s.append(file, bytes('b\n'));
  assert.equal(fs.readFileSync(file, 'utf8'), 'whole\nb\n');
  s.stat(file);
  s.unlink(file);
  s.append(file, bytes('c\n'));
  assert.equal(fs.readFileSync(file, 'utf8'), 'c\n');
});

test('stat gives the file identity (dev, ino) the core compares lock files by', (t) => {
  const file = tempFile(t);
  const s = nodeStorage();
  s.append(file, bytes('a\n'));
  const st = fs.statSync(file);
  const got = s.stat(file);
  assert.equal(got.dev, st.dev);
  assert.equal(got.ino, st.ino);
  assert.equal(got.size, 2);
});

test('one file is kept open per process, however many storages append', (t) => {
  // A program that makes a storage per session must not keep a descriptor per session.
  const openTo = (file) => fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return [file, `${file} (deleted)`].includes(fs.readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      return false; // closed meanwhile (the directory's own descriptor)
    }
  }).length;
  const files = [tempFile(t), tempFile(t), tempFile(t)];
  const storages = files.map(() => nodeStorage());
  files.forEach((file, i) => storages[i].append(file, bytes('a\n')));
  assert.deepEqual(files.map(openTo), [0, 0, 1]);
  // The first storage's stat finds its file no longer kept: its append opens the path.
  storages[0].stat(files[0]);
  storages[0].append(files[0], bytes('b\n'));
  assert.deepEqual(files.map(openTo), [1, 0, 0]);
  assert.equal(fs.readFileSync(files[0], 'utf8'), 'a\nb\n');
  // Deleted through a storage, the file is closed.
  storages[1].unlink(files[0]);
  assert.deepEqual(files.map(openTo), [0, 0, 0]);
});
