// An agent's history.db of an older schema (`created_at` defaulting to unixepoch, no FTS
// index), with a row in seconds and one in ISO text: the Node and Bun tests of the
// migration on open both start from it.
export const OLDER_HISTORY_SQL = `CREATE TABLE history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    prompt TEXT NOT NULL,
    created_at INTEGER NOT NULL DEFAULT (unixepoch()),
    cwd TEXT);
  INSERT INTO history (id, prompt, created_at, cwd) VALUES (7, 'old prompt one', 1700000000, '/p'), (9, 'old prompt two', '2024-01-02T03:04:05Z', NULL);`;
