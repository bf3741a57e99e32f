// The prompt history in a real SQLite file under Node (`node:sqlite`, run by Node 22 from
// scripts/test-js): the agent's `history.db`, its schema, an older schema migrated on
// open, the drop-in's `HistoryStorage`, and two processes writing at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import { openPromptHistory, nodeHistoryStore } from '../../pkg/node-history.mjs';
import { HistoryStorage } from '../../pkg/agent-history-storage.mjs';
import { OLDER_HISTORY_SQL } from './older-history.mjs';

const NODE_HISTORY = new URL('../../pkg/node-history.mjs', import.meta.url).href;

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-history-db-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const names = (db) => db.prepare("SELECT name FROM sqlite_master ORDER BY name").all().map((r) => r.name);

test('a new history.db gets the agent schema, and prompts go in trimmed and once', (t) => {
  const dir = tempDir(t);
  const history = openPromptHistory(dir);
  assert.equal(history.backend, 'node:sqlite');
  assert.deepEqual(history.add('  fix the parser  ', '/w'), { added: true });
  assert.deepEqual(history.add('fix the parser', '/w'), { added: false, reason: 'duplicate' });
  assert.deepEqual(history.add('   ', '/w'), { added: false, reason: 'empty' });
  history.add('write the docs');
  const recent = history.recent({ limit: 10 });
  assert.deepEqual(recent.map((e) => e.prompt), ['write the docs', 'fix the parser']);
  assert.equal(recent[1].cwd, '/w');
  assert.equal(recent[0].cwd, null);
  assert.match(recent[0].createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  assert.deepEqual(history.search('pars*').map((e) => e.prompt), ['fix the parser']);
  assert.deepEqual(history.search('pars*', { cwd: '/elsewhere' }), []);
  assert.deepEqual(history.recent({ limit: 0 }), []);
  assert.throws(() => history.search('"unterminated'), (e) => e.kind === 'invalidInput' && /invalid history query: unterminated string/.test(e.message));

  // The file itself: the agent's table, indexes, FTS index and triggers; seconds stored.
  const db = new DatabaseSync(path.join(dir, 'history.db'));
  for (const name of ['history', 'history_fts', 'history_ai', 'history_ad', 'history_au', 'idx_history_created_at', 'idx_history_cwd_created_at']) {
    assert.ok(names(db).includes(name), name);
  }
  const row = db.prepare('SELECT created_at FROM history ORDER BY id LIMIT 1').get();
  assert.ok(Math.abs(row.created_at - Date.now() / 1000) < 60, 'epoch seconds');
  assert.equal(db.prepare('PRAGMA journal_mode').get().journal_mode, 'wal');
  db.close();
});

test('an older history.db (unixepoch default) is migrated on open, rows and ids kept', (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'history.db');
  const old = new DatabaseSync(file);
  old.exec(OLDER_HISTORY_SQL);
  old.close();

  const store = nodeHistoryStore(file);
  const history = openPromptHistory(dir);
  const rows = history.recent({ limit: 10 });
  assert.deepEqual(rows.map((r) => [r.id, r.prompt]), [[9, 'old prompt two'], [7, 'old prompt one']]);
  assert.equal(rows[0].createdAt, '2024-01-02T03:04:05.000Z', 'ISO text read as seconds');
  assert.deepEqual(history.search('"one"').map((r) => r.id), [7], 'the FTS index holds the old rows');
  store.close();
  const db = new DatabaseSync(file);
  const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'history'").get().sql;
  assert.ok(!sql.includes('unixepoch('), sql);
  assert.ok(!names(db).includes('history_legacy'));
  db.close();
  // Opening again changes nothing.
  openPromptHistory(dir);
  const again = new DatabaseSync(file);
  assert.equal(again.prepare("SELECT sql FROM sqlite_master WHERE name = 'history'").get().sql, sql);
  again.close();
});

test('the drop-in HistoryStorage: one per process, the agent entry shape, prefix search', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'history.db');
  HistoryStorage.resetInstance();
  t.after(() => HistoryStorage.resetInstance());
  const h = HistoryStorage.open(file);
  assert.equal(HistoryStorage.open(file), h);
  await h.add('refactor the "lexer" module', '/repo');
  await h.add('refactor the "lexer" module', '/repo');
  await h.add('ship it');
  const recent = h.getRecent(10);
  assert.equal(recent.length, 2);
  assert.deepEqual(Object.keys(recent[0]).sort(), ['created_at', 'id', 'prompt']);
  assert.equal(recent[1].cwd, '/repo');
  assert.equal(typeof recent[1].created_at, 'number');
  assert.ok(Number.isInteger(recent[1].created_at));
  assert.deepEqual(h.search('refac "lex', 10).map((e) => e.prompt), ['refactor the "lexer" module']);
  assert.deepEqual(h.search('   ', 10), []);
  assert.deepEqual(h.getRecent(Number.NaN), []);
  assert.deepEqual(h.getRecent(1).map((e) => e.prompt), ['ship it']);
  HistoryStorage.resetInstance();
  assert.notEqual(HistoryStorage.open(file), h, 'a new instance after reset');
  assert.equal(HistoryStorage.open(file).getRecent(5).length, 2, 'on disk');
});

test('two processes adding prompts at once lose none (WAL and a busy timeout)', async (t) => {
  const dir = tempDir(t);
  const script = `
    import { openPromptHistory } from ${JSON.stringify(NODE_HISTORY)};
    const h = openPromptHistory(process.argv[1]);
    for (let i = 0; i < 100; i++) h.add(process.argv[2] + ' prompt ' + i);`;
  const run = (tag) => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', '--input-type=module', '-e', script, dir, tag], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${tag}: exit ${code}: ${err}`))));
  });
  openPromptHistory(dir); // the schema first, so both children find it
  await Promise.all([run('a'), run('b')]);
  const db = new DatabaseSync(path.join(dir, 'history.db'));
  assert.equal(db.prepare('SELECT count(*) AS n FROM history').get().n, 200);
  db.close();
});

test('the package still reads the file with plain sqlite afterwards (no lock left)', (t) => {
  const dir = tempDir(t);
  const store = nodeHistoryStore(path.join(dir, 'history.db'));
  store.add('x', null, 1);
  store.close();
  store.close();
  const out = execFileSync(process.execPath, ['--no-warnings', '-e', `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(process.argv[1]);
    db.exec('BEGIN IMMEDIATE; COMMIT;');
    console.log(db.prepare('SELECT prompt FROM history').get().prompt);`, path.join(dir, 'history.db')]);
  assert.equal(String(out).trim(), 'x');
});
