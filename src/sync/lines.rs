//! The lines sync moves: a session file's, and a segment's (checked before anything of
//! it is merged).

use super::merge::Node;
use crate::entry::{Entry, Payload, Record, Text};
use crate::jsonl::next_line;

/// The target the `session_info` entries share in the merge's label order (no entry id
/// has a NUL in it).
const SESSION_NAME: &str = "\0session name";

/// One complete line (its bytes without the newline) and what the merge needs of it.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub bytes: Vec<u8>,
    /// `None` for a line that is no entry (a header line).
    pub id: Option<String>,
    pub parent: Option<String>,
    pub timestamp: String,
    pub label_target: Option<String>,
    pub blobs: Vec<String>,
}

impl Line {
    /// A line that is no entry: it keeps its place in the file, nothing depends on it.
    pub fn opaque(bytes: &[u8]) -> Line {
        Line {
            bytes: bytes.to_vec(),
            id: None,
            parent: None,
            timestamp: String::new(),
            label_target: None,
            blobs: vec![],
        }
    }

    pub fn node(&self) -> Node<'_> {
        Node {
            id: self.id.as_deref(),
            parent: self.parent.as_deref(),
            timestamp: &self.timestamp,
            label_target: self.label_target.as_deref(),
        }
    }
}

/// Why a line is not one sync can carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineProblem {
    NotUtf8,
    NotARecord(String),
    /// A header line (`"type":"session"`).
    Header {
        id: Option<String>,
    },
}

/// Reads one line.
pub(crate) fn read_line(bytes: &[u8]) -> Result<Line, LineProblem> {
    let text = std::str::from_utf8(bytes).map_err(|_| LineProblem::NotUtf8)?;
    match Entry::parse_record(Text::from(text.to_string())) {
        Ok(Record::Entry(e)) => Ok(Line {
            bytes: bytes.to_vec(),
            blobs: if e.has_blob_refs() {
                crate::blob::referenced_hashes(e.json())
            } else {
                vec![]
            },
            timestamp: e.timestamp().to_string(),
            label_target: match &e.payload {
                Payload::Label { target_id, .. } => target_id.clone(),
                // pi's name of a session: its latest `session_info` entry names it, so the
                // names are ordered by time as the labels of one target are.
                Payload::SessionInfo => Some(SESSION_NAME.to_string()),
                _ => None,
            },
            id: Some(e.id),
            parent: e.parent_id,
        }),
        Ok(Record::Header(t)) => Err(LineProblem::Header {
            id: crate::entry::Header::from_json(t.as_str()).map(|h| h.id().to_string()),
        }),
        Err(e) => Err(LineProblem::NotARecord(e.to_string())),
    }
}

/// The complete lines of `bytes` (a last line with no newline is not complete: a writer
/// is still writing it) with their end offsets; blank lines are skipped.
pub(crate) fn complete_lines(bytes: &[u8]) -> (Vec<(usize, usize)>, usize) {
    let mut pos = 0;
    let mut out = vec![];
    let end = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
    while pos < end {
        let Some((s, e)) = next_line(&bytes[..end], &mut pos) else {
            break;
        };
        if bytes[s..e].iter().any(|b| !b.is_ascii_whitespace()) {
            out.push((s, e));
        }
    }
    (out, end)
}

/// Why a segment was refused (nothing of it is merged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    #[error("{key}: cut short (its last line has no newline)")]
    CutShort { key: String },
    #[error("{key}: line {line} is not a session entry: {why}")]
    Corrupt {
        key: String,
        line: usize,
        why: String,
    },
    #[error("{key}: belongs to session {found}, not {expected}")]
    Foreign {
        key: String,
        found: String,
        expected: String,
    },
    #[error("{key}: empty")]
    Empty { key: String },
}

/// A segment's header line (when it starts one) and entries, checked: complete lines,
/// each an entry, the only header the first line and of this session.
pub(crate) fn read_segment(
    key: &str,
    data: &[u8],
    session: &str,
) -> Result<(Option<Vec<u8>>, Vec<Line>), SegmentError> {
    if data.is_empty() {
        return Err(SegmentError::Empty { key: key.into() });
    }
    if data.last() != Some(&b'\n') {
        return Err(SegmentError::CutShort { key: key.into() });
    }
    let (spans, _) = complete_lines(data);
    let mut header = None;
    let mut lines = Vec::with_capacity(spans.len());
    for (n, &(s, e)) in spans.iter().enumerate() {
        match read_line(&data[s..e]) {
            Ok(l) => lines.push(l),
            Err(LineProblem::Header { id }) if n == 0 => {
                let found = id.unwrap_or_default();
                if found != session {
                    return Err(SegmentError::Foreign {
                        key: key.into(),
                        found,
                        expected: session.into(),
                    });
                }
                header = Some(data[s..e].to_vec());
            }
            Err(p) => {
                let why = match p {
                    LineProblem::NotUtf8 => "not UTF-8".to_string(),
                    LineProblem::NotARecord(w) => w,
                    LineProblem::Header { .. } => "a header line after the first".to_string(),
                };
                return Err(SegmentError::Corrupt {
                    key: key.into(),
                    line: n + 1,
                    why,
                });
            }
        }
    }
    Ok((header, lines))
}
