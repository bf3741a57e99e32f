//! The session picker's model, independent of any UI: fuzzy search over id, title, cwd,
//! first message, all message text and path; a current-project / all-projects toggle
//! (the "Press Tab to view all" the agent never wired); an empty list is a state.

use crate::listing::SessionInfo;

/// Which sessions the picker shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    CurrentProject,
    AllProjects,
}

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
        (&s.id, 3),
        (s.title.as_deref().unwrap_or(""), 3),
        (&s.cwd, 2),
        (&s.first_message, 2),
        (&s.all_messages_text, 1),
        (&s.path, 1),
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
    scored.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(_, s, sc)| (s, sc)).collect()
}

/// The picker state: sessions, scope, query, selection.
#[derive(Debug, Clone)]
pub struct Picker {
    current: Vec<SessionInfo>,
    all: Vec<SessionInfo>,
    pub scope: Scope,
    pub query: String,
    pub selected: usize,
}

impl Picker {
    pub fn new(current_project: Vec<SessionInfo>, all_projects: Vec<SessionInfo>) -> Self {
        Picker {
            current: current_project,
            all: all_projects,
            scope: Scope::CurrentProject,
            query: String::new(),
            selected: 0,
        }
    }

    /// Tab: switch between this project and all projects.
    pub fn toggle_scope(&mut self) {
        self.scope = match self.scope {
            Scope::CurrentProject => Scope::AllProjects,
            Scope::AllProjects => Scope::CurrentProject,
        };
        self.selected = 0;
    }

    pub fn set_query(&mut self, query: &str) {
        self.query = query.to_string();
        self.selected = 0;
    }

    pub fn visible(&self) -> Vec<&SessionInfo> {
        let pool = match self.scope {
            Scope::CurrentProject => &self.current,
            Scope::AllProjects => &self.all,
        };
        search(pool, &self.query)
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.visible().is_empty()
    }

    pub fn move_selection(&mut self, delta: isize) {
        let n = self.visible().len();
        if n == 0 {
            self.selected = 0;
            return;
        }
        self.selected = (self.selected as isize + delta).clamp(0, n as isize - 1) as usize;
    }

    /// Enter: the selected session's path; `None` on an empty list (Enter does nothing).
    pub fn confirm(&self) -> Option<String> {
        self.visible().get(self.selected).map(|s| s.path.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: &str, title: &str, cwd: &str, first: &str) -> SessionInfo {
        SessionInfo {
            path: format!("/s/{id}.jsonl"),
            id: id.into(),
            cwd: cwd.into(),
            title: Some(title.into()).filter(|t: &String| !t.is_empty()),
            parent_session_path: None,
            created: String::new(),
            modified_ms: 0,
            message_count: 1,
            first_message: first.into(),
            all_messages_text: first.into(),
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
            .map(|(s, _)| s.id.as_str())
            .collect();
        assert_eq!(ids, vec!["a1", "b2"]);
        let ids: Vec<&str> = search(&list, "parser bug")
            .iter()
            .map(|(s, _)| s.id.as_str())
            .collect();
        assert_eq!(ids, vec!["b2"]);
        assert!(search(&list, "zzz").is_empty());
        assert_eq!(search(&list, "").len(), 3);
        assert!(fuzzy_score("refactor the parser", "rtp").is_some());
    }

    #[test]
    fn scope_toggle_empty_state_and_enter() {
        let mut p = Picker::new(vec![], vec![info("a1", "t", "/w", "m")]);
        assert!(p.is_empty());
        assert_eq!(p.confirm(), None, "Enter on an empty list does nothing");
        p.toggle_scope();
        assert_eq!(p.scope, Scope::AllProjects);
        assert_eq!(p.confirm().as_deref(), Some("/s/a1.jsonl"));
        p.move_selection(5);
        assert_eq!(p.selected, 0);
        p.set_query("nomatch");
        assert!(p.is_empty());
    }
}
