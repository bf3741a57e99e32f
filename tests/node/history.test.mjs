// PromptHistory in JS: the core's trimming, dedupe and output shape over a JS store
// object (what the browser backs with SQLite compiled to wasm), the error without one, and
// the SQL a SQLite store runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PromptHistory, historyQueries, historySchema } from './helpers.mjs';

/** A store double: rows in an array; `search` matches a word prefix (not FTS5) and
 * throws as SQLite would on a query with an unbalanced quote. */
function arrayStore() {
  const rows = [];
  return {
    rows,
    calls: [],
    add(prompt, cwd, createdAt) { this.calls.push(['add', prompt, cwd]); rows.push({ id: rows.length + 1, prompt, createdAt, cwd }); },
    search(query, limit, cwd) {
      this.calls.push(['search', query, limit, cwd]);
      if ((query.match(/"/g) ?? []).length % 2) throw Object.assign(new Error('fts5: syntax error near ""'), { kind: 'invalidQuery' });
      const word = query.replace(/[*"]/g, '');
      return rows.filter((r) => r.prompt.split(' ').some((w) => w.startsWith(word)) && (cwd === null || r.cwd === cwd)).reverse().slice(0, limit);
    },
    recent(limit, cwd) { return rows.filter((r) => cwd === null || r.cwd === cwd).reverse().slice(0, limit); },
    lastPrompt() { return rows.at(-1)?.prompt ?? null; },
  };
}

test('without a store it refuses with a clear error (search is SQLite FTS5, not imitated)', () => {
  for (const missing of [undefined, null, 'history.db']) {
    assert.throws(() => new PromptHistory(missing), (e) => e.kind === 'invalidInput'
      && /^invalid input: PromptHistory needs a store: an object with add, search, recent and lastPrompt/.test(e.message));
  }
});

test('over a store it trims, skips consecutive duplicates and gives the agent\'s row shape', () => {
  const store = arrayStore();
  const h = new PromptHistory(store);
  assert.equal(h.backend, 'custom');
  assert.deepEqual(h.add('  fix the parser  ', '/w'), { added: true });
  assert.deepEqual(h.add('fix the parser', '/w'), { added: false, reason: 'duplicate' });
  assert.deepEqual(h.add('   '), { added: false, reason: 'empty' });
  h.add('write the docs', '/other');
  h.add('fix the parser', '/w');
  assert.deepEqual(store.rows.map((r) => r.prompt), ['fix the parser', 'write the docs', 'fix the parser']);
  const recent = h.recent({ limit: 10 });
  assert.deepEqual(recent.map((r) => r.prompt), ['fix the parser', 'write the docs', 'fix the parser']);
  assert.match(recent[0].createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(h.search('pars*').map((r) => r.prompt), ['fix the parser', 'fix the parser']);
  assert.deepEqual(h.search('docs', { cwd: '' }).map((r) => r.cwd), ['/other'], 'an empty cwd is no filter');
  assert.deepEqual(store.calls.at(-1), ['search', 'docs', 20, null]);
  assert.deepEqual(h.recent({ cwd: '/other' }).map((r) => r.prompt), ['write the docs']);
  assert.deepEqual(h.search('   '), [], 'a blank query does not reach the store');
  assert.equal(PromptHistory.prefixQuery('foo bar'), '"foo"* "bar"*');
  assert.throws(() => h.search('"unterminated'), (e) => e.kind === 'invalidInput' && e.message.includes('fts5: syntax error'));
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
  assert.deepEqual(Object.keys(q), ['insert', 'search', 'searchCwd', 'recent', 'recentCwd', 'lastPrompt', 'tableSql', 'columns', 'objects']);
  assert.match(q.insert, /^INSERT INTO history \(prompt, created_at, cwd\) VALUES \(\?1, \?2, \?3\)$/);
  assert.match(q.searchCwd, /MATCH \?1 AND h\.cwd = \?3/);
  assert.match(q.recentCwd, /WHERE cwd = \?2/);
});
