// PromptHistory in JS: the core's dedupe and output shape over the in-memory fallback and
// over a JS store object (what the browser backs with SQLite on OPFS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PromptHistory, historyQueries, historySchema } from './helpers.mjs';

test('without a store it reports the in-memory fallback and dedupes consecutive prompts', () => {
  const h = new PromptHistory();
  assert.equal(h.backend, 'memory');
  assert.deepEqual(h.add('  fix the parser  ', '/w'), { added: true });
  assert.deepEqual(h.add('fix the parser', '/w'), { added: false, reason: 'duplicate' });
  assert.deepEqual(h.add('   '), { added: false, reason: 'empty' });
  h.add('write the docs', '/other');
  h.add('fix the parser', '/w');
  const recent = h.recent({ limit: 10 });
  assert.deepEqual(recent.map((r) => r.prompt), ['fix the parser', 'write the docs', 'fix the parser']);
  assert.match(recent[0].createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(h.search('pars*').map((r) => r.prompt), ['fix the parser', 'fix the parser']);
  assert.deepEqual(h.search('"the docs"').map((r) => r.cwd), ['/other']);
  assert.deepEqual(h.recent({ cwd: '/other' }).map((r) => r.prompt), ['write the docs']);
  assert.equal(PromptHistory.prefixQuery('foo bar'), '"foo"* "bar"*');
  assert.throws(() => h.search('"unterminated'), (e) => e.kind === 'invalidInput');
});

test('over a JS store it passes rows through and seeds the dedupe cache from it', () => {
  const rows = [{ id: 1, prompt: 'already there', createdAt: 1700000000, cwd: null }];
  const store = {
    backend: 'test-sqlite',
    add(prompt, cwd, createdAt) { rows.push({ id: rows.length + 1, prompt, createdAt, cwd }); },
    search(query, limit) { return rows.filter((r) => r.prompt.includes(query.replace(/[*"]/g, ''))).slice(0, limit); },
    recent(limit) { return [...rows].reverse().slice(0, limit); },
    lastPrompt() { return rows.at(-1)?.prompt ?? null; },
  };
  const h = new PromptHistory(store);
  assert.equal(h.backend, 'test-sqlite');
  assert.deepEqual(h.add('already there'), { added: false, reason: 'duplicate' }, 'seeded from the store');
  assert.deepEqual(h.add('new one', '/w'), { added: true });
  assert.equal(rows.length, 2);
  assert.equal(rows[1].cwd, '/w');
  assert.deepEqual(h.recent({ limit: 1 }).map((r) => r.prompt), ['new one']);
  assert.equal(h.recent({ limit: 5 })[1].createdAt, '2023-11-14T22:13:20.000Z');
});

test('the SQL of a SQLite store is the core\'s: one idempotent schema and the host\'s queries', () => {
  const schema = historySchema();
  assert.match(schema, /^CREATE TABLE IF NOT EXISTS history \(/);
  for (const name of ['idx_history_created_at', 'idx_history_cwd_created_at', 'history_fts', 'history_ai', 'history_ad', 'history_au']) {
    assert.match(schema, new RegExp(`IF NOT EXISTS ${name} `), name);
  }
  assert.doesNotMatch(schema, /unixepoch\(/);
  const q = historyQueries();
  assert.deepEqual(Object.keys(q), ['insert', 'search', 'searchCwd', 'recent', 'recentCwd', 'lastPrompt']);
  assert.match(q.insert, /^INSERT INTO history \(prompt, created_at, cwd\) VALUES \(\?1, \?2, \?3\)$/);
  assert.match(q.searchCwd, /MATCH \?1 AND h\.cwd = \?3/);
  assert.match(q.recentCwd, /WHERE cwd = \?2/);
});
