// host.mjs's `storage` functions called directly, as jco calls them for the component
// (u64 arguments as BigInts): `readRange` reads at its offset, short at the end of the
// file, empty past it, and a missing file is `not-found`. The component calls it once
// the core reads sessions by ranges; until then this is its test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { storage } from './host.mjs';

const DATA = Uint8Array.from({ length: 10_000 }, (_, i) => i % 251);
const U64_MAX = 2n ** 64n - 1n;

/** What `read-range` returns of DATA (the core's `storage::range_of`). */
function expected(offset, len) {
  const start = offset > BigInt(DATA.length) ? DATA.length : Number(offset);
  const end = offset + len > BigInt(DATA.length) ? DATA.length : Number(offset + len);
  return DATA.slice(start, Math.max(start, end));
}

function tempFile(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-jco-host-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 's.jsonl');
  fs.writeFileSync(file, DATA);
  return { dir, file };
}

test('readRange: the bytes at the offset, fewer at the end, none past it', (t) => {
  const { file } = tempFile(t);
  const cases = [[0n, 10n], [0n, 0n], [1234n, 100n], [1234n, 0n], [9990n, 10n], [9990n, 100n],
    [9999n, 1n], [10_000n, 0n], [10_000n, 5n], [20_000n, 5n], [5000n, U64_MAX], [0n, U64_MAX],
    [U64_MAX, U64_MAX], [0n, 3n << 20n]];
  for (const [offset, len] of cases) {
    const got = storage.readRange(file, offset, len);
    assert.ok(got instanceof Uint8Array, `${offset}+${len}`);
    assert.deepEqual(Array.from(got), Array.from(expected(offset, len)), `${offset}+${len}`);
  }
  assert.deepEqual(Array.from(storage.readRange(file, 1234n, 3n)), [230, 231, 232]);
  assert.equal(storage.readRange(file, 9990n, 100n).length, 10);
});

test('readRange: a missing file is not-found', (t) => {
  const { dir } = tempFile(t);
  assert.throws(() => storage.readRange(path.join(dir, 'missing.jsonl'), 0n, 10n),
    (e) => e.tag === 'not-found');
});
