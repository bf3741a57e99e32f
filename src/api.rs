//! The JSON façade every shell calls: one function per CLI/JS/WIT operation, taking the
//! storage port and plain arguments and returning JSON text. Shells only convert
//! arguments and print; the three hosts therefore print identical bytes.

pub use crate::api_error::{ApiError, ApiResult, ErrorKind};
use crate::error::Result;
/// A typed result as the JSON text every shell prints (serde, with the core's string
/// escaping: the same bytes in every host).
pub use crate::json::{array as json_array, record};
use crate::listing::{ListText, RecentSessionInfo, SessionInfo};
use crate::session::{LoadReport, OpenOptions, Persistence, Session};
use crate::storage::Storage;
use crate::{IndexCache, OpenedContext};
use std::rc::Rc;

fn open(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    persistence: Persistence,
) -> Result<Session> {
    open_in(storage, path, agent_dir, "", persistence)
}

/// [`open`], with the cwd a new file's header records.
fn open_in(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    cwd: &str,
    persistence: Persistence,
) -> Result<Session> {
    Session::open(
        storage,
        path,
        &OpenOptions {
            persistence,
            agent_dir: agent_dir.to_string(),
            cwd: cwd.to_string(),
        },
    )
}

/// The load report as JSON: issues, salvage, migration, backup, missing blobs.
pub fn report_json(report: &LoadReport) -> String {
    crate::json::record(&report.record())
}

/// `show`: header, entry count, leaf id, version on disk, whether a migration is needed.
pub fn show_json(session: &Session) -> String {
    crate::json::record(&session.show_record())
}

/// An existing session file, opened: a missing file is [`ErrorKind::NotFound`] instead of
/// a new, empty session (the file commands other than `append` never invent one, and
/// `migrate` creates nothing). An empty file exists and opens. A file of which nothing
/// reads as a session (no header and no entry: a text file, say) is
/// [`ErrorKind::InvalidInput`], not a session with an invented header.
fn open_existing(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    persistence: Persistence,
) -> std::result::Result<Session, ApiError> {
    let s = open(storage, path, agent_dir, persistence)?;
    if !s.report().file_existed {
        return Err(ApiError::new(
            ErrorKind::NotFound,
            format!("Session file {path} not found"),
        ));
    }
    if let (true, Some(problem)) = (s.entries().is_empty(), &s.report().header_problem) {
        return Err(ApiError::new(
            ErrorKind::InvalidInput,
            format!("{path} is not a session file: {problem}"),
        ));
    }
    Ok(s)
}

/// The session `show` describes, opened read-only (an old file is migrated in memory
/// only); a missing file is `NotFound`. Typed shells read its header, entries and report.
pub fn show_session(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
) -> std::result::Result<Session, ApiError> {
    open_existing(storage, path, agent_dir, Persistence::ReadOnly)
}

/// `show`; a missing file is `NotFound`.
pub fn show_file(storage: Rc<dyn Storage>, path: &str, agent_dir: &str) -> ApiResult {
    Ok(show_json(&show_session(storage, path, agent_dir)?))
}

/// `context` (for `leaf`, default the last entry); a missing file is `NotFound`.
pub fn context_file(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    leaf: Option<&str>,
) -> ApiResult {
    let opened = open_for_context(storage, path, agent_dir, leaf, IndexCache::Use)?;
    let mut reader = opened.json_reader();
    let mut out = Vec::new();
    reader.read_into(&mut out, usize::MAX)?;
    Ok(String::from_utf8(out).expect("the context's JSON is UTF-8"))
}

/// The session file `context` reads, opened read-only, with `leaf` checked to be one of
/// its entries (a missing file is `NotFound`, an unknown leaf `EntryNotFound`): for a
/// host that streams the context (`json_reader()`).
///
/// Read through the file's index when it has one that fits (the cached one under
/// `<agent_dir>/cache/`, with what was appended since; else one pass over the file that
/// writes it, unless `cache` is [`IndexCache::Off`]): then only the lines the context
/// reads are read, and validated. Any other file is read whole, as [`show_session`]
/// reads it; the context is the same either way.
pub fn open_for_context(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    leaf: Option<&str>,
    cache: IndexCache,
) -> std::result::Result<OpenedContext, ApiError> {
    if let Some(index) = crate::index::open_index(&*storage, path, agent_dir, cache) {
        // A leaf the index does not know (no such entry, or one it could not see) is
        // the full reader's to find or refuse.
        if leaf.is_none_or(|id| index.position(id).is_some()) {
            let read = crate::index::path::read_path_context(
                storage.clone(),
                path,
                agent_dir,
                index,
                leaf,
                cache,
            );
            if let Ok(Some(p)) = read {
                return Ok(OpenedContext::Path(Box::new(p)));
            }
        }
    }
    let s = open_existing(storage, path, agent_dir, Persistence::ReadOnly)?;
    if let Some(id) = leaf {
        s.entry(id)?;
    }
    Ok(OpenedContext::Whole(Box::new(s), leaf.map(str::to_string)))
}

/// `tree`; a missing file is `NotFound`.
pub fn tree_file(storage: Rc<dyn Storage>, path: &str, agent_dir: &str) -> ApiResult {
    let s = open_existing(storage, path, agent_dir, Persistence::ReadOnly)?;
    Ok(s.tree().to_json(&s))
}

/// `migrate`, typed: open for writing (which migrates), rewrite the file when loading
/// changed anything, and return the session (its [`Session::report`] says what changed);
/// a missing file is `NotFound` (nothing is created).
pub fn migrate_session(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
) -> std::result::Result<Session, ApiError> {
    let mut s = open_existing(storage, path, agent_dir, Persistence::Persistent)?;
    if s.needs_rewrite() {
        s.rewrite_entries()?;
    }
    Ok(s)
}

/// `migrate`: [`migrate_session`]'s load report as JSON.
pub fn migrate_file(storage: Rc<dyn Storage>, path: &str, agent_dir: &str) -> ApiResult {
    Ok(report_json(
        migrate_session(storage, path, agent_dir)?.report(),
    ))
}

/// `append`, typed: one entry as the child of the current leaf, written now (a missing
/// file is created, with `cwd` in its header); the new entry's id. The file is opened
/// lazily ([`Session::open_deferred`]): through its index (cached in the agent directory),
/// an append reads the index, the header and the last line, not the whole file.
pub fn append_entry(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    cwd: &str,
    entry_json: &str,
) -> Result<String> {
    let options = OpenOptions {
        persistence: Persistence::Persistent,
        agent_dir: agent_dir.to_string(),
        cwd: cwd.to_string(),
    };
    let mut s = Session::open_deferred(storage, path, &options, IndexCache::Use)?;
    let id = s.append_entry_json(entry_json)?;
    // A one-shot append is an explicit request to write: do not defer it to an
    // assistant message that this process will never see.
    s.ensure_on_disk()?;
    s.flush()?;
    Ok(id)
}

/// `append`: [`append_entry`], returning `{"id": ...}`.
pub fn append_file(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    cwd: &str,
    entry_json: &str,
) -> Result<String> {
    let id = append_entry(storage, path, agent_dir, cwd, entry_json)?;
    Ok(crate::json::record(&crate::session::AppendedRecord {
        id: &id,
    }))
}

impl From<crate::error::SessionError> for ApiError {
    fn from(e: crate::error::SessionError) -> Self {
        ApiError::new(ErrorKind::of(&e), e.to_string())
    }
}

impl From<crate::storage::StorageError> for ApiError {
    fn from(e: crate::storage::StorageError) -> Self {
        crate::error::SessionError::from(e).into()
    }
}

impl From<crate::resume::ResumeError> for ApiError {
    fn from(e: crate::resume::ResumeError) -> Self {
        use crate::resume::ResumeError as R;
        match e {
            R::NotFound(_) => ApiError::new(ErrorKind::NotFound, e.to_string()),
            R::InAnotherProject { .. } => ApiError::new(ErrorKind::OtherProject, e.to_string()),
            R::Ambiguous { ref candidates, .. } => ApiError {
                kind: ErrorKind::Ambiguous,
                message: e.to_string(),
                details: Some(crate::resume::candidates_json(candidates)),
            },
            R::Storage(s) => s.into(),
            R::Session(s) => s.into(),
        }
    }
}

impl From<crate::urls::UrlError> for ApiError {
    fn from(e: crate::urls::UrlError) -> Self {
        use crate::urls::UrlError as U;
        let kind = match &e {
            U::NoArtifactsDirectory
            | U::ArtifactNotFound { .. }
            | U::AgentOutputNotFound { .. }
            | U::PathNotFound { .. } => ErrorKind::NotFound,
            U::Storage(s) if s.is_not_found() => ErrorKind::NotFound,
            U::Storage(_) => ErrorKind::Storage,
            _ => ErrorKind::InvalidInput,
        };
        ApiError::new(kind, e.to_string())
    }
}

impl From<crate::blob::BlobError> for ApiError {
    fn from(e: crate::blob::BlobError) -> Self {
        match e {
            crate::blob::BlobError::InvalidHash(_) => {
                ApiError::new(ErrorKind::InvalidInput, e.to_string())
            }
            crate::blob::BlobError::Corrupt { .. } => {
                ApiError::new(ErrorKind::Storage, e.to_string())
            }
            crate::blob::BlobError::Storage(s) => s.into(),
        }
    }
}

impl From<crate::GcError> for ApiError {
    fn from(e: crate::GcError) -> Self {
        match e {
            crate::GcError::Busy(_) => ApiError::new(ErrorKind::Conflict, e.to_string()),
            crate::GcError::Storage(s) => s.into(),
        }
    }
}

/// `recent`, typed: the light list of a project's directory, newest first (a typed
/// shell shows each with [`RecentSessionInfo::record`] at the environment's now).
pub fn recent_sessions(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    limit: usize,
) -> std::result::Result<Vec<RecentSessionInfo>, ApiError> {
    let dirs = crate::paths::session_dirs_for_cwd(agent_dir, cwd);
    Ok(crate::listing::recent_sessions_in(&*storage, &dirs, limit)?)
}

/// `recent`: [`recent_sessions`] as JSON, `timeAgo` at the environment's now.
pub fn recent(storage: Rc<dyn Storage>, agent_dir: &str, cwd: &str, limit: usize) -> ApiResult {
    let items = recent_sessions(storage.clone(), agent_dir, cwd, limit)?;
    Ok(crate::listing::recent_json(&items, storage.env().now_ms()))
}

/// `list`, typed: SessionInfo of one project (`cwd`) or of all projects, newest first;
/// `allMessagesText` only with [`ListText::Include`] (see [`crate::listing::session_info`]).
pub fn list_sessions(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    text: ListText,
) -> std::result::Result<Vec<SessionInfo>, ApiError> {
    Ok(match cwd {
        Some(c) => crate::listing::list(storage, agent_dir, c, None, text)?,
        None => crate::listing::list_all(storage, agent_dir, text)?,
    })
}

/// `list`: [`list_sessions`] as JSON (`allMessagesText` left out unless asked for).
pub fn list(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    text: ListText,
) -> ApiResult {
    Ok(crate::listing::list_json(&list_sessions(
        storage, agent_dir, cwd, text,
    )?))
}

/// `parseSessionEntries`: every record of a JSONL text as it is written (no migration), as
/// a JSON array; unreadable lines are skipped, as the lenient reader skips them.
pub fn records(text: &str) -> String {
    let parsed = crate::jsonl::parse_lenient(text);
    crate::json::array(parsed.records.iter().map(|r| &text[r.start..r.end]))
}

/// `loadEntriesFromFile` on a file's text: [`records`], or `[]` when the first record is
/// not a session header (`"type":"session"` and a string `id`).
pub fn file_records(text: &str) -> String {
    let parsed = crate::jsonl::parse_lenient(text);
    match parsed.records.first() {
        Some(r) if crate::entry::Header::from_json(&text[r.start..r.end]).is_some() => {
            crate::json::array(parsed.records.iter().map(|r| &text[r.start..r.end]))
        }
        _ => "[]".to_string(),
    }
}

/// `migrateSessionEntries`: the records of a file (header first, as `JSON.stringify` of
/// the agent's `FileEntry[]` gives them) migrated to the current version, as a JSON array
/// in the same order. Records that are already current, or an array whose first record
/// is not a session header, come back unchanged.
pub fn migrate_records(records_json: &str) -> ApiResult {
    let records: Vec<Box<serde_json::value::RawValue>> = serde_json::from_str(records_json)
        .map_err(|e| {
            ApiError::new(
                ErrorKind::InvalidInput,
                format!("migrateSessionEntries needs an array of entry objects: {e}"),
            )
        })?;
    let Some(mut header) = records
        .first()
        .and_then(|r| crate::entry::Header::from_json(r.get()))
    else {
        return Ok(crate::json::array(records.iter().map(|r| r.get())));
    };
    let mut entries: Vec<crate::entry::Text> = records[1..]
        .iter()
        .map(|r| crate::entry::Text::from(r.get().to_string()))
        .collect();
    crate::migration::migrate(&mut header, &mut entries);
    let header = header.to_json();
    Ok(crate::json::array(
        std::iter::once(header.as_str()).chain(entries.iter().map(|t| t.as_str())),
    ))
}

/// Fold the legacy `--<cwd>--` folder of `cwd` into `session_dir` (see
/// [`crate::merge_legacy_dir`]); its report as JSON.
pub fn merge_legacy_dir(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    session_dir: &str,
) -> ApiResult {
    let legacy = crate::paths::legacy_session_dir(agent_dir, cwd);
    Ok(crate::merge_legacy_dir(&*storage, &legacy, session_dir)?.to_json())
}

/// The light recent list of one session directory, newest first.
pub fn recent_in_dir(storage: Rc<dyn Storage>, session_dir: &str, limit: usize) -> ApiResult {
    let items = crate::listing::recent_sessions_in(&*storage, &[session_dir.to_string()], limit)?;
    Ok(crate::listing::recent_json(&items, storage.env().now_ms()))
}

/// `list(cwd, sessionDir)` with an explicit directory: the sessions in `session_dir`
/// (`agent_dir` holds the index cache; empty: none).
pub fn list_in_dir(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    session_dir: &str,
    text: ListText,
) -> ApiResult {
    let items = crate::listing::list(storage, agent_dir, "", Some(session_dir), text)?;
    Ok(crate::listing::list_json(&items))
}

/// A listing by `flavour`'s rules: one project (`cwd`), one directory (`session_dir`) or
/// every project; pi's `modified` is each session's latest activity
/// ([`crate::listing::list_flavoured`]). With `limit`, its newest `limit` sessions (the
/// head of the whole listing: pi's order needs every file read). JSON as [`list`].
pub fn list_flavoured(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    session_dir: Option<&str>,
    text: ListText,
    flavour: crate::Flavour,
    limit: Option<usize>,
) -> ApiResult {
    let mut items =
        crate::listing::list_flavoured(storage, agent_dir, cwd, session_dir, text, flavour)?;
    if let Some(limit) = limit {
        items.truncate(limit);
    }
    Ok(crate::listing::list_json(&items))
}

/// A listing's first `limit` sessions, newest first (a picker's first screen): only
/// those files' heads are read (see [`crate::listing::list_first`]); JSON as [`list`].
pub fn list_first(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    session_dir: Option<&str>,
    limit: usize,
    text: ListText,
) -> ApiResult {
    let items = crate::listing::list_first(storage, agent_dir, cwd, session_dir, limit, text)?;
    Ok(crate::listing::list_json(&items))
}

/// The JSON of a search's hits so far, as [`search`] prints them.
pub fn search_hits_json(search: &crate::SessionSearch) -> String {
    crate::listing::search_json(&search.hits())
}

/// `search`, typed: the picker's ranking over one project or all, best first: each
/// session with its score, its text left out (see [`crate::SessionSearch`]: the text of
/// one session at a time is read, a piece at a time, and none held).
pub fn search_sessions(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    query: &str,
) -> std::result::Result<Vec<(SessionInfo, u32)>, ApiError> {
    let mut search = crate::SessionSearch::new(storage, agent_dir, cwd, query)?;
    while !search.step(u64::MAX) {}
    Ok(search.into_hits())
}

/// `search`: the picker's ranking over one project or all, as SessionInfo JSON plus a
/// `score` (no `allMessagesText`).
pub fn search(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    query: &str,
) -> ApiResult {
    let mut search = crate::SessionSearch::new(storage, agent_dir, cwd, query)?;
    while !search.step(u64::MAX) {}
    Ok(search_hits_json(&search))
}

/// `resume`, typed: the session file for an id prefix or path (`confirm` forks another
/// project's session into this one, and the copy is returned).
pub fn resume_path(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    arg: &str,
    confirm: bool,
) -> std::result::Result<String, ApiError> {
    let target = crate::resume::resolve(storage.clone(), agent_dir, cwd, arg, None)?;
    Ok(crate::resume::open_target(
        storage, agent_dir, cwd, arg, target, confirm,
    )?)
}

/// `resume`: [`resume_path`] as `{"path": ...}`.
pub fn resume(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    arg: &str,
    confirm: bool,
) -> ApiResult {
    let path = resume_path(storage, agent_dir, cwd, arg, confirm)?;
    Ok(crate::json::record(&crate::resume::ResumedRecord {
        path: &path,
    }))
}

/// `resolveResumableSession`: `{"session": SessionInfo, "scope": "local" | "global"}`, or
/// `null` when no session matches `arg` (see [`crate::resume::find_resumable`]).
pub fn find_resumable(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    local_dir: &str,
    search_all: bool,
    arg: &str,
) -> ApiResult {
    let found = crate::resume::find_resumable(storage, agent_dir, local_dir, search_all, arg)?;
    Ok(crate::json::record(&found.as_ref().map(|(info, scope)| {
        crate::resume::ResumableRecord {
            session: info.record(),
            scope: *scope,
        }
    })))
}

/// `continue`: `{"path", "source": "breadcrumb" | "mostRecent" | "new"}`; for a new
/// session the path is where it will be written (no session is written now). With
/// `session_dir`, the newest session of that directory instead of the cwd's.
pub fn continue_recent(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    session_dir: Option<&str>,
    terminal: Option<&str>,
) -> ApiResult {
    let (path, source) = continue_session(storage, agent_dir, cwd, session_dir, terminal)?;
    Ok(crate::json::record(&crate::resume::ContinuedRecord {
        path: &path,
        source,
    }))
}

/// `continue`, typed: the path and where it came from (see [`continue_recent`]).
pub fn continue_session(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    session_dir: Option<&str>,
    terminal: Option<&str>,
) -> std::result::Result<(String, crate::resume::ContinueSource), ApiError> {
    Ok(crate::resume::continue_in(
        storage,
        agent_dir,
        cwd,
        session_dir,
        terminal,
    )?)
}

/// `blob put`, typed: store the bytes; their hash, reference and file.
pub fn put_blob(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    bytes: &[u8],
) -> std::result::Result<crate::blob::BlobPut, ApiError> {
    Ok(crate::blob::BlobStore::new(&*storage, crate::paths::blobs_dir(agent_dir)).put(bytes)?)
}

/// `blob put`: [`put_blob`] as `{"hash", "ref", "path"}`.
pub fn blob_put(storage: Rc<dyn Storage>, agent_dir: &str, bytes: &[u8]) -> ApiResult {
    Ok(crate::json::record(&put_blob(storage, agent_dir, bytes)?))
}

/// `blob get`: the bytes (a hash or a `blob:sha256:` reference).
pub fn blob_get(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    hash_or_ref: &str,
) -> std::result::Result<Vec<u8>, ApiError> {
    let hash = hash_or_ref
        .strip_prefix(crate::blob::BLOB_REF_PREFIX)
        .unwrap_or(hash_or_ref);
    crate::blob::BlobStore::new(&*storage, crate::paths::blobs_dir(agent_dir))
        .get(hash)?
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, format!("Blob {hash} not found")))
}

/// `url`, typed: resolve `artifact://` / `agent://` against a session file's artifacts
/// directory (`offset`: 1-based first line, `limit`: lines).
pub fn resolve_resource(
    storage: Rc<dyn Storage>,
    session_file: &str,
    url: &str,
    offset: Option<usize>,
    limit: Option<usize>,
) -> std::result::Result<crate::urls::Resource, ApiError> {
    let dir = crate::paths::artifacts_dir(session_file);
    Ok(crate::urls::resolve(
        &*storage,
        Some(&dir),
        url,
        crate::urls::Paging { offset, limit },
    )?)
}

/// `url`: [`resolve_resource`] as `{"content", "mimeType", "size"}`.
pub fn resolve_url(
    storage: Rc<dyn Storage>,
    session_file: &str,
    url: &str,
    offset: Option<usize>,
    limit: Option<usize>,
) -> ApiResult {
    let r = resolve_resource(storage, session_file, url, offset, limit)?;
    Ok(crate::json::record(&r))
}

/// An existing session file opened for writing; a missing one is the storage's
/// not-found for `file` (`fork` and `move` create nothing).
fn open_to_copy(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    file: &str,
) -> std::result::Result<Session, ApiError> {
    let s = open(storage, file, agent_dir, Persistence::Persistent)?;
    if !s.report().file_existed {
        return Err(crate::storage::StorageError::NotFound(file.to_string()).into());
    }
    Ok(s)
}

/// `fork`, typed: copy a session file (and its artifacts) to a new one.
pub fn fork_file(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    file: &str,
) -> std::result::Result<crate::session::ForkResult, ApiError> {
    Ok(open_to_copy(storage, agent_dir, file)?.fork()?)
}

/// `fork`: [`fork_file`] as `{"oldFile", "newFile", "warnings"}`.
pub fn fork(storage: Rc<dyn Storage>, agent_dir: &str, file: &str) -> ApiResult {
    Ok(crate::json::record(
        &fork_file(storage, agent_dir, file)?.record(),
    ))
}

/// `move`, typed: move a session file (and its artifacts) to the project `to_cwd`; its
/// new path.
pub fn move_file(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    file: &str,
    to_cwd: &str,
) -> std::result::Result<String, ApiError> {
    Ok(open_to_copy(storage, agent_dir, file)?.move_to(agent_dir, to_cwd)?)
}

/// `move`: [`move_file`] as `{"newFile"}`.
pub fn move_session(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    file: &str,
    to_cwd: &str,
) -> ApiResult {
    let new_file = move_file(storage, agent_dir, file, to_cwd)?;
    Ok(crate::json::record(&crate::session::MovedRecord {
        new_file: &new_file,
    }))
}

/// `gc`, typed: collect the blobs no session references or pins, older than
/// [`crate::GC_GRACE_MS`] (a dry run deletes nothing); `forget_missing` forgets the
/// recorded sessions outside `<agentDir>/sessions` whose files are gone.
pub fn gc_report(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    dry_run: bool,
    forget_missing: bool,
) -> std::result::Result<crate::GcReport, ApiError> {
    let options = crate::GcOptions {
        dry_run,
        forget_missing,
        ..crate::GcOptions::default()
    };
    Ok(crate::collect_garbage(&*storage, agent_dir, options)?)
}

/// `gc`: [`gc_report`] as `{"dryRun", "scannedFiles", "referenced", "deleted",
/// "keptRecent", "keptPinned", "missing", "forgotten", "staleFiles", "staleIndexes"}`.
pub fn gc(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    dry_run: bool,
    forget_missing: bool,
) -> ApiResult {
    Ok(crate::json::record(&gc_report(
        storage,
        agent_dir,
        dry_run,
        forget_missing,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonl::IssueKind;
    use crate::storage::{MemoryStorage, StorageExt};

    const WEIRD: &str =
        "q\"b\\s/c\u{0}\u{1}\u{1f}\u{7f}\t\n\r\u{8}\u{c} é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'";

    /// The exact bytes of the load report, every field set and none.
    #[test]
    fn report_json_bytes() {
        use crate::jsonl::Issue;
        let issue = |line, kind, detail: &str| Issue {
            line,
            offset: 9,
            kind,
            detail: detail.into(),
        };
        let full = LoadReport {
            file_existed: true,
            issues: vec![
                issue(1, IssueKind::Unparsable, WEIRD),
                issue(2, IssueKind::TornTail, ""),
                issue(30, IssueKind::GluedRecord, "glued"),
            ],
            non_entries: vec![crate::session::NonEntry {
                offset: 3,
                reason: WEIRD.into(),
            }],
            header_problem: Some(WEIRD.into()),
            invalid_utf8: true,
            duplicate_ids: vec!["a".into(), "b".into()],
            migration: Some(crate::migration::Migration {
                from_version: 1,
                to_version: 3,
                entries_changed: 7,
            }),
            backup_path: Some(WEIRD.into()),
            missing_blobs: vec![WEIRD.into(), "x".into()],
            file_version: 1,
        };
        assert_eq!(report_json(&full), GOLDEN_FULL);
        assert_eq!(report_json(&LoadReport::default()), GOLDEN_EMPTY);
    }

    #[test]
    fn file_commands_other_than_append_report_a_missing_file_and_create_nothing() {
        let storage = Rc::new(MemoryStorage::new());
        storage.mkdir_all("/s").expect("mkdir");
        let path = "/s/missing/x.jsonl";
        let results = [
            ("show", show_file(storage.clone(), path, "/agent")),
            (
                "context",
                context_file(storage.clone(), path, "/agent", None),
            ),
            (
                "context --leaf",
                context_file(storage.clone(), path, "/agent", Some("abc")),
            ),
            ("tree", tree_file(storage.clone(), path, "/agent")),
            ("migrate", migrate_file(storage.clone(), path, "/agent")),
        ];
        for (what, r) in results {
            let e = r.expect_err(what);
            assert_eq!(e.kind, ErrorKind::NotFound, "{what}");
            assert_eq!(
                e.message,
                format!("Session file {path} not found"),
                "{what}"
            );
        }
        assert!(!storage.exists("/s/missing"), "a directory was created");
        assert!(!storage.exists("/agent"), "the agent directory was created");

        // An empty file exists: it opens. `append` still creates a missing file.
        storage.write("/s/empty.jsonl", b"").expect("write");
        show_file(storage.clone(), "/s/empty.jsonl", "/agent").expect("empty file");
        append_file(
            storage.clone(),
            "/s/new.jsonl",
            "/agent",
            "/work",
            r#"{"type":"custom","customType":"t"}"#,
        )
        .expect("append");
        show_file(storage.clone(), "/s/new.jsonl", "/agent").expect("created by append");
    }

    const GOLDEN_FULL: &str = "{\"issues\":[{\"line\":1,\"kind\":\"unparsable\",\"detail\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\"},{\"line\":2,\"kind\":\"tornTail\",\"detail\":\"\"},{\"line\":30,\"kind\":\"gluedRecord\",\"detail\":\"glued\"}],\"nonEntries\":1,\"headerProblem\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"invalidUtf8\":true,\"duplicateIds\":2,\"migration\":{\"fromVersion\":1,\"toVersion\":3,\"entriesChanged\":7},\"backupPath\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"missingBlobs\":[\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"x\"]}";

    const GOLDEN_EMPTY: &str = "{\"issues\":[],\"nonEntries\":0}";
}
