//! The in-memory [`HistoryStore`]: the test double, and the store of hosts without SQLite.

use super::fts_query::parse;
use super::fts_rank::{matches, Bm25};
use super::{tokenize, HistoryEntry, HistoryError, HistoryResult, HistoryStore, NewHistoryRow};
use std::cell::{Cell, RefCell};

/// An in-memory [`HistoryStore`], for tests and for hosts without SQLite (the browser).
///
/// Search **approximates** FTS5: the query is parsed as FTS5 syntax (phrases, `*`
/// prefixes, `^`, `+`, AND/OR/NOT, parentheses, the `prompt` column filter; NEAR is taken
/// as "all of these phrases", ignoring the distance), text is split into lowercased
/// letter/number runs like the `unicode61` tokenizer but without its diacritic folding,
/// and ranking is an Okapi BM25 (k1 = 1.2, b = 0.75) like FTS5's `bm25()`, ties newest
/// first. Rows live as long as the store.
#[derive(Debug, Default)]
pub struct MemoryHistory {
    rows: RefCell<Vec<HistoryEntry>>,
    next_id: Cell<i64>,
}

impl MemoryHistory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every row, in insertion order.
    pub fn rows(&self) -> Vec<HistoryEntry> {
        self.rows.borrow().clone()
    }
}

/// Newest first: `created_at`, then id.
fn newest_first(a: &HistoryEntry, b: &HistoryEntry) -> std::cmp::Ordering {
    (b.created_at, b.id).cmp(&(a.created_at, a.id))
}

impl HistoryStore for MemoryHistory {
    fn add(&self, row: NewHistoryRow<'_>) -> HistoryResult<()> {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        self.rows.borrow_mut().push(HistoryEntry {
            id,
            prompt: row.prompt.to_string(),
            created_at: row.created_at,
            cwd: row.cwd.map(str::to_string),
        });
        Ok(())
    }

    fn search(
        &self,
        query: &str,
        limit: usize,
        cwd: Option<&str>,
    ) -> HistoryResult<Vec<HistoryEntry>> {
        let expr = parse(query).map_err(HistoryError::InvalidQuery)?;
        let rows = self.rows.borrow();
        let docs: Vec<Vec<String>> = rows.iter().map(|r| tokenize(&r.prompt)).collect();
        // Statistics over the whole table, as FTS5 keeps them.
        let bm25 = Bm25::new(&expr, &docs);
        let mut hits: Vec<(f64, &HistoryEntry)> = rows
            .iter()
            .zip(&docs)
            .filter(|(r, _)| cwd.is_none() || r.cwd.as_deref() == cwd)
            .filter(|(_, d)| matches(&expr, d))
            .map(|(r, d)| (bm25.score(d), r))
            .collect();
        hits.sort_by(|(sa, a), (sb, b)| sb.total_cmp(sa).then_with(|| newest_first(a, b)));
        Ok(hits
            .into_iter()
            .take(limit)
            .map(|(_, r)| r.clone())
            .collect())
    }

    fn recent(&self, limit: usize, cwd: Option<&str>) -> HistoryResult<Vec<HistoryEntry>> {
        let mut rows: Vec<HistoryEntry> = self
            .rows
            .borrow()
            .iter()
            .filter(|r| cwd.is_none() || r.cwd.as_deref() == cwd)
            .cloned()
            .collect();
        rows.sort_by(newest_first);
        rows.truncate(limit);
        Ok(rows)
    }

    fn last_prompt(&self) -> HistoryResult<Option<String>> {
        Ok(self
            .rows
            .borrow()
            .iter()
            .max_by_key(|r| r.id)
            .map(|r| r.prompt.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_error::{ApiError, ErrorKind};
    use crate::history::search;
    use crate::history::test_support::{prompts, store_with};

    #[test]
    fn memory_search_handles_prefixes_phrases_and_operators() {
        let s = store_with(&[
            ("parse the config file", Some("/a")),
            ("the parser fails on empty input", Some("/a")),
            ("write an exact phrase here", Some("/b")),
            ("phrase exact, reversed", Some("/b")),
            ("unrelated", None),
        ]);
        let q = |query: &str| {
            let rows = search(&s, query, 10, None).expect(query);
            let mut p: Vec<String> = prompts(&rows).iter().map(|s| s.to_string()).collect();
            p.sort();
            p
        };
        assert_eq!(
            q("pars*"),
            ["parse the config file", "the parser fails on empty input"]
        );
        assert_eq!(q("parse"), ["parse the config file"]);
        assert_eq!(q("\"exact phrase\""), ["write an exact phrase here"]);
        assert_eq!(
            q("exact phrase"),
            ["phrase exact, reversed", "write an exact phrase here"]
        );
        assert_eq!(q("exact + phrase"), ["write an exact phrase here"]);
        assert_eq!(q("\"exact ph\"*"), ["write an exact phrase here"]);
        assert_eq!(
            q("parse OR unrelated"),
            ["parse the config file", "unrelated"]
        );
        assert_eq!(q("pars* NOT config"), ["the parser fails on empty input"]);
        assert_eq!(
            q("pars* AND (empty OR nothing)"),
            ["the parser fails on empty input"]
        );
        assert_eq!(q("^the"), ["the parser fails on empty input"]);
        assert_eq!(q("prompt:unrelated"), ["unrelated"]);
        assert_eq!(
            q("NEAR(exact phrase, 3)"),
            ["phrase exact, reversed", "write an exact phrase here"]
        );
        assert_eq!(q("PARSE"), ["parse the config file"]);
        assert_eq!(
            q("prompt:(parse OR unrelated)"),
            ["parse the config file", "unrelated"]
        );
        assert_eq!(q("{prompt} : parse"), ["parse the config file"]);
        assert_eq!(
            q("parse \"\""),
            ["parse the config file"],
            "an empty phrase is dropped"
        );
        assert_eq!(
            q("pars*config"),
            ["parse the config file"],
            "`a*b` is `a* b`"
        );
        assert_eq!(q("(pars* OR exact) NOT config").len(), 3);
        assert!(q("\"\"").is_empty());
        assert!(q("pars* -prompt:x").is_empty());
        assert!(q("-prompt:parse").is_empty());
        assert!(q("nothing*").is_empty());
    }

    #[test]
    fn memory_search_rejects_malformed_queries_like_fts5() {
        let s = store_with(&[("x", None)]);
        for bad in [
            "(",
            "a)",
            "\"open",
            "AND x",
            "NOT x",
            "x OR",
            "x NOT",
            "foo-bar",
            "a:b",
            "NEAR(a b,)",
            "x . y",
            "x (y)",
            "(x) y",
            "+x",
            "x ,",
            "near(a b)",
            "x +",
        ] {
            match search(&s, bad, 10, None) {
                Err(HistoryError::InvalidQuery(m)) => assert!(!m.is_empty()),
                other => panic!("{bad:?}: expected invalid-query, got {other:?}"),
            }
        }
        let e: ApiError = search(&s, "(", 1, None).unwrap_err().into();
        assert_eq!(e.kind, ErrorKind::InvalidInput);
        assert!(
            e.message
                .starts_with("invalid history query: fts5: syntax error"),
            "{}",
            e.message
        );
    }

    #[test]
    fn memory_search_ranks_best_match_first_then_newest() {
        let s = store_with(&[
            ("parser", None),
            ("parser parser parser", None),
            (
                "a long prompt that mentions the parser once among many other words",
                None,
            ),
            ("parser", None),
        ]);
        let rows = search(&s, "parser", 10, None).expect("search");
        // Short documents and repeated terms rank higher; equal ones newest first.
        let got: Vec<(&str, i64)> = rows.iter().map(|r| (r.prompt.as_str(), r.id)).collect();
        assert_eq!(
            got,
            [
                ("parser parser parser", 2),
                ("parser", 4),
                ("parser", 1),
                (
                    "a long prompt that mentions the parser once among many other words",
                    3
                )
            ]
        );
    }
}
