//! The shells' view of history: rows as JSON text, the `*_json` wrappers of the history
//! operations, and the API error kind of each [`HistoryError`].

use super::{
    add, created_at_ms, recent, search, Added, HistoryEntry, HistoryError, HistoryStore,
    LastPromptCache,
};
use crate::api_error::{ApiError, ApiResult, ErrorKind};
use crate::json::push_quoted;

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

/// `[{"id", "prompt", "createdAt", "cwd"}]`.
pub fn entries_json(entries: &[HistoryEntry]) -> String {
    let mut out = String::from("[");
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{{\"id\":{},\"prompt\":", e.id));
        push_quoted(&mut out, &e.prompt);
        out.push_str(",\"createdAt\":\"");
        out.push_str(&crate::time::iso_from_ms(created_at_ms(e.created_at)));
        out.push_str("\",\"cwd\":");
        match &e.cwd {
            Some(c) => push_quoted(&mut out, c),
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push(']');
    out
}

/// [`add`] for the shells: `{"added":true}`, or `{"added":false,"reason":"empty"}` /
/// `"duplicate"`.
pub fn add_json(
    store: &dyn HistoryStore,
    cache: &mut LastPromptCache,
    prompt: &str,
    cwd: Option<&str>,
    now_ms: i64,
) -> ApiResult {
    Ok(
        match add(store, cache, prompt, cwd, now_ms.div_euclid(1000))? {
            Added::Stored => "{\"added\":true}".to_string(),
            Added::Empty => "{\"added\":false,\"reason\":\"empty\"}".to_string(),
            Added::Duplicate => "{\"added\":false,\"reason\":\"duplicate\"}".to_string(),
        },
    )
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
    use crate::history::MemoryHistory;

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
        let s = MemoryHistory::new();
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
}
