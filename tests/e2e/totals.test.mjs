// Unit tests of the session totals (no browser): the package's outline reads what each
// entry adds (`Session.outline().digests`), web-demo/totals.js sums a branch's rows; over
// hand-made entries and over a real session file (tests/fixtures/real), against sums
// computed here from the file's lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, ROOT } from './helpers.mjs';

const { digestOf, fmtCost, fmtDuration, sumDigests } = await import(pathToFileURL(join(ROOT, 'web-demo', 'totals.js')).href);
const { Session } = await import(pathToFileURL(join(ROOT, 'pkg', 'node.mjs')).href);

const msg = (message, timestamp = undefined) => ({ type: 'message', id: 'x', timestamp, message });

/** The digest of each row of the outline of a session's text, in row order. */
function digestsOfText(text) {
  const s = Session.fromText(text);
  try {
    const { ids, digests } = s.outline();
    return ids.map((_, i) => digestOf(digests, i));
  } finally {
    s.free();
  }
}

/** The entries as one linear session (ids and parents made here), their digests root first. */
function digestsOf(entries) {
  const header = { type: 'session', version: 3, id: 'totals', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' };
  const lines = entries.map((e, i) => JSON.stringify({ ...e, id: `e${i}`, parentId: i ? `e${i - 1}` : null }));
  return digestsOfText([JSON.stringify(header), ...lines, ''].join('\n'));
}

const branchTotals = (entries) => sumDigests(digestsOf(entries));

test('sums the usage of assistant messages; others count for the duration only', () => {
  const t = branchTotals([
    { type: 'thinking_level_change', thinkingLevel: 'high', timestamp: '2026-01-01T00:00:00Z' },
    msg({ role: 'user', content: 'hi', timestamp: 1_000 }),
    msg({ role: 'assistant', provider: 'p', model: 'a', usage: { input: 10, output: 5, cacheRead: 100, cacheWrite: 7, cost: { total: 0.5 } }, timestamp: 2_000 }),
    { type: 'model_change', model: 'p/b' },
    msg({ role: 'toolResult', content: [], usage: { input: 999 }, timestamp: 3_000 }),
    msg({ role: 'assistant', provider: 'p', model: 'b', usage: { input: 1, output: 2 }, timestamp: 65_000 }),
    msg({ role: 'assistant', provider: 'p', model: 'a', usage: { input: 3, output: 4, cost: { total: 0.25 } }, timestamp: 64_000 }),
  ]);
  assert.equal(t.messages, 5);
  assert.equal(t.assistantMessages, 3);
  assert.equal(t.input, 14);
  assert.equal(t.output, 11);
  assert.equal(t.cacheRead, 100);
  assert.equal(t.cacheWrite, 7);
  assert.equal(t.cost, 0.75);
  assert.equal(t.costMessages, 2);
  assert.equal(t.firstAt, 1_000);
  assert.equal(t.lastAt, 65_000);
  assert.equal(t.durationMs, 64_000);
  assert.deepEqual(t.models, [{ name: 'p/a', messages: 2 }, { name: 'p/b', messages: 1 }]);
});

test('no cost when no message carries one; no duration without timestamps; bad numbers ignored', () => {
  const t = branchTotals([msg({ role: 'assistant', model: 'm', usage: { input: -5, output: Number.NaN, cacheRead: '7', cost: { total: 'x' } } })]);
  assert.equal(t.cost, null);
  assert.equal(t.durationMs, null);
  assert.equal(t.input + t.output + t.cacheRead, 0);
  assert.deepEqual(t.models, [{ name: 'm', messages: 1 }]);
  assert.equal(branchTotals([]).messages, 0);
  assert.deepEqual(digestsOf([{ type: 'compaction', summary: 's', firstKeptEntryId: 'e0', tokensBefore: 1 }]), [null], 'not a message: no digest');
});

test('the entry timestamp stands in for a message without one', () => {
  const t = branchTotals([msg({ role: 'user' }, '2026-01-01T00:00:00.000Z'), msg({ role: 'user' }, '2026-01-01T01:30:00.000Z')]);
  assert.equal(t.durationMs, 90 * 60_000);
});

test('the totals of a real session equal the sums of its lines', async () => {
  // large-session.jsonl is a v1 file: no ids, one linear branch, no compaction, so the
  // branch is every message line.
  const text = await readFile(join(FIXTURES, 'large-session.jsonl'), 'utf8');
  const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const messages = lines.filter((e) => e.type === 'message');
  const assistant = messages.filter((e) => e.message.role === 'assistant');
  const sum = (f) => assistant.reduce((n, e) => n + (e.message.usage?.[f] ?? 0), 0);
  const times = messages.map((e) => e.message.timestamp);
  const t = sumDigests(digestsOfText(text));
  assert.equal(t.messages, messages.length);
  assert.equal(t.input, sum('input'));
  assert.equal(t.output, sum('output'));
  assert.equal(t.cacheRead, sum('cacheRead'));
  assert.ok(Math.abs(t.cost - assistant.reduce((n, e) => n + (e.message.usage?.cost?.total ?? 0), 0)) < 1e-9);
  assert.equal(t.durationMs, Math.max(...times) - Math.min(...times));
  assert.deepEqual(t.models.map((m) => m.name).sort(), [...new Set(assistant.map((e) => `${e.message.provider}/${e.message.model}`))].sort());
  assert.ok(t.output > 0 && t.cost > 0, 'the fixture has usage');
});

test('durations and costs in plain words', () => {
  assert.equal(fmtDuration(45_400), '45 s');
  assert.equal(fmtDuration(200_000), '3 min 20 s');
  assert.equal(fmtDuration(2 * 3_600_000 + 5 * 60_000), '2 h 05 min');
  assert.equal(fmtDuration(3 * 86_400_000 + 4 * 3_600_000), '3 d 4 h');
  assert.equal(fmtCost(30.3312), '$30.33');
  assert.equal(fmtCost(0.00731), '$0.0073');
});
