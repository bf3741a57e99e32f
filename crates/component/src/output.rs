//! The exported `output-sink` resource: the core's [`OutputSink`] held in the instance.

use std::cell::RefCell;

use xcsh_session::{ArtifactTarget, OutputSink, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

use crate::exports::xcsh::session::session_api::{GuestOutputSink, OutputSummary};
use crate::storage;

pub struct OutputSinkResource(RefCell<OutputSink>);

/// A WIT `u64` count as the core's `usize`, saturating.
fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl GuestOutputSink for OutputSinkResource {
    fn new(
        artifact_path: Option<String>,
        artifact_id: Option<String>,
        spill_threshold: Option<u64>,
        max_lines: Option<u64>,
    ) -> Self {
        let target = artifact_path.map(|path| ArtifactTarget {
            id: artifact_id,
            path,
        });
        OutputSinkResource(RefCell::new(OutputSink::with_limits(
            storage(),
            target,
            max_lines.map_or(DEFAULT_MAX_LINES, count),
            spill_threshold.map_or(DEFAULT_MAX_BYTES, count),
        )))
    }

    fn push(&self, chunk: String) {
        self.0.borrow_mut().push(&chunk)
    }

    fn dump(&self, notice: Option<String>) -> OutputSummary {
        let d = self.0.borrow_mut().dump(notice.as_deref());
        OutputSummary {
            output: d.output,
            truncated: d.truncated,
            total_lines: d.total_lines as u64,
            total_bytes: d.total_bytes as u64,
            output_lines: d.output_lines as u64,
            output_bytes: d.output_bytes as u64,
            artifact_id: d.artifact_id,
            artifact_error: d.artifact_error,
        }
    }
}
