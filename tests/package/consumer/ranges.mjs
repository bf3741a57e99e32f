// `readRange` of a shipped storage, whatever loaded the package: a file of 10 007 bytes
// written through the storage, then ranges of it (the start, the middle, across and past
// the end, empty, huge) compared with the same slice of `read`; a missing file and a
// negative offset. Returns what it saw, the same JSON for every storage.
export async function ranges(storage, dir) {
  await storage.mkdirAll(dir);
  const file = `${dir}/ranges.bin`;
  const data = Uint8Array.from({ length: 10_007 }, (_, i) => (i * 7 + (i >> 8)) & 0xff);
  await storage.write(file, data);
  const whole = new Uint8Array(await storage.read(file));
  const wrong = [];
  const cases = [[0, 10], [0, 10_007], [5000, 100], [10_000, 10], [10_006, 1], [10_007, 5], [20_000, 5], [0, 0], [7, 2 ** 53 - 1]];
  for (const [offset, length] of cases) {
    const got = await storage.readRange(file, offset, length);
    const want = whole.slice(offset, offset + length);
    if (!(got instanceof Uint8Array) || got.length !== want.length || got.some((b, i) => b !== want[i])) wrong.push([offset, length]);
  }
  const code = (f) => Promise.resolve().then(f).then(() => 'none', (e) => e.code);
  return {
    sameAsRead: wrong,
    written: whole.length === data.length,
    missing: await code(() => storage.readRange(`${dir}/missing.jsonl`, 0, 1)),
    negative: await code(() => storage.readRange(file, -1, 1)),
  };
}
