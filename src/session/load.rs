//! Loading: a session file (or a session's text) made into a [`Session`], with the load
//! report, progress while parsing, the bytes kept aside after a lossy read, and the repair
//! write that a migration or a salvaged header needs.

use super::parse::{utf8, Candidate, ProgressTick};
use super::write::acquire_lock;
use super::{OpenOptions, Persistence, Session};
use crate::blob;
use crate::entry::{Entry, Record};
use crate::error::Result;
use crate::jsonl::{Issue, IssueKind};
use crate::lock::SessionLock;
use crate::migration::Migration;
use crate::storage::{FileStat, Storage, StorageResult};
use std::rc::Rc;
use std::sync::Arc;

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

/// The load report as the shells print it: issues, salvage, migration, backup, missing
/// blobs; the flags and lists that are unset are left out.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReportRecord<'a> {
    pub issues: &'a [Issue],
    /// How many records were not entries.
    pub non_entries: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_problem: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub invalid_utf8: bool,
    /// How many entries repeated an earlier id.
    #[serde(skip_serializing_if = "is_zero")]
    pub duplicate_ids: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration: Option<&'a Migration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_path: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub missing_blobs: &'a [String],
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl LoadReport {
    /// The record the shells print.
    pub fn record(&self) -> LoadReportRecord<'_> {
        LoadReportRecord {
            issues: &self.issues,
            non_entries: self.non_entries.len(),
            header_problem: self.header_problem.as_deref(),
            invalid_utf8: self.invalid_utf8,
            duplicate_ids: self.duplicate_ids.len(),
            migration: self.migration.as_ref(),
            backup_path: self.backup_path.as_deref(),
            missing_blobs: &self.missing_blobs,
        }
    }
}

/// The original content of a file whose load was lossy, kept aside before a rewrite.
#[derive(Clone)]
pub(super) enum Backup {
    Text(Arc<String>),
    Bytes(Vec<u8>),
}

impl Backup {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Backup::Text(t) => t.as_bytes(),
            Backup::Bytes(b) => b,
        }
    }
}

impl Session {
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
        let Read { bytes, lock, stat } = read_for(&*storage, path, options.persistence)?;
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
                let flavour = crate::flavour::Flavour::of_agent_dir(&options.agent_dir);
                let header = Self::new_header(&*storage, flavour, &options.cwd, None);
                let mut s = Self::blank(
                    storage,
                    options.persistence,
                    Some(path.to_string()),
                    &options.agent_dir,
                    header,
                );
                s.report.file_existed = other.is_some();
                s.header_made_at_open = true;
                s
            }
        };
        session.lock = lock;
        if session.persistence == Persistence::Persistent && session.report.file_existed {
            session.flushed = true;
            // The stat of the bytes read, never one taken after them: a line appended
            // since by a program that takes no lock makes the next write a conflict
            // instead of being overwritten by it.
            session.disk = stat;
            // Written by the next persisted write (or `rewrite_entries`), not now. An empty
            // file has no header yet: its first write writes one.
            session.needs_rewrite = session.report.migration.is_some()
                || session.report.header_problem.is_some()
                || session.entries.is_empty() && stat.is_some_and(|s| s.size == 0);
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

    pub(super) fn from_text_with(
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
        let count = candidates.len().max(1);
        // Collected in place: the candidates' vector becomes the entries' (never two
        // copies of the index at once).
        let mut extra_headers = Vec::new();
        let mut kept = 0;
        let mut entries = candidates
            .into_iter()
            .enumerate()
            .filter_map(|(i, candidate)| {
                let (parsed, offset) = match candidate {
                    Candidate::Parsed(entry, offset) => (Ok(Record::Entry(entry)), offset),
                    Candidate::Header(text, offset) => (Ok(Record::Header(text)), offset),
                    Candidate::Raw(text, offset) => {
                        // Records the fast reader left unparsed are parsed here: report
                        // those (migrated records have no offset in the file: estimate
                        // by position).
                        let estimate = (i as u64 * total as u64 / count as u64) as usize;
                        tick.at(offset.max(estimate), progress);
                        (Entry::parse_record(text), offset)
                    }
                };
                match parsed {
                    Ok(Record::Header(text)) => {
                        extra_headers.push((kept, text));
                        None
                    }
                    Ok(Record::Entry(entry)) => {
                        kept += 1;
                        Some(entry)
                    }
                    Err(e) => {
                        report.non_entries.push(NonEntry {
                            offset,
                            reason: e.to_string(),
                        });
                        None
                    }
                }
            })
            .collect::<Vec<Entry>>();
        // Reading reserves for ~1 entry per KiB; a large allocation shrinks in place.
        entries.shrink_to_fit();
        session.extra_headers = extra_headers;
        report.duplicate_ids = session.index_loaded(entries);
        let store = session.blob_store();
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
        session.from_file = session.entries.len();
        progress(total, total);
        if report.lossy() || report.migration.is_some() {
            session.pending_backup = Some(Backup::Text(text));
        }
        session.report = report;
        session
    }
}

/// What [`read_for`] read: the bytes (`None`: no file), the writer lock it was read
/// under, and the stat that describes exactly those bytes (for a writer).
struct Read {
    bytes: Option<Vec<u8>>,
    lock: Option<SessionLock>,
    stat: Option<FileStat>,
}

/// How many times a writer reads a file that changed while it was being read.
const STABLE_READ_ATTEMPTS: usize = 3;

/// A file's bytes and the stat that describes them: a stat taken before the read that
/// equals one taken after it and gives the size read. The writer lock keeps other
/// writers of this library out, not a program that takes no lock (the agent takes
/// none): a line it appends in between makes the file be read again, a few times. A file
/// still changing after that keeps the stat taken before its last read, older than
/// anything appended since: the first write then finds the file changed and is refused
/// (`conflict`, "reload it before writing") instead of overwriting what it never read.
/// Opening still succeeds (a read of a busy file harms nothing); only writing waits for
/// a reload.
fn read_stable(storage: &dyn Storage, path: &str) -> StorageResult<(Vec<u8>, FileStat)> {
    let mut attempt = 1;
    loop {
        let before = storage.stat(path)?;
        let bytes = storage.read(path)?;
        let settled = bytes.len() as u64 == before.size && storage.stat(path)? == before;
        if settled || attempt == STABLE_READ_ATTEMPTS {
            return Ok((bytes, before));
        }
        attempt += 1;
    }
}

/// Read a session file; for a writer, under its lock, taken before the read: a writer that
/// read first and locked after could rewrite (migrate, move) or extend a copy that another
/// process changed in between, losing what that process had acknowledged. A missing file
/// is not locked (nothing is created by opening it): the first write takes the lock and
/// checks that the file is still absent.
fn read_for(storage: &dyn Storage, path: &str, persistence: Persistence) -> Result<Read> {
    let read = |lock: Option<SessionLock>| {
        let read = match lock {
            Some(_) => read_stable(storage, path).map(|(b, stat)| (b, Some(stat))),
            None => storage.read(path).map(|b| (b, None)),
        };
        match read {
            Ok((bytes, stat)) => Ok(Read {
                bytes: Some(bytes),
                lock,
                stat,
            }),
            Err(e) => {
                if let Some(l) = &lock {
                    l.release(storage);
                }
                if e.is_not_found() {
                    Ok(Read {
                        bytes: None,
                        lock: None,
                        stat: None,
                    })
                } else {
                    Err(e.into())
                }
            }
        }
    };
    if persistence != Persistence::Persistent {
        return read(None);
    }
    let exists = match storage.stat(path) {
        Ok(_) => true,
        Err(e) if e.is_not_found() => false,
        Err(e) => return Err(e.into()),
    };
    if exists {
        return read(Some(acquire_lock(storage, path)?));
    }
    match read(None)? {
        // Created since the stat: read it again, under the lock this time.
        Read { bytes: Some(_), .. } => read(Some(acquire_lock(storage, path)?)),
        absent => Ok(absent),
    }
}
