//! The session picker's ranking, independent of any UI: fuzzy search over id, title, cwd,
//! first message, all message text and path (`search` in the CLI, `searchSessions` in
//! the npm package). The picker's state (scope, query, selection) lives in each shell.
//!
//! [`search`] ranks sessions listed with their text; [`SessionSearch`] ranks the same
//! way over a store while holding no session's text: it reads one file at a time, a
//! piece at a time, scoring the text as it streams past ([`stream`]), with progress
//! and a stop between any two pieces.

mod stream;
mod walk;

use crate::listing::SessionInfo;
pub use walk::{SearchProgress, SessionSearch};

/// Case-insensitive score of `needle` in `hay`: a substring match scores high (earlier is
/// better), a scattered subsequence low, no match `None`.
pub fn fuzzy_score(hay: &str, needle: &str) -> Option<u32> {
    if needle.is_empty() {
        return Some(0);
    }
    let hay_l = hay.to_lowercase();
    let needle_l = needle.to_lowercase();
    if let Some(pos) = hay_l.find(&needle_l) {
        let word_start = pos == 0
            || !hay_l[..pos]
                .chars()
                .last()
                .is_some_and(char::is_alphanumeric);
        return Some(1000 - (pos.min(500) as u32) + if word_start { 200 } else { 0 });
    }
    // Subsequence: every needle char in order; tighter spans score higher.
    let mut chars = hay_l.char_indices();
    let mut first = None;
    let mut last = 0;
    for n in needle_l.chars() {
        let (i, _) = chars.find(|(_, h)| *h == n)?;
        first.get_or_insert(i);
        last = i;
    }
    let span = (last - first.unwrap_or(0)) as u32 + 1;
    Some(100u32.saturating_sub(span.min(99)))
}

/// The weight of the text of all messages; every other field weighs more.
const TEXT_WEIGHT: u32 = 1;

/// The best score [`fuzzy_score`] gives: a substring at the start of a word, first.
const BEST_SCORE: u32 = 1200;

/// Fields searched besides the text of all messages, with their weights.
fn head_fields(s: &SessionInfo) -> [(&str, u32); 5] {
    [
        (&s.head.id, 3),
        (s.head.title.as_deref().unwrap_or(""), 3),
        (&s.head.cwd, 2),
        (&s.first_message, 2),
        (&s.head.path, 1),
    ]
}

/// The best weighted score of `token` in the fields other than the text.
fn head_score(s: &SessionInfo, token: &str) -> Option<u32> {
    head_fields(s)
        .iter()
        .filter_map(|(f, w)| fuzzy_score(f, token).map(|sc| sc * w))
        .max()
}

/// Whether the text's score cannot change `token`'s (another field scores at least the
/// best the text can): the text need not be read for it.
fn text_cannot_win(head: Option<u32>) -> bool {
    head.is_some_and(|h| h >= BEST_SCORE * TEXT_WEIGHT)
}

/// A session's score for every token (`None` when one matches no field), given the
/// head's and the text's score of each.
fn total(heads: &[Option<u32>], texts: &[Option<u32>]) -> Option<u32> {
    let mut total = 0;
    for (h, t) in heads.iter().zip(texts) {
        total += (*h).max(t.map(|t| t * TEXT_WEIGHT))?;
    }
    Some(total)
}

/// Hits best first; ties keep the input order (newest first).
fn best_first<T>(mut scored: Vec<(usize, T, u32)>) -> Vec<(T, u32)> {
    crate::sort::sort_by(&mut scored, |a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(_, s, sc)| (s, sc)).collect()
}

/// Sessions matching every whitespace-separated token, best first (ties keep the input
/// order, which is newest first). An empty query returns all of them.
pub fn search<'a>(sessions: &'a [SessionInfo], query: &str) -> Vec<(&'a SessionInfo, u32)> {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    let scored = sessions
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let text = s.all_messages_text.as_deref().unwrap_or("");
            let heads: Vec<_> = tokens.iter().map(|t| head_score(s, t)).collect();
            let texts: Vec<_> = tokens.iter().map(|t| fuzzy_score(text, t)).collect();
            Some((i, s, total(&heads, &texts)?))
        })
        .collect();
    best_first(scored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::SessionHead;

    fn info(id: &str, title: &str, cwd: &str, first: &str) -> SessionInfo {
        SessionInfo {
            head: SessionHead {
                path: format!("/s/{id}.jsonl"),
                id: id.into(),
                cwd: cwd.into(),
                title: Some(title.into()).filter(|t: &String| !t.is_empty()),
            },
            parent_session_path: None,
            created: String::new(),
            modified_ms: 0,
            message_count: 1,
            first_message: first.into(),
            all_messages_text: Some(first.into()),
        }
    }

    #[test]
    fn substring_beats_subsequence_and_every_token_must_match() {
        let list = vec![
            info("a1", "refactor the parser", "/w/a", "x"),
            info("b2", "", "/w/b", "please fix the parser bug"),
            info("c3", "rpr", "/w/c", "y"),
        ];
        let ids: Vec<&str> = search(&list, "parser")
            .iter()
            .map(|(s, _)| s.head.id.as_str())
            .collect();
        assert_eq!(ids, vec!["a1", "b2"]);
        let ids: Vec<&str> = search(&list, "parser bug")
            .iter()
            .map(|(s, _)| s.head.id.as_str())
            .collect();
        assert_eq!(ids, vec!["b2"]);
        assert!(search(&list, "zzz").is_empty());
        assert_eq!(search(&list, "").len(), 3);
        assert!(fuzzy_score("refactor the parser", "rtp").is_some());
    }
}
