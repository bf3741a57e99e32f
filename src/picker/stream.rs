//! [`fuzzy_score`](super::fuzzy_score) of one token in a text that streams past a piece
//! at a time, never held whole: the same score as over the joined text.
//!
//! The pieces are messages joined by a space, each lowercased (its leading space
//! included), which is that part of the joined text's lowercase: no casing rule looks
//! across a space. A token holds no whitespace, so no match spans two pieces.

/// The score of one token so far (see the module docs).
pub(super) struct TextScore {
    needle: String,
    needle_chars: Vec<char>,
    /// Lowercase bytes seen before the current piece.
    seen: usize,
    /// The first substring match: where, and whether it starts a word.
    found: Option<(usize, bool)>,
    /// The greedy subsequence match: the needle characters matched, the first one's and
    /// the last one's positions.
    matched: usize,
    first: usize,
    last: usize,
}

impl TextScore {
    pub(super) fn new(token: &str) -> TextScore {
        let needle = token.to_lowercase();
        TextScore {
            needle_chars: needle.chars().collect(),
            needle,
            seen: 0,
            found: None,
            matched: 0,
            first: 0,
            last: 0,
        }
    }

    /// Whether more text cannot change the score: the first substring match is found.
    pub(super) fn settled(&self) -> bool {
        self.found.is_some()
    }

    /// Take the next piece of the text (already lowercased).
    pub(super) fn feed(&mut self, piece: &str) {
        debug_assert!(!self.needle.contains(char::is_whitespace));
        if self.settled() || self.needle.is_empty() {
            return;
        }
        self.find_substring(piece);
        if self.found.is_none() {
            self.follow_subsequence(piece);
        }
        self.seen += piece.len();
    }

    /// The score of the text seen, as `fuzzy_score` gives it over the whole.
    pub(super) fn score(&self) -> Option<u32> {
        if self.needle.is_empty() {
            return Some(0);
        }
        if let Some((pos, word_start)) = self.found {
            return Some(1000 - (pos.min(500) as u32) + if word_start { 200 } else { 0 });
        }
        (self.matched == self.needle_chars.len()).then(|| {
            let span = (self.last - self.first) as u32 + 1;
            100u32.saturating_sub(span.min(99))
        })
    }

    fn find_substring(&mut self, piece: &str) {
        if let Some(p) = piece.find(&self.needle) {
            // At a piece's start: the text's start, or after the joining space.
            let before = piece[..p].chars().next_back();
            let at = self.seen + p;
            self.found = Some((at, word_start(at, before)));
        }
    }

    fn follow_subsequence(&mut self, piece: &str) {
        let mut chars = piece.char_indices();
        while self.matched < self.needle_chars.len() {
            let want = self.needle_chars[self.matched];
            let Some((i, _)) = chars.find(|(_, c)| *c == want) else {
                return;
            };
            if self.matched == 0 {
                self.first = self.seen + i;
            }
            self.last = self.seen + i;
            self.matched += 1;
        }
    }
}

/// As the whole-text score: a match at 0, or after a character that is not alphanumeric.
fn word_start(at: usize, before: Option<char>) -> bool {
    at == 0 || !before.is_some_and(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::super::fuzzy_score;
    use super::TextScore;
    use proptest::prelude::*;

    fn streamed(pieces: &[String], token: &str) -> Option<u32> {
        let mut s = TextScore::new(token);
        for (i, p) in pieces.iter().enumerate() {
            let piece = match i {
                0 => p.to_lowercase(),
                _ => format!(" {p}").to_lowercase(),
            };
            s.feed(&piece);
        }
        s.score()
    }

    #[test]
    fn a_match_in_a_later_message_is_scored_where_the_joined_text_has_it() {
        let pieces = vec!["fix the parser".to_string(), "bug-fix done".to_string()];
        let joined = "fix the parser bug-fix done";
        for token in ["bug", "fix", "done", "fpb", "xd", "parser"] {
            assert_eq!(
                streamed(&pieces, token),
                fuzzy_score(joined, token),
                "{token}"
            );
        }
        assert_eq!(streamed(&pieces, "zz"), None);
    }

    /// Words from a small alphabet (so matches happen), with letters whose lowercase is
    /// longer, or depends on what follows (İ, Σ), and multibyte ones.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("a"),
                Just("b"),
                Just("A"),
                Just(" "),
                Just("-"),
                Just("é"),
                Just("İ"),
                Just("Σ"),
                Just("σ"),
                Just("ß"),
                Just("日"),
                Just("1"),
            ],
            0..24,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn streamed_scores_equal_the_whole_texts(
            pieces in proptest::collection::vec(text(), 0..6),
            token in text().prop_filter("a token has no spaces", |t| !t.trim().is_empty() && !t.contains(' ')),
        ) {
            let joined = pieces.join(" ");
            prop_assert_eq!(streamed(&pieces, &token), fuzzy_score(&joined, &token));
        }
    }
}
