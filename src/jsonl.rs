//! The lenient JSONL reader (`parseJsonlLenient` of the reference, with one deliberate
//! change: two records glued on one line, `}{"type":...`, are both recovered).
//!
//! Accepts blank lines, CRLF, a UTF-8 BOM at the start and values that span lines
//! (pretty-printed). A line that does not parse is skipped and reported; a torn last line
//! (no newline after it, does not parse) is dropped and reported.

use serde_json::value::RawValue;

/// One JSON value found in the text, as a byte range of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub start: usize,
    pub end: usize,
}

/// Why a piece of the file was not read as a record (JSON: `"unparsable"`, `"tornTail"`,
/// `"gluedRecord"`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum IssueKind {
    /// A line that is not JSON; skipped.
    Unparsable,
    /// The last line is incomplete (a write was cut short); dropped.
    TornTail,
    /// A second record glued to the previous one on the same line; recovered.
    GluedRecord,
}

/// Something the reader skipped or repaired, with its 1-based line number (JSON:
/// `{"line", "kind", "detail"}`; the byte offset stays internal).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Issue {
    pub line: usize,
    #[serde(skip)]
    pub offset: usize,
    pub kind: IssueKind,
    pub detail: String,
}

#[derive(Debug, Default)]
pub struct Parsed {
    pub records: Vec<Record>,
    pub issues: Vec<Issue>,
}

const BOM: &str = "\u{feff}";

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && matches!(bytes[pos], b' ' | b'\t' | b'\r' | b'\n') {
        pos += 1;
    }
    pos
}

/// The next non-blank line at or after `*pos`, trimmed of spaces, tabs and CRs, as a byte
/// range: how the full reader's fast path and the index's scan both cut a file into lines.
pub(crate) fn next_line(b: &[u8], pos: &mut usize) -> Option<(usize, usize)> {
    while *pos < b.len() {
        let start = *pos;
        let end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |i| start + i);
        *pos = end + 1;
        let (mut s, mut e) = (start, end);
        while s < e && matches!(b[s], b' ' | b'\t' | b'\r') {
            s += 1;
        }
        while e > s && matches!(b[e - 1], b' ' | b'\t' | b'\r') {
            e -= 1;
        }
        if s < e {
            return Some((s, e));
        }
    }
    None
}

/// 1-based line number of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    Lines::new(text.as_bytes()).at(offset)
}

/// Line numbers of increasing offsets, counting each newline once: a file with an issue
/// on every line costs linear time, not quadratic.
struct Lines<'b> {
    bytes: &'b [u8],
    offset: usize,
    line: usize,
}

impl<'b> Lines<'b> {
    fn new(bytes: &'b [u8]) -> Self {
        Lines {
            bytes,
            offset: 0,
            line: 1,
        }
    }

    /// The 1-based line of `offset` (offsets must not decrease between calls).
    fn at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.bytes.len());
        debug_assert!(offset >= self.offset, "offsets go forward");
        if offset > self.offset {
            self.line += memchr::memchr_iter(b'\n', &self.bytes[self.offset..offset]).count();
            self.offset = offset;
        }
        self.line
    }
}

/// Read every JSON value of `text`, leniently. Never fails: what cannot be read is reported.
pub fn parse_lenient(text: &str) -> Parsed {
    let bytes = text.as_bytes();
    let mut out = Parsed::default();
    let mut pos = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let mut prev_end: Option<usize> = None;
    let mut lines = Lines::new(bytes);
    'outer: loop {
        pos = skip_ws(bytes, pos);
        if pos >= bytes.len() {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<&RawValue>();
        loop {
            let before = pos + stream.byte_offset();
            match stream.next() {
                None => break 'outer,
                Some(Ok(raw)) => {
                    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
                    let end = start + raw.get().len();
                    if let Some(prev) = prev_end {
                        if !bytes[prev..start].contains(&b'\n') {
                            out.issues.push(Issue {
                                line: lines.at(start),
                                offset: start,
                                kind: IssueKind::GluedRecord,
                                detail: "record glued to the previous one on the same line".into(),
                            });
                        }
                    }
                    out.records.push(Record { start, end });
                    prev_end = Some(end);
                }
                Some(Err(err)) => {
                    let failed = skip_ws(bytes, before);
                    match bytes[failed..].iter().position(|&b| b == b'\n') {
                        Some(nl) => {
                            out.issues.push(Issue {
                                line: lines.at(failed),
                                offset: failed,
                                kind: IssueKind::Unparsable,
                                detail: err.to_string(),
                            });
                            pos = failed + nl + 1;
                            prev_end = None;
                            continue 'outer;
                        }
                        None => {
                            out.issues.push(Issue {
                                line: lines.at(failed),
                                offset: failed,
                                kind: IssueKind::TornTail,
                                detail: err.to_string(),
                            });
                            break 'outer;
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<&str> {
        parse_lenient(text)
            .records
            .iter()
            .map(|r| &text[r.start..r.end])
            .collect()
    }

    #[test]
    fn blank_lines_crlf_and_bom_are_accepted() {
        let text = "\u{feff}{\"a\":1}\r\n\r\n{\"b\":2}\r\n";
        assert_eq!(values(text), vec!["{\"a\":1}", "{\"b\":2}"]);
        assert!(parse_lenient(text).issues.is_empty());
    }

    #[test]
    fn unparsable_lines_are_skipped_and_reported() {
        let text = "{\"a\":1}\nnot json\n{\"b\":2}\n";
        let parsed = parse_lenient(text);
        assert_eq!(values(text), vec!["{\"a\":1}", "{\"b\":2}"]);
        assert_eq!(parsed.issues.len(), 1);
        assert_eq!(parsed.issues[0].kind, IssueKind::Unparsable);
        assert_eq!(parsed.issues[0].line, 2);
    }

    #[test]
    fn torn_last_line_is_dropped() {
        let text = "{\"a\":1}\n{\"b\":";
        let parsed = parse_lenient(text);
        assert_eq!(values(text), vec!["{\"a\":1}"]);
        assert_eq!(parsed.issues[0].kind, IssueKind::TornTail);
    }

    #[test]
    fn torn_line_in_the_middle_does_not_swallow_the_next_line() {
        let text = "{\"a\":\"unterminated\n{\"b\":2}\n";
        assert_eq!(values(text), vec!["{\"b\":2}"]);
    }

    #[test]
    fn pretty_printed_values_span_lines() {
        let text = "{\n  \"a\": 1,\n  \"b\": [1, 2]\n}\n{\"c\":3}\n";
        assert_eq!(values(text).len(), 2);
    }

    #[test]
    fn glued_records_are_both_recovered() {
        let text = "{\"type\":\"message\",\"n\":1}{\"type\":\"compaction\",\"n\":2}\n{\"n\":3}\n";
        let parsed = parse_lenient(text);
        assert_eq!(values(text).len(), 3);
        assert_eq!(parsed.issues.len(), 1);
        assert_eq!(parsed.issues[0].kind, IssueKind::GluedRecord);
    }

    #[test]
    fn empty_text_has_no_records() {
        assert!(parse_lenient("").records.is_empty());
        assert!(parse_lenient("\n\n").records.is_empty());
    }
}
