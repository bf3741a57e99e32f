//! `OutputSink`: streaming tool output with a bounded tail for display and the full output
//! spilled to an artifact file once it grows past 50 KiB or 3000 lines. The cuts it uses
//! are in `truncate`, the chunk sanitizer in `sanitize`.
//!
//! Counts are the agent's: `totalBytes` and `totalLines` are of the text pushed (before
//! sanitizing), a line being what the LFs separate (`"a\nb\n"` is 3 lines: the agent
//! counts LFs plus one); long lines are not clipped, so the end of a 100 KB line (where
//! the bash tool's exit-code and working-directory markers are) stays in the tail.

use crate::storage::Storage;
use std::rc::Rc;

mod sanitize;
mod truncate;

pub use sanitize::{sanitize_chunk, Sanitizer};
pub use truncate::{
    truncate_head, truncate_line, truncate_tail, Truncation, DEFAULT_MAX_BYTES,
    DEFAULT_MAX_COLUMNS, DEFAULT_MAX_LINES,
};

/// Where the full output goes once it is too long to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactTarget {
    /// Reported as `artifactId` (none when the caller gave none, as the agent does).
    pub id: Option<String>,
    pub path: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileState {
    NotOpened,
    Writing,
    Failed,
}

/// What `dump()` reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputSummary {
    /// The tail to display (line-clipped).
    pub output: String,
    pub truncated: bool,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    /// Only when the full output really is in the artifact file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// Why the artifact file could not be written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_error: Option<String>,
}

impl OutputSummary {
    /// The agent's `OutputSummary` as JSON (camelCase; `artifactId` and `artifactError`
    /// only when set).
    pub fn to_json(&self) -> String {
        crate::json::record(self)
    }
}

/// Streaming tool output (bash, python, ssh): each chunk is sanitized (state carried
/// across chunks) and added to a tail kept in memory. Past `max_bytes` bytes pushed or
/// `max_lines` lines the output is truncated: with a target, everything so far is written
/// to the artifact file once and every later chunk appended; the tail is trimmed to its
/// window either way. A target that cannot be written leaves the tail only.
pub struct OutputSink {
    storage: Rc<dyn Storage>,
    target: Option<ArtifactTarget>,
    state: FileState,
    artifact_error: Option<String>,
    sanitizer: Sanitizer,
    tail: String,
    /// UTF-8 bytes pushed (a lone surrogate of a JS string counts as its U+FFFD).
    total_bytes: usize,
    /// LFs pushed.
    newlines: usize,
    /// Whether anything at all was pushed (the agent then counts one line more than LFs).
    saw_data: bool,
    truncated: bool,
    max_bytes: usize,
    max_lines: usize,
}

impl OutputSink {
    /// A sink with the default limits; `target` is where the full output is spilled.
    pub fn new(storage: Rc<dyn Storage>, target: Option<ArtifactTarget>) -> Self {
        Self::with_limits(storage, target, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    }

    /// A sink that spills past `max_bytes` (the agent's `spillThreshold`) or `max_lines`.
    pub fn with_limits(
        storage: Rc<dyn Storage>,
        target: Option<ArtifactTarget>,
        max_lines: usize,
        max_bytes: usize,
    ) -> Self {
        OutputSink {
            storage,
            target,
            state: FileState::NotOpened,
            artifact_error: None,
            sanitizer: Sanitizer::new(),
            tail: String::new(),
            total_bytes: 0,
            newlines: 0,
            saw_data: false,
            truncated: false,
            max_bytes,
            max_lines,
        }
    }

    /// Keep image sequences (SIXEL, iTerm2, kitty) whole, as the agent does when the
    /// terminal shows images; one longer than the byte limit is dropped.
    pub fn keeping_images(mut self) -> Self {
        self.sanitizer = Sanitizer::keeping_images(self.max_bytes);
        self
    }

    pub fn push(&mut self, chunk: &str) {
        if chunk.is_empty() {
            return;
        }
        self.saw_data = true;
        self.total_bytes += chunk.len();
        self.newlines += chunk.matches('\n').count();
        let clean = self.sanitizer.feed(chunk);
        self.take(clean);
    }

    /// A chunk of a JS string whose `lone_surrogates` were removed (as the agent's
    /// `sanitizeText` removes them); each still counts as the 3 bytes of the U+FFFD that
    /// `Buffer.byteLength` counts for it.
    pub fn push_js_text(&mut self, text: &str, lone_surrogates: usize) {
        if lone_surrogates > 0 {
            self.saw_data = true;
            self.total_bytes += lone_surrogates * '\u{fffd}'.len_utf8();
        }
        if text.is_empty() {
            self.spill_if_over();
        } else {
            self.push(text);
        }
    }

    fn take(&mut self, clean: String) {
        if !clean.is_empty() {
            self.tail.push_str(&clean);
            if self.state == FileState::Writing {
                self.write(|s, path| s.append(path, clean.as_bytes()));
            }
        }
        self.spill_if_over();
    }

    fn spill_if_over(&mut self) {
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
        if let Err(e) = op(&*self.storage, &target.path) {
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

    /// The end of the output and its summary; `notice` (the agent's) comes first as a
    /// `[notice]` line. Chunks pushed after a dump continue the same output.
    pub fn dump(&mut self, notice: Option<&str>) -> OutputSummary {
        self.sanitizer.finish();
        let output = truncate_tail(&self.tail, self.max_lines, self.max_bytes).content;
        let notice_line = notice
            .filter(|n| !n.is_empty())
            .map(|n| format!("[{n}]\n"))
            .unwrap_or_default();
        OutputSummary {
            output_lines: lines(&output),
            output_bytes: output.len(),
            output: notice_line + &output,
            truncated: self.truncated,
            total_lines: if self.saw_data { self.newlines + 1 } else { 0 },
            total_bytes: self.total_bytes,
            artifact_id: (self.state == FileState::Writing)
                .then(|| self.target.as_ref().and_then(|t| t.id.clone()))
                .flatten(),
            artifact_error: self.artifact_error.clone(),
        }
    }
}

/// The agent's line count: LFs plus one, of any text at all.
fn lines(text: &str) -> usize {
    if !text.is_empty() {
        text.matches('\n').count() + 1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{MemoryStorage, StorageExt};

    #[test]
    fn spills_to_the_artifact_once_over_50_kib() {
        let s = Rc::new(MemoryStorage::new());
        s.mkdir_all("/a").unwrap();
        let mut sink = OutputSink::new(
            s.clone(),
            Some(ArtifactTarget {
                id: Some("3".into()),
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
        let d = sink.dump(None);
        assert!(d.truncated);
        assert_eq!(d.artifact_id.as_deref(), Some("3"));
        assert_eq!(
            s.read("/a/3.bash.log").unwrap().len(),
            100_000,
            "the whole output, buffered part first"
        );
        assert!(d.output_bytes <= DEFAULT_MAX_BYTES);
        assert_eq!(
            d.total_lines, 1001,
            "1000 LFs: the agent counts one line more"
        );
        assert_eq!(d.total_bytes, 100_000);
    }

    #[test]
    fn falls_back_to_tail_only_when_the_artifact_cannot_be_written() {
        let s = Rc::new(MemoryStorage::new()); // no /missing dir: the write fails
        let mut sink = OutputSink::new(
            s.clone(),
            Some(ArtifactTarget {
                id: Some("0".into()),
                path: "/missing/0.bash.log".into(),
            }),
        );
        for _ in 0..600 {
            sink.push(&format!("{}\n", "z".repeat(99)));
        }
        let d = sink.dump(None);
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
        let s = Rc::new(MemoryStorage::new());
        let mut sink = OutputSink::new(
            s.clone(),
            Some(ArtifactTarget {
                id: Some("0".into()),
                path: "/a/0.log".into(),
            }),
        );
        sink.push("hello\n");
        let d = sink.dump(None);
        assert!(!d.truncated);
        assert_eq!(d.artifact_id, None);
        assert_eq!(d.output, "hello\n");
    }

    #[test]
    fn the_notice_comes_first_as_a_bracketed_line() {
        let mut sink = OutputSink::new(Rc::new(MemoryStorage::new()), None);
        sink.push("out\n");
        let d = sink.dump(Some("exit code 1"));
        assert_eq!(d.output, "[exit code 1]\nout\n");
        assert_eq!((d.output_lines, d.output_bytes), (2, 4), "the tail alone");
    }

    #[test]
    fn a_sequence_split_between_two_chunks_leaves_nothing_behind() {
        let mut sink = OutputSink::new(Rc::new(MemoryStorage::new()), None);
        sink.push("\u{1b}[3");
        sink.push("1mred\u{1b}[0m\r");
        sink.push("\nnext\r");
        let d = sink.dump(None);
        assert_eq!(d.output, "red\nnext");
        assert_eq!(d.total_lines, 2);
    }

    /// The bash tool's markers after a command's output (a 26-byte working directory).
    const MARKERS: &str = "__XCSH_CWD__:/tmp/xcsh-test/project-one:__XCSH_CWD_END__\n__XCSH_EXIT__:3:__XCSH_EXIT_END__\n";

    #[test]
    fn the_end_of_a_long_line_stays_in_the_tail() {
        assert_eq!(MARKERS.len(), 91);
        let mut sink = OutputSink::new(Rc::new(MemoryStorage::new()), None);
        sink.push(&"x".repeat(100_000));
        sink.push(MARKERS);
        let d = sink.dump(None);
        assert!(d.truncated);
        assert!(d
            .output
            .ends_with(&format!("{}{MARKERS}", "x".repeat(1000))));
        assert_eq!(
            d.output_bytes, DEFAULT_MAX_BYTES,
            "a byte tail, no column clipping"
        );
        assert_eq!(d.total_bytes, 100_091, "the line and the markers");
        assert_eq!(d.total_lines, 3);
    }

    #[test]
    fn lines_are_the_lfs_plus_one_as_the_agent_counts_them() {
        let count = |chunks: &[&str]| {
            let mut sink = OutputSink::new(Rc::new(MemoryStorage::new()), None);
            chunks.iter().for_each(|c| sink.push(c));
            let d = sink.dump(None);
            (d.total_lines, d.output_lines)
        };
        assert_eq!(count(&["a\nb\n"]), (3, 3));
        assert_eq!(count(&["a\n", "b"]), (2, 2));
        assert_eq!(count(&["abc", "def"]), (1, 1));
        assert_eq!(count(&[]), (0, 0));
        assert_eq!(
            count(&["\u{1b}[0m"]),
            (1, 0),
            "pushed, though nothing is left to show"
        );
    }

    #[test]
    fn bytes_are_counted_as_pushed_before_sanitizing() {
        let mut sink = OutputSink::new(Rc::new(MemoryStorage::new()), None);
        sink.push("\u{1b}[31mred\u{1b}[0m\r\n");
        let d = sink.dump(None);
        assert_eq!((d.output.as_str(), d.output_bytes), ("red\n", 4));
        assert_eq!(d.total_bytes, 14);
    }

    #[test]
    fn a_lone_surrogate_is_dropped_and_counted_as_its_replacement_character() {
        let mut sink = OutputSink::new(Rc::new(MemoryStorage::new()), None);
        // "a", a lone high surrogate, "b", a lone low surrogate, then a valid pair.
        sink.push_js_text("ab😀", 2);
        let d = sink.dump(None);
        assert_eq!(d.output, "ab😀");
        assert_eq!(
            d.total_bytes,
            1 + 3 + 1 + 3 + 4,
            "as Buffer.byteLength counts it"
        );
    }

    #[test]
    fn a_target_without_an_id_reports_no_artifact_id() {
        let s = Rc::new(MemoryStorage::new());
        s.mkdir_all("/a").unwrap();
        let target = ArtifactTarget {
            id: None,
            path: "/a/0.log".into(),
        };
        let mut sink = OutputSink::with_limits(s.clone(), Some(target), 3000, 3);
        sink.push("abcdef");
        let d = sink.dump(None);
        assert!(d.truncated);
        assert_eq!(d.artifact_id, None);
        assert_eq!(s.read("/a/0.log").unwrap(), b"abcdef");
    }

    #[test]
    fn image_sequences_are_kept_only_when_the_terminal_shows_images() {
        let sixel = "\u{1b}Pqabc\u{1b}\\";
        let dump = |sink: OutputSink| {
            let mut sink = sink;
            sink.push(&format!("before\n{sixel}\nafter"));
            sink.dump(None).output
        };
        let s = || OutputSink::new(Rc::new(MemoryStorage::new()), None);
        assert_eq!(
            dump(s().keeping_images()),
            format!("before\n{sixel}\nafter")
        );
        assert_eq!(dump(s()), "before\n\nafter");
    }
}
