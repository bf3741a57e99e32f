//! The WebAssembly component shell of xcsh-session (world `session-component`).
//!
//! It imports only `xcsh:session/storage` and `xcsh:session/history` and exports
//! `xcsh:session/session-api` (typed results; the core's structs become WIT records in
//! `records.rs`) and `xcsh:session/session-json` (the CLI's JSON text, `json_api.rs`):
//! every storage call is forwarded to the host ([`WitStorage`], [`WitHistory`]), every
//! API call to [`xcsh_session::api`] or [`xcsh_session::history`]. No session or history
//! logic lives here.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use xcsh_session::api::{self, ErrorKind as CoreErrorKind};
use xcsh_session::history::{
    self as core_history, HistoryEntry, HistoryError, HistoryResult, HistoryRows, HistoryStore,
    LastPromptCache, NewHistoryRow,
};
use xcsh_session::storage::{
    DirEntry, Environment, FileStat, ProcessIdentity, Storage, StorageError, StorageResult,
};
use xcsh_session::SessionError;

wit_bindgen::generate!({
    world: "session-component",
    path: "../../wit",
    generate_all,
});

mod context_reader;
mod json_api;
mod output;
mod records;
mod search;
mod session;

use exports::xcsh::session::session_api::{
    ApiError, BlobRef, ContextReader, Continued, ErrorKind, ForkOutcome, GcReport, Guest,
    HistoryAddOutcome, HistoryRow, LoadReport, RecentSession, ResolvedUrl, ScoredSession,
    SessionInfo, SessionSummary,
};
use xcsh::session::history as wit_history;
use xcsh::session::storage as wit;

/// The storage port backed by the host's `storage` imports.
#[derive(Debug, Clone, Copy, Default)]
pub struct WitStorage;

/// Files at least this large are read through `open-reader`, this many bytes a call.
const READ_CHUNK: u64 = 4 << 20;

fn from_wit(e: wit::StorageError) -> StorageError {
    match e {
        wit::StorageError::NotFound(m) => StorageError::NotFound(m),
        wit::StorageError::AlreadyExists(m) => StorageError::AlreadyExists(m),
        wit::StorageError::PermissionDenied(m) => StorageError::PermissionDenied(m),
        wit::StorageError::Other(m) => StorageError::Other(m),
    }
}

impl Storage for WitStorage {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        // Small files in one call; large ones a chunk at a time into one buffer sized
        // from stat (the host then never holds the whole file).
        let size = match wit::stat(path) {
            Ok(stat) if stat.size >= READ_CHUNK => stat.size,
            _ => return wit::read(path).map_err(from_wit),
        };
        let reader = wit::open_reader(path).map_err(from_wit)?;
        let mut out = Vec::with_capacity(size as usize + 1);
        loop {
            let chunk = reader.read(READ_CHUNK).map_err(from_wit)?;
            if chunk.is_empty() {
                return Ok(out);
            }
            out.extend_from_slice(&chunk);
        }
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        wit::read_prefix(path, max_bytes).map_err(from_wit)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        read_range_in_pieces(offset, len, READ_CHUNK, |at, want| {
            wit::read_range(path, at, want).map_err(from_wit)
        })
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        wit::write(path, data).map_err(from_wit)
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        wit::append(path, data).map_err(from_wit)
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        wit::rename(from, to).map_err(from_wit)
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        wit::unlink(path).map_err(from_wit)
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        wit::list_dir(path)
            .map(|items| {
                items
                    .into_iter()
                    .map(|d| DirEntry {
                        name: d.name,
                        is_dir: d.is_dir,
                    })
                    .collect()
            })
            .map_err(from_wit)
    }

    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        wit::stat(path)
            .map(|s| FileStat {
                size: s.size,
                mtime_ms: s.mtime_ms,
                is_dir: s.is_dir,
                id: None,
            })
            .map_err(from_wit)
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        wit::mkdir_all(path).map_err(from_wit)
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        wit::fsync(path).map_err(from_wit)
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        wit::rmdir(path).map_err(from_wit)
    }

    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        wit::create_new(path, data).map_err(from_wit)
    }

    fn env(&self) -> &dyn Environment {
        self
    }
}

/// `len` bytes at `offset` read as consecutive ranges of at most `piece` bytes
/// (`read(offset, len)`, the host's `read-range`), so no call carries more than `piece`:
/// until all are read, or a range comes back short (the end of the file).
fn read_range_in_pieces(
    offset: u64,
    len: u64,
    piece: u64,
    mut read: impl FnMut(u64, u64) -> StorageResult<Vec<u8>>,
) -> StorageResult<Vec<u8>> {
    if len <= piece {
        return read(offset, len);
    }
    let mut out = Vec::new();
    let mut done = 0u64;
    while done < len {
        let Some(at) = offset.checked_add(done) else {
            break; // past any file's end
        };
        let want = (len - done).min(piece);
        let bytes = read(at, want)?;
        done += bytes.len() as u64;
        let short = (bytes.len() as u64) < want;
        out.extend_from_slice(&bytes);
        if short {
            break;
        }
    }
    Ok(out)
}

/// The host's clock, entropy and processes. (Blobs and directory copies are the core's
/// composites over the file imports: the storage interface has no imports of its own for
/// them.)
impl Environment for WitStorage {
    fn now_ms(&self) -> i64 {
        let t = wasi::clocks::wall_clock::now();
        xcsh_session::ms_from_secs_nanos(t.seconds, t.nanoseconds)
    }

    fn random_u64(&self) -> u64 {
        wasi::random::insecure::get_insecure_random_u64()
    }

    fn process_identity(&self) -> ProcessIdentity {
        let (pid, host) = wit::process_identity();
        ProcessIdentity { pid, host }
    }

    fn process_alive(&self, pid: u32) -> Option<bool> {
        wit::process_alive(pid)
    }
}

fn storage() -> Rc<dyn Storage> {
    Rc::new(WitStorage)
}

/// The history port backed by the host's `history` imports, for one database.
#[derive(Debug, Clone)]
pub struct WitHistory {
    db: String,
}

fn from_wit_history(e: wit_history::HistoryError) -> HistoryError {
    match e {
        wit_history::HistoryError::InvalidQuery(m) => HistoryError::InvalidQuery(m),
        wit_history::HistoryError::PermissionDenied(m) => HistoryError::PermissionDenied(m),
        wit_history::HistoryError::Other(m) => HistoryError::Other(m),
    }
}

fn from_wit_entries(rows: Vec<wit_history::HistoryEntry>) -> Vec<HistoryEntry> {
    rows.into_iter()
        .map(|r| HistoryEntry {
            id: r.id,
            prompt: r.prompt,
            created_at: r.created_at,
            cwd: r.cwd,
        })
        .collect()
}

/// A row limit for WIT (the core clamps it to `MAX_LIMIT` first).
fn wit_limit(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl HistoryStore for WitHistory {
    fn add(&self, row: NewHistoryRow<'_>) -> HistoryResult<()> {
        wit_history::add(&self.db, row.prompt, row.cwd, row.created_at).map_err(from_wit_history)
    }

    fn search(&self, query: &str, limit: usize, cwd: Option<&str>) -> HistoryRows {
        wit_history::search(&self.db, query, wit_limit(limit), cwd)
            .map(from_wit_entries)
            .map_err(from_wit_history)
    }

    fn recent(&self, limit: usize, cwd: Option<&str>) -> HistoryRows {
        wit_history::recent(&self.db, wit_limit(limit), cwd)
            .map(from_wit_entries)
            .map_err(from_wit_history)
    }

    fn last_prompt(&self) -> HistoryResult<Option<String>> {
        wit_history::last_prompt(&self.db).map_err(from_wit_history)
    }
}

thread_local! {
    /// The last-prompt cache of each history database, for the life of the instance (a
    /// long-lived host keeps one instance, so consecutive duplicates are caught without a
    /// database read per prompt).
    static LAST_PROMPTS: RefCell<HashMap<String, LastPromptCache>> = RefCell::new(HashMap::new());
}

fn history(agent_dir: &str) -> WitHistory {
    WitHistory {
        db: core_history::db_path(agent_dir),
    }
}

/// One to one: every core error kind has its WIT case.
fn to_wit(e: api::ApiError) -> ApiError {
    let kind = match e.kind {
        CoreErrorKind::EntryNotFound => ErrorKind::EntryNotFound,
        CoreErrorKind::NotFound => ErrorKind::NotFound,
        CoreErrorKind::InvalidInput => ErrorKind::InvalidInput,
        CoreErrorKind::ReadOnly => ErrorKind::ReadOnly,
        CoreErrorKind::Persistence => ErrorKind::Persistence,
        CoreErrorKind::Storage => ErrorKind::Storage,
        CoreErrorKind::Ambiguous => ErrorKind::Ambiguous,
        CoreErrorKind::OtherProject => ErrorKind::OtherProject,
        CoreErrorKind::Conflict => ErrorKind::Conflict,
    };
    ApiError {
        kind,
        message: e.message,
        details: e.details,
    }
}

/// A session error, through the core's own classification.
fn session_err(e: SessionError) -> ApiError {
    to_wit(api::ApiError::from(e))
}

/// WIT `u32` to the core's `usize` (lossless on wasm32 and wider).
fn size(n: u32) -> usize {
    n as usize
}

/// The terminal `continue` keys its breadcrumb by: `tty`, else the terminal variables in
/// `env` (the core's rule).
fn terminal(tty: Option<String>, env: &[(String, String)]) -> Option<String> {
    let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    xcsh_session::resume::terminal_id(tty.as_deref(), &lookup)
}

/// Run `f` with the history of `agent_dir`, its last-prompt cache and the clock's now
/// (epoch milliseconds).
fn with_last_prompt<T>(
    agent_dir: &str,
    f: impl FnOnce(&WitHistory, &mut LastPromptCache, i64) -> T,
) -> T {
    let store = history(agent_dir);
    let now_ms = WitStorage.now_ms();
    LAST_PROMPTS.with(|caches| {
        let mut caches = caches.borrow_mut();
        let cache = caches.entry(store.db.clone()).or_default();
        f(&store, cache, now_ms)
    })
}

/// The exported `session-api` (typed results, mapped in [`records`]) and `session-json`
/// (the CLI's JSON text, [`json_api`]).
struct Component;

impl Guest for Component {
    type Session = session::SessionResource;
    type OutputSink = output::OutputSinkResource;
    type ContextReader = context_reader::ContextReaderResource;

    fn show(path: String, agent_dir: String) -> Result<SessionSummary, ApiError> {
        api::show_session(storage(), &path, &agent_dir)
            .map(|s| records::summary(&s))
            .map_err(to_wit)
    }

    fn context(path: String, agent_dir: String, leaf: Option<String>) -> Result<String, ApiError> {
        api::context_file(storage(), &path, &agent_dir, leaf.as_deref()).map_err(to_wit)
    }

    fn open_context(
        path: String,
        agent_dir: String,
        leaf: Option<String>,
    ) -> Result<ContextReader, ApiError> {
        let opened = api::open_for_context(
            storage(),
            &path,
            &agent_dir,
            leaf.as_deref(),
            xcsh_session::IndexCache::Use,
        )
        .map_err(to_wit)?;
        Ok(ContextReader::new(
            context_reader::ContextReaderResource::new(opened),
        ))
    }

    fn tree(path: String, agent_dir: String) -> Result<String, ApiError> {
        api::tree_file(storage(), &path, &agent_dir).map_err(to_wit)
    }

    fn migrate(path: String, agent_dir: String) -> Result<LoadReport, ApiError> {
        api::migrate_session(storage(), &path, &agent_dir)
            .map(|s| records::load_report(s.report()))
            .map_err(to_wit)
    }

    fn append(
        path: String,
        agent_dir: String,
        cwd: String,
        entry_json: String,
    ) -> Result<String, ApiError> {
        api::append_entry(storage(), &path, &agent_dir, &cwd, &entry_json).map_err(session_err)
    }

    fn recent(agent_dir: String, cwd: String, limit: u32) -> Result<Vec<RecentSession>, ApiError> {
        let now_ms = WitStorage.now_ms();
        api::recent_sessions(storage(), &agent_dir, &cwd, size(limit))
            .map(|items| items.iter().map(|i| records::recent(i, now_ms)).collect())
            .map_err(to_wit)
    }

    fn list(agent_dir: String, cwd: Option<String>) -> Result<Vec<SessionInfo>, ApiError> {
        // With the text: `session-info` keeps its `all-messages-text` (the WIT record
        // and signature of 0.2.0 unchanged); `session-json`'s `list-without-text` is the
        // fast list.
        api::list_sessions(
            storage(),
            &agent_dir,
            cwd.as_deref(),
            xcsh_session::listing::ListText::Include,
        )
        .map(|items| items.into_iter().map(records::session_info).collect())
        .map_err(to_wit)
    }

    fn search(
        agent_dir: String,
        cwd: Option<String>,
        query: String,
    ) -> Result<Vec<ScoredSession>, ApiError> {
        api::search_sessions(storage(), &agent_dir, cwd.as_deref(), &query)
            .map(|hits| hits.into_iter().map(records::scored).collect())
            .map_err(to_wit)
    }

    fn resume(
        agent_dir: String,
        cwd: String,
        arg: String,
        confirm: bool,
    ) -> Result<String, ApiError> {
        api::resume_path(storage(), &agent_dir, &cwd, &arg, confirm).map_err(to_wit)
    }

    fn continue_recent(
        agent_dir: String,
        cwd: String,
        tty: Option<String>,
        env: Vec<(String, String)>,
    ) -> Result<Continued, ApiError> {
        let terminal = terminal(tty, &env);
        api::continue_session(storage(), &agent_dir, &cwd, None, terminal.as_deref())
            .map(records::continued)
            .map_err(to_wit)
    }

    fn put_blob(agent_dir: String, data: Vec<u8>) -> Result<BlobRef, ApiError> {
        api::put_blob(storage(), &agent_dir, &data)
            .map(records::blob_ref)
            .map_err(to_wit)
    }

    fn get_blob(agent_dir: String, hash_or_ref: String) -> Result<Vec<u8>, ApiError> {
        api::blob_get(storage(), &agent_dir, &hash_or_ref).map_err(to_wit)
    }

    fn resolve_url(
        session_file: String,
        url: String,
        offset: Option<u32>,
        limit: Option<u32>,
    ) -> Result<ResolvedUrl, ApiError> {
        api::resolve_resource(
            storage(),
            &session_file,
            &url,
            offset.map(size),
            limit.map(size),
        )
        .map(records::resolved_url)
        .map_err(to_wit)
    }

    fn fork(agent_dir: String, file: String) -> Result<ForkOutcome, ApiError> {
        api::fork_file(storage(), &agent_dir, &file)
            .map(records::fork_outcome)
            .map_err(to_wit)
    }

    fn move_session(agent_dir: String, file: String, to_cwd: String) -> Result<String, ApiError> {
        api::move_file(storage(), &agent_dir, &file, &to_cwd).map_err(to_wit)
    }

    fn gc(agent_dir: String, dry_run: bool, forget_missing: bool) -> Result<GcReport, ApiError> {
        api::gc_report(storage(), &agent_dir, dry_run, forget_missing)
            .map(records::gc_report)
            .map_err(to_wit)
    }

    fn history_add(
        agent_dir: String,
        prompt: String,
        cwd: Option<String>,
    ) -> Result<HistoryAddOutcome, ApiError> {
        with_last_prompt(&agent_dir, |store, cache, now_ms| {
            core_history::add_at_ms(store, cache, &prompt, cwd.as_deref(), now_ms)
        })
        .map(records::history_added)
        .map_err(to_wit)
    }

    fn history_search(
        agent_dir: String,
        query: String,
        limit: u32,
        cwd: Option<String>,
    ) -> Result<Vec<HistoryRow>, ApiError> {
        core_history::search(&history(&agent_dir), &query, size(limit), cwd.as_deref())
            .map(|rows| rows.into_iter().map(records::history_row).collect())
            .map_err(|e| to_wit(e.into()))
    }

    fn history_recent(
        agent_dir: String,
        limit: u32,
        cwd: Option<String>,
    ) -> Result<Vec<HistoryRow>, ApiError> {
        core_history::recent(&history(&agent_dir), size(limit), cwd.as_deref())
            .map(|rows| rows.into_iter().map(records::history_row).collect())
            .map_err(|e| to_wit(e.into()))
    }
}

export!(Component);

#[cfg(test)]
mod tests {
    use super::read_range_in_pieces;
    use std::cell::RefCell;
    use xcsh_session::storage::range_of;

    /// `read_range_in_pieces` over a file's bytes: what it returns and the calls it made.
    fn pieces(data: &[u8], offset: u64, len: u64, piece: u64) -> (Vec<u8>, Vec<(u64, u64)>) {
        let calls = RefCell::new(Vec::new());
        let got = read_range_in_pieces(offset, len, piece, |at, want| {
            calls.borrow_mut().push((at, want));
            Ok(range_of(data, at, want).to_vec())
        })
        .expect("read");
        (got, calls.into_inner())
    }

    #[test]
    fn a_range_is_read_in_pieces_of_at_most_the_piece_size() {
        let data: Vec<u8> = (0..100u8).collect();
        for offset in [0, 1, 7, 50, 99, 100, 101, 1000, u64::MAX - 3, u64::MAX] {
            for len in [0, 1, 9, 10, 11, 30, 99, 100, 101, 1 << 40, u64::MAX] {
                let (got, calls) = pieces(&data, offset, len, 10);
                assert_eq!(got, range_of(&data, offset, len), "{offset}+{len}");
                assert!(calls.iter().all(|&(_, want)| want <= 10), "{calls:?}");
                // Consecutive, and none after the end was seen.
                for w in calls.windows(2) {
                    assert_eq!(w[1].0, w[0].0 + w[0].1, "{calls:?}");
                }
                let past_end = calls.iter().filter(|&&(at, _)| at >= 100).count();
                assert!(past_end <= 1, "{offset}+{len}: {calls:?}");
            }
        }
        // A range within one piece is one call of it, as asked.
        assert_eq!(pieces(&data, 5, 10, 10).1, [(5, 10)]);
        assert_eq!(pieces(&data, 5, 0, 10).1, [(5, 0)]);
        // 25 bytes: 10 + 10 + 5.
        assert_eq!(pieces(&data, 3, 25, 10).1, [(3, 10), (13, 10), (23, 5)]);
        // A short piece is the end: nothing is asked after it.
        assert_eq!(pieces(&data, 85, 40, 10).1, [(85, 10), (95, 10)]);
    }

    #[test]
    fn an_error_of_any_piece_is_the_error() {
        let mut n = 0;
        let err = read_range_in_pieces(0, 30, 10, |_, want| {
            n += 1;
            match n {
                2 => Err(xcsh_session::storage::StorageError::NotFound("f".into())),
                _ => Ok(vec![0; want as usize]),
            }
        });
        assert!(matches!(
            err,
            Err(xcsh_session::storage::StorageError::NotFound(_))
        ));
    }
}
