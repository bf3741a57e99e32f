//! `<agentDir>/blob-referrers.jsonl`: the session files outside `<agentDir>/sessions` that
//! reference blobs in this store, and the blobs each one pins.
//!
//! The file is append-only, one JSON record a line:
//! - `{"path", "notedMs", "pins": [hash, …]}`: the session at `path` references these
//!   blobs. Written before the session's text that references them: the first time a
//!   process writes such a session, with every blob the whole session references, then
//!   with each new one. Garbage collection never deletes a pinned blob.
//! - `{"path", "notedMs"}` (written before pins existed): the session references blobs
//!   here, which ones is not recorded.
//! - `{"forget", "before", "notedMs"}`: `gc --forget-missing` found the session at
//!   `forget` gone; the lines of that path that start before byte `before` no longer
//!   count. A session recorded again at that path later (a line past `before`) counts.
//!
//! Reading is strict, because a line skipped is a session whose images may be deleted: a
//! line that is not one of these records (a stray byte, a `notedMs` written as a string)
//! makes [`read`] fail, and collection with it. Only a UTF-8 BOM at the start, blank
//! lines, CRLF ends and a last line without its newline that does not parse (an append
//! cut short, whose session text was not written yet) are let through.

use crate::blob::is_valid_hash;
use crate::paths;
use crate::storage::{Storage, StorageError, StorageResult};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One recorded session, its lines merged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Recorded {
    pub path: String,
    /// The blobs it pins.
    pub pins: HashSet<String>,
    /// Whether some line of it was written with pins: then its pins are every blob it
    /// referenced when this library last wrote it. A session recorded only by lines
    /// without pins references blobs nobody can name once its file is gone.
    pub pins_known: bool,
}

/// The referrers file, read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Referrers {
    /// In the order of their first line.
    pub sessions: Vec<Recorded>,
    /// The bytes read: a `forget` record written now cancels only lines before this.
    pub read_len: usize,
}

/// Why the referrers file cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreadable {
    pub line: usize,
    pub why: String,
}

/// The records of a referrers file, checked: every line must be one of the records
/// above (see the module's doc for what is let through).
pub(crate) fn parse(bytes: &[u8]) -> Result<Referrers, Unreadable> {
    let bom = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    // Each path's lines: where the line starts, and its pins (`None`: a line without).
    type Lines = Vec<(usize, Option<Vec<String>>)>;
    let mut lines: Vec<(String, Lines)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut start = bom;
    let mut number = 0;
    while start < bytes.len() {
        number += 1;
        let (end, terminated) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, true),
            None => (bytes.len(), false),
        };
        let line_start = start;
        let raw = &bytes[start..end];
        start = end + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let record = match std::str::from_utf8(raw)
            .map_err(|_| Bad::Other("it is not UTF-8 text".to_string()))
            .and_then(record_of)
        {
            Ok(r) => r,
            // An append cut short (the last line, or one the next append ended): the
            // session text it records is written after it, so nothing refers to what it
            // would have pinned yet.
            Err(Bad::CutShort) => continue,
            Err(Bad::Other(_)) if !terminated => break,
            Err(Bad::Other(why)) => return Err(Unreadable { line: number, why }),
        };
        match record {
            Line::Session { path, pins } => {
                let i = *index.entry(path.clone()).or_insert_with(|| {
                    lines.push((path, Vec::new()));
                    lines.len() - 1
                });
                lines[i].1.push((line_start, pins));
            }
            Line::Forget { path, before } => {
                if let Some(&i) = index.get(&path) {
                    lines[i].1.retain(|(at, _)| *at as u64 >= before);
                }
            }
        }
    }
    let sessions = lines
        .into_iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(path, l)| {
            let mut recorded = Recorded {
                path,
                ..Recorded::default()
            };
            for pins in l.into_iter().filter_map(|(_, p)| p) {
                recorded.pins_known = true;
                recorded.pins.extend(pins);
            }
            recorded
        })
        .collect();
    Ok(Referrers {
        sessions,
        read_len: bytes.len(),
    })
}

/// One line of the file.
enum Line {
    Session {
        path: String,
        pins: Option<Vec<String>>,
    },
    Forget {
        path: String,
        before: u64,
    },
}

/// Why a line is no record.
enum Bad {
    /// A record's beginning: JSON that ends before the record does.
    CutShort,
    Other(String),
}

impl From<String> for Bad {
    fn from(why: String) -> Bad {
        Bad::Other(why)
    }
}

impl From<&str> for Bad {
    fn from(why: &str) -> Bad {
        Bad::Other(why.to_string())
    }
}

/// A line's record, or why it is none.
fn record_of(text: &str) -> Result<Line, Bad> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() && text.starts_with('{') {
            Bad::CutShort
        } else {
            Bad::Other(format!("it is not a JSON record ({e})"))
        }
    })?;
    let Value::Object(map) = value else {
        return Err("it is not a JSON object".into());
    };
    let path_of = |key: &str| -> Result<String, String> {
        match map.get(key) {
            Some(Value::String(p)) if p.starts_with('/') => Ok(p.clone()),
            Some(Value::String(p)) => Err(format!("its \"{key}\" {p:?} is not an absolute path")),
            _ => Err(format!("its \"{key}\" is not a string")),
        }
    };
    if !map.get("notedMs").is_some_and(|v| v.is_i64() || v.is_u64()) {
        return Err("its \"notedMs\" is not a whole number".into());
    }
    if map.contains_key("forget") {
        return Ok(Line::Forget {
            path: path_of("forget")?,
            before: map
                .get("before")
                .and_then(Value::as_u64)
                .ok_or("its \"before\" is not a whole number")?,
        });
    }
    let path = path_of("path")?;
    let pins = match map.get("pins") {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|h| match h.as_str() {
                    Some(h) if is_valid_hash(h) => Ok(h.to_string()),
                    _ => Err(format!("its \"pins\" holds {h}, not a blob hash")),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err("its \"pins\" is not a list".into()),
    };
    Ok(Line::Session { path, pins })
}

/// Read and check `<agentDir>/blob-referrers.jsonl` (absent: nothing recorded). An
/// unreadable line is an error naming the file and the line.
pub(crate) fn read(storage: &dyn Storage, agent_dir: &str) -> StorageResult<Referrers> {
    let file = paths::blob_referrers_file(agent_dir);
    let bytes = match storage.read(&file) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(Referrers::default()),
        Err(e) => return Err(e),
    };
    parse(&bytes).map_err(|u| {
        StorageError::Other(format!(
            "garbage collection cannot trust {file}: line {} is unreadable ({}); a session it \
             names could lose its images, so nothing was deleted (repair or remove that line)",
            u.line, u.why
        ))
    })
}

/// Pin `hashes` for the session file `session_file` (outside `<agentDir>/sessions`),
/// before text referencing them is written to it. Nothing for a file under
/// `<agentDir>/sessions` (collection reads those) or for no hashes.
pub(crate) fn pin(
    storage: &dyn Storage,
    agent_dir: &str,
    session_file: &str,
    hashes: &[String],
) -> StorageResult<()> {
    if hashes.is_empty() || paths::is_under_sessions_root(agent_dir, session_file) {
        return Ok(());
    }
    let mut record = serde_json::Map::new();
    record.insert("path".into(), Value::String(session_file.to_string()));
    record.insert("notedMs".into(), Value::from(storage.env().now_ms()));
    record.insert(
        "pins".into(),
        Value::Array(hashes.iter().cloned().map(Value::String).collect()),
    );
    append_lines(storage, agent_dir, &[Value::Object(record).to_string()])
}

/// `gc --forget-missing`: the lines of each of `paths` read so far (before `read_len`)
/// no longer count.
pub(crate) fn forget(
    storage: &dyn Storage,
    agent_dir: &str,
    paths: &[String],
    read_len: usize,
) -> StorageResult<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let now = storage.env().now_ms();
    let records: Vec<String> = paths
        .iter()
        .map(|path| {
            let mut record = serde_json::Map::new();
            record.insert("forget".into(), Value::String(path.clone()));
            record.insert("before".into(), Value::from(read_len as u64));
            record.insert("notedMs".into(), Value::from(now));
            Value::Object(record).to_string()
        })
        .collect();
    append_lines(storage, agent_dir, &records)
}

/// Append records, each on a line of its own (the first after a last line cut short
/// too), durably, in one append.
fn append_lines(storage: &dyn Storage, agent_dir: &str, records: &[String]) -> StorageResult<()> {
    let list = paths::blob_referrers_file(agent_dir);
    let known = match storage.read(&list) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => return Err(e),
    };
    storage.mkdir_all(agent_dir)?;
    let mut lines = String::new();
    if !known.is_empty() && !known.ends_with(b"\n") {
        lines.push('\n');
    }
    for record in records {
        lines.push_str(record);
        lines.push('\n');
    }
    storage.append(&list, lines.as_bytes())?;
    storage.fsync(&list)
}

/// The session files a referrers file records (in the order first recorded, forgotten
/// ones left out), as collection reads it: a host that confines garbage collection lets
/// it read these paths. A file collection cannot trust records none (it refuses anyway).
pub fn referrers_in(bytes: &[u8]) -> Vec<String> {
    parse(bytes)
        .map(|r| r.sessions.into_iter().map(|s| s.path).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(c: char) -> String {
        c.to_string().repeat(64)
    }

    fn line(path: &str, pins: Option<&[String]>) -> String {
        match pins {
            None => format!("{{\"path\":\"{path}\",\"notedMs\":1}}\n"),
            Some(p) => format!(
                "{{\"path\":\"{path}\",\"notedMs\":1,\"pins\":{}}}\n",
                serde_json::to_string(p).unwrap()
            ),
        }
    }

    #[test]
    fn a_forget_record_cancels_only_the_lines_read_before_it() {
        let mut text = line("/a.jsonl", Some(&[hash('a')]));
        text += &line("/b.jsonl", None);
        let read_len = text.len();
        // Recorded again after the collection read the file, before it wrote the forget.
        text += &line("/a.jsonl", Some(&[hash('c')]));
        text += &format!("{{\"forget\":\"/a.jsonl\",\"before\":{read_len},\"notedMs\":2}}\n");
        text += &format!("{{\"forget\":\"/b.jsonl\",\"before\":{read_len},\"notedMs\":2}}\n");
        let read = parse(text.as_bytes()).map_err(|u| u.why).unwrap();
        assert_eq!(read.sessions.len(), 1);
        assert_eq!(read.sessions[0].path, "/a.jsonl");
        assert_eq!(read.sessions[0].pins, HashSet::from([hash('c')]));
        assert!(read.sessions[0].pins_known);
    }

    #[test]
    fn lines_without_pins_record_a_session_whose_blobs_are_unknown() {
        let text = line("/a.jsonl", None) + &line("/a.jsonl", None);
        let read = parse(text.as_bytes()).map_err(|u| u.why).unwrap();
        assert_eq!(read.sessions.len(), 1);
        assert!(!read.sessions[0].pins_known && read.sessions[0].pins.is_empty());
    }

    #[test]
    fn every_record_that_is_not_one_is_named_by_its_line() {
        for (bad, why) in [
            ("[1]", "not a JSON object"),
            (
                "{\"path\":\"a.jsonl\",\"notedMs\":1}",
                "not an absolute path",
            ),
            ("{\"path\":\"/a\",\"notedMs\":1.5}", "notedMs"),
            (
                "{\"path\":\"/a\",\"notedMs\":1,\"pins\":[\"x\"]}",
                "not a blob hash",
            ),
            (
                "{\"path\":\"/a\",\"notedMs\":1,\"pins\":\"x\"}",
                "not a list",
            ),
            ("{\"forget\":\"/a\",\"notedMs\":1}", "before"),
            ("{\"path\":7,\"notedMs\":1}", "not a string"),
            ("{\"path\":\"/a\"}x", "not a JSON record"),
        ] {
            let text = line("/ok.jsonl", None) + bad + "\n";
            let err = parse(text.as_bytes())
                .err()
                .unwrap_or_else(|| panic!("{bad}"));
            assert_eq!(err.line, 2, "{bad}");
            assert!(err.why.contains(why), "{bad}: {}", err.why);
        }
    }
}
