// The prompt history in a real SQLite file under Bun (`bun:sqlite`, run by `bun test` from
// scripts/test-js): the same expectations as tests/node-sqlite/ under Node 22, through the
// package's store, `openPromptHistory` and the drop-in's `HistoryStorage`.
import { afterEach, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BACKEND, openPromptHistory, nodeHistoryStore } from '../../pkg/node-history.mjs';
import { HistoryStorage } from '../../pkg/agent-history-storage.mjs';
import { OLDER_HISTORY_SQL } from '../node-sqlite/older-history.mjs';

const dirs = [];
afterEach(() => {
  HistoryStorage.resetInstance();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xcsh-history-bun-'));
  dirs.push(dir);
  return dir;
}

const names = (db) => db.query('SELECT name FROM sqlite_master ORDER BY name').all().map((r) => r.name);

test('a new history.db gets the agent schema, and prompts go in trimmed and once', () => {
  const dir = tempDir();
  const history = openPromptHistory(dir);
  expect(BACKEND).toBe('bun:sqlite');
  expect(history.backend).toBe('bun:sqlite');
  expect(history.add('  fix the parser  ', '/w')).toEqual({ added: true });
  expect(history.add('fix the parser', '/w')).toEqual({ added: false, reason: 'duplicate' });
  expect(history.add('   ', '/w')).toEqual({ added: false, reason: 'empty' });
  history.add('write the docs');
  const recent = history.recent({ limit: 10 });
  expect(recent.map((e) => e.prompt)).toEqual(['write the docs', 'fix the parser']);
  expect(recent[1].cwd).toBe('/w');
  expect(recent[0].cwd).toBe(null);
  expect(recent[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  expect(history.search('pars*').map((e) => e.prompt)).toEqual(['fix the parser']);
  expect(history.search('pars*', { cwd: '/elsewhere' })).toEqual([]);
  expect(history.recent({ limit: 0 })).toEqual([]);
  let error;
  try {
    history.search('"unterminated');
  } catch (e) {
    error = e;
  }
  expect(error?.kind).toBe('invalidInput');
  expect(error?.message).toMatch(/invalid history query: unterminated string/);

  const db = new Database(path.join(dir, 'history.db'));
  for (const name of ['history', 'history_fts', 'history_ai', 'history_ad', 'history_au', 'idx_history_created_at', 'idx_history_cwd_created_at']) {
    expect(names(db)).toContain(name);
  }
  const row = db.query('SELECT created_at FROM history ORDER BY id LIMIT 1').get();
  expect(Math.abs(row.created_at - Date.now() / 1000)).toBeLessThan(60);
  expect(db.query('PRAGMA journal_mode').get().journal_mode).toBe('wal');
  db.close();
});

test('an older history.db (unixepoch default) is migrated on open, rows and ids kept', () => {
  const dir = tempDir();
  const file = path.join(dir, 'history.db');
  const old = new Database(file);
  old.exec(OLDER_HISTORY_SQL);
  old.close();

  const store = nodeHistoryStore(file);
  const history = openPromptHistory(dir);
  const rows = history.recent({ limit: 10 });
  expect(rows.map((r) => [r.id, r.prompt])).toEqual([[9, 'old prompt two'], [7, 'old prompt one']]);
  expect(rows[0].createdAt).toBe('2024-01-02T03:04:05.000Z');
  expect(history.search('"one"').map((r) => r.id)).toEqual([7]);
  store.close();
  const db = new Database(file);
  const sql = db.query("SELECT sql FROM sqlite_master WHERE name = 'history'").get().sql;
  expect(sql).not.toContain('unixepoch(');
  expect(names(db)).not.toContain('history_legacy');
  db.close();
  openPromptHistory(dir);
  const again = new Database(file);
  expect(again.query("SELECT sql FROM sqlite_master WHERE name = 'history'").get().sql).toBe(sql);
  again.close();
});

test('the drop-in HistoryStorage under Bun: one per process, the agent entry shape, prefix search', async () => {
  const file = path.join(tempDir(), 'history.db');
  const h = HistoryStorage.open(file);
  expect(HistoryStorage.open(file)).toBe(h);
  await h.add('refactor the "lexer" module', '/repo');
  await h.add('refactor the "lexer" module', '/repo');
  await h.add('ship it');
  const recent = h.getRecent(10);
  expect(recent.length).toBe(2);
  expect(Object.keys(recent[0]).sort()).toEqual(['created_at', 'id', 'prompt']);
  expect(recent[1].cwd).toBe('/repo');
  expect(Number.isInteger(recent[1].created_at)).toBe(true);
  expect(h.search('refac "lex', 10).map((e) => e.prompt)).toEqual(['refactor the "lexer" module']);
  expect(h.search('   ', 10)).toEqual([]);
  expect(h.getRecent(Number.NaN)).toEqual([]);
  expect(h.getRecent(1).map((e) => e.prompt)).toEqual(['ship it']);
  HistoryStorage.resetInstance();
  expect(HistoryStorage.open(file)).not.toBe(h);
  expect(HistoryStorage.open(file).getRecent(5).length).toBe(2);
});
