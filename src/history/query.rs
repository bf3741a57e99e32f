//! Plain words to a safe FTS5 query, and the token splitting (an approximation of FTS5's
//! `unicode61` tokenizer) that `prefix_query` splits on.

/// Characters that belong to a token, like FTS5's `unicode61` tokenizer (letters,
/// numbers; everything else separates). Its diacritic folding is not reproduced.
fn is_token_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// The lowercased tokens of `text`, approximately as FTS5's default tokenizer splits it.
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !is_token_char(c))
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A safe FTS5 query from plain words: every token quoted and made a prefix, all
/// required (`foo bar` → `"foo"* "bar"*`; `git-commit` → `"git"* "commit"*`). Empty
/// when `text` has no token.
pub fn prefix_query(text: &str) -> String {
    tokenize(text)
        .iter()
        .map(|t| format!("\"{}\"*", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_query_quotes_every_token_as_a_prefix() {
        assert_eq!(prefix_query("foo bar"), "\"foo\"* \"bar\"*");
        assert_eq!(prefix_query("  Git-Commit  "), "\"git\"* \"commit\"*");
        assert_eq!(
            prefix_query("a\"b (c) OR NOT d*"),
            "\"a\"* \"b\"* \"c\"* \"or\"* \"not\"* \"d\"*"
        );
        assert_eq!(prefix_query("héllo wörld"), "\"héllo\"* \"wörld\"*");
        assert_eq!(prefix_query("  -- ** "), "");
        assert_eq!(prefix_query(""), "");
        // Whatever the input, the result is only quoted prefix terms (FTS5 syntax that
        // cannot fail: the viewer's SQLite runs them in tests/e2e/history.test.mjs).
        for text in ["x\"y", "((", "NEAR(", "a:b", "^-+*", "日本語 テキスト"] {
            let q = prefix_query(text);
            for term in q.split(' ').filter(|t| !t.is_empty()) {
                let inner = term.strip_prefix('"').and_then(|t| t.strip_suffix("\"*"));
                assert!(
                    inner.is_some_and(|i| !i.is_empty() && !i.replace("\"\"", "").contains('"')),
                    "{text:?} -> {q:?}"
                );
            }
        }
    }

    #[test]
    fn tokenizer_splits_on_non_alphanumerics_and_lowercases() {
        assert_eq!(
            tokenize("Parse the JSON-lines file_name.rs"),
            ["parse", "the", "json", "lines", "file", "name", "rs"]
        );
    }
}
