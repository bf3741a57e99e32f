//! Prompt history: the parts of the agent's `HistoryStorage` that are not SQL.
//!
//! The agent keeps every prompt the user submits in `<agent-dir>/history.db` (SQLite,
//! table `history(id, prompt, created_at, cwd)` with the FTS5 index `history_fts`), for
//! recall and search in the prompt editor. It is separate from the session files.
//!
//! This module holds what every host shares, and does no I/O itself: the database lives
//! behind the [`HistoryStore`] port (SQLite in the native CLI host, over the WIT import
//! `xcsh:session/history`; in the browser, SQLite compiled to wasm behind a JS store). The
//! SQL those SQLite hosts run, schema and queries, is written once in [`sql`].
//!
//! - **What is stored.** A prompt is trimmed (JavaScript `String.prototype.trim`
//!   semantics) and stored trimmed; an empty or all-blank prompt is ignored.
//! - **Consecutive duplicates are not stored twice** ([`LastPromptCache`]): a prompt equal
//!   (exactly, after trimming) to the last prompt stored is skipped, whatever its `cwd`.
//!   The cache is seeded from the database's newest row (highest id) on the first add, so
//!   it also holds across processes that run one after the other. A prompt that was
//!   stored before, but not last, is stored again.
//! - **`created_at` is epoch seconds**, as the agent writes it (its schema's default is
//!   `CAST(strftime('%s','now') AS INTEGER)`; its older schema's `unixepoch()` is seconds
//!   too). Values from `10^11` up are read as milliseconds ([`created_at_ms`]), so a
//!   database written by a tool that stored milliseconds still shows the right dates.
//! - **Queries are FTS5 syntax**, passed through to SQLite unchanged (`pars*`, `"exact
//!   phrase"`, `a OR b`, `a NOT b`, `NEAR(a b)`, `prompt:word`, `^start`). A syntax error
//!   is [`HistoryError::InvalidQuery`]. [`prefix_query`] turns plain words into a safe
//!   query (`foo bar` → `"foo"* "bar"*`) for callers that do not want the syntax.
//! - **Limits**: `0` gives an empty list; more than [`MAX_LIMIT`] is clamped to it.
//! - **An empty `cwd`** is the same as none (no cwd stored; no filter).
//! - **JSON**: `[{"id", "prompt", "createdAt", "cwd"}]`, `createdAt` ISO-8601 in UTC
//!   (`2026-02-16T10:20:30.000Z`), `cwd` `null` when the row has none. Search results
//!   are best match first (FTS5 `bm25`, ties newest first); recent ones newest first
//!   (`created_at`, then id).

mod import;
mod json;
mod logic;
mod query;
pub mod sql;
#[cfg(test)]
mod test_support;

pub use import::{prompts_of_sessions, session_prompts, user_text, SessionPrompt, SessionPrompts};
pub use json::{add_at_ms, add_json, entries_json, recent_json, search_json};
pub use logic::{
    add, clamp_limit, created_at_ms, normalize_cwd, normalize_prompt, recent, search, Added,
    Admission, LastPromptCache,
};
pub use query::{prefix_query, tokenize};

/// The database's file name in the agent directory.
pub const HISTORY_DB_FILE: &str = "history.db";

/// The most rows one search or recent list returns (the agent's bound).
pub const MAX_LIMIT: usize = 1000;

/// `created_at` values from here up are epoch milliseconds, below it epoch seconds
/// (10^11 s is the year 5138; 10^11 ms is 1973).
pub const MS_THRESHOLD: i64 = 100_000_000_000;

/// `<agent-dir>/history.db`.
pub fn db_path(agent_dir: &str) -> String {
    if agent_dir.ends_with('/') {
        format!("{agent_dir}{HISTORY_DB_FILE}")
    } else {
        format!("{agent_dir}/{HISTORY_DB_FILE}")
    }
}

/// One stored prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    pub id: i64,
    pub prompt: String,
    /// As stored: epoch seconds (see [`created_at_ms`]).
    pub created_at: i64,
    pub cwd: Option<String>,
}

impl HistoryEntry {
    /// When the prompt was entered, epoch seconds (a value stored in milliseconds, see
    /// [`created_at_ms`], rounded down to its second).
    pub fn created_at_seconds(&self) -> i64 {
        created_at_ms(self.created_at).div_euclid(1000)
    }
}

/// A row to insert (the store assigns the id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewHistoryRow<'a> {
    /// Already trimmed and non-empty.
    pub prompt: &'a str,
    pub cwd: Option<&'a str>,
    /// Epoch seconds.
    pub created_at: i64,
}

/// A failed history operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// The FTS5 query is malformed (SQLite's message, e.g. `fts5: syntax error near "("`).
    #[error("invalid history query: {0}")]
    InvalidQuery(String),
    /// The database is outside what the host allows, or the command may not write.
    #[error("history: permission denied: {0}")]
    PermissionDenied(String),
    #[error("history: {0}")]
    Other(String),
}

pub type HistoryResult<T> = Result<T, HistoryError>;

/// What a history read returns: the rows, in the order the read defines.
pub type HistoryRows = HistoryResult<Vec<HistoryEntry>>;

/// The history database port: one database.
///
/// `add` may return before the row is written (the native host queues it to a writer
/// thread so the agent's turn never waits on SQLite); reads made afterwards through the
/// same store see it. `limit` is already clamped to `1..=MAX_LIMIT` by the callers in
/// this module, `query` is non-blank, `cwd` is `None` or non-empty.
pub trait HistoryStore {
    fn add(&self, row: NewHistoryRow<'_>) -> HistoryResult<()>;
    /// Rows matching the FTS5 `query` (restricted to `cwd` when given), best match first.
    fn search(&self, query: &str, limit: usize, cwd: Option<&str>) -> HistoryRows;
    /// The newest rows (of `cwd` when given), newest first.
    fn recent(&self, limit: usize, cwd: Option<&str>) -> HistoryRows;
    /// The prompt of the row with the highest id (the last one inserted).
    fn last_prompt(&self) -> HistoryResult<Option<String>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_path_is_in_the_agent_dir() {
        assert_eq!(db_path("/h/.xcsh/agent"), "/h/.xcsh/agent/history.db");
        assert_eq!(db_path("/h/.xcsh/agent/"), "/h/.xcsh/agent/history.db");
    }
}
