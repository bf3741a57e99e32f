//! Garbage collection of the blob store: delete the blobs no session references, and never
//! one a session might still reference. It fails closed: a blob is deleted only when
//! every session that might reference it was read and does not.
//!
//! What makes that hold while other processes append:
//! - References are found by a textual scan of every file under `<agentDir>/sessions`
//!   (backups and unreadable lines included) and of every session file outside it that
//!   stored a blob here, recorded in `<agentDir>/blob-referrers.jsonl` (see [`referrers`]):
//!   any read error aborts before anything is deleted, and so does a line of that file
//!   that cannot be read.
//! - A session outside `sessions/` pins the blobs it references before its text is
//!   written; a pinned blob is never deleted. When such a session is gone (deleted or
//!   moved), its pins still hold; they are dropped only on request (`forget_missing`),
//!   and reported until then. A gone session recorded before pins existed (so which blobs
//!   it references is unknown) makes collection refuse until it is forgotten.
//! - Every blob put rewrites the blob file (see `StorageExt::blob_put`), so a blob about to
//!   be referenced by an entry being appended is younger than the grace period.
//! - A blob that looks old is first renamed aside (`.<hash>.<random>.gc`), then its mtime
//!   is read again: a put that landed just before the rename shows there, and the blob is
//!   renamed back; one that lands after it finds no file and writes a new one. A file set
//!   aside by a collection that stopped half way is put back (or dropped when the blob was
//!   put again since) by the next one; a put's temp file older than the grace period is
//!   removed.
//! - One collection at a time: `<agentDir>/blobs.lock`, taken like a session's writer lock.
//! - Only names of the store are deleted: 64-hex blob names and the collection's own
//!   `.gc` and `.tmp` files in `<agentDir>/blobs`. (The CLI also refuses a `blobs` that is
//!   a symlink, and lets collection read recorded sessions, never write them.)

pub(crate) mod referrers;

mod stale;

use crate::blob::is_valid_hash;
use crate::lock::{LockError, SessionLock};
use crate::paths;
use crate::storage::{join, Storage, StorageError, StorageResult};
use std::collections::HashSet;

pub use referrers::referrers_in;

/// What a garbage collection found and did; `gc` prints it as `{"dryRun", "scannedFiles",
/// "referenced", "deleted", "keptRecent", "keptPinned", "missing", "forgotten",
/// "staleFiles"}` (the field order is the key order).
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
    /// Unreferenced by every file read, but pinned by a recorded session that is gone:
    /// kept until that session is forgotten.
    pub kept_pinned: Vec<String>,
    /// Recorded sessions outside `<agentDir>/sessions` whose files are gone (deleted, or
    /// moved): their pins hold until `forget_missing`.
    pub missing: Vec<String>,
    /// Of those, the ones this collection forgot (`forget_missing`; in a dry run, would).
    pub forgotten: Vec<String>,
    /// Files a collection or a put that stopped half way left in the store, put back or
    /// removed (in a dry run, would be).
    pub stale_files: Vec<String>,
    /// Cached session indexes (`<agentDir>/cache/index/`) whose session file is gone, or
    /// that are no index: removed (in a dry run, would be). Only a cache: a failure to
    /// read or remove one is no failure of the collection.
    pub stale_indexes: Vec<String>,
}

/// How a collection runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcOptions {
    /// Delete nothing, take no lock, write nothing: say what would be done.
    pub dry_run: bool,
    /// Forget the recorded sessions whose files are gone: their pins no longer hold.
    pub forget_missing: bool,
    /// Blobs younger than this are never collected ([`GC_GRACE_MS`]).
    pub grace_ms: i64,
}

impl Default for GcOptions {
    fn default() -> Self {
        GcOptions {
            dry_run: true,
            forget_missing: false,
            grace_ms: GC_GRACE_MS,
        }
    }
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

/// Delete (or, in a dry run, list) the blobs no session references, pins or put within
/// `grace_ms`. A dry run writes nothing and takes no lock.
pub fn collect_garbage(
    storage: &dyn Storage,
    agent_dir: &str,
    options: GcOptions,
) -> Result<GcReport, GcError> {
    if options.dry_run {
        return Ok(collect(storage, agent_dir, options)?);
    }
    let lock =
        SessionLock::acquire(storage, &paths::blobs_dir(agent_dir)).map_err(|e| match e {
            LockError::Held(owner) => GcError::Busy(owner.to_string()),
            LockError::Unreadable => GcError::Busy("an unreadable lock file".into()),
            LockError::Storage(e) => GcError::Storage(e),
        })?;
    let result = collect(storage, agent_dir, options);
    lock.release(storage);
    Ok(result?)
}

fn collect(storage: &dyn Storage, agent_dir: &str, options: GcOptions) -> StorageResult<GcReport> {
    let GcOptions {
        dry_run,
        forget_missing,
        grace_ms,
    } = options;
    let started = storage.env().now_ms();
    let mut report = GcReport {
        dry_run,
        ..GcReport::default()
    };
    // Read first, strictly: a line that cannot be read could be a session whose images
    // the scan would then miss.
    let recorded = referrers::read(storage, agent_dir)?;
    let mut refs = HashSet::new();
    let mut scan = |bytes: Vec<u8>| {
        report.scanned_files += 1;
        refs.extend(crate::blob::referenced_hashes(&String::from_utf8_lossy(
            &bytes,
        )));
    };
    for file in crate::storage::files_under(storage, &paths::sessions_root(agent_dir))? {
        scan(storage.read(&file)?);
    }
    let mut pinned = HashSet::new();
    let mut unknown = Vec::new();
    for session in &recorded.sessions {
        let file = &session.path;
        match storage.read(file) {
            Ok(bytes) => scan(bytes),
            Err(e) if e.is_not_found() => {
                report.missing.push(file.clone());
                if forget_missing {
                    report.forgotten.push(file.clone());
                    continue;
                }
                if !session.pins_known {
                    unknown.push(file.as_str());
                }
            }
            Err(e) => {
                return Err(StorageError::Other(format!(
                    "garbage collection needs to read {file}, a session outside {} that \
                     references blobs here (recorded in {}), and cannot: {e}; nothing was \
                     deleted",
                    paths::sessions_root(agent_dir),
                    paths::blob_referrers_file(agent_dir)
                )))
            }
        }
        // A readable session's pins hold too: a copy moved away from its path may still
        // reference them. Only forgetting a gone session releases them.
        pinned.extend(session.pins.iter().cloned());
    }
    if !unknown.is_empty() {
        return Err(StorageError::Other(format!(
            "garbage collection cannot know which blobs {} references: it is gone (deleted \
             or moved) and was recorded in {} before pins were kept; nothing was deleted. \
             Put it back, or run gc with --forget-missing if it was deleted on purpose",
            unknown.join(", "),
            paths::blob_referrers_file(agent_dir)
        )));
    }
    report.referenced = refs.len();
    if !dry_run {
        referrers::forget(storage, agent_dir, &report.forgotten, recorded.read_len)?;
    }
    report.stale_indexes = crate::index::cache::prune(storage, agent_dir, dry_run);
    let dir = paths::blobs_dir(agent_dir);
    let names = match storage.list_dir(&dir) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(report),
        Err(e) => return Err(e),
    };
    let young = |mtime_ms: i64| started - mtime_ms < grace_ms;
    let mut blobs = Vec::new();
    for entry in names.into_iter().filter(|e| !e.is_dir) {
        if is_valid_hash(&entry.name) {
            blobs.push(entry.name);
        } else if let Some(stale) = stale::classify(&entry.name) {
            match stale::settle(storage, &dir, &entry.name, stale, dry_run, &young)? {
                stale::Settled::Left => {}
                stale::Settled::Removed => report.stale_files.push(entry.name),
                // Collected below like any other blob.
                stale::Settled::PutBack(hash) => {
                    report.stale_files.push(entry.name);
                    blobs.push(hash);
                }
            }
        }
    }
    for name in blobs.into_iter().filter(|b| !refs.contains(b)) {
        if pinned.contains(&name) {
            report.kept_pinned.push(name);
            continue;
        }
        let path = join(&dir, &name);
        let stat = match storage.stat(&path) {
            Ok(s) => s,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        };
        if young(stat.mtime_ms) {
            report.kept_recent.push(name);
            continue;
        }
        if !dry_run && !delete_unless_put_meanwhile(storage, &dir, &name, &young)? {
            report.kept_recent.push(name);
            continue;
        }
        report.deleted.push(name);
    }
    for list in [
        &mut report.deleted,
        &mut report.kept_recent,
        &mut report.kept_pinned,
        &mut report.stale_files,
    ] {
        crate::sort::sort_by(list, Ord::cmp);
    }
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
    let aside = join(dir, &stale::aside_name(hash, storage.env().random_u64()));
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
