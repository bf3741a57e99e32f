//! The prompt-history database's SQL, written once for every host that runs SQLite: the
//! CLI host (rusqlite) and the viewer (SQLite compiled to wasm, through the npm package's
//! `historySchema()` and `historyQueries()`).
//!
//! The schema is the agent's current one (`created_at` in epoch seconds); every statement
//! is idempotent (`IF NOT EXISTS`), so running [`SCHEMA`] on every open is safe. SQLite
//! keeps the table's text without `IF NOT EXISTS`, so the agent reads it as its own.

/// The agent's `history` table. Its `created_at` default must not mention `unixepoch(`:
/// the agent takes that as the older schema and rebuilds the table.
macro_rules! create_table {
    () => {
        "CREATE TABLE IF NOT EXISTS history (
\tid INTEGER PRIMARY KEY AUTOINCREMENT,
\tprompt TEXT NOT NULL,
\tcreated_at INTEGER NOT NULL DEFAULT (CAST(strftime('%s','now') AS INTEGER)),
\tcwd TEXT
);
"
    };
}

/// Indexes, the FTS5 index and the triggers that keep it in sync.
macro_rules! create_indexes {
    () => {
        "CREATE INDEX IF NOT EXISTS idx_history_created_at ON history(created_at DESC);
CREATE INDEX IF NOT EXISTS idx_history_cwd_created_at ON history(cwd, created_at DESC);
CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(prompt, content='history', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS history_ai AFTER INSERT ON history BEGIN
\tINSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
END;
CREATE TRIGGER IF NOT EXISTS history_ad AFTER DELETE ON history BEGIN
\tINSERT INTO history_fts(history_fts, rowid, prompt) VALUES ('delete', old.id, old.prompt);
END;
CREATE TRIGGER IF NOT EXISTS history_au AFTER UPDATE ON history BEGIN
\tINSERT INTO history_fts(history_fts, rowid, prompt) VALUES ('delete', old.id, old.prompt);
\tINSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
END;
"
    };
}

/// The `history` table alone (a migration copies the old rows in before the indexes).
pub const CREATE_TABLE: &str = create_table!();

/// Everything but the table: indexes, the FTS5 index `history_fts` and its triggers.
pub const CREATE_INDEXES: &str = create_indexes!();

/// The whole schema: [`CREATE_TABLE`] then [`CREATE_INDEXES`].
pub const SCHEMA: &str = concat!(create_table!(), create_indexes!());

/// Everything [`CREATE_INDEXES`] creates, by name.
pub const SCHEMA_OBJECTS: [&str; 6] = [
    "idx_history_created_at",
    "idx_history_cwd_created_at",
    "history_fts",
    "history_ai",
    "history_ad",
    "history_au",
];

/// Fill the FTS5 index from the table (after a migration, or when the index was missing).
pub const REBUILD_FTS: &str = "INSERT INTO history_fts(history_fts) VALUES('rebuild');";

/// One row: `?1` prompt, `?2` created_at (epoch seconds), `?3` cwd or NULL.
pub const INSERT: &str = "INSERT INTO history (prompt, created_at, cwd) VALUES (?1, ?2, ?3)";

/// Rows matching the FTS5 query `?1`, best match first (bm25), then newest; at most `?2`.
pub const SEARCH: &str = "SELECT h.id, h.prompt, h.created_at, h.cwd
    FROM history_fts JOIN history h ON h.id = history_fts.rowid
    WHERE history_fts MATCH ?1
    ORDER BY bm25(history_fts), h.created_at DESC, h.id DESC LIMIT ?2";

/// [`SEARCH`] restricted to the rows of cwd `?3`.
pub const SEARCH_CWD: &str = "SELECT h.id, h.prompt, h.created_at, h.cwd
    FROM history_fts JOIN history h ON h.id = history_fts.rowid
    WHERE history_fts MATCH ?1 AND h.cwd = ?3
    ORDER BY bm25(history_fts), h.created_at DESC, h.id DESC LIMIT ?2";

/// The newest rows (`created_at`, then id), at most `?1`.
pub const RECENT: &str = "SELECT id, prompt, created_at, cwd FROM history
    ORDER BY created_at DESC, id DESC LIMIT ?1";

/// [`RECENT`] restricted to the rows of cwd `?2`.
pub const RECENT_CWD: &str = "SELECT id, prompt, created_at, cwd FROM history WHERE cwd = ?2
    ORDER BY created_at DESC, id DESC LIMIT ?1";

/// The prompt of the row with the highest id (seeds the consecutive-duplicate check).
pub const LAST_PROMPT: &str = "SELECT prompt FROM history ORDER BY id DESC LIMIT 1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_the_table_then_everything_else_each_created_once() {
        assert_eq!(SCHEMA, format!("{CREATE_TABLE}{CREATE_INDEXES}"));
        for name in SCHEMA_OBJECTS {
            let created = CREATE_INDEXES
                .lines()
                .filter(|l| l.starts_with("CREATE") && l.contains(&format!(" {name} ")))
                .count();
            assert_eq!(created, 1, "{name}");
        }
        assert!(!SCHEMA.contains("unixepoch("));
    }
}
