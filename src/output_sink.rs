//! `OutputSink`: streaming tool output with a bounded tail for display and the full output
//! spilled to an artifact file once it grows past 50 KiB. Plus the line/byte truncation
//! helpers (UTF-8-safe head and tail cuts, long-line clipping).

use crate::storage::Storage;

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

fn count_lines(s: &str) -> usize {
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

/// Terminal output made safe to store and show: ANSI escape sequences removed, CRLF and
/// lone CR turned into LF, other control characters (but tab) dropped.
pub fn sanitize_chunk(chunk: &str) -> String {
    let mut out = String::with_capacity(chunk.len());
    let mut chars = chunk.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // CSI: parameters and intermediates, then a final byte @..~
                    for n in chars.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    // OSC: until BEL or ESC \
                    while let Some(n) = chars.next() {
                        if n == '\u{7}' || (n == '\u{1b}' && chars.peek() == Some(&'\\')) {
                            if n == '\u{1b}' {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Where the full output goes once it is too long to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactTarget {
    pub id: String,
    pub path: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileState {
    NotOpened,
    Writing,
    Failed,
}

/// What `dump()` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSummary {
    /// The tail to display (line-clipped).
    pub output: String,
    pub truncated: bool,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    /// Only when the full output really is in the artifact file.
    pub artifact_id: Option<String>,
    pub artifact_error: Option<String>,
}

pub struct OutputSink<'s> {
    storage: &'s dyn Storage,
    target: Option<ArtifactTarget>,
    state: FileState,
    artifact_error: Option<String>,
    tail: String,
    total_bytes: usize,
    newlines: usize,
    ends_with_newline: bool,
    truncated: bool,
    max_bytes: usize,
    max_lines: usize,
}

impl<'s> OutputSink<'s> {
    /// A sink with the default limits; `target` is where the full output is spilled.
    pub fn new(storage: &'s dyn Storage, target: Option<ArtifactTarget>) -> Self {
        Self::with_limits(storage, target, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    }

    pub fn with_limits(
        storage: &'s dyn Storage,
        target: Option<ArtifactTarget>,
        max_lines: usize,
        max_bytes: usize,
    ) -> Self {
        OutputSink {
            storage,
            target,
            state: FileState::NotOpened,
            artifact_error: None,
            tail: String::new(),
            total_bytes: 0,
            newlines: 0,
            ends_with_newline: false,
            truncated: false,
            max_bytes,
            max_lines,
        }
    }

    pub fn push(&mut self, chunk: &str) {
        let clean = sanitize_chunk(chunk);
        if clean.is_empty() {
            return;
        }
        self.total_bytes += clean.len();
        self.newlines += clean.matches('\n').count();
        self.ends_with_newline = clean.ends_with('\n');
        self.tail.push_str(&clean);
        if self.state == FileState::Writing {
            self.write(|s, path| s.append(path, clean.as_bytes()));
        }
        if self.total_bytes > self.max_bytes || self.newlines >= self.max_lines {
            if !self.truncated {
                self.truncated = true;
                if self.state == FileState::NotOpened && self.target.is_some() {
                    // The buffered output (everything so far) goes first, once.
                    let all = std::mem::take(&mut self.tail);
                    self.state = FileState::Writing;
                    self.write(|s, path| s.write(path, all.as_bytes()));
                    self.tail = all;
                }
            }
            self.trim();
        }
    }

    fn write(&mut self, op: impl FnOnce(&dyn Storage, &str) -> crate::storage::StorageResult<()>) {
        let Some(target) = &self.target else { return };
        if let Err(e) = op(self.storage, &target.path) {
            self.state = FileState::Failed;
            self.artifact_error = Some(e.to_string());
        }
    }

    fn trim(&mut self) {
        let t = truncate_tail(&self.tail, self.max_lines, self.max_bytes);
        if t.truncated {
            self.tail = t.content;
        }
    }

    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    pub fn dump(&self) -> OutputSummary {
        let view = truncate_tail(&self.tail, self.max_lines, self.max_bytes);
        let output: Vec<String> = view
            .content
            .split('\n')
            .map(|l| truncate_line(l, DEFAULT_MAX_COLUMNS).into_owned())
            .collect();
        let output = output.join("\n");
        OutputSummary {
            output_lines: count_lines(&output),
            output_bytes: output.len(),
            output,
            truncated: self.truncated,
            total_lines: self.newlines
                + usize::from(self.total_bytes > 0 && !self.ends_with_newline),
            total_bytes: self.total_bytes,
            artifact_id: (self.state == FileState::Writing)
                .then(|| self.target.as_ref().map(|t| t.id.clone()))
                .flatten(),
            artifact_error: self.artifact_error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{MemoryStorage, StorageExt};

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

    #[test]
    fn sanitize_strips_ansi_and_normalizes_newlines() {
        assert_eq!(
            sanitize_chunk("\u{1b}[31mred\u{1b}[0m\r\nnext\rover\u{1b}]0;title\u{7}\u{0}!"),
            "red\nnext\nover!"
        );
    }

    #[test]
    fn spills_to_the_artifact_once_over_50_kib() {
        let s = MemoryStorage::new();
        s.mkdir_all("/a").unwrap();
        let mut sink = OutputSink::new(
            &s,
            Some(ArtifactTarget {
                id: "3".into(),
                path: "/a/3.bash.log".into(),
            }),
        );
        let line = format!("{}\n", "y".repeat(99));
        for _ in 0..400 {
            sink.push(&line);
        }
        assert!(!s.exists("/a/3.bash.log"), "40 KB: still in memory");
        for _ in 0..600 {
            sink.push(&line);
        }
        let d = sink.dump();
        assert!(d.truncated);
        assert_eq!(d.artifact_id.as_deref(), Some("3"));
        assert_eq!(
            s.read("/a/3.bash.log").unwrap().len(),
            100_000,
            "the whole output, buffered part first"
        );
        assert!(d.output_bytes <= DEFAULT_MAX_BYTES);
        assert_eq!(d.total_lines, 1000);
        assert_eq!(d.total_bytes, 100_000);
    }

    #[test]
    fn falls_back_to_tail_only_when_the_artifact_cannot_be_written() {
        let s = MemoryStorage::new(); // no /missing dir: the write fails
        let mut sink = OutputSink::new(
            &s,
            Some(ArtifactTarget {
                id: "0".into(),
                path: "/missing/0.bash.log".into(),
            }),
        );
        for _ in 0..600 {
            sink.push(&format!("{}\n", "z".repeat(99)));
        }
        let d = sink.dump();
        assert!(d.truncated);
        assert_eq!(d.artifact_id, None);
        assert!(d.artifact_error.is_some());
        assert!(
            d.output_bytes <= DEFAULT_MAX_BYTES && d.output_bytes > DEFAULT_MAX_BYTES - 100,
            "{}",
            d.output_bytes
        );
        assert!(d.output.ends_with(&format!("{}\n", "z".repeat(99))));
    }

    #[test]
    fn short_output_is_not_truncated_and_has_no_artifact() {
        let s = MemoryStorage::new();
        let mut sink = OutputSink::new(
            &s,
            Some(ArtifactTarget {
                id: "0".into(),
                path: "/a/0.log".into(),
            }),
        );
        sink.push("hello\n");
        let d = sink.dump();
        assert!(!d.truncated);
        assert_eq!(d.artifact_id, None);
        assert_eq!(d.output, "hello\n");
    }
}
