//! Garbage collection of the blob store: delete the blobs no session references, and never
//! one that an acknowledged entry references.
//!
//! What makes that hold while other processes append:
//! - References are found by a textual scan of every file under `<agentDir>/sessions`
//!   (backups and unreadable lines included) and of every session file outside it that
//!   stored a blob here ([`note_referrer`], `<agentDir>/blob-referrers.jsonl`); any read
//!   error aborts before anything is deleted (but for a session recorded less than the
//!   grace period ago: every blob it stored is young).
//! - Every blob put rewrites the blob file (see `StorageExt::blob_put`), so a blob about to
//!   be referenced by an entry being appended is younger than the grace period.
//! - A blob that looks old is first renamed aside (`.<hash>.<random>.gc`), then its mtime
//!   is read again: a put that landed just before the rename shows there, and the blob is
//!   renamed back; one that lands after it finds no file and writes a new one.
//! - One collection at a time: `<agentDir>/blobs.lock`, taken like a session's writer lock.

use crate::blob::is_valid_hash;
use crate::lock::{LockError, SessionLock};
use crate::paths;
use crate::storage::{join, Storage, StorageError, StorageResult};

/// What a garbage collection found and did; `gc` prints it as `{"dryRun", "scannedFiles",
/// "referenced", "deleted", "keptRecent"}` (the field order is the key order).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GcReport {
    pub dry_run: bool,
    /// Files read: every file under `<agentDir>/sessions` (any name, recursively) and the
    /// session files elsewhere that stored blobs here.
    pub scanned_files: usize,
    pub referenced: usize,
    /// Unreferenced and older than the grace period: deleted (or would be, in a dry run).
    pub deleted: Vec<String>,
    /// Unreferenced but recent: kept, a session may be about to reference it.
    pub kept_recent: Vec<String>,
}

/// Why a collection did not run to its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GcError {
    /// Another collection holds `<agentDir>/blobs.lock`.
    #[error(
        "another garbage collection of this blob store is running ({0}); try again when it is done"
    )]
    Busy(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// The usual `grace_ms` of [`collect_garbage`]: blobs younger than this are never
/// collected (a session may be about to reference them: blobs are written before the
/// entry that uses them).
pub const GC_GRACE_MS: i64 = 60 * 60 * 1000;

/// Delete (or, in a dry run, list) the blobs no session references and older than
/// `grace_ms`. A dry run writes nothing and takes no lock.
pub fn collect_garbage(
    storage: &dyn Storage,
    agent_dir: &str,
    dry_run: bool,
    grace_ms: i64,
) -> Result<GcReport, GcError> {
    if dry_run {
        return Ok(collect(storage, agent_dir, dry_run, grace_ms)?);
    }
    let lock =
        SessionLock::acquire(storage, &paths::blobs_dir(agent_dir)).map_err(|e| match e {
            LockError::Held(owner) => GcError::Busy(owner.to_string()),
            LockError::Unreadable => GcError::Busy("an unreadable lock file".into()),
            LockError::Storage(e) => GcError::Storage(e),
        })?;
    let result = collect(storage, agent_dir, dry_run, grace_ms);
    lock.release(storage);
    Ok(result?)
}

fn collect(
    storage: &dyn Storage,
    agent_dir: &str,
    dry_run: bool,
    grace_ms: i64,
) -> StorageResult<GcReport> {
    let started = storage.env().now_ms();
    let mut report = GcReport {
        dry_run,
        ..GcReport::default()
    };
    let mut refs = std::collections::HashSet::new();
    let mut scan = |bytes: Vec<u8>| {
        report.scanned_files += 1;
        refs.extend(crate::blob::referenced_hashes(&String::from_utf8_lossy(
            &bytes,
        )));
    };
    for file in crate::storage::files_under(storage, &paths::sessions_root(agent_dir))? {
        scan(storage.read(&file)?);
    }
    for referrer in referrers(storage, agent_dir)? {
        let file = &referrer.path;
        match storage.read(file) {
            Ok(bytes) => scan(bytes),
            // A session deleted since: its references went with it.
            Err(e) if e.is_not_found() => {}
            // Recorded less than the grace period ago: every blob it stored was put since
            // and is kept as young (a confined host may not have been able to let this
            // collection read a file recorded after it started).
            Err(_) if started - referrer.noted_ms < grace_ms => {}
            Err(e) => {
                return Err(StorageError::Other(format!(
                    "garbage collection needs to read {file}, a session outside {} that stored blobs here (listed in {}), and cannot: {e}; nothing was deleted",
                    paths::sessions_root(agent_dir),
                    paths::blob_referrers_file(agent_dir)
                )))
            }
        }
    }
    report.referenced = refs.len();
    let dir = paths::blobs_dir(agent_dir);
    let blobs = match storage.list_dir(&dir) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(report),
        Err(e) => return Err(e),
    };
    let young = |mtime_ms: i64| started - mtime_ms < grace_ms;
    for blob in blobs
        .into_iter()
        .filter(|b| !b.is_dir && is_valid_hash(&b.name) && !refs.contains(&b.name))
    {
        let path = join(&dir, &blob.name);
        let stat = match storage.stat(&path) {
            Ok(s) => s,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        };
        if young(stat.mtime_ms) {
            report.kept_recent.push(blob.name);
            continue;
        }
        if !dry_run && !delete_unless_put_meanwhile(storage, &dir, &blob.name, &young)? {
            report.kept_recent.push(blob.name);
            continue;
        }
        report.deleted.push(blob.name);
    }
    report.deleted.sort();
    report.kept_recent.sort();
    Ok(report)
}

/// Rename the blob aside, then look at its mtime again: put meanwhile (young), it goes
/// back and `false` is returned; else it is deleted. A blob already gone counts as deleted.
fn delete_unless_put_meanwhile(
    storage: &dyn Storage,
    dir: &str,
    hash: &str,
    young: &dyn Fn(i64) -> bool,
) -> StorageResult<bool> {
    let path = join(dir, hash);
    let aside = join(
        dir,
        &format!(".{hash}.{:08x}.gc", storage.env().random_u64() as u32),
    );
    match storage.rename(&path, &aside) {
        Ok(()) => {}
        Err(e) if e.is_not_found() => return Ok(true),
        Err(e) => return Err(e),
    }
    if young(storage.stat(&aside)?.mtime_ms) {
        // A put landed before the rename. Renaming back over a put that landed after it
        // replaces a file by one of the same bytes.
        storage.rename(&aside, &path).map_err(|e| {
            StorageError::Other(format!(
                "blob {hash} was put during garbage collection and could not be put back from {aside}: {e}"
            ))
        })?;
        return Ok(false);
    }
    storage.unlink(&aside)?;
    Ok(true)
}

/// Record that the session file `session_file` stores blobs in `agent_dir`'s store, when
/// it lies outside `<agentDir>/sessions` (where garbage collection would not see it).
/// Called before its first blob is put; a no-op when it is already recorded.
pub fn note_referrer(
    storage: &dyn Storage,
    agent_dir: &str,
    session_file: &str,
) -> StorageResult<()> {
    if paths::is_under_sessions_root(agent_dir, session_file) {
        return Ok(());
    }
    let list = paths::blob_referrers_file(agent_dir);
    let known = read_if_present(storage, &list)?;
    if referrers_in(&known).iter().any(|r| r.path == session_file) {
        return Ok(());
    }
    storage.mkdir_all(agent_dir)?;
    let mut line = String::new();
    if !known.is_empty() && !known.ends_with(b"\n") {
        line.push('\n'); // after a torn last line, a line of its own
    }
    line.push_str(&crate::json::record(&Referrer {
        path: session_file.to_string(),
        noted_ms: storage.env().now_ms(),
    }));
    line.push('\n');
    storage.append(&list, line.as_bytes())?;
    storage.fsync(&list)
}

/// A session file outside `<agentDir>/sessions` that stores blobs here: one line of
/// `<agentDir>/blob-referrers.jsonl`, `{"path", "notedMs"}` (written before its first blob).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Referrer {
    pub path: String,
    pub noted_ms: i64,
}

/// The session files recorded by [`note_referrer`].
fn referrers(storage: &dyn Storage, agent_dir: &str) -> StorageResult<Vec<Referrer>> {
    Ok(referrers_in(&read_if_present(
        storage,
        &paths::blob_referrers_file(agent_dir),
    )?))
}

/// The records of a referrers file (`<agentDir>/blob-referrers.jsonl`), the first of
/// each path, in file order (unreadable lines are skipped): a host that confines garbage
/// collection lets it read these paths.
pub fn referrers_in(bytes: &[u8]) -> Vec<Referrer> {
    let mut seen = std::collections::HashSet::new();
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Referrer>(l).ok())
        .filter(|r| seen.insert(r.path.clone()))
        .collect()
}

fn read_if_present(storage: &dyn Storage, path: &str) -> StorageResult<Vec<u8>> {
    match storage.read(path) {
        Ok(b) => Ok(b),
        Err(e) if e.is_not_found() => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}
