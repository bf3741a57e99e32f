//! The session manager: an append-only tree of entries with a movable leaf, loaded from
//! and persisted to a JSONL file through the storage port.
//!
//! Persistence follows the agent: nothing is written before the first assistant message
//! (unless [`Session::ensure_on_disk`] asks for it), then the whole session is written by
//! an atomic rewrite, then each new entry is appended. The first persistence failure is
//! latched and returned by every later operation. Unlike the agent, opening a file never
//! destroys data: a file with an invalid header or unreadable lines is copied aside
//! (`<file>.corrupt-<timestamp>`) before anything rewrites it.

use crate::blob::{self, BlobStore};
use crate::context::{self, Leaf, SessionContext};
use crate::entry::{compose_line, Entry, EntryType, Header, Payload, Text};
use crate::error::{Result, SessionError};
use crate::ids::{entry_id, SessionIdGen};
use crate::json::{push_quoted, quote, to_text};
use crate::jsonl::{self, Issue, IssueKind};
use crate::migration::{self, Migration};
use crate::paths;
use crate::persist::prepare_for_persistence;
use crate::storage::{atomic_write, join, parent, Storage, StorageError};
use crate::time::{iso_from_ms, ms_from_iso};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// How a session relates to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// No file (the agent's `SessionManager.inMemory`).
    InMemory,
    /// Loaded for viewing: never writes, not even a migration.
    ReadOnly,
    /// Writes through to its file.
    Persistent,
}

/// Options for [`Session::open`].
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub persistence: Persistence,
    /// `~/.xcsh/agent` (blobs live in `<agent_dir>/blobs`).
    pub agent_dir: String,
    /// cwd for a header that has to be created (missing or unreadable file).
    pub cwd: String,
}

/// Options for [`Session::create`].
#[derive(Debug, Clone, Default)]
pub struct CreateOptions {
    pub agent_dir: String,
    pub cwd: String,
    /// Explicit session directory; default: the cwd's directory under the agent dir.
    pub session_dir: Option<String>,
    pub parent_session: Option<String>,
}

/// A record that parsed as JSON but is not an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonEntry {
    pub offset: usize,
    pub reason: String,
}

/// What loading found and did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    pub file_existed: bool,
    /// Lines skipped, torn tail dropped, glued records recovered.
    pub issues: Vec<Issue>,
    pub non_entries: Vec<NonEntry>,
    /// The first record was not a valid header; what follows was salvaged.
    pub header_problem: Option<String>,
    pub invalid_utf8: bool,
    pub duplicate_ids: Vec<String>,
    pub migration: Option<Migration>,
    /// Where the original bytes were kept before a rewrite.
    pub backup_path: Option<String>,
    pub missing_blobs: Vec<String>,
    /// The version written in the file before migration.
    pub file_version: u64,
}

impl LoadReport {
    /// Did reading drop anything the file holds? Then its bytes are kept before a rewrite.
    pub fn lossy(&self) -> bool {
        self.invalid_utf8
            || self.header_problem.is_some()
            || !self.non_entries.is_empty()
            || self.issues.iter().any(|i| i.kind != IssueKind::GluedRecord)
    }
}

/// The fields of a compaction entry (`appendCompaction`).
#[derive(Debug, Clone, Default)]
pub struct CompactionInput {
    pub summary: String,
    pub short_summary: Option<String>,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// JSON text.
    pub details: Option<String>,
    pub from_extension: Option<bool>,
    /// JSON text.
    pub preserve_data: Option<String>,
}

/// A record on its way to becoming an entry (with its byte offset in the file).
enum Candidate {
    /// Already read (the fast path validated and parsed it in one go).
    Parsed(Entry, usize),
    /// JSON text still to parse (lenient path, possibly migrated).
    Raw(Text, usize),
}

/// The next non-blank line at or after `*pos`, trimmed, as a byte range.
fn next_line(b: &[u8], pos: &mut usize) -> Option<(usize, usize)> {
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

/// Below this, parsing on one thread is fast enough.
#[cfg(not(target_arch = "wasm32"))]
const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// Run `work(start, stop)` on all cores over `b[from..]` cut into one chunk per core,
/// each cut just after a newline, and return the results in order. `None` when the text
/// is small, there is one core, or a worker panicked.
#[cfg(not(target_arch = "wasm32"))]
fn on_line_chunks<T: Send>(
    b: &[u8],
    from: usize,
    work: impl Fn(usize, usize) -> T + Sync,
) -> Option<Vec<T>> {
    let len = b.len().checked_sub(from)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads < 2 || len < PARALLEL_MIN_BYTES {
        return None;
    }
    let mut bounds = vec![from];
    for k in 1..threads {
        let p = from + len * k / threads;
        let cut = memchr::memchr(b'\n', &b[p..]).map_or(b.len(), |i| p + i + 1);
        if cut > *bounds.last()? {
            bounds.push(cut);
        }
    }
    bounds.push(b.len());
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| (w[0], w[1]))
            .map(|(a, z)| scope.spawn(move || work(a, z)))
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    })
}

/// `String::from_utf8`, faster: ASCII runs are checked a vector at a time, and large
/// inputs on all cores (native builds) in chunks cut after newlines (a newline byte
/// never sits inside a multi-byte character).
pub fn utf8(bytes: Vec<u8>) -> std::result::Result<String, std::string::FromUtf8Error> {
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(valid) = on_line_chunks(&bytes, 0, |a, z| crate::scan::is_utf8(&bytes[a..z])) {
        if valid.into_iter().all(|v| v) {
            // SAFETY: every chunk is valid UTF-8 and the cuts fall after ASCII newlines,
            // so the whole is valid UTF-8.
            return Ok(unsafe { String::from_utf8_unchecked(bytes) });
        }
    }
    if crate::scan::is_utf8(&bytes) {
        // SAFETY: just checked.
        return Ok(unsafe { String::from_utf8_unchecked(bytes) });
    }
    String::from_utf8(bytes)
}

/// Large current files, one record per line: the lines are independent, so they are
/// parsed on all cores (native builds) in order-preserving chunks. `None` when the file is
/// small, or when a chunk meets a line that is not a complete JSON value (the sequential
/// reader then handles the file, lenient tail included).
#[cfg(not(target_arch = "wasm32"))]
fn parse_lines_parallel(
    text: &Arc<String>,
    from: usize,
) -> Option<(Vec<Candidate>, Vec<NonEntry>)> {
    let b = text.as_bytes();
    let chunk = |start: usize, stop: usize| -> Option<(Vec<Candidate>, Vec<NonEntry>)> {
        let mut out = Vec::with_capacity((stop - start) / 1024 + 16);
        let mut non_entries = Vec::new();
        let mut pos = start;
        while let Some((s, e)) = next_line(&b[..stop], &mut pos) {
            match Entry::parse(Text::Shared {
                buf: text.clone(),
                start: s,
                end: e,
            }) {
                Ok(entry) => out.push(Candidate::Parsed(entry, s)),
                Err(crate::entry::EntryError::NotAnObject(_))
                    if serde_json::from_str::<serde::de::IgnoredAny>(&text[s..e]).is_err() =>
                {
                    return None
                }
                Err(err) => non_entries.push(NonEntry {
                    offset: s,
                    reason: err.to_string(),
                }),
            }
        }
        Some((out, non_entries))
    };
    let parts: Vec<(Vec<Candidate>, Vec<NonEntry>)> = on_line_chunks(b, from, chunk)?
        .into_iter()
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let mut non_entries = Vec::new();
    for (o, n) in parts {
        out.extend(o);
        non_entries.extend(n);
    }
    Some((out, non_entries))
}

/// Progress reports while parsing: one per ~1% of the text (at least 256 KiB apart).
struct ProgressTick {
    total: usize,
    step: usize,
    next: usize,
}

impl ProgressTick {
    fn new(total: usize) -> ProgressTick {
        let step = (total / 100).max(256 << 10);
        ProgressTick {
            total,
            step,
            next: step,
        }
    }

    #[inline]
    fn at(&mut self, done: usize, progress: &mut dyn FnMut(usize, usize)) {
        if done >= self.next {
            progress(done, self.total);
            self.next = done + self.step;
        }
    }
}

/// The original content of a file whose load was lossy, kept aside before a rewrite.
enum Backup {
    Text(Arc<String>),
    Bytes(Vec<u8>),
}

impl Backup {
    fn bytes(&self) -> &[u8] {
        match self {
            Backup::Text(t) => t.as_bytes(),
            Backup::Bytes(b) => b,
        }
    }
}

/// One session.
pub struct Session {
    storage: Rc<dyn Storage>,
    persistence: Persistence,
    file: Option<String>,
    blobs_dir: String,
    header: Header,
    entries: Vec<Entry>,
    by_id: HashMap<String, usize>,
    leaf: Option<String>,
    labels: HashMap<String, String>,
    has_assistant: bool,
    /// The file holds the whole session (appends may go straight to it).
    flushed: bool,
    /// The file on disk does not end in a newline (torn tail): write one before appending.
    needs_newline: bool,
    /// Original bytes to keep aside before the first rewrite (lossy load).
    pending_backup: Option<Backup>,
    persist_error: Option<SessionError>,
    /// This session's writer lock (taken at open for writing, or at the first write).
    lock: Option<crate::lock::SessionLock>,
    /// What the file looked like after our last read or write: a different size or
    /// mtime means someone else changed it.
    disk: Option<crate::storage::FileStat>,
    warnings: Vec<String>,
    report: LoadReport,
}

fn sanitize_name(name: &str) -> String {
    let first = name.split(['\n', '\r']).next().unwrap_or("");
    first
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .to_string()
}

fn json_arg(what: &str, text: &str) -> Result<String> {
    serde_json::from_str::<Value>(text)
        .map(|v| to_text(&v))
        .map_err(|e| SessionError::InvalidInput(format!("{what} is not valid JSON: {e}")))
}

impl Session {
    fn blank(
        storage: Rc<dyn Storage>,
        persistence: Persistence,
        file: Option<String>,
        agent_dir: &str,
        header: Header,
    ) -> Session {
        Session {
            storage,
            persistence,
            file,
            blobs_dir: paths::blobs_dir(agent_dir),
            header,
            entries: Vec::new(),
            by_id: HashMap::new(),
            leaf: None,
            labels: HashMap::new(),
            has_assistant: false,
            flushed: false,
            needs_newline: false,
            pending_backup: None,
            persist_error: None,
            lock: None,
            disk: None,
            warnings: Vec::new(),
            report: LoadReport {
                file_version: crate::entry::CURRENT_SESSION_VERSION,
                ..LoadReport::default()
            },
        }
    }

    fn new_header(storage: &dyn Storage, cwd: &str, parent_session: Option<&str>) -> Header {
        let now = storage.now_ms();
        let id = SessionIdGen::new(storage.random_u64()).next(now);
        Header::new(&id, &iso_from_ms(now), cwd, parent_session)
    }

    /// A session that is never written (`SessionManager.inMemory`).
    pub fn in_memory(storage: Rc<dyn Storage>, cwd: &str) -> Session {
        let header = Self::new_header(&*storage, cwd, None);
        Self::blank(storage, Persistence::InMemory, None, "", header)
    }

    /// A new persistent session; its file appears with the first assistant message.
    pub fn create(storage: Rc<dyn Storage>, options: &CreateOptions) -> Session {
        let header = Self::new_header(&*storage, &options.cwd, options.parent_session.as_deref());
        let dir = options
            .session_dir
            .clone()
            .unwrap_or_else(|| paths::session_dir_for_cwd(&options.agent_dir, &options.cwd));
        let name = paths::session_file_name(header.timestamp().unwrap_or_default(), header.id());
        Self::blank(
            storage,
            Persistence::Persistent,
            Some(join(&dir, &name)),
            &options.agent_dir,
            header,
        )
    }

    /// Load a session file. A missing file gives a new empty session at that path.
    pub fn open(storage: Rc<dyn Storage>, path: &str, options: &OpenOptions) -> Result<Session> {
        Self::open_with_progress(storage, path, options, &mut |_, _| {})
    }

    /// [`Session::open`], calling `progress(bytes done, total bytes)` while the file is
    /// parsed: `(0, total)` first, `(total, total)` last, never backwards, about every 1%
    /// in between (native builds parse files of 8 MB or more on all cores, and only
    /// report the start and the end of that).
    pub fn open_with_progress(
        storage: Rc<dyn Storage>,
        path: &str,
        options: &OpenOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Session> {
        let bytes = match storage.read(path) {
            Ok(b) => Some(b),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e.into()),
        };
        let mut session = match bytes {
            Some(bytes) if !bytes.is_empty() => {
                let (text, original) = match utf8(bytes) {
                    Ok(s) => (s, None),
                    Err(e) => {
                        let bytes = e.into_bytes();
                        (String::from_utf8_lossy(&bytes).into_owned(), Some(bytes))
                    }
                };
                let invalid_utf8 = original.is_some();
                let mut s = Self::from_text_with(
                    storage,
                    options.persistence,
                    Some(path.to_string()),
                    &options.agent_dir,
                    &options.cwd,
                    Arc::new(text),
                    progress,
                );
                s.report.invalid_utf8 = invalid_utf8;
                if let Some(bytes) = original {
                    // What is kept aside is the file as it was, not the repaired text.
                    s.pending_backup = Some(Backup::Bytes(bytes));
                }
                s.report.file_existed = true;
                s
            }
            other => {
                let header = Self::new_header(&*storage, &options.cwd, None);
                let mut s = Self::blank(
                    storage,
                    options.persistence,
                    Some(path.to_string()),
                    &options.agent_dir,
                    header,
                );
                s.report.file_existed = other.is_some();
                s
            }
        };
        if session.persistence == Persistence::Persistent && session.report.file_existed {
            session.flushed = true;
            session.take_lock()?;
            session.disk = session.storage.stat(path).ok();
            let repair =
                session.report.migration.is_some() || session.report.header_problem.is_some();
            if repair {
                session.write_whole()?;
            }
        }
        Ok(session)
    }

    /// Read a session from its text without any file (viewers, `parseSession`).
    pub fn from_text(storage: Rc<dyn Storage>, text: &str, agent_dir: &str) -> Session {
        Self::from_string(storage, text.to_string(), agent_dir)
    }

    /// [`Session::from_text`] taking the text by value (no copy).
    pub fn from_string(storage: Rc<dyn Storage>, text: String, agent_dir: &str) -> Session {
        Self::from_string_with_progress(storage, text, agent_dir, &mut |_, _| {})
    }

    /// [`Session::from_string`] reporting `(bytes done, total bytes)` as it goes, so a
    /// viewer can show progress on a large file.
    pub fn from_string_with_progress(
        storage: Rc<dyn Storage>,
        text: String,
        agent_dir: &str,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Session {
        Self::from_text_with(
            storage,
            Persistence::ReadOnly,
            None,
            agent_dir,
            "",
            Arc::new(text),
            progress,
        )
    }

    fn from_text_with(
        storage: Rc<dyn Storage>,
        persistence: Persistence,
        file: Option<String>,
        agent_dir: &str,
        cwd: &str,
        text: Arc<String>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Session {
        let total = text.len();
        progress(0, total);
        let (header, candidates, mut report) = match Self::read_fast(&text, progress) {
            Some(read) => read,
            None => Self::read_lenient(&*storage, cwd, &text),
        };
        let mut session = Self::blank(storage, persistence, file, agent_dir, header);
        let mut tick = ProgressTick::new(total);
        session.entries.reserve_exact(candidates.len());
        session.by_id.reserve(candidates.len());
        let count = candidates.len().max(1);
        for (i, candidate) in candidates.into_iter().enumerate() {
            let parsed_already = matches!(candidate, Candidate::Parsed(..));
            let (parsed, offset) = match candidate {
                Candidate::Parsed(entry, offset) => (Ok(entry), offset),
                Candidate::Raw(text, offset) => (Entry::parse(text), offset),
            };
            // Records the fast reader left unparsed are parsed here: report those
            // (migrated records have no offset in the file: estimate by position).
            if !parsed_already {
                let estimate = (i as u64 * total as u64 / count as u64) as usize;
                tick.at(offset.max(estimate), progress);
            }
            match parsed {
                Ok(entry) if entry.type_name() == "session" => report.non_entries.push(NonEntry {
                    offset,
                    reason: "a second session header".into(),
                }),
                Ok(entry) => {
                    if session.by_id.contains_key(&entry.id) {
                        report.duplicate_ids.push(entry.id.clone());
                    }
                    session.push_entry(entry);
                }
                Err(e) => report.non_entries.push(NonEntry {
                    offset,
                    reason: e.to_string(),
                }),
            }
        }
        let store = BlobStore::new(&*session.storage, session.blobs_dir.clone());
        for entry in session.entries.iter().filter(|e| e.has_blob_refs()) {
            for hash in blob::referenced_hashes(entry.json()) {
                if !store.exists(&hash) && !report.missing_blobs.contains(&hash) {
                    report.missing_blobs.push(hash);
                }
            }
        }
        for hash in &report.missing_blobs {
            session
                .warnings
                .push(format!("blob {hash} not found; the reference is kept"));
        }
        session.needs_newline = !text.ends_with('\n');
        progress(total, total);
        if report.lossy() {
            session.pending_backup = Some(Backup::Text(text));
        }
        session.report = report;
        session
    }

    /// The common case, one record per line in a current file: each line is validated and
    /// read in a single pass by `Entry::parse`. `None` when the file does not start with a
    /// current header line. The first line that is not a complete JSON value (glued
    /// records, a pretty-printed value, a torn write) hands the rest of the file to the
    /// lenient reader.
    fn read_fast(
        text: &Arc<String>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Option<(Header, Vec<Candidate>, LoadReport)> {
        let b = text.as_bytes();
        let mut pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let (hs, he) = next_line(b, &mut pos)?;
        let header = Header::from_json(&text[hs..he])?;
        if header.version() < crate::entry::CURRENT_SESSION_VERSION {
            return None;
        }
        let mut report = LoadReport {
            file_version: header.version(),
            ..LoadReport::default()
        };
        #[cfg(not(target_arch = "wasm32"))]
        if let Some((out, non_entries)) = parse_lines_parallel(text, pos) {
            report.non_entries = non_entries;
            return Some((header, out, report));
        }
        let mut out = Vec::with_capacity(b.len() / 1024 + 16);
        let mut tick = ProgressTick::new(b.len());
        while let Some((start, end)) = next_line(b, &mut pos) {
            tick.at(start, progress);
            let line = Text::Shared {
                buf: text.clone(),
                start,
                end,
            };
            match Entry::parse(line) {
                Ok(entry) => out.push(Candidate::Parsed(entry, start)),
                Err(crate::entry::EntryError::NotAnObject(_))
                    if serde_json::from_str::<serde::de::IgnoredAny>(&text[start..end])
                        .is_err() =>
                {
                    let rest = jsonl::parse_lenient(&text[start..]);
                    let lines_before = jsonl::line_of(text, start) - 1;
                    report.issues.extend(rest.issues.into_iter().map(|mut i| {
                        i.offset += start;
                        i.line += lines_before;
                        i
                    }));
                    out.extend(rest.records.iter().map(|r| {
                        Candidate::Raw(
                            Text::Shared {
                                buf: text.clone(),
                                start: r.start + start,
                                end: r.end + start,
                            },
                            r.start + start,
                        )
                    }));
                    break;
                }
                Err(e) => report.non_entries.push(NonEntry {
                    offset: start,
                    reason: e.to_string(),
                }),
            }
        }
        Some((header, out, report))
    }

    /// Any file: the lenient JSONL reader, header salvage and migrations.
    fn read_lenient(
        storage: &dyn Storage,
        cwd: &str,
        text: &Arc<String>,
    ) -> (Header, Vec<Candidate>, LoadReport) {
        let parsed = jsonl::parse_lenient(text);
        let mut report = LoadReport {
            issues: parsed.issues,
            ..LoadReport::default()
        };
        let shared = |r: &jsonl::Record| Text::Shared {
            buf: text.clone(),
            start: r.start,
            end: r.end,
        };
        let mut records = parsed.records.iter();
        let first = records.next();
        let header = first.and_then(|r| Header::from_json(&text[r.start..r.end]));
        let (mut header, rest): (Header, Vec<&jsonl::Record>) = match header {
            Some(h) => (h, records.collect()),
            None => {
                let mut h = Self::new_header(storage, cwd, None);
                if first.is_none() && !text.trim().is_empty() {
                    report.header_problem = Some(
                        "no session header found: nothing in the file could be read as JSON".into(),
                    );
                }
                if first.is_some() {
                    report.header_problem = Some("the first record is not a session header (type \"session\" with a string id); a new header was made and the entries salvaged".into());
                }
                let all: Vec<&jsonl::Record> = parsed.records.iter().collect();
                // Salvaged entries without ids are treated like a v1 file.
                let has_ids = all.iter().any(|r| {
                    crate::entry::pick(&text[r.start..r.end], &["id"])
                        .ok()
                        .and_then(|f| f[0])
                        .is_some()
                });
                if !has_ids && !all.is_empty() {
                    h.remove("version");
                }
                (h, all)
            }
        };
        report.file_version = header.version();

        // Records that can be entries: JSON objects with a string type (other than a
        // header). Only v1 files need this sorted out before parsing (their entries have
        // no ids yet); later versions are classified by `Entry::parse` itself.
        let mut candidates: Vec<Text> = Vec::with_capacity(rest.len());
        let needs_ids = header.version() < 2;
        for r in rest {
            if !needs_ids {
                candidates.push(shared(r));
                continue;
            }
            let raw = &text[r.start..r.end];
            let ty = crate::entry::pick(raw, &["type"])
                .ok()
                .and_then(|f| f[0].and_then(crate::json::raw_str).map(|s| s.into_owned()));
            match ty {
                Some(t) if t == "session" => report.non_entries.push(NonEntry {
                    offset: r.start,
                    reason: "a second session header".into(),
                }),
                Some(_) => candidates.push(shared(r)),
                None => report.non_entries.push(NonEntry {
                    offset: r.start,
                    reason: "not an object with a string \"type\"".into(),
                }),
            }
        }
        report.migration = migration::migrate(&mut header, &mut candidates);
        let candidates = candidates
            .into_iter()
            .map(|t| {
                let offset = match &t {
                    Text::Shared { start, .. } => *start,
                    Text::Owned(_) => 0,
                };
                Candidate::Raw(t, offset)
            })
            .collect();
        (header, candidates, report)
    }

    fn push_entry(&mut self, entry: Entry) {
        if entry.is_assistant_message() {
            self.has_assistant = true;
        }
        if let Payload::Label {
            target_id: Some(target),
            label,
        } = &entry.payload
        {
            match label {
                Some(l) => self.labels.insert(target.clone(), l.clone()),
                None => self.labels.remove(target),
            };
        }
        // Reuse the leaf's buffer: loading pushes every entry of the file through here.
        match &mut self.leaf {
            Some(leaf) => {
                leaf.clear();
                leaf.push_str(&entry.id);
            }
            None => self.leaf = Some(entry.id.clone()),
        }
        self.by_id.insert(entry.id.clone(), self.entries.len());
        self.entries.push(entry);
    }

    // ---- reading ----

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn session_id(&self) -> &str {
        self.header.id()
    }

    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The storage port this session uses (shared with sessions it opens).
    pub fn storage(&self) -> Rc<dyn Storage> {
        self.storage.clone()
    }

    pub fn persistence(&self) -> Persistence {
        self.persistence
    }

    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// Warnings gathered so far (missing blobs, the latched persistence error once).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// All entries in insertion order (the header excluded).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn by_id(&self) -> &HashMap<String, usize> {
        &self.by_id
    }

    pub fn entry(&self, id: &str) -> Result<&Entry> {
        self.by_id
            .get(id)
            .map(|&i| &self.entries[i])
            .ok_or_else(|| SessionError::EntryNotFound(id.to_string()))
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    pub fn leaf_entry(&self) -> Option<&Entry> {
        self.leaf.as_deref().and_then(|id| self.entry(id).ok())
    }

    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(String::as_str)
    }

    /// Entries whose parent is `id`, in insertion order.
    pub fn children(&self, id: &str) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(id))
            .collect()
    }

    /// The path root → `from` (default: the leaf; no leaf: empty).
    pub fn branch_path(&self, from: Option<&str>) -> Result<Vec<&Entry>> {
        let start = match from {
            Some(id) => Some(
                *self
                    .by_id
                    .get(id)
                    .ok_or_else(|| SessionError::EntryNotFound(id.to_string()))?,
            ),
            None => self
                .leaf
                .as_deref()
                .and_then(|id| self.by_id.get(id).copied()),
        };
        Ok(match start {
            Some(i) => context::path_to_root(&self.entries, &self.by_id, i)
                .0
                .into_iter()
                .map(|i| &self.entries[i])
                .collect(),
            None => Vec::new(),
        })
    }

    /// The entry's JSON with blob references resolved (what `getEntries` hands out).
    pub fn entry_json<'e>(&self, entry: &'e Entry) -> Cow<'e, str> {
        if entry.has_blob_refs() {
            blob::rehydrate(
                entry.json(),
                &BlobStore::new(&*self.storage, self.blobs_dir.clone()),
            )
        } else {
            Cow::Borrowed(entry.json())
        }
    }

    /// `buildSessionContext` for the current leaf (`Leaf::Last` when there is none yet
    /// because nothing was appended, `Leaf::Null` after `reset_leaf`).
    pub fn context(&self) -> SessionContext<'_> {
        match &self.leaf {
            Some(id) => self.context_at(Leaf::Id(id)),
            None if self.entries.is_empty() => SessionContext::empty(),
            None => self.context_at(Leaf::Null),
        }
    }

    pub fn context_at<'s>(&'s self, leaf: Leaf) -> SessionContext<'s> {
        let store = BlobStore::new(&*self.storage, self.blobs_dir.clone());
        let text = |e: &'s Entry| message_text(e, &store);
        context::build_session_context(&self.entries, &self.by_id, leaf, &text)
    }

    /// The tree of all entries: roots are entries with a null, self or missing parent;
    /// children are ordered by timestamp.
    pub fn tree(&self) -> Tree {
        let mut roots = Vec::new();
        let mut children = vec![Vec::new(); self.entries.len()];
        for (i, e) in self.entries.iter().enumerate() {
            match e
                .parent_id
                .as_deref()
                .and_then(|p| self.by_id.get(p).copied())
            {
                Some(p) if p != i && self.by_id.get(&e.id) == Some(&i) => children[p].push(i),
                _ => roots.push(i),
            }
        }
        let key = |i: &usize| ms_from_iso(self.entries[*i].timestamp()).unwrap_or(i64::MAX);
        roots.sort_by_key(key);
        for c in children.iter_mut() {
            c.sort_by_key(key);
        }
        // A cycle among non-root entries has no root: show it from its first entry.
        let mut reached = vec![false; self.entries.len()];
        let mut stack: Vec<usize> = roots.clone();
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut reached[i], true) {
                stack.extend(&children[i]);
            }
        }
        for i in 0..self.entries.len() {
            if !reached[i] {
                roots.push(i);
                let mut stack = vec![i];
                while let Some(j) = stack.pop() {
                    if !std::mem::replace(&mut reached[j], true) {
                        stack.extend(&children[j]);
                    }
                }
                children.iter_mut().for_each(|c| c.retain(|&k| k != i));
            }
        }
        Tree { roots, children }
    }

    // ---- writing ----

    fn check_writable(&self) -> Result<()> {
        if let Some(e) = &self.persist_error {
            return Err(e.clone());
        }
        if self.persistence == Persistence::ReadOnly {
            return Err(SessionError::ReadOnly(
                self.file.clone().unwrap_or_default(),
            ));
        }
        Ok(())
    }

    fn latch<T>(&mut self, result: std::result::Result<T, StorageError>) -> Result<T> {
        result.map_err(|e| {
            let err = SessionError::Persistence {
                file: self.file.clone().unwrap_or_default(),
                cause: e.to_string(),
            };
            if self.persist_error.is_none() {
                self.warnings.push(err.to_string());
                self.persist_error = Some(err.clone());
            }
            err
        })
    }

    fn persisted_line<'e>(
        &self,
        entry: &'e Entry,
    ) -> std::result::Result<Cow<'e, str>, StorageError> {
        let store = BlobStore::new(&*self.storage, self.blobs_dir.clone());
        prepare_for_persistence(entry.json(), &mut |bytes: &[u8]| {
            store.put(bytes).map(|p| p.reference).map_err(|e| match e {
                blob::BlobError::Storage(s) => s,
                other => StorageError::Other(other.to_string()),
            })
        })
    }

    fn keep_backup(&mut self) -> std::result::Result<(), StorageError> {
        let (Some(original), Some(file)) = (self.pending_backup.as_ref(), self.file.as_ref())
        else {
            return Ok(());
        };
        let stamp = iso_from_ms(self.storage.now_ms()).replace([':', '.'], "-");
        let backup = format!("{file}.corrupt-{stamp}");
        atomic_write(&*self.storage, &backup, original.bytes())?;
        self.report.backup_path = Some(backup.clone());
        self.warnings.push(format!(
            "{file} had unreadable content; its original bytes are kept in {backup}"
        ));
        self.pending_backup = None;
        Ok(())
    }

    /// The whole file as this session would write it.
    pub fn to_jsonl(&self) -> std::result::Result<String, StorageError> {
        let mut out = String::with_capacity(
            self.entries
                .iter()
                .map(|e| e.json().len() + 1)
                .sum::<usize>()
                + 256,
        );
        out.push_str(&self.header.to_json());
        out.push('\n');
        for e in &self.entries {
            out.push_str(&self.persisted_line(e)?);
            out.push('\n');
        }
        Ok(out)
    }

    /// Take the writer lock if this session does not hold it yet.
    fn take_lock(&mut self) -> Result<()> {
        if self.lock.is_some() || self.persistence != Persistence::Persistent {
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        match crate::lock::SessionLock::acquire(&*self.storage, &file) {
            Ok(lock) => {
                self.lock = Some(lock);
                Ok(())
            }
            Err(crate::lock::LockError::Held(owner)) => Err(SessionError::Locked {
                file,
                owner: owner.to_string(),
            }),
            Err(crate::lock::LockError::Unreadable) => Err(SessionError::Locked {
                file,
                owner: "an unreadable lock file (another writer may be starting)".into(),
            }),
            // A write that fails while taking the lock is a persistence failure like any other.
            Err(crate::lock::LockError::Storage(e)) => self.latch(Err(e)),
        }
    }

    /// Before any write: hold the lock, and make sure nobody changed the file since we
    /// last read or wrote it (a full rewrite would silently drop their change).
    fn guard_write(&mut self) -> Result<()> {
        self.take_lock()?;
        let (Some(expected), Some(file)) = (self.disk, self.file.clone()) else {
            return Ok(());
        };
        if !self.flushed {
            return Ok(());
        }
        let now = match self.storage.stat(&file) {
            Ok(s) => Some(s),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e.into()),
        };
        if now.map(|n| (n.size, n.mtime_ms)) != Some((expected.size, expected.mtime_ms)) {
            return Err(SessionError::ExternallyModified { file });
        }
        Ok(())
    }

    fn remember_disk(&mut self) {
        self.disk = self.file.as_deref().and_then(|f| self.storage.stat(f).ok());
    }

    /// Guarded, latched atomic rewrite of the whole file.
    fn write_whole(&mut self) -> Result<()> {
        self.guard_write()?;
        let r = self.rewrite_file();
        self.latch(r)?;
        self.remember_disk();
        Ok(())
    }

    fn rewrite_file(&mut self) -> std::result::Result<(), StorageError> {
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        self.keep_backup()?;
        let content = self.to_jsonl()?;
        atomic_write(&*self.storage, &file, content.as_bytes())?;
        self.needs_newline = false;
        self.flushed = true;
        Ok(())
    }

    fn persist_last(&mut self) -> Result<()> {
        if self.persistence != Persistence::Persistent || self.file.is_none() {
            return Ok(());
        }
        if !self.flushed {
            if !self.has_assistant {
                return Ok(());
            }
            return self.write_whole();
        }
        self.guard_write()?;
        let entry = self.entries.last().expect("called after a push");
        let r = self.persisted_line(entry).and_then(|line| {
            let mut data = String::with_capacity(line.len() + 2);
            if self.needs_newline {
                data.push('\n');
            }
            data.push_str(&line);
            data.push('\n');
            self.storage
                .append(self.file.as_deref().unwrap_or_default(), data.as_bytes())
        });
        if r.is_ok() {
            self.needs_newline = false;
        }
        self.latch(r)?;
        self.remember_disk();
        Ok(())
    }

    /// Append one entry given as (key, JSON text) payload fields; returns its id.
    pub fn append_fields(&mut self, type_name: &str, fields: &[(&str, String)]) -> Result<String> {
        self.check_writable()?;
        if type_name == "session" {
            return Err(SessionError::InvalidInput(
                "\"session\" is the header type, not an entry type".into(),
            ));
        }
        let storage = self.storage.clone();
        let id = entry_id(&self.by_id, || storage.random_u64());
        let timestamp = iso_from_ms(self.storage.now_ms());
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let line = compose_line(type_name, &id, self.leaf.as_deref(), &timestamp, &borrowed);
        let entry = Entry::parse(Text::from(line))
            .map_err(|e| SessionError::InvalidInput(e.to_string()))?;
        self.push_entry(entry);
        self.persist_last()?;
        Ok(id)
    }

    /// Append an entry given as a JSON object without `id`, `parentId` and `timestamp`
    /// (they are assigned); its other keys keep their order.
    pub fn append_entry_json(&mut self, json: &str) -> Result<String> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| SessionError::InvalidInput(format!("entry is not valid JSON: {e}")))?;
        let Value::Object(obj) = value else {
            return Err(SessionError::InvalidInput(
                "entry must be a JSON object".into(),
            ));
        };
        let Some(Value::String(ty)) = obj.get("type") else {
            return Err(SessionError::InvalidInput(
                "entry needs a string \"type\"".into(),
            ));
        };
        for reserved in ["id", "parentId", "timestamp"] {
            if obj.contains_key(reserved) {
                return Err(SessionError::InvalidInput(format!(
                    "entry must not contain \"{reserved}\": it is assigned on append"
                )));
            }
        }
        match EntryType::parse(ty) {
            EntryType::Message if !obj.get("message").is_some_and(Value::is_object) => {
                return Err(SessionError::InvalidInput(
                    "a message entry needs a \"message\" object".into(),
                ));
            }
            EntryType::Label => {
                let target = obj
                    .get("targetId")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.entry(target)?;
            }
            _ => {}
        }
        let ty = ty.clone();
        let fields: Vec<(&str, String)> = obj
            .iter()
            .filter(|(k, _)| *k != "type")
            .map(|(k, v)| (k.as_str(), to_text(v)))
            .collect();
        self.append_fields(&ty, &fields)
    }

    /// `appendMessage`: the message object as JSON text.
    pub fn append_message(&mut self, message_json: &str) -> Result<String> {
        let m = json_arg("message", message_json)?;
        if !m.starts_with('{') {
            return Err(SessionError::InvalidInput(
                "message must be a JSON object".into(),
            ));
        }
        self.append_fields("message", &[("message", m)])
    }

    /// `appendThinkingLevelChange`; an absent level is written as `null`.
    pub fn append_thinking_level_change(&mut self, level: Option<&str>) -> Result<String> {
        self.append_fields(
            "thinking_level_change",
            &[(
                "thinkingLevel",
                level.map(quote).unwrap_or_else(|| "null".into()),
            )],
        )
    }

    /// `appendModelChange`: `model` is `provider/id`.
    pub fn append_model_change(&mut self, model: &str, role: Option<&str>) -> Result<String> {
        let mut fields = vec![("model", quote(model))];
        if let Some(r) = role {
            fields.push(("role", quote(r)));
        }
        self.append_fields("model_change", &fields)
    }

    pub fn append_compaction(&mut self, c: &CompactionInput) -> Result<String> {
        let mut fields = vec![("summary", quote(&c.summary))];
        if let Some(s) = &c.short_summary {
            fields.push(("shortSummary", quote(s)));
        }
        fields.push(("firstKeptEntryId", quote(&c.first_kept_entry_id)));
        fields.push(("tokensBefore", c.tokens_before.to_string()));
        if let Some(d) = &c.details {
            fields.push(("details", json_arg("details", d)?));
        }
        if let Some(f) = c.from_extension {
            fields.push(("fromExtension", f.to_string()));
        }
        if let Some(p) = &c.preserve_data {
            fields.push(("preserveData", json_arg("preserveData", p)?));
        }
        self.append_fields("compaction", &fields)
    }

    /// `appendCustomEntry`: extension state, ignored by context building.
    pub fn append_custom_entry(&mut self, custom_type: &str, data: Option<&str>) -> Result<String> {
        let mut fields = vec![("customType", quote(custom_type))];
        if let Some(d) = data {
            fields.push(("data", json_arg("data", d)?));
        }
        self.append_fields("custom", &fields)
    }

    /// `appendCustomMessageEntry`: `content` is a string or a block array, as JSON text.
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: &str,
        display: bool,
        details: Option<&str>,
        attribution: Option<&str>,
    ) -> Result<String> {
        let mut fields = vec![
            ("customType", quote(custom_type)),
            ("content", json_arg("content", content)?),
            ("display", display.to_string()),
        ];
        if let Some(d) = details {
            fields.push(("details", json_arg("details", d)?));
        }
        fields.push(("attribution", quote(attribution.unwrap_or("agent"))));
        self.append_fields("custom_message", &fields)
    }

    /// `appendLabelChange`: `None` clears the label. The target must exist.
    pub fn append_label_change(&mut self, target_id: &str, label: Option<&str>) -> Result<String> {
        self.entry(target_id)?;
        let mut fields = vec![("targetId", quote(target_id))];
        if let Some(l) = label {
            fields.push(("label", quote(l)));
        }
        self.append_fields("label", &fields)
    }

    pub fn append_ttsr_injection(&mut self, rules: &[String]) -> Result<String> {
        self.append_fields("ttsr_injection", &[("injectedRules", list_json(rules))])
    }

    pub fn append_session_init(
        &mut self,
        system_prompt: &str,
        task: &str,
        tools: &[String],
        output_schema: Option<&str>,
    ) -> Result<String> {
        let mut fields = vec![
            ("systemPrompt", quote(system_prompt)),
            ("task", quote(task)),
            ("tools", list_json(tools)),
        ];
        if let Some(s) = output_schema {
            fields.push(("outputSchema", json_arg("outputSchema", s)?));
        }
        self.append_fields("session_init", &fields)
    }

    pub fn append_mode_change(&mut self, mode: &str, data: Option<&str>) -> Result<String> {
        let mut fields = vec![("mode", quote(mode))];
        if let Some(d) = data {
            fields.push(("data", json_arg("data", d)?));
        }
        self.append_fields("mode_change", &fields)
    }

    pub fn append_context_change(
        &mut self,
        context_name: &str,
        tenant: &str,
        namespace: &str,
    ) -> Result<String> {
        self.append_fields(
            "context_change",
            &[
                ("contextName", quote(context_name)),
                ("tenant", quote(tenant)),
                ("namespace", quote(namespace)),
            ],
        )
    }

    pub fn append_service_tier_change(&mut self, tier: Option<&str>) -> Result<String> {
        self.append_fields(
            "service_tier_change",
            &[(
                "serviceTier",
                tier.map(quote).unwrap_or_else(|| "null".into()),
            )],
        )
    }

    pub fn append_mcp_tool_selection(&mut self, names: &[String]) -> Result<String> {
        self.append_fields(
            "mcp_tool_selection",
            &[("selectedToolNames", list_json(names))],
        )
    }

    /// Move the leaf to an existing entry; nothing is written.
    pub fn branch(&mut self, id: &str) -> Result<()> {
        self.entry(id)?;
        self.leaf = Some(id.to_string());
        Ok(())
    }

    /// The next append starts a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Move the leaf to `from` (`None`: before the first entry) and record a summary of the
    /// abandoned path there.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<&str>,
        from_extension: Option<bool>,
    ) -> Result<String> {
        match from {
            Some(id) => self.branch(id)?,
            None => self.reset_leaf(),
        }
        let mut fields = vec![
            ("fromId", quote(from.unwrap_or("root"))),
            ("summary", quote(summary)),
        ];
        if let Some(d) = details {
            fields.push(("details", json_arg("details", d)?));
        }
        if let Some(f) = from_extension {
            fields.push(("fromExtension", f.to_string()));
        }
        self.append_fields("branch_summary", &fields)
    }

    /// `setSessionName`: sanitized (first line, no control characters, trimmed).
    /// Returns whether the stored title changed.
    pub fn set_session_name(&mut self, name: &str, source: &str) -> Result<bool> {
        self.check_writable()?;
        let clean = sanitize_name(name);
        if clean.is_empty() {
            return Err(SessionError::InvalidInput(
                "session name is empty after sanitizing".into(),
            ));
        }
        if self.header.title() == Some(clean.as_str())
            && self.header.str_field("titleSource") == Some(source)
        {
            return Ok(false);
        }
        self.header.set("title", Value::String(clean));
        self.header
            .set("titleSource", Value::String(source.to_string()));
        if self.persistence == Persistence::Persistent && self.flushed {
            self.write_whole()?;
        }
        Ok(true)
    }

    /// Write the session now even without an assistant message (a new session is not lost
    /// when the process is interrupted before the first reply).
    pub fn ensure_on_disk(&mut self) -> Result<()> {
        self.check_writable()?;
        if self.persistence == Persistence::Persistent && !self.flushed {
            self.write_whole()?;
        }
        Ok(())
    }

    /// fsync the session file.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(e) = &self.persist_error {
            return Err(e.clone());
        }
        if self.persistence == Persistence::Persistent && self.flushed {
            let file = self.file.clone().unwrap_or_default();
            let r = self.storage.fsync(&file);
            self.latch(r)?;
        }
        Ok(())
    }

    /// Is the session's file written (entries appended from now on reach it)? Before the
    /// first assistant message, or `ensure_on_disk`, it is not, and `flush` has nothing
    /// to make durable.
    pub fn is_on_disk(&self) -> bool {
        self.persistence == Persistence::Persistent && self.flushed
    }

    /// The latched persistence error, if any.
    pub fn persist_error(&self) -> Option<&SessionError> {
        self.persist_error.as_ref()
    }

    /// `createBranchedSession`: a new session holding the path root → `leaf_id`, with the
    /// labels of its entries re-created at the end. Label entries on the path are dropped
    /// and their children re-attached to the label's parent, so no `parentId` dangles.
    /// This session then continues in the new file; returns its path (`None` in memory).
    pub fn create_branched_session(&mut self, leaf_id: &str) -> Result<Option<String>> {
        self.check_writable()?;
        let path: Vec<Entry> = self
            .branch_path(Some(leaf_id))?
            .into_iter()
            .cloned()
            .collect();
        let mut replaced: HashMap<String, Option<String>> = HashMap::new();
        let mut kept: Vec<Entry> = Vec::new();
        for entry in path {
            let parent = entry
                .parent_id
                .clone()
                .map(|p| replaced.get(&p).cloned().unwrap_or(Some(p)))
                .unwrap_or(None);
            if entry.entry_type == EntryType::Label {
                replaced.insert(entry.id.clone(), parent);
                continue;
            }
            kept.push(if parent != entry.parent_id {
                reparent(&entry, parent.as_deref())?
            } else {
                entry
            });
        }
        let labels: Vec<(String, String)> = kept
            .iter()
            .filter_map(|e| self.labels.get(&e.id).map(|l| (e.id.clone(), l.clone())))
            .collect();
        let old_file = self.file.clone();
        let header = Self::new_header(
            &*self.storage,
            self.header.cwd().unwrap_or_default(),
            old_file.as_deref().or(Some(self.header.id())),
        );
        let new_file = old_file.as_ref().map(|f| {
            join(
                parent(f),
                &paths::session_file_name(header.timestamp().unwrap_or_default(), header.id()),
            )
        });
        let agent_dir = self
            .blobs_dir
            .strip_suffix("/blobs")
            .unwrap_or("")
            .to_string();
        let mut next = Self::blank(
            self.storage.clone(),
            self.persistence,
            new_file.clone(),
            &agent_dir,
            header,
        );
        next.blobs_dir = self.blobs_dir.clone();
        for e in kept {
            next.push_entry(e);
        }
        let saved_persistence = next.persistence;
        next.persistence = Persistence::InMemory;
        for (target, label) in labels {
            next.append_label_change(&target, Some(&label))?;
        }
        next.persistence = saved_persistence;
        if next.persistence == Persistence::Persistent && next.has_assistant {
            next.write_whole()?;
        }
        *self = next;
        Ok(new_file)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(lock) = self.lock.take() {
            lock.release(&*self.storage);
        }
    }
}

impl Session {
    /// fsync and release the writer lock; later writes take it again.
    pub fn close(&mut self) -> Result<()> {
        let flushed = self.flush();
        if let Some(lock) = self.lock.take() {
            lock.release(&*self.storage);
        }
        flushed
    }

    /// The writer lock this session holds, if any.
    pub fn lock(&self) -> Option<&crate::lock::SessionLock> {
        self.lock.as_ref()
    }
}

/// What a fork did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkResult {
    pub old_file: Option<String>,
    pub new_file: Option<String>,
    /// Artifact copy failures other than "not found" (the fork still completes).
    pub warnings: Vec<String>,
}

impl Session {
    /// A copy of this session's entries under a new header, at `file`.
    fn copy_to(&self, header: Header, file: Option<String>) -> Session {
        let mut next = Session::blank(self.storage.clone(), self.persistence, file, "", header);
        next.blobs_dir = self.blobs_dir.clone();
        for e in &self.entries {
            next.push_entry(e.clone());
        }
        next.leaf = self.leaf.clone();
        next
    }

    fn write_new_file(&mut self) -> Result<()> {
        if self.persistence == Persistence::Persistent && self.file.is_some() {
            self.write_whole()?;
        }
        Ok(())
    }

    /// `fork()`: the same entries under a new session id and file in the same directory,
    /// linked by `parentSession` to the old file; the artifacts directory is copied. This
    /// session then continues in the new file.
    pub fn fork(&mut self) -> Result<ForkResult> {
        self.check_writable()?;
        let old_file = self.file.clone();
        let header = Self::new_header(
            &*self.storage,
            self.header.cwd().unwrap_or_default(),
            old_file.as_deref().or(Some(self.header.id())),
        );
        let new_file = old_file.as_ref().map(|f| {
            join(
                parent(f),
                &paths::session_file_name(header.timestamp().unwrap_or_default(), header.id()),
            )
        });
        let mut next = self.copy_to(header, new_file.clone());
        next.write_new_file()?;
        let mut warnings = Vec::new();
        if let (Some(old), Some(new)) = (&old_file, &new_file) {
            warnings.extend(crate::artifacts::copy_for_fork(
                &*self.storage,
                &paths::artifacts_dir(old),
                &paths::artifacts_dir(new),
            ));
        }
        next.warnings.extend(warnings.iter().cloned());
        *self = next;
        Ok(ForkResult {
            old_file,
            new_file,
            warnings,
        })
    }

    /// `forkFrom`: a new session in `target_cwd`'s project holding a copy of another
    /// project's session file; the source is only read.
    pub fn fork_from(
        storage: Rc<dyn Storage>,
        source: &str,
        options: &CreateOptions,
    ) -> Result<(Session, ForkResult)> {
        let source_session = Session::open(
            storage.clone(),
            source,
            &OpenOptions {
                persistence: Persistence::ReadOnly,
                agent_dir: options.agent_dir.clone(),
                cwd: options.cwd.clone(),
            },
        )?;
        if !source_session.report.file_existed {
            return Err(StorageError::NotFound(source.to_string()).into());
        }
        let fresh = Session::create(
            storage.clone(),
            &CreateOptions {
                parent_session: Some(source.to_string()),
                ..options.clone()
            },
        );
        let mut next = source_session.copy_to(fresh.header.clone(), fresh.file.clone());
        next.persistence = Persistence::Persistent;
        next.write_new_file()?;
        let mut warnings = Vec::new();
        if let Some(new) = &next.file {
            warnings.extend(crate::artifacts::copy_for_fork(
                &*storage,
                &paths::artifacts_dir(source),
                &paths::artifacts_dir(new),
            ));
        }
        let result = ForkResult {
            old_file: Some(source.to_string()),
            new_file: next.file.clone(),
            warnings,
        };
        Ok((next, result))
    }

    /// `moveTo`: move the session file and its artifacts directory into `new_cwd`'s
    /// session directory (the header's cwd updated). A failing step undoes the earlier
    /// ones, so the session is never split between two places.
    pub fn move_to(&mut self, agent_dir: &str, new_cwd: &str) -> Result<String> {
        self.check_writable()?;
        let Some(old_file) = self.file.clone() else {
            return Err(SessionError::InvalidInput(
                "an in-memory session has no file to move".into(),
            ));
        };
        let new_dir = paths::session_dir_for_cwd(agent_dir, new_cwd);
        let new_file = join(&new_dir, crate::storage::basename(&old_file));
        if new_file == old_file {
            return Ok(new_file);
        }
        if self.storage.exists(&new_file) {
            return Err(StorageError::AlreadyExists(new_file).into());
        }
        let (old_art, new_art) = (
            paths::artifacts_dir(&old_file),
            paths::artifacts_dir(&new_file),
        );
        let storage = self.storage.clone();
        let mut header = self.header.clone();
        header.set("cwd", Value::String(new_cwd.to_string()));
        // 1. the new file, complete, written atomically
        let mut moved = self.copy_to(header, Some(new_file.clone()));
        moved.flushed = self.flushed;
        if self.flushed {
            self.guard_write()?;
            storage.mkdir_all(&new_dir)?;
            moved.write_whole()?;
        }
        // 2. the artifacts directory
        let had_artifacts = storage.exists(&old_art);
        if had_artifacts {
            if let Err(e) = storage
                .mkdir_all(&new_dir)
                .and_then(|_| storage.rename(&old_art, &new_art))
            {
                let _ = storage.unlink(&new_file);
                return Err(e.into());
            }
        }
        // 3. the old file
        if self.flushed {
            if let Err(e) = storage.unlink(&old_file) {
                if had_artifacts {
                    let _ = storage.rename(&new_art, &old_art);
                }
                let _ = storage.unlink(&new_file);
                return Err(e.into());
            }
        }
        moved.report = self.report.clone();
        moved.warnings = std::mem::take(&mut self.warnings);
        moved.has_assistant = self.has_assistant;
        *self = moved;
        Ok(new_file)
    }
}

fn message_text<'e>(e: &'e Entry, store: &BlobStore) -> Cow<'e, str> {
    let m = e.message_json().unwrap_or("null");
    if e.has_blob_refs() {
        blob::rehydrate(m, store)
    } else {
        Cow::Borrowed(m)
    }
}

fn reparent(entry: &Entry, parent: Option<&str>) -> Result<Entry> {
    let mut v = entry.to_value();
    if let Value::Object(obj) = &mut v {
        obj.insert(
            "parentId".into(),
            parent
                .map(|p| Value::String(p.into()))
                .unwrap_or(Value::Null),
        );
    }
    Entry::parse(Text::from(to_text(&v))).map_err(|e| SessionError::InvalidInput(e.to_string()))
}

fn list_json(items: &[String]) -> String {
    let mut out = String::from("[");
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_quoted(&mut out, s);
    }
    out.push(']');
    out
}

/// The entry tree as indices into [`Session::entries`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub roots: Vec<usize>,
    pub children: Vec<Vec<usize>>,
}

impl Tree {
    /// Nested JSON `[{entry, label?, children: [...]}, ...]`, written without recursion
    /// (a linear session is as deep as it is long).
    pub fn to_json(&self, session: &Session) -> String {
        let mut out = String::from("[");
        // (node, next child position) frames.
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let mut first = true;
        let mut pending = self.roots.iter().rev().copied().collect::<Vec<_>>();
        let open = |out: &mut String, i: usize, first: bool| {
            if !first {
                out.push(',');
            }
            let e = &session.entries[i];
            out.push_str("{\"entry\":");
            out.push_str(&session.entry_json(e));
            if let Some(l) = session.label(&e.id) {
                out.push_str(",\"label\":");
                push_quoted(out, l);
            }
            out.push_str(",\"children\":[");
        };
        while let Some(root) = pending.pop() {
            open(&mut out, root, first);
            first = false;
            stack.push((root, 0));
            while let Some((node, pos)) = stack.last_mut() {
                let kids = &self.children[*node];
                if *pos < kids.len() {
                    let child = kids[*pos];
                    let is_first = *pos == 0;
                    *pos += 1;
                    open(&mut out, child, is_first);
                    stack.push((child, 0));
                } else {
                    out.push_str("]}");
                    stack.pop();
                }
            }
        }
        out.push(']');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;

    /// The fast line reader and the lenient reader agree on every v3 text: same entries
    /// (text and offset), same issues and non-entries.
    fn same_reading(text: &str) {
        let text = Arc::new(text.to_string());
        let storage = MemoryStorage::new();
        let Some((fh, fast, freport)) = Session::read_fast(&text, &mut |_, _| {}) else {
            panic!("fast path expected for {text:?}")
        };
        let (lh, lenient, lreport) = Session::read_lenient(&storage, "", &text);
        assert_eq!(fh, lh);
        let norm = |c: Vec<Candidate>| -> Vec<(std::result::Result<String, String>, usize)> {
            c.into_iter()
                .map(|c| match c {
                    Candidate::Parsed(e, o) => (Ok(e.json().to_string()), o),
                    Candidate::Raw(t, o) => (
                        Entry::parse(t)
                            .map(|e| e.json().to_string())
                            .map_err(|e| e.to_string()),
                        o,
                    ),
                })
                .map(|(r, o)| match r {
                    Ok(j) => (Ok(j), o),
                    Err(e) => (Err(e), o),
                })
                .collect()
        };
        let (mut f, mut l) = (norm(fast), norm(lenient));
        // The fast path reports non-entries in `report`, the lenient one as failed parses.
        for n in &freport.non_entries {
            f.push((Err(n.reason.clone()), n.offset));
        }
        f.sort_by_key(|x| x.1);
        l.sort_by_key(|x| x.1);
        assert_eq!(f, l, "{text}");
        let kinds = |r: &LoadReport| {
            r.issues
                .iter()
                .map(|i| (i.line, i.offset, i.kind.clone()))
                .collect::<Vec<_>>()
        };
        let mut fk = kinds(&freport);
        let mut lk = kinds(&lreport);
        fk.sort();
        lk.sort();
        // The lenient reader reports an unparsable middle line; the fast one hands the
        // rest to the lenient reader from that line on, which reports it the same way.
        assert_eq!(fk, lk, "{text}");
    }

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    const A: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
    const B: &str =
        r#"{"type":"label","id":"b1","parentId":"a1","timestamp":"t","targetId":"a1","label":"l"}"#;

    #[test]
    fn fast_and_lenient_readers_agree() {
        for text in [
            format!("{H}\n{A}\n{B}\n"),
            format!("\u{feff}{H}\r\n\r\n{A}\r\n{B}"),
            format!("{H}\n{A}{B}\n{B}\n"),
            format!("{H}\n{A}\nnot json\n{B}\n"),
            format!("{H}\n42\n[1]\n{{\"type\":\"x\"}}\n{A}\n"),
            format!("{H}\n{A}\n{{\n  \"type\": \"label\",\n  \"id\": \"p1\"\n}}\n{B}\n"),
            format!("{H}\n{A}\n{{\"type\":\"message\",\"id\":\"t"),
            format!("{H}\n{H}\n{A}\n"),
        ] {
            same_reading(&text);
        }
    }

    #[test]
    fn large_files_read_in_parallel_agree_with_the_lenient_reader() {
        let mut text = format!("{H}\n");
        let mut n = 0;
        while text.len() < super::PARALLEL_MIN_BYTES + (1 << 20) {
            n += 1;
            text.push_str(&format!(
                r#"{{"type":"message","id":"m{n}","parentId":"m{}","timestamp":"t","message":{{"role":"user","content":"{}"}}}}"#,
                n - 1,
                "x".repeat(n % 97)
            ));
            text.push('\n');
            if n % 1000 == 0 {
                text.push_str("42\n{\"type\":\"x\"}\n");
            }
        }
        same_reading(&text);
        let s = Session::from_string(Rc::new(MemoryStorage::new()), text, "/agent");
        assert_eq!(s.entries().len(), n);
        assert_eq!(
            s.entries().last().map(|e| e.id.clone()),
            Some(format!("m{n}"))
        );
        assert_eq!(s.report().non_entries.len(), 2 * (n / 1000));
    }
}
