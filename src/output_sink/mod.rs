//! `OutputSink`: streaming tool output with a bounded tail for display and the full output
//! spilled to an artifact file once it grows past 50 KiB or 3000 lines. The cuts it uses
//! are in `truncate`, the chunk sanitizer in `sanitize`.

use crate::storage::Storage;
use std::rc::Rc;

mod sanitize;
mod truncate;

pub use sanitize::{sanitize_chunk, Sanitizer};
use truncate::count_lines;
pub use truncate::{
    truncate_head, truncate_line, truncate_tail, Truncation, DEFAULT_MAX_BYTES,
    DEFAULT_MAX_COLUMNS, DEFAULT_MAX_LINES,
};

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
/// across chunks) and added to a tail kept in memory. Past `max_bytes` bytes or
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
    total_bytes: usize,
    newlines: usize,
    ends_with_newline: bool,
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
            ends_with_newline: false,
            truncated: false,
            max_bytes,
            max_lines,
        }
    }

    pub fn push(&mut self, chunk: &str) {
        let clean = self.sanitizer.feed(chunk);
        self.take(clean);
    }

    fn take(&mut self, clean: String) {
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
        let rest = self.sanitizer.finish();
        self.take(rest);
        let view = truncate_tail(&self.tail, self.max_lines, self.max_bytes);
        let output: Vec<String> = view
            .content
            .split('\n')
            .map(|l| truncate_line(l, DEFAULT_MAX_COLUMNS).into_owned())
            .collect();
        let output = output.join("\n");
        let notice_line = notice
            .filter(|n| !n.is_empty())
            .map(|n| format!("[{n}]\n"))
            .unwrap_or_default();
        OutputSummary {
            output_lines: count_lines(&output),
            output_bytes: output.len(),
            output: notice_line + &output,
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
    fn spills_to_the_artifact_once_over_50_kib() {
        let s = Rc::new(MemoryStorage::new());
        s.mkdir_all("/a").unwrap();
        let mut sink = OutputSink::new(
            s.clone(),
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
        let d = sink.dump(None);
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
        let s = Rc::new(MemoryStorage::new()); // no /missing dir: the write fails
        let mut sink = OutputSink::new(
            s.clone(),
            Some(ArtifactTarget {
                id: "0".into(),
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
                id: "0".into(),
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
        assert_eq!((d.output_lines, d.output_bytes), (1, 4), "the tail alone");
    }

    #[test]
    fn a_sequence_split_between_two_chunks_leaves_nothing_behind() {
        let mut sink = OutputSink::new(Rc::new(MemoryStorage::new()), None);
        sink.push("\u{1b}[3");
        sink.push("1mred\u{1b}[0m\r");
        sink.push("\nnext\r");
        let d = sink.dump(None);
        assert_eq!(d.output, "red\nnext\n");
        assert_eq!(d.total_lines, 2);
    }
}
