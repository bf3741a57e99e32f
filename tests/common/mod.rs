#![allow(dead_code)]
pub mod ops;
use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use xcsh_session::session::{CreateOptions, OpenOptions, Persistence, Session};
use xcsh_session::storage::{Layer, MemoryStorage, Storage, StorageResult};

/// `tests/fixtures/real/`: the four real session files kept in the repository.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real")
}

pub fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixtures_dir().join(name)).expect("fixture readable")
}

pub const FIXTURES: [&str; 4] = [
    "before-compaction.jsonl",
    "historical-compact.jsonl",
    "historical-session.jsonl",
    "large-session.jsonl",
];

pub fn mem() -> Rc<MemoryStorage> {
    Rc::new(MemoryStorage::new())
}

pub fn put(storage: &MemoryStorage, path: &str, text: &str) {
    storage
        .mkdir_all(xcsh_session::storage::parent(path))
        .unwrap();
    storage.write(path, text.as_bytes()).unwrap();
}

/// The first line of a file: a session's header.
pub fn header_line(storage: &MemoryStorage, path: &str) -> String {
    read(storage, path)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

pub fn read(storage: &MemoryStorage, path: &str) -> String {
    String::from_utf8(storage.read(path).unwrap()).unwrap()
}

pub fn open(storage: &Rc<MemoryStorage>, path: &str, persistence: Persistence) -> Session {
    Session::open(
        storage.clone(),
        path,
        &OpenOptions {
            persistence,
            agent_dir: "/agent".into(),
            cwd: "/work".into(),
        },
    )
    .unwrap()
}

pub fn create(storage: &Rc<MemoryStorage>) -> Session {
    Session::create(
        storage.clone(),
        &CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/work/pi".into(),
            ..Default::default()
        },
    )
}

/// The id of the entry at `i` (wrapped around the entries), for random operation scripts;
/// `None` for a session without entries.
pub fn pick_id(s: &Session, i: usize) -> Option<String> {
    s.entries()
        .get(i % s.entries().len().max(1))
        .map(|e| e.id.clone())
}

pub fn user(text: &str) -> String {
    format!(
        r#"{{"role":"user","content":[{{"type":"text","text":{}}}],"timestamp":1760000000000}}"#,
        serde_json::to_string(text).unwrap()
    )
}

pub fn assistant(text: &str) -> String {
    format!(
        r#"{{"role":"assistant","provider":"anthropic","model":"claude-sonnet-4-5","content":[{{"type":"text","text":{}}}],"timestamp":1760000000001}}"#,
        serde_json::to_string(text).unwrap()
    )
}

pub fn context_value(session: &Session) -> serde_json::Value {
    serde_json::from_str(&session.context().to_json()).unwrap()
}

/// Garbage collection of the agent dir `/agent` with `grace_ms`, forgetting nothing.
pub fn gc_at(
    storage: &dyn xcsh_session::storage::Storage,
    dry_run: bool,
    grace_ms: i64,
) -> Result<xcsh_session::GcReport, xcsh_session::GcError> {
    let options = xcsh_session::GcOptions {
        dry_run,
        forget_missing: false,
        grace_ms,
    };
    xcsh_session::collect_garbage(storage, "/agent", options)
}

/// Reads of one file fail with "permission denied" (another user's file, or one a
/// confined host was not told of); everything else passes on.
pub struct DenyRead {
    pub inner: Rc<MemoryStorage>,
    pub denied: String,
}

impl xcsh_session::storage::Layer for DenyRead {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn read(&self, path: &str) -> xcsh_session::storage::StorageResult<Vec<u8>> {
        if path == self.denied {
            return Err(xcsh_session::storage::StorageError::PermissionDenied(
                path.into(),
            ));
        }
        self.inner.read(path)
    }
}

/// An assistant reply carrying stale OpenAI Responses replay data.
pub const STALE_REPLY: &str = r#"{"role":"assistant","provider":"openai","model":"gpt-5","content":[{"type":"thinking","thinking":"r","thinkingSignature":"sig"},{"type":"text","text":"done"}],"providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[{"id":"rs_1"}]},"timestamp":2}"#;

/// Where `loaded_with_stale_replay` puts its session.
pub const STALE_REPLAY_FILE: &str = "/agent/sessions/--work-pi--/2026-01-01T00-00-00-000Z_s.jsonl";

/// A session read from a file whose reply (entry `b`, after the user's `a`) carries stale
/// OpenAI Responses replay data.
pub fn loaded_with_stale_replay(storage: &Rc<MemoryStorage>) -> Session {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/pi"}"#;
    let user_line = format!(
        r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{}}}"#,
        user("hi")
    );
    let reply_line = format!(
        r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{STALE_REPLY}}}"#
    );
    put(
        storage,
        STALE_REPLAY_FILE,
        &format!("{header}\n{user_line}\n{reply_line}\n"),
    );
    open(storage, STALE_REPLAY_FILE, Persistence::Persistent)
}

/// Does this text (a context, a file) hold stale replay data?
pub fn holds_stale_replay(text: &str) -> bool {
    text.contains("openaiResponsesHistory") || text.contains("thinkingSignature")
}

/// A storage that counts what its reads hand out: bytes (whole, prefix and ranged reads)
/// and whole-file reads (and keeps the paths read whole).
pub struct CountingReads<S: Storage> {
    pub inner: Rc<S>,
    pub bytes: Cell<u64>,
    pub full_reads: Cell<u64>,
    pub read_whole: std::cell::RefCell<Vec<String>>,
}

impl<S: Storage> CountingReads<S> {
    pub fn new(inner: Rc<S>) -> Self {
        CountingReads {
            inner,
            bytes: Cell::new(0),
            full_reads: Cell::new(0),
            read_whole: Default::default(),
        }
    }

    /// Session files (`.jsonl`) read whole (the index cache is read whole, by design).
    pub fn sessions_read_whole(&self) -> usize {
        self.read_whole
            .borrow()
            .iter()
            .filter(|p| p.ends_with(".jsonl"))
            .count()
    }

    fn counted(&self, d: StorageResult<Vec<u8>>) -> StorageResult<Vec<u8>> {
        let d = d?;
        self.bytes.set(self.bytes.get() + d.len() as u64);
        Ok(d)
    }
}

impl<S: Storage> Layer for CountingReads<S> {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn read(&self, p: &str) -> StorageResult<Vec<u8>> {
        self.full_reads.set(self.full_reads.get() + 1);
        self.read_whole.borrow_mut().push(p.to_string());
        self.counted(self.inner.read(p))
    }
    fn read_prefix(&self, p: &str, n: u64) -> StorageResult<Vec<u8>> {
        self.counted(self.inner.read_prefix(p, n))
    }
    fn read_range(&self, p: &str, o: u64, n: u64) -> StorageResult<Vec<u8>> {
        self.counted(self.inner.read_range(p, o, n))
    }
}

/// The line a racing writer (the agent, which takes no lock) appends: a user message
/// `racer01` after `parent`; split in two halves when `half` (written one after the other),
/// else whole and nothing.
pub fn racer_line(parent: &str, half: bool) -> (String, String) {
    let line = format!(
        r#"{{"type":"message","id":"racer01","parentId":"{parent}","timestamp":"2026-02-16T11:00:00.000Z","message":{{"role":"user","content":"late","timestamp":3}}}}"#
    ) + "\n";
    match half {
        true => {
            let (a, b) = line.split_at(line.len() / 2);
            (a.to_string(), b.to_string())
        }
        false => (line, String::new()),
    }
}

/// Appends to the session file (through the inner storage) at its `at`-th ranged read.
pub struct AppendsDuring {
    pub inner: Rc<MemoryStorage>,
    pub file: String,
    pub at: usize,
    pub text: String,
    pub calls: Cell<usize>,
}

impl Layer for AppendsDuring {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn read_range(&self, p: &str, o: u64, n: u64) -> StorageResult<Vec<u8>> {
        if p == self.file {
            let k = self.calls.get();
            self.calls.set(k + 1);
            if k == self.at {
                self.inner.append(p, self.text.as_bytes())?;
            }
        }
        self.inner.read_range(p, o, n)
    }
}
