//! The `xcsh:session/history` imports over SQLite: the agent's `history.db`.
//!
//! The schema is the agent's current one (`created_at` is epoch seconds): the table
//! `history(id, prompt, created_at, cwd)`, indexes on `created_at` and `(cwd, created_at)`,
//! the FTS5 index `history_fts` and the triggers that keep it in sync. Its SQL and the
//! queries are the core's [`xcsh_session::history::sql`], shared with the viewer.
//!
//! An older database (its `history` table declared with `DEFAULT (unixepoch())`, or
//! lacking the `cwd` or `created_at` column) is rebuilt in one transaction, ids and rows
//! kept, exactly as the agent does; a missing FTS index or trigger is added (and the index
//! rebuilt). Connections use WAL, `synchronous=FULL` and a busy timeout, so several
//! processes can write at once.
//!
//! Inserts never make the caller wait: each database has a writer thread fed by a
//! channel, which writes what has queued up in one transaction. Reads on a database first
//! wait for its queue to drain (a process reads its own writes), and [`HistoryDbs::finish`]
//! waits for every queue before the CLI exits, so an insert is on disk when the command
//! returns.

use crate::bindings::xcsh::session::history::{HistoryEntry, HistoryError, Host};
use crate::bindings::xcsh::session::storage::StorageError;
use crate::fshost::FsHost;
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use xcsh_session::history::sql::{
    schema_upgrade, SchemaFacts, COLUMNS, INSERT, LAST_PROMPT, OBJECTS, RECENT, RECENT_CWD, SEARCH,
    SEARCH_CWD, TABLE_SQL,
};

/// How long a connection waits for another writer's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long opening or writing retries on `SQLITE_BUSY` that the busy handler does not
/// cover (switching to WAL while another process creates the file).
const BUSY_RETRY_FOR: Duration = Duration::from_secs(20);

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Run `f` again while it fails with `SQLITE_BUSY`, for at most [`BUSY_RETRY_FOR`].
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_RETRY_FOR => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

/// What [`schema_upgrade`] decides on, read from `conn`.
fn schema_facts(conn: &Connection) -> rusqlite::Result<SchemaFacts> {
    let table_sql = conn.query_row(TABLE_SQL, [], |r| r.get(0)).optional()?;
    let columns = conn
        .prepare(COLUMNS)?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let objects = conn
        .prepare(OBJECTS)?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(SchemaFacts {
        table_sql,
        columns,
        objects,
    })
}

/// Create the schema, migrate an older one, or add what is missing ([`schema_upgrade`]);
/// in one write transaction, re-checked inside it (another process may have done it
/// meanwhile).
fn ensure_schema(conn: &mut Connection) -> rusqlite::Result<()> {
    if schema_upgrade(&schema_facts(conn)?).is_none() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Some(sql) = schema_upgrade(&schema_facts(&tx)?) {
        tx.execute_batch(&sql)?;
    }
    tx.commit()
}

/// Open (creating when missing) `path` and bring its schema up to date.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    retry_busy(|| {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA synchronous=FULL;")?;
        ensure_schema(&mut conn)?;
        Ok(conn)
    })
}

/// One queued insert.
#[derive(Debug, Clone)]
struct Row {
    prompt: String,
    cwd: Option<String>,
    created_at: i64,
}

enum Msg {
    Row(Row),
    /// Answer once everything queued before is written: the first write error, if any.
    Flush(mpsc::Sender<Result<(), String>>),
}

fn insert_batch(conn: &mut Connection, rows: &[Row]) -> rusqlite::Result<()> {
    retry_busy(|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut stmt = tx.prepare(INSERT)?;
            for r in rows {
                stmt.execute(params![r.prompt, r.created_at, r.cwd])?;
            }
        }
        tx.commit()
    })
}

/// The writer thread of one database: writes whatever has queued up in one
/// transaction; keeps the first error and reports it to every flush and at the end.
fn writer(path: PathBuf, rx: mpsc::Receiver<Msg>) -> Result<(), String> {
    let mut conn: Option<Connection> = None;
    let mut failed: Option<String> = None;
    while let Ok(first) = rx.recv() {
        let mut rows = Vec::new();
        let mut flushes = Vec::new();
        let mut next = Some(first);
        while let Some(msg) = next {
            match msg {
                Msg::Row(r) => rows.push(r),
                Msg::Flush(ack) => flushes.push(ack),
            }
            next = rx.try_recv().ok();
        }
        if !rows.is_empty() {
            let written = match conn.as_mut() {
                Some(c) => insert_batch(c, &rows),
                None => open(&path).and_then(|mut c| {
                    let r = insert_batch(&mut c, &rows);
                    conn = Some(c);
                    r
                }),
            };
            if let Err(e) = written {
                let lost = rows.len();
                failed.get_or_insert_with(|| {
                    format!("{}: {lost} prompt(s) not written: {e}", path.display())
                });
            }
        }
        for ack in flushes {
            let _ = ack.send(failed.clone().map_or(Ok(()), Err));
        }
    }
    failed.map_or(Ok(()), Err)
}

struct Writer {
    tx: mpsc::Sender<Msg>,
    handle: JoinHandle<Result<(), String>>,
}

/// The open history databases of one CLI run: a reading connection and a writer thread
/// per database.
#[derive(Default)]
pub struct HistoryDbs {
    readers: HashMap<PathBuf, Connection>,
    writers: HashMap<PathBuf, Writer>,
}

fn other(e: impl std::fmt::Display) -> HistoryError {
    HistoryError::Other(e.to_string())
}

fn int(v: ValueRef<'_>) -> i64 {
    match v {
        ValueRef::Integer(i) => i,
        ValueRef::Real(f) => f as i64,
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
        ValueRef::Null | ValueRef::Blob(_) => 0,
    }
}

fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Null => None,
    }
}

fn entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<HistoryEntry> {
    Ok(HistoryEntry {
        id: r.get(0)?,
        prompt: text(r.get_ref(1)?).unwrap_or_default(),
        created_at: int(r.get_ref(2)?),
        cwd: text(r.get_ref(3)?),
    })
}

impl HistoryDbs {
    pub fn new() -> HistoryDbs {
        HistoryDbs::default()
    }

    /// Queue a row for `path`'s writer thread (started on first use).
    fn enqueue(&mut self, path: PathBuf, row: Row) -> Result<(), HistoryError> {
        let w = match self.writers.entry(path.clone()) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let (tx, rx) = mpsc::channel();
                let handle = std::thread::Builder::new()
                    .name("history-writer".into())
                    .spawn(move || writer(path, rx))
                    .map_err(other)?;
                v.insert(Writer { tx, handle })
            }
        };
        w.tx.send(Msg::Row(row))
            .map_err(|_| other("the history writer stopped"))
    }

    /// Wait until everything queued for `path` is written.
    fn flush(&mut self, path: &Path) -> Result<(), HistoryError> {
        let Some(w) = self.writers.get(path) else {
            return Ok(());
        };
        let (ack, done) = mpsc::channel();
        w.tx.send(Msg::Flush(ack))
            .map_err(|_| other("the history writer stopped"))?;
        done.recv()
            .map_err(|_| other("the history writer stopped"))?
            .map_err(HistoryError::Other)
    }

    /// The reading connection of `path` after its queue drained; `None` when the
    /// database does not exist (reads never create it).
    fn reader(&mut self, path: &Path) -> Result<Option<&Connection>, HistoryError> {
        self.flush(path)?;
        if !self.readers.contains_key(path) {
            if !path.exists() {
                return Ok(None);
            }
            let conn = open(path).map_err(|e| other(format!("{}: {e}", path.display())))?;
            self.readers.insert(path.to_path_buf(), conn);
        }
        Ok(self.readers.get(path))
    }

    /// Wait for every writer to finish its queue; the first write error, if any.
    pub fn finish(&mut self) -> Result<(), String> {
        let mut first = Ok(());
        for (_, w) in self.writers.drain() {
            drop(w.tx);
            let r = w
                .handle
                .join()
                .unwrap_or_else(|_| Err("the history writer panicked".to_string()));
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    fn query(
        &mut self,
        path: &Path,
        sql: &str,
        args: &[&dyn rusqlite::ToSql],
        query_errors: bool,
    ) -> Result<Vec<HistoryEntry>, HistoryError> {
        let Some(conn) = self.reader(path)? else {
            return Ok(Vec::new());
        };
        let run = || -> rusqlite::Result<Vec<HistoryEntry>> {
            let mut stmt = conn.prepare(sql)?;
            let rows = stmt.query_map(args, entry)?;
            rows.collect()
        };
        retry_busy(run).map_err(|e| match e.sqlite_error_code() {
            // A malformed MATCH expression: `fts5: syntax error near ...`, `no such
            // column: x`, `unterminated string`.
            Some(ErrorCode::Unknown) if query_errors => HistoryError::InvalidQuery(match &e {
                rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
                _ => e.to_string(),
            }),
            _ => other(format!("{}: {e}", path.display())),
        })
    }
}

impl Drop for HistoryDbs {
    /// Queued rows are written even when the command ends early (an error or a trap).
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

fn denied(e: StorageError) -> HistoryError {
    match e {
        StorageError::PermissionDenied(m) => HistoryError::PermissionDenied(m),
        StorageError::NotFound(m) => HistoryError::Other(format!("not found: {m}")),
        StorageError::AlreadyExists(m) | StorageError::Other(m) => HistoryError::Other(m),
    }
}

impl FsHost {
    /// The rows of a read of `db`: `sql` with `args` then the limit, or with a cwd filter
    /// `sql_cwd` with the cwd after them. `query_errors`: as in [`HistoryDbs::query`].
    fn select(
        &mut self,
        db: &str,
        (sql, sql_cwd): (&str, &str),
        args: &[&dyn rusqlite::ToSql],
        limit: u32,
        cwd: Option<String>,
        query_errors: bool,
    ) -> Result<Vec<HistoryEntry>, HistoryError> {
        let path = self.path(db).map_err(denied)?;
        let limit = i64::from(limit);
        let mut params = args.to_vec();
        params.push(&limit);
        let sql = match &cwd {
            Some(c) => {
                params.push(c);
                sql_cwd
            }
            None => sql,
        };
        self.history.query(&path, sql, &params, query_errors)
    }
}

impl Host for FsHost {
    fn add(
        &mut self,
        db: String,
        prompt: String,
        cwd: Option<String>,
        created_at: i64,
    ) -> Result<(), HistoryError> {
        let path = self.write_path(&db).map_err(denied)?;
        self.history.enqueue(
            path,
            Row {
                prompt,
                cwd,
                created_at,
            },
        )
    }

    fn search(
        &mut self,
        db: String,
        query: String,
        limit: u32,
        cwd: Option<String>,
    ) -> Result<Vec<HistoryEntry>, HistoryError> {
        self.select(&db, (SEARCH, SEARCH_CWD), &[&query], limit, cwd, true)
    }

    fn recent(
        &mut self,
        db: String,
        limit: u32,
        cwd: Option<String>,
    ) -> Result<Vec<HistoryEntry>, HistoryError> {
        self.select(&db, (RECENT, RECENT_CWD), &[], limit, cwd, false)
    }

    fn last_prompt(&mut self, db: String) -> Result<Option<String>, HistoryError> {
        let path = self.path(&db).map_err(denied)?;
        let Some(conn) = self.history.reader(&path)? else {
            return Ok(None);
        };
        retry_busy(|| {
            conn.query_row(LAST_PROMPT, [], |r| Ok(text(r.get_ref(0)?)))
                .optional()
        })
        .map(Option::flatten)
        .map_err(|e| other(format!("{}: {e}", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcsh_session::history::sql::{CREATE_TABLE, SCHEMA_OBJECTS};

    fn objects(conn: &Connection) -> Vec<String> {
        conn.prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn a_new_database_gets_the_agents_schema_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let conn = open(&path).unwrap();
        let sql = schema_facts(&conn).unwrap().table_sql.unwrap();
        assert!(
            sql.contains("CAST(strftime('%s','now') AS INTEGER)"),
            "{sql}"
        );
        assert!(!sql.contains("unixepoch("));
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let names = objects(&conn);
        for o in SCHEMA_OBJECTS {
            assert!(names.iter().any(|n| n == o), "{o} missing: {names:?}");
        }
        // Opening again changes nothing.
        drop(conn);
        let conn = open(&path).unwrap();
        assert_eq!(objects(&conn), names);
    }

    #[test]
    fn triggers_keep_the_fts_index_in_sync_on_update_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(&dir.path().join("h.db")).unwrap();
        conn.execute_batch(
            "INSERT INTO history (prompt, created_at) VALUES ('alpha beta', 1), ('gamma', 2);
             UPDATE history SET prompt = 'delta' WHERE prompt = 'gamma';
             DELETE FROM history WHERE prompt = 'alpha beta';",
        )
        .unwrap();
        let count = |q: &str| -> i64 {
            conn.query_row(
                "SELECT count(*) FROM history_fts WHERE history_fts MATCH ?1",
                [q],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert_eq!(count("alpha"), 0);
        assert_eq!(count("gamma"), 0);
        assert_eq!(count("delta"), 1);
        conn.execute_batch("INSERT INTO history_fts(history_fts) VALUES('integrity-check');")
            .unwrap();
    }

    #[test]
    fn a_database_without_the_fts_index_gets_one_with_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(CREATE_TABLE).unwrap();
            c.execute_batch(
                "INSERT INTO history (prompt, created_at, cwd) VALUES ('old words', 5, '/w');",
            )
            .unwrap();
        }
        let conn = open(&path).unwrap();
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM history_fts WHERE history_fts MATCH 'old'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1);
    }
}
