//! Helpers shared by the history unit tests: a plain in-memory store (the double of the
//! SQLite database; its search is a prefix match of every query word, enough to test
//! the logic around the store, not FTS5) and a store filled with prompts.

use super::{
    add, tokenize, HistoryEntry, HistoryResult, HistoryRows, HistoryStore, LastPromptCache,
    NewHistoryRow,
};
use std::cell::RefCell;

/// Rows in insertion order, ids from 1.
#[derive(Debug, Default)]
pub struct RowsStore {
    rows: RefCell<Vec<HistoryEntry>>,
}

impl RowsStore {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn rows(&self) -> Vec<HistoryEntry> {
        self.rows.borrow().clone()
    }

    /// Newest first (`created_at`, then id), in `cwd` when given, at most `limit`.
    fn newest(
        &self,
        limit: usize,
        cwd: Option<&str>,
        keep: impl Fn(&HistoryEntry) -> bool,
    ) -> Vec<HistoryEntry> {
        let mut rows: Vec<HistoryEntry> = self
            .rows
            .borrow()
            .iter()
            .filter(|r| cwd.is_none() || r.cwd.as_deref() == cwd)
            .filter(|r| keep(r))
            .cloned()
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse((r.created_at, r.id)));
        rows.truncate(limit);
        rows
    }
}

impl HistoryStore for RowsStore {
    fn add(&self, row: NewHistoryRow<'_>) -> HistoryResult<()> {
        let mut rows = self.rows.borrow_mut();
        let id = rows.len() as i64 + 1;
        rows.push(HistoryEntry {
            id,
            prompt: row.prompt.to_string(),
            created_at: row.created_at,
            cwd: row.cwd.map(str::to_string),
        });
        Ok(())
    }

    /// Rows with a word starting with each query word (`*` and quotes ignored).
    fn search(&self, query: &str, limit: usize, cwd: Option<&str>) -> HistoryRows {
        let words = tokenize(query);
        Ok(self.newest(limit, cwd, |r| {
            let have = tokenize(&r.prompt);
            words
                .iter()
                .all(|w| have.iter().any(|h| h.starts_with(w.as_str())))
        }))
    }

    fn recent(&self, limit: usize, cwd: Option<&str>) -> HistoryRows {
        Ok(self.newest(limit, cwd, |_| true))
    }

    fn last_prompt(&self) -> HistoryResult<Option<String>> {
        Ok(self.rows.borrow().last().map(|r| r.prompt.clone()))
    }
}

pub fn prompts(rows: &[HistoryEntry]) -> Vec<&str> {
    rows.iter().map(|r| r.prompt.as_str()).collect()
}

/// A store with prompts added at t = 1000, 1001, ... seconds.
pub fn store_with(items: &[(&str, Option<&str>)]) -> RowsStore {
    let store = RowsStore::new();
    let mut cache = LastPromptCache::new();
    for (i, (p, cwd)) in items.iter().enumerate() {
        add(&store, &mut cache, p, *cwd, 1000 + i as i64).expect("add");
    }
    store
}
