//! The session manager: an append-only tree of entries with a movable leaf, loaded from
//! and persisted to a JSONL file through the storage port.
//!
//! Persistence follows the agent: nothing is written before the first assistant message
//! (unless [`Session::ensure_on_disk`] asks for it), then the whole session is written by
//! an atomic rewrite, then each new entry is appended. The first persistence failure is
//! latched and returned by every later operation. Unlike the agent, opening a file never
//! destroys data: a file with an invalid header or unreadable lines is copied aside
//! (`<file>.corrupt-<timestamp>`) before anything rewrites it.

mod append;
mod artifacts;
mod copy;
mod deferred;
mod files;
mod load;
mod parse;
mod tree;
mod usage;
mod window;
mod write;
use write::Pins;

pub use append::{AppendedRecord, CompactionInput};
pub use copy::{ForkRecord, ForkResult, MovedRecord};
pub use files::{copy_session, delete_session, import_session_text, session_files, SessionCopy};
pub use load::{LoadReport, LoadReportRecord, NonEntry};
pub use parse::utf8;
pub use tree::{Tree, TreeNode};
pub use usage::UsageStatistics;

use crate::blob::{self, BlobStore};
use crate::context::{self, Leaf, SessionContext};
use crate::entry::{Entry, Header, IdIndex, Payload, Text};
use crate::error::{Result, SessionError};
use crate::flavour::Flavour;
use crate::paths;
use crate::storage::{join, Storage};
use crate::time::iso_from_ms;
use load::Backup;
use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

/// `show`: the header (its fields in file order, numbers as written), entry count, leaf id
/// (`null` for an empty session), version on disk, whether a migration is needed, and the
/// load report.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShowRecord<'a> {
    pub header: &'a serde_json::Map<String, serde_json::Value>,
    pub entry_count: usize,
    pub leaf_id: Option<&'a str>,
    pub version: u64,
    pub migration_needed: bool,
    pub report: LoadReportRecord<'a>,
}

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
    /// Whose rules it writes by; default: the agent directory's ([`Flavour::of_agent_dir`]).
    pub flavour: Option<Flavour>,
}

/// One session.
pub struct Session {
    storage: Rc<dyn Storage>,
    persistence: Persistence,
    file: Option<String>,
    /// The agent directory: its blob store holds this session's images.
    agent_dir: String,
    /// Whose rules this session writes by (xcsh's or pi's).
    flavour: Flavour,
    /// The header was made when the session was opened (its file missing or empty), not
    /// read: a flavour set before anything is appended makes it again by its rules.
    header_made_at_open: bool,
    /// The blobs pinned for this session's file, when it lies outside
    /// `<agentDir>/sessions` (see `write.rs`, `pin_before_writing`).
    pins: Pins,
    header: Header,
    /// The file's other header lines (type `"session"` after the first line), each with
    /// the number of entries before it: as the agent's, they are no entries, but a
    /// rewrite or a move writes them back in their places (a fork or a branched session
    /// leaves them behind).
    extra_headers: Vec<(usize, Text)>,
    entries: Vec<Entry>,
    by_id: IdIndex,
    leaf: Option<String>,
    labels: HashMap<String, String>,
    has_assistant: bool,
    /// The file holds the whole session (appends may go straight to it).
    flushed: bool,
    /// The file on disk does not end in a newline (torn tail): write one before appending.
    needs_newline: bool,
    /// The file on disk is older than what this session holds (a migration or a repair
    /// on load): the next persisted write rewrites it whole instead of appending, as the
    /// agent does (opening never rewrites).
    needs_rewrite: bool,
    /// Original bytes to keep aside before the first rewrite (lossy load, migration).
    pending_backup: Option<Backup>,
    /// The first `from_file` entries were read from the file: a rewrite writes their text
    /// as it is (the persistence transforms, truncation and image externalizing, apply
    /// to what is being persisted now, never to content already on disk).
    from_file: usize,
    /// Entries read from the file and then replaced ([`Session::replace_entry`]): a rewrite
    /// applies the persistence transforms to them like to new ones.
    edited: std::collections::HashSet<usize>,
    persist_error: Option<SessionError>,
    /// This session's writer lock (taken at open for writing, or at the first write).
    lock: Option<crate::lock::SessionLock>,
    /// Set by [`Session::fence`] when the operation under way has just checked the lock:
    /// its write's guard need not read the lock file again.
    lock_checked: bool,
    /// What the file looked like after our last read or write: a different size or
    /// mtime means someone else changed it.
    disk: Option<crate::storage::FileStat>,
    /// The file's mtime as our last write left it: the filesystem's clock had reached it
    /// (the lock check needs a time it has passed, [`crate::lock::SessionLock::check`]).
    wrote_ms: Option<i64>,
    warnings: Vec<String>,
    report: LoadReport,
    /// The artifact counter of the session file, and artifacts kept in memory.
    artifacts: artifacts::ArtifactCounter,
    /// Opened through the index, the entries read from the file not read yet
    /// ([`Session::open_deferred`]); `entries` holds only those appended since.
    deferred: Option<Box<deferred::Deferred>>,
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
            agent_dir: agent_dir.to_string(),
            flavour: Flavour::of_agent_dir(agent_dir),
            header_made_at_open: false,
            artifacts: Default::default(),
            pins: Pins::default(),
            header,
            extra_headers: Vec::new(),
            entries: Vec::new(),
            by_id: IdIndex::new(),
            leaf: None,
            labels: HashMap::new(),
            has_assistant: false,
            flushed: false,
            needs_newline: false,
            needs_rewrite: false,
            pending_backup: None,
            from_file: 0,
            edited: Default::default(),
            persist_error: None,
            lock: None,
            lock_checked: false,
            disk: None,
            wrote_ms: None,
            warnings: Vec::new(),
            report: LoadReport {
                file_version: crate::entry::CURRENT_SESSION_VERSION,
                ..LoadReport::default()
            },
            deferred: None,
        }
    }

    fn new_header(
        storage: &dyn Storage,
        flavour: Flavour,
        cwd: &str,
        parent_session: Option<&str>,
    ) -> Header {
        let env = storage.env();
        let now = env.now_ms();
        let id = flavour.new_session_id(env, now);
        Header::new(&id, &iso_from_ms(now), cwd, parent_session)
    }

    /// Whose rules this session writes by.
    pub fn flavour(&self) -> Flavour {
        self.flavour
    }

    /// Write by `flavour`'s rules from now on (a host's choice over the agent directory's).
    /// A session opened on a missing or empty file, nothing appended yet, gets a new header
    /// by those rules (its id among them), as that agent starts a session there.
    pub fn set_flavour(&mut self, flavour: Flavour) {
        if flavour != self.flavour && self.header_made_at_open && self.entries.is_empty() {
            let cwd = self.header.cwd().unwrap_or_default().to_string();
            self.header = Self::new_header(&*self.storage, flavour, &cwd, None);
        }
        self.flavour = flavour;
    }

    /// A session that is never written (`SessionManager.inMemory`).
    pub fn in_memory(storage: Rc<dyn Storage>, cwd: &str) -> Session {
        Self::in_memory_child(storage, cwd, None)
    }

    /// [`Session::in_memory_child`] by `flavour`'s rules (its id among them).
    pub fn in_memory_flavoured(
        storage: Rc<dyn Storage>,
        cwd: &str,
        parent_session: Option<&str>,
        flavour: Flavour,
    ) -> Session {
        let header = Self::new_header(&*storage, flavour, cwd, parent_session);
        let mut session = Self::blank(storage, Persistence::InMemory, None, "", header);
        session.flavour = flavour;
        session
    }

    /// A session that is never written, its header linked by `parentSession` to the
    /// session it follows (the agent's `newSession({ parentSession })` in memory).
    pub fn in_memory_child(
        storage: Rc<dyn Storage>,
        cwd: &str,
        parent_session: Option<&str>,
    ) -> Session {
        Self::in_memory_flavoured(storage, cwd, parent_session, Flavour::Xcsh)
    }

    /// A new persistent session; its file appears with the first assistant message.
    pub fn create(storage: Rc<dyn Storage>, options: &CreateOptions) -> Session {
        let flavour = options
            .flavour
            .unwrap_or_else(|| Flavour::of_agent_dir(&options.agent_dir));
        let header = Self::new_header(
            &*storage,
            flavour,
            &options.cwd,
            options.parent_session.as_deref(),
        );
        let dir = options.session_dir.clone().unwrap_or_else(|| {
            let dir = flavour.session_dir_for_cwd(&options.agent_dir, &options.cwd);
            // Best effort, as the agent's: a merge that fails leaves both folders, and
            // both are read.
            let legacy = paths::legacy_session_dir(&options.agent_dir, &options.cwd);
            let _ = crate::merge_legacy_dir(&*storage, &legacy, &dir);
            dir
        });
        let name = paths::session_file_name(header.timestamp().unwrap_or_default(), header.id());
        let mut session = Self::blank(
            storage,
            Persistence::Persistent,
            Some(join(&dir, &name)),
            &options.agent_dir,
            header,
        );
        session.flavour = flavour;
        session
    }

    /// A label entry sets its target's label; any falsy label (none, or empty) clears it,
    /// as in the agent.
    fn apply_label(labels: &mut HashMap<String, String>, entry: &Entry) {
        if let Payload::Label {
            target_id: Some(target),
            label,
        } = &entry.payload
        {
            match label {
                Some(l) if !l.is_empty() => labels.insert(target.clone(), l.clone()),
                _ => labels.remove(target),
            };
        }
    }

    fn push_entry(&mut self, entry: Entry) {
        self.leaf = Some(entry.id.clone());
        self.entries.push(entry);
        self.note_entry(self.entries.len() - 1);
    }

    /// Take the entries read from a file (the session has none yet) and index them; the
    /// ids that repeat an earlier entry's, in order.
    fn index_loaded(&mut self, entries: Vec<Entry>) -> Vec<String> {
        debug_assert!(self.entries.is_empty());
        self.entries = entries;
        self.by_id.reserve(&self.entries, self.entries.len());
        let mut duplicates = Vec::new();
        for i in 0..self.entries.len() {
            if self.note_entry(i) {
                duplicates.push(self.entries[i].id.clone());
            }
        }
        if let Some(last) = self.entries.last() {
            self.leaf = Some(last.id.clone());
        }
        duplicates
    }

    /// What entry `i`, just added or replaced, changes: the assistant flag, labels and the
    /// id index; whether an earlier entry had its id.
    fn note_entry(&mut self, i: usize) -> bool {
        let entry = &self.entries[i];
        if entry.is_assistant_message() {
            self.has_assistant = true;
        }
        Self::apply_label(&mut self.labels, entry);
        self.by_id.insert(&self.entries, i)
    }

    // ---- reading ----

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The session's name: the header's `title` (xcsh names a session there), else the
    /// name of its latest `session_info` entry (pi's: an empty one clears it).
    pub fn session_name(&self) -> Option<String> {
        match self.header.title() {
            Some(t) => Some(t.to_string()),
            None => named_by_info(self.entries().iter().rev()),
        }
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
        self.assert_read();
        &self.report
    }

    /// What `show` prints: the header, entry count, leaf, version on disk, report.
    pub fn show_record(&self) -> ShowRecord<'_> {
        ShowRecord {
            header: self.header.fields(),
            entry_count: self.entries.len(),
            leaf_id: self.leaf_id(),
            version: self.report.file_version,
            migration_needed: self.report.migration.is_some(),
            report: self.report.record(),
        }
    }

    /// Warnings gathered so far (missing blobs, the latched persistence error once).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// All entries in insertion order (the header excluded).
    pub fn entries(&self) -> &[Entry] {
        self.assert_read();
        &self.entries
    }

    /// The position in [`Session::entries`] of the (last) entry with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.assert_read();
        self.by_id.get(&self.entries, id)
    }

    pub fn entry(&self, id: &str) -> Result<&Entry> {
        self.index_of(id)
            .map(|i| &self.entries[i])
            .ok_or_else(|| SessionError::EntryNotFound(id.to_string()))
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    pub fn leaf_entry(&self) -> Option<&Entry> {
        self.leaf.as_deref().and_then(|id| self.entry(id).ok())
    }

    /// The agent dir's blob store, where this session's images are.
    pub(super) fn blob_store(&self) -> BlobStore<'_> {
        BlobStore::new(&*self.storage, paths::blobs_dir(&self.agent_dir))
    }

    /// The entry's JSON as `getEntries` hands it out: blob references resolved and, for an
    /// assistant message read from the file, stale OpenAI Responses replay data dropped, as
    /// the agent holds its entries after loading (the file keeps its bytes).
    pub fn entry_json<'e>(&self, entry: &'e Entry) -> Cow<'e, str> {
        let json: Cow<'e, str> = match entry.is_assistant_message() && self.read_from_file(entry) {
            true => crate::replay::entry_without_stale_replay(entry)
                .map_or(Cow::Borrowed(entry.json()), |e| {
                    Cow::Owned(e.json().to_owned())
                }),
            false => Cow::Borrowed(entry.json()),
        };
        if !entry.has_blob_refs() {
            return json;
        }
        match blob::rehydrate(&json, &self.blob_store()) {
            Cow::Borrowed(_) => json,
            Cow::Owned(text) => Cow::Owned(text),
        }
    }

    /// `buildSessionContext` for the current leaf (`Leaf::Last` when there is none yet
    /// because nothing was appended, `Leaf::Null` after `reset_leaf`).
    pub fn context(&self) -> SessionContext<'_> {
        self.context_at(self.current_leaf())
    }

    /// The leaf [`Session::context`] builds at: the current one, else none (the empty
    /// context).
    pub fn current_leaf(&self) -> Leaf<'_> {
        match &self.leaf {
            Some(id) => Leaf::Id(id),
            None => Leaf::Null,
        }
    }

    pub fn context_at<'s>(&'s self, leaf: Leaf) -> SessionContext<'s> {
        self.assert_read();
        let store = self.blob_store();
        let finish = |e: &'s Entry, m: Cow<'s, str>| self.message_text(e, m, &store);
        let mut ctx = context::build_session_context(&self.entries, &self.by_id, leaf, &finish);
        ctx.with_model = self.flavour.context_has_model();
        ctx
    }

    /// Was this entry (the last with its id) read from the file?
    fn read_from_file(&self, e: &Entry) -> bool {
        self.by_id
            .get(&self.entries, &e.id)
            .is_some_and(|i| i < self.from_file)
    }

    /// The message `m` taken from entry `e` as the model sees it ([`model_message`]).
    fn message_text<'e>(&self, e: &'e Entry, m: Cow<'e, str>, store: &BlobStore) -> Cow<'e, str> {
        model_message(e, m, self.read_from_file(e), store)
    }
}

/// The message `m` taken from entry `e` (a message, a custom_message) as the model sees
/// it: blob references resolved (the agent resolves them in both on load), and, for an
/// assistant message read from the file (`from_file`), stale OpenAI Responses replay data
/// dropped.
pub(crate) fn model_message<'e>(
    e: &'e Entry,
    m: Cow<'e, str>,
    from_file: bool,
    store: &BlobStore,
) -> Cow<'e, str> {
    let m: Cow<'e, str> = match e.is_assistant_message() && from_file {
        true => crate::replay::without_stale_replay(&m).map_or(m, Cow::Owned),
        false => m,
    };
    if !e.has_blob_refs() {
        return m;
    }
    match m {
        Cow::Borrowed(m) => blob::rehydrate(m, store),
        Cow::Owned(m) => Cow::Owned(blob::rehydrate(&m, store).into_owned()),
    }
}

/// The name the latest `session_info` entry among `newest_first` gives (pi's rule: the
/// latest wins, an empty name clears it).
pub(crate) fn named_by_info<'e>(
    mut newest_first: impl Iterator<Item = &'e Entry>,
) -> Option<String> {
    newest_first.find_map(Entry::session_info_name).flatten()
}
