//! The session picker's ranking, independent of any UI: fuzzy search over id, title, cwd,
//! first message, all message text and path (`search` in the CLI, `searchSessions` in
//! the npm package). The picker's state (scope, query, selection) lives in each shell.

use crate::listing::SessionInfo;

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

/// Fields searched, with their weights.
fn fields(s: &SessionInfo) -> [(&str, u32); 6] {
    [
        (&s.head.id, 3),
        (s.head.title.as_deref().unwrap_or(""), 3),
        (&s.head.cwd, 2),
        (&s.first_message, 2),
        (s.all_messages_text.as_deref().unwrap_or(""), 1),
        (&s.head.path, 1),
    ]
}

/// Sessions matching every whitespace-separated token, best first (ties keep the input
/// order, which is newest first). An empty query returns all of them.
pub fn search<'a>(sessions: &'a [SessionInfo], query: &str) -> Vec<(&'a SessionInfo, u32)> {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    let mut scored: Vec<(usize, &SessionInfo, u32)> = sessions
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let mut total = 0;
            for t in &tokens {
                total += fields(s)
                    .iter()
                    .filter_map(|(f, w)| fuzzy_score(f, t).map(|sc| sc * w))
                    .max()?;
            }
            Some((i, s, total))
        })
        .collect();
    crate::sort::sort_by(&mut scored, |a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(_, s, sc)| (s, sc)).collect()
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
