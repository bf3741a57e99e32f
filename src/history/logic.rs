//! The history logic every host shares: prompt normalization, the consecutive-duplicate
//! cache, and `add` / `search` / `recent` over the [`HistoryStore`] port.

use super::{HistoryResult, HistoryRows, HistoryStore, NewHistoryRow, MAX_LIMIT, MS_THRESHOLD};

/// `String.prototype.trim`: Unicode white space plus the BOM.
fn trim_js(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// The prompt as stored (trimmed), `None` when it is blank.
pub fn normalize_prompt(prompt: &str) -> Option<&str> {
    let t = trim_js(prompt);
    (!t.is_empty()).then_some(t)
}

/// An empty cwd is no cwd.
pub fn normalize_cwd(cwd: Option<&str>) -> Option<&str> {
    cwd.filter(|c| !c.is_empty())
}

/// A requested limit in `0..=MAX_LIMIT`.
pub fn clamp_limit(limit: usize) -> usize {
    limit.min(MAX_LIMIT)
}

/// `created_at` as epoch milliseconds: seconds are scaled, values already in
/// milliseconds (from [`MS_THRESHOLD`] up) kept.
pub fn created_at_ms(created_at: i64) -> i64 {
    if created_at.unsigned_abs() >= MS_THRESHOLD as u64 {
        created_at
    } else {
        created_at.saturating_mul(1000)
    }
}

/// The last-prompt cache that keeps consecutive identical prompts out of the database.
///
/// It is unseeded until the first add, which seeds it from the store's last row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastPromptCache {
    seeded: bool,
    last: Option<String>,
}

/// What [`LastPromptCache::check`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission<'a> {
    /// Store this (the trimmed prompt).
    Store(&'a str),
    /// Blank: ignored.
    Empty,
    /// Equal to the last prompt stored: ignored.
    Duplicate,
}

impl LastPromptCache {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_seeded(&self) -> bool {
        self.seeded
    }

    /// Set the last prompt from the store (trimmed, as it would be compared).
    pub fn seed(&mut self, last: Option<String>) {
        self.last = last.and_then(|p| normalize_prompt(&p).map(str::to_string));
        self.seeded = true;
    }

    /// The last prompt stored, if known.
    pub fn last(&self) -> Option<&str> {
        self.last.as_deref()
    }

    /// Whether `prompt` is to be stored; changes nothing.
    pub fn check<'a>(&self, prompt: &'a str) -> Admission<'a> {
        match normalize_prompt(prompt) {
            None => Admission::Empty,
            Some(t) if self.last.as_deref() == Some(t) => Admission::Duplicate,
            Some(t) => Admission::Store(t),
        }
    }

    /// Record that `trimmed` was stored.
    pub fn record(&mut self, trimmed: &str) {
        self.last = Some(trimmed.to_string());
        self.seeded = true;
    }
}

/// The outcome of [`add`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    Stored,
    Empty,
    Duplicate,
}

/// Add a prompt: trim, skip blanks and consecutive duplicates, hand the row to the store.
/// `now_s` is the capture time, epoch seconds.
pub fn add(
    store: &dyn HistoryStore,
    cache: &mut LastPromptCache,
    prompt: &str,
    cwd: Option<&str>,
    now_s: i64,
) -> HistoryResult<Added> {
    if normalize_prompt(prompt).is_none() {
        return Ok(Added::Empty);
    }
    if !cache.is_seeded() {
        cache.seed(store.last_prompt()?);
    }
    let trimmed = match cache.check(prompt) {
        Admission::Store(t) => t,
        Admission::Empty => return Ok(Added::Empty),
        Admission::Duplicate => return Ok(Added::Duplicate),
    };
    store.add(NewHistoryRow {
        prompt: trimmed,
        cwd: normalize_cwd(cwd),
        created_at: now_s,
    })?;
    cache.record(trimmed);
    Ok(Added::Stored)
}

/// Search with an FTS5 query; a blank query or a zero limit gives no rows.
pub fn search(
    store: &dyn HistoryStore,
    query: &str,
    limit: usize,
    cwd: Option<&str>,
) -> HistoryRows {
    let limit = clamp_limit(limit);
    if limit == 0 || trim_js(query).is_empty() {
        return Ok(Vec::new());
    }
    store.search(query, limit, normalize_cwd(cwd))
}

/// The newest rows; a zero limit gives no rows.
pub fn recent(store: &dyn HistoryStore, limit: usize, cwd: Option<&str>) -> HistoryRows {
    let limit = clamp_limit(limit);
    if limit == 0 {
        return Ok(Vec::new());
    }
    store.recent(limit, normalize_cwd(cwd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_error::{ApiError, ErrorKind};
    use crate::history::test_support::RowsStore;
    use crate::history::test_support::{prompts, store_with};
    use crate::history::HistoryError;

    #[test]
    fn cache_skips_consecutive_duplicates_after_trimming_and_blanks() {
        let mut c = LastPromptCache::new();
        assert!(!c.is_seeded());
        c.seed(None);
        assert_eq!(
            c.check("  fix the parser \n"),
            Admission::Store("fix the parser")
        );
        c.record("fix the parser");
        assert_eq!(c.check("fix the parser"), Admission::Duplicate);
        assert_eq!(c.check("\tfix the parser  "), Admission::Duplicate);
        // Case and inner spaces count.
        assert_eq!(
            c.check("Fix the parser"),
            Admission::Store("Fix the parser")
        );
        assert_eq!(
            c.check("fix  the parser"),
            Admission::Store("fix  the parser")
        );
        assert_eq!(c.check(""), Admission::Empty);
        assert_eq!(c.check(" \n\t\u{feff}\u{a0}"), Admission::Empty);
        // Checking changes nothing; recording does.
        assert_eq!(c.last(), Some("fix the parser"));
        c.record("other");
        assert_eq!(
            c.check("fix the parser"),
            Admission::Store("fix the parser")
        );
    }

    #[test]
    fn cache_is_seeded_from_the_store_on_the_first_add() {
        let store = RowsStore::new();
        store
            .add(NewHistoryRow {
                prompt: "from an earlier process",
                cwd: None,
                created_at: 5,
            })
            .expect("add");
        let mut cache = LastPromptCache::new();
        let r = add(&store, &mut cache, " from an earlier process ", None, 6);
        assert_eq!(r, Ok(Added::Duplicate));
        assert!(cache.is_seeded());
        assert_eq!(store.rows().len(), 1);
    }

    #[test]
    fn add_stores_trimmed_prompts_and_only_non_consecutive_repeats() {
        let store = RowsStore::new();
        let mut cache = LastPromptCache::new();
        let mut add = |p: &str| add(&store, &mut cache, p, Some("/w"), 7).expect("add");
        assert_eq!(add("a"), Added::Stored);
        assert_eq!(add(" a "), Added::Duplicate);
        assert_eq!(add("   "), Added::Empty);
        assert_eq!(add("b"), Added::Stored);
        assert_eq!(add("a"), Added::Stored);
        assert_eq!(add("a"), Added::Duplicate);
        let rows = store.rows();
        assert_eq!(prompts(&rows), ["a", "b", "a"]);
        assert_eq!(rows[0].cwd.as_deref(), Some("/w"));
        assert_eq!(rows[0].created_at, 7);
    }

    #[test]
    fn a_duplicate_in_another_cwd_is_still_a_duplicate_and_empty_cwd_is_none() {
        let store = RowsStore::new();
        let mut cache = LastPromptCache::new();
        assert_eq!(add(&store, &mut cache, "x", Some(""), 1), Ok(Added::Stored));
        assert_eq!(
            add(&store, &mut cache, "x", Some("/b"), 2),
            Ok(Added::Duplicate)
        );
        assert_eq!(store.rows()[0].cwd, None);
    }

    #[test]
    fn a_failed_insert_does_not_update_the_cache() {
        struct Failing;
        impl HistoryStore for Failing {
            fn add(&self, _: NewHistoryRow<'_>) -> HistoryResult<()> {
                Err(HistoryError::Other("disk full".into()))
            }
            fn search(&self, _: &str, _: usize, _: Option<&str>) -> HistoryRows {
                Ok(vec![])
            }
            fn recent(&self, _: usize, _: Option<&str>) -> HistoryRows {
                Ok(vec![])
            }
            fn last_prompt(&self) -> HistoryResult<Option<String>> {
                Ok(None)
            }
        }
        let mut cache = LastPromptCache::new();
        let e = add(&Failing, &mut cache, "p", None, 1).unwrap_err();
        assert_eq!(e.to_string(), "history: disk full");
        assert_eq!(cache.last(), None);
        let api: ApiError = e.into();
        assert_eq!(api.kind, ErrorKind::Storage);
    }

    #[test]
    fn cwd_filter_limit_and_ordering() {
        let s = store_with(&[
            ("one", Some("/a")),
            ("two", Some("/b")),
            ("three", Some("/a")),
            ("four", None),
            ("five", Some("/a")),
        ]);
        assert_eq!(
            prompts(&recent(&s, 10, None).unwrap()),
            ["five", "four", "three", "two", "one"]
        );
        assert_eq!(
            prompts(&recent(&s, 2, Some("/a")).unwrap()),
            ["five", "three"]
        );
        assert_eq!(
            prompts(&recent(&s, 10, Some("")).unwrap()).len(),
            5,
            "empty cwd: no filter"
        );
        assert!(recent(&s, 0, None).unwrap().is_empty());
        assert!(recent(&s, 10, Some("/none")).unwrap().is_empty());
        assert_eq!(
            prompts(&search(&s, "t*", 10, Some("/a")).unwrap()),
            ["three"]
        );
        assert_eq!(search(&s, "t", 1, None).unwrap().len(), 1);
        assert!(search(&s, "   ", 10, None).unwrap().is_empty());
        assert!(search(&s, "one", 0, None).unwrap().is_empty());
        // Same second: the higher id is newer.
        let t = RowsStore::new();
        let mut cache = LastPromptCache::new();
        for p in ["x", "y", "z"] {
            add(&t, &mut cache, p, None, 50).unwrap();
        }
        assert_eq!(prompts(&recent(&t, 3, None).unwrap()), ["z", "y", "x"]);
    }

    #[test]
    fn limits_are_clamped() {
        assert_eq!(clamp_limit(5), 5);
        assert_eq!(clamp_limit(usize::MAX), MAX_LIMIT);
        let s = RowsStore::new();
        let mut cache = LastPromptCache::new();
        for i in 0..MAX_LIMIT + 5 {
            add(&s, &mut cache, &format!("p{i}"), None, i as i64).unwrap();
        }
        assert_eq!(recent(&s, usize::MAX, None).unwrap().len(), MAX_LIMIT);
    }

    #[test]
    fn created_at_is_seconds_and_milliseconds_are_recognised() {
        assert_eq!(created_at_ms(1_700_000_000), 1_700_000_000_000);
        assert_eq!(created_at_ms(1_700_000_000_123), 1_700_000_000_123);
        assert_eq!(created_at_ms(0), 0);
    }
}
