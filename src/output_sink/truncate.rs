//! Line- and byte-bounded cuts of text: UTF-8-safe head and tail, long-line clipping.

pub const DEFAULT_MAX_LINES: usize = 3000;
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
pub const DEFAULT_MAX_COLUMNS: usize = 1024;

/// The result of a truncation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    pub content: String,
    pub truncated: bool,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
}

pub(super) fn count_lines(s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        s.matches('\n').count() + usize::from(!s.ends_with('\n'))
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn truncation(original: &str, content: String) -> Truncation {
    Truncation {
        truncated: content.len() != original.len(),
        total_lines: count_lines(original),
        total_bytes: original.len(),
        output_lines: count_lines(&content),
        output_bytes: content.len(),
        content,
    }
}

/// Keep the beginning: at most `max_lines` lines and `max_bytes` bytes, never splitting a
/// UTF-8 character.
pub fn truncate_head(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let mut end = text.len();
    if let Some((i, _)) = text.match_indices('\n').nth(max_lines.saturating_sub(1)) {
        if max_lines == 0 {
            end = 0;
        } else if i + 1 < text.len() {
            end = i + 1;
        }
    }
    end = floor_char(text, end.min(max_bytes));
    truncation(text, text[..end].to_string())
}

/// Keep the end: at most `max_lines` lines and `max_bytes` bytes, UTF-8 safe.
pub fn truncate_tail(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut start = 0;
    if max_lines == 0 {
        start = text.len();
    } else if let Some((i, _)) = body.rmatch_indices('\n').nth(max_lines - 1) {
        start = i + 1;
    }
    start = ceil_char(text, start.max(text.len().saturating_sub(max_bytes)));
    truncation(text, text[start..].to_string())
}

/// Clip one line to `max_columns` characters, marking the cut with `…`.
pub fn truncate_line(line: &str, max_columns: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max_columns) {
        Some((i, _)) => std::borrow::Cow::Owned(format!("{}…", &line[..i])),
        None => std::borrow::Cow::Borrowed(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_cuts_are_utf8_safe() {
        let text = "é".repeat(10); // 20 bytes
        let head = truncate_head(&text, 100, 5);
        assert_eq!(head.content, "éé");
        assert!(head.truncated);
        let tail = truncate_tail(&text, 100, 5);
        assert_eq!(tail.content, "éé");
        assert_eq!(tail.total_bytes, 20);
    }

    #[test]
    fn line_limits_keep_whole_lines() {
        let text = "1\n2\n3\n4\n";
        assert_eq!(truncate_head(text, 2, 1000).content, "1\n2\n");
        assert_eq!(truncate_tail(text, 2, 1000).content, "3\n4\n");
        let t = truncate_tail(text, 10, 1000);
        assert!(!t.truncated);
        assert_eq!(t.total_lines, 4);
    }

    #[test]
    fn long_lines_are_clipped_at_1024_columns() {
        let line = "x".repeat(2000);
        let clipped = truncate_line(&line, DEFAULT_MAX_COLUMNS);
        assert_eq!(clipped.chars().count(), 1025);
        assert!(clipped.ends_with('…'));
    }
}
