//! The shells' view of history: rows as JSON text, the `*_json` wrappers of the history
//! operations, and the API error kind of each [`HistoryError`].

use super::{
    add, created_at_ms, recent, search, Added, HistoryEntry, HistoryError, HistoryStore,
    LastPromptCache,
};
use crate::api_error::{ApiError, ApiResult, ErrorKind};

impl From<HistoryError> for ApiError {
    fn from(e: HistoryError) -> Self {
        let kind = match e {
            HistoryError::InvalidQuery(_) => ErrorKind::InvalidInput,
            HistoryError::PermissionDenied(_) | HistoryError::Other(_) => ErrorKind::Storage,
        };
        ApiError {
            kind,
            message: e.to_string(),
            details: None,
        }
    }
}

/// A history row as the shells print it: `cwd` is `null` when unknown.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRecord<'a> {
    pub id: i64,
    pub prompt: &'a str,
    /// ISO-8601.
    pub created_at: String,
    pub cwd: Option<&'a str>,
}

impl HistoryEntry {
    /// The record the shells print.
    pub fn record(&self) -> HistoryRecord<'_> {
        HistoryRecord {
            id: self.id,
            prompt: &self.prompt,
            created_at: crate::time::iso_from_ms(created_at_ms(self.created_at)),
            cwd: self.cwd.as_deref(),
        }
    }
}

/// What [`add`] did: `{"added":true}`, or `{"added":false,"reason":"empty"}` /
/// `"duplicate"`.
#[derive(serde::Serialize)]
pub struct AddedRecord {
    pub added: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// `[{"id", "prompt", "createdAt", "cwd"}]`.
pub fn entries_json(entries: &[HistoryEntry]) -> String {
    let records: Vec<HistoryRecord> = entries.iter().map(HistoryEntry::record).collect();
    crate::json::record(&records)
}

/// [`add`] at the environment's `now_ms` (epoch milliseconds; the row stores seconds).
pub fn add_at_ms(
    store: &dyn HistoryStore,
    cache: &mut LastPromptCache,
    prompt: &str,
    cwd: Option<&str>,
    now_ms: i64,
) -> Result<Added, ApiError> {
    Ok(add(store, cache, prompt, cwd, now_ms.div_euclid(1000))?)
}

/// [`add_at_ms`] for the shells: `{"added":true}`, or `{"added":false,"reason":"empty"}` /
/// `"duplicate"`.
pub fn add_json(
    store: &dyn HistoryStore,
    cache: &mut LastPromptCache,
    prompt: &str,
    cwd: Option<&str>,
    now_ms: i64,
) -> ApiResult {
    let (added, reason) = match add_at_ms(store, cache, prompt, cwd, now_ms)? {
        Added::Stored => (true, None),
        Added::Empty => (false, Some("empty")),
        Added::Duplicate => (false, Some("duplicate")),
    };
    Ok(crate::json::record(&AddedRecord { added, reason }))
}

/// [`search`] for the shells, as [`entries_json`].
pub fn search_json(
    store: &dyn HistoryStore,
    query: &str,
    limit: usize,
    cwd: Option<&str>,
) -> ApiResult {
    Ok(entries_json(&search(store, query, limit, cwd)?))
}

/// [`recent`] for the shells, as [`entries_json`].
pub fn recent_json(store: &dyn HistoryStore, limit: usize, cwd: Option<&str>) -> ApiResult {
    Ok(entries_json(&recent(store, limit, cwd)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::test_support::RowsStore;

    /// The exact bytes of history rows with awkward text.
    #[test]
    fn entries_json_bytes() {
        let rows = vec![
            HistoryEntry {
                id: i64::MAX,
                prompt: "q\"b\\s/c\u{0}\u{1}\u{1f}\u{7f}\t\n\r\u{8}\u{c} é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'".into(),
                created_at: -1,
                cwd: Some("/w/日本 \\ \"🎉\"".into()),
            },
            HistoryEntry {
                id: 0,
                prompt: String::new(),
                created_at: 0,
                cwd: None,
            },
        ];
        assert_eq!(entries_json(&rows), GOLDEN_ROWS);
    }

    #[test]
    fn json_shape() {
        let rows = vec![
            HistoryEntry {
                id: 2,
                prompt: "say \"hi\"\n".into(),
                created_at: 1_771_237_230,
                cwd: Some("/w".into()),
            },
            HistoryEntry {
                id: 1,
                prompt: "x".into(),
                created_at: 1_771_237_230_123,
                cwd: None,
            },
        ];
        assert_eq!(
            entries_json(&rows),
            r#"[{"id":2,"prompt":"say \"hi\"\n","createdAt":"2026-02-16T10:20:30.000Z","cwd":"/w"},{"id":1,"prompt":"x","createdAt":"2026-02-16T10:20:30.123Z","cwd":null}]"#
        );
        assert_eq!(entries_json(&[]), "[]");
        let v: serde_json::Value = serde_json::from_str(&entries_json(&rows)).expect("valid JSON");
        assert_eq!(v[0]["prompt"], "say \"hi\"\n");
    }

    #[test]
    fn add_json_reports_what_happened() {
        let s = RowsStore::new();
        let mut c = LastPromptCache::new();
        assert_eq!(
            add_json(&s, &mut c, "p", None, 1_500).unwrap(),
            r#"{"added":true}"#
        );
        assert_eq!(s.rows()[0].created_at, 1, "milliseconds to seconds");
        assert_eq!(
            add_json(&s, &mut c, "p", None, 2_000).unwrap(),
            r#"{"added":false,"reason":"duplicate"}"#
        );
        assert_eq!(
            add_json(&s, &mut c, " ", None, 2_000).unwrap(),
            r#"{"added":false,"reason":"empty"}"#
        );
        assert_eq!(
            recent_json(&s, 5, None).unwrap(),
            r#"[{"id":1,"prompt":"p","createdAt":"1970-01-01T00:00:01.000Z","cwd":null}]"#
        );
        assert_eq!(
            search_json(&s, "p*", 5, None).unwrap(),
            recent_json(&s, 5, None).unwrap()
        );
    }

    const GOLDEN_ROWS: &str = "[{\"id\":9223372036854775807,\"prompt\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"createdAt\":\"1969-12-31T23:59:59.000Z\",\"cwd\":\"/w/日本 \\\\ \\\"🎉\\\"\"},{\"id\":0,\"prompt\":\"\",\"createdAt\":\"1970-01-01T00:00:00.000Z\",\"cwd\":null}]";
}
