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

/// The `history` table's `CREATE` text (`?` none: no table yet).
pub const TABLE_SQL: &str =
    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'history'";

/// The `history` table's column names.
pub const COLUMNS: &str = "SELECT name FROM pragma_table_info('history')";

/// The names of every schema object (tables, indexes, triggers).
pub const OBJECTS: &str = "SELECT name FROM sqlite_master";

/// `created_at` of an old row, as epoch seconds: integers kept, reals truncated, ISO or
/// numeric text converted, anything else the migration time.
const LEGACY_CREATED_AT: &str = "CASE typeof(created_at)
    WHEN 'integer' THEN created_at
    WHEN 'real' THEN CAST(created_at AS INTEGER)
    WHEN 'text' THEN COALESCE(CAST(strftime('%s', created_at) AS INTEGER), CAST(created_at AS INTEGER))
    ELSE CAST(strftime('%s','now') AS INTEGER)
  END";

/// What a host reads of a database before [`schema_upgrade`]: [`TABLE_SQL`], [`COLUMNS`]
/// and [`OBJECTS`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaFacts {
    pub table_sql: Option<String>,
    pub columns: Vec<String>,
    pub objects: Vec<String>,
}

impl SchemaFacts {
    /// The older schema the agent migrates: `unixepoch()` as the `created_at` default, or
    /// a column missing.
    pub fn is_legacy(&self) -> bool {
        let Some(sql) = &self.table_sql else {
            return false;
        };
        let has = |c: &str| self.columns.iter().any(|x| x.eq_ignore_ascii_case(c));
        sql.to_ascii_lowercase().contains("unixepoch(")
            || !(has("prompt") && has("created_at") && has("cwd"))
    }
}

/// The SQL that brings a database to the current schema, to run in one write transaction
/// (re-read the facts inside it: another process may have done it meanwhile); `None`
/// when it is current.
/// - No table: [`SCHEMA`].
/// - An older table: rebuilt under the current schema, ids and rows kept (as the agent
///   does), with the FTS index filled.
/// - A current table missing an index, trigger or the FTS index: what is missing, and
///   the FTS index filled when it was the one missing.
pub fn schema_upgrade(facts: &SchemaFacts) -> Option<String> {
    if facts.table_sql.is_none() {
        return Some(SCHEMA.to_string());
    }
    if facts.is_legacy() {
        let has = |c: &str| facts.columns.iter().any(|x| x.eq_ignore_ascii_case(c));
        let created = if has("created_at") {
            LEGACY_CREATED_AT
        } else {
            "CAST(strftime('%s','now') AS INTEGER)"
        };
        let cwd = if has("cwd") { "cwd" } else { "NULL" };
        return Some(format!(
            "DROP TRIGGER IF EXISTS history_ai;
DROP TRIGGER IF EXISTS history_ad;
DROP TRIGGER IF EXISTS history_au;
DROP TABLE IF EXISTS history_fts;
DROP INDEX IF EXISTS idx_history_created_at;
DROP INDEX IF EXISTS idx_history_cwd_created_at;
ALTER TABLE history RENAME TO history_legacy;
{CREATE_TABLE}INSERT INTO history (id, prompt, created_at, cwd)
SELECT rowid, prompt, {created}, {cwd} FROM history_legacy
WHERE prompt IS NOT NULL ORDER BY rowid;
DROP TABLE history_legacy;
{CREATE_INDEXES}{REBUILD_FTS}"
        ));
    }
    let present = |name: &str| facts.objects.iter().any(|o| o == name);
    if SCHEMA_OBJECTS.iter().all(|o| present(o)) {
        return None;
    }
    let rebuild = if present("history_fts") {
        ""
    } else {
        REBUILD_FTS
    };
    Some(format!("{CREATE_INDEXES}{rebuild}"))
}

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

    fn facts(table: Option<&str>, columns: &[&str], objects: &[&str]) -> SchemaFacts {
        SchemaFacts {
            table_sql: table.map(str::to_string),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            objects: objects.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn a_new_database_gets_the_schema_and_a_current_one_nothing() {
        assert_eq!(
            schema_upgrade(&SchemaFacts::default()).as_deref(),
            Some(SCHEMA)
        );
        let current = facts(
            Some(CREATE_TABLE),
            &["id", "prompt", "created_at", "cwd"],
            &SCHEMA_OBJECTS,
        );
        assert_eq!(schema_upgrade(&current), None);
    }

    #[test]
    fn an_older_table_is_rebuilt_keeping_its_rows() {
        let old = "CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT NOT NULL, created_at INTEGER NOT NULL DEFAULT (unixepoch()), cwd TEXT)";
        let f = facts(
            Some(old),
            &["id", "prompt", "created_at", "cwd"],
            &["history_fts"],
        );
        assert!(f.is_legacy());
        let sql = schema_upgrade(&f).unwrap();
        assert!(sql.contains("ALTER TABLE history RENAME TO history_legacy"));
        assert!(sql.contains("SELECT rowid, prompt, CASE typeof(created_at)"));
        assert!(sql.ends_with(REBUILD_FTS));
        // Without a cwd column: NULL cwds, still the older schema.
        let f = facts(
            Some("CREATE TABLE history (prompt TEXT, created_at INTEGER)"),
            &["prompt", "created_at"],
            &[],
        );
        assert!(f.is_legacy());
        assert!(schema_upgrade(&f)
            .unwrap()
            .contains("CASE typeof(created_at)"));
        assert!(schema_upgrade(&f)
            .unwrap()
            .contains(", NULL FROM history_legacy"));
    }

    #[test]
    fn what_is_missing_is_added_and_a_missing_fts_index_filled() {
        let cols = ["id", "prompt", "created_at", "cwd"];
        let no_trigger = facts(Some(CREATE_TABLE), &cols, &SCHEMA_OBJECTS[..5]);
        assert_eq!(schema_upgrade(&no_trigger).as_deref(), Some(CREATE_INDEXES));
        let no_fts = facts(Some(CREATE_TABLE), &cols, &["idx_history_created_at"]);
        assert_eq!(
            schema_upgrade(&no_fts),
            Some(format!("{CREATE_INDEXES}{REBUILD_FTS}"))
        );
    }
}
