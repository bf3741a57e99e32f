//! A cwd's legacy session folder (`--<encoded cwd>--`) folded into the folder new sessions
//! of that cwd go to (`-<rel>`, `-tmp-<rel>`), as the agent folds it, without its losses.
//!
//! The agent renames each file over unless the target has one of that name, then deletes
//! the legacy folder with whatever was left in it; a plain file where the target folder
//! should be is deleted too. Here nothing is deleted:
//! - a name the target already has stays where it is (both copies are kept, and both
//!   folders are read: listing and resume accept every form);
//! - a session is moved holding its writer lock (`<file>.jsonl.lock`), taken as a writer
//!   takes it but never over a live writer, not even one in this process: a session
//!   being written, or opened while the merge runs, stays where it is with its lock and
//!   artifacts (reported as `locked`; a later merge moves it once it is closed). A lock
//!   checked only when the folder was listed let a session opened in between move from
//!   under its writer, whose next write put the whole session back at the old path: two
//!   files with one id. A dead writer's lock is recovered as a writer would recover it;
//! - the legacy folder is removed only once it is empty;
//! - a target that is not a folder stops the merge, with nothing moved.
//!
//! Each move is one rename, so a session and its artifacts folder are never half moved.

use crate::lock::{LockError, SessionLock};
use crate::storage::{join, DirEntry, Storage, StorageExt, StorageResult};

/// What a merge did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirMerge {
    /// Names moved into the target (files and artifacts folders).
    pub moved: Vec<String>,
    /// Names left in the legacy folder, with why.
    pub kept: Vec<(String, KeptBecause)>,
    /// Whether the legacy folder is gone.
    pub removed: bool,
}

/// Why a name stayed in the legacy folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptBecause {
    /// The target folder has an entry of that name.
    TargetHasIt,
    /// Its session has a lock file: a writer may be appending to it.
    Locked,
    /// The target path is a file, not a folder.
    TargetIsAFile,
}

impl KeptBecause {
    pub fn as_str(self) -> &'static str {
        match self {
            KeptBecause::TargetHasIt => "targetHasIt",
            KeptBecause::Locked => "locked",
            KeptBecause::TargetIsAFile => "targetIsAFile",
        }
    }
}

#[derive(serde::Serialize)]
struct KeptRecord<'a> {
    name: &'a str,
    reason: &'static str,
}

#[derive(serde::Serialize)]
struct MergeRecord<'a> {
    moved: &'a [String],
    kept: Vec<KeptRecord<'a>>,
    removed: bool,
}

impl DirMerge {
    /// `{"moved": [names], "kept": [{"name", "reason"}], "removed": bool}`.
    pub fn to_json(&self) -> String {
        crate::json::record(&MergeRecord {
            moved: &self.moved,
            kept: self
                .kept
                .iter()
                .map(|(name, why)| KeptRecord {
                    name,
                    reason: why.as_str(),
                })
                .collect(),
            removed: self.removed,
        })
    }
}

/// The session a folder entry belongs to: `x` of `x.jsonl`, `x.jsonl.lock` and the
/// artifacts folder `x/`.
fn session_stem(name: &str) -> &str {
    name.strip_suffix(".jsonl.lock")
        .or_else(|| name.strip_suffix(".jsonl"))
        .unwrap_or(name)
}

/// Is this entry part of a session its writer may be using: its file, its lock or its
/// artifacts folder?
fn is_session_part(entry: &DirEntry) -> bool {
    entry.is_dir || entry.name.ends_with(".jsonl") || entry.name.ends_with(".jsonl.lock")
}

/// The folder's entries grouped by [`session_stem`], in the order first listed; whether
/// each group is a session's.
fn group_by_session(entries: &[DirEntry]) -> Vec<(&str, bool, Vec<&str>)> {
    let mut groups: Vec<(&str, bool, Vec<&str>)> = Vec::new();
    let mut at = std::collections::HashMap::new();
    for entry in entries {
        let stem = session_stem(&entry.name);
        let i = *at.entry(stem).or_insert_with(|| {
            groups.push((stem, false, Vec::new()));
            groups.len() - 1
        });
        groups[i].1 |= is_session_part(entry);
        groups[i].2.push(&entry.name);
    }
    groups
}

/// Move `name` unless the target has it; a name gone since the listing is skipped.
fn move_name(
    storage: &dyn Storage,
    legacy: &str,
    target: &str,
    name: &str,
    merge: &mut DirMerge,
) -> StorageResult<()> {
    let to = join(target, name);
    if storage.exists(&to) {
        merge
            .kept
            .push((name.to_string(), KeptBecause::TargetHasIt));
        return Ok(());
    }
    match storage.rename(&join(legacy, name), &to) {
        Ok(()) => merge.moved.push(name.to_string()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Move session `stem`'s `names` holding its writer lock, or keep them all when a live
/// writer holds it (or its lock cannot be read).
fn merge_session(
    storage: &dyn Storage,
    legacy: &str,
    target: &str,
    stem: &str,
    names: &[&str],
    merge: &mut DirMerge,
) -> StorageResult<()> {
    let lock = match SessionLock::acquire_idle(storage, &join(legacy, &format!("{stem}.jsonl"))) {
        Ok(lock) => lock,
        Err(LockError::Storage(e)) => return Err(e),
        Err(LockError::Held(_) | LockError::Unreadable) => {
            let kept = names.iter().map(|n| (n.to_string(), KeptBecause::Locked));
            merge.kept.extend(kept);
            return Ok(());
        }
    };
    let lock_name = format!("{stem}.jsonl.lock");
    let moved = names
        .iter()
        .filter(|n| **n != lock_name)
        .try_for_each(|n| move_name(storage, legacy, target, n, merge));
    lock.release(storage);
    moved
}

/// Move what `legacy` holds into `target` (created when missing). A missing `legacy` is
/// no merge at all.
pub fn merge_into(storage: &dyn Storage, legacy: &str, target: &str) -> StorageResult<DirMerge> {
    let mut merge = DirMerge::default();
    if legacy.trim_end_matches('/') == target.trim_end_matches('/') {
        return Ok(merge);
    }
    let entries = match storage.list_dir(legacy) {
        Ok(e) => e,
        Err(e) if e.is_not_found() => return Ok(merge),
        Err(e) => return Err(e),
    };
    match storage.stat(target) {
        Ok(stat) if !stat.is_dir => {
            merge.kept = entries
                .into_iter()
                .map(|e| (e.name, KeptBecause::TargetIsAFile))
                .collect();
            return Ok(merge);
        }
        Ok(_) => {}
        Err(e) if e.is_not_found() => storage.mkdir_all(target)?,
        Err(e) => return Err(e),
    }
    for (stem, is_session, names) in group_by_session(&entries) {
        if is_session {
            merge_session(storage, legacy, target, stem, &names, &mut merge)?;
        } else {
            for name in names {
                move_name(storage, legacy, target, name, &mut merge)?;
            }
        }
    }
    if merge.kept.is_empty() {
        merge.removed = storage.rmdir(legacy).is_ok();
    }
    Ok(merge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{MemoryStorage, StorageExt};

    #[test]
    fn the_stem_names_a_session_its_lock_and_its_artifacts() {
        assert_eq!(session_stem("a_1.jsonl"), "a_1");
        assert_eq!(session_stem("a_1.jsonl.lock"), "a_1");
        assert_eq!(session_stem("a_1"), "a_1");
    }

    #[test]
    fn a_missing_legacy_folder_is_no_merge() {
        let s = MemoryStorage::new();
        assert_eq!(merge_into(&s, "/old", "/new").unwrap(), DirMerge::default());
        assert!(!s.exists("/new"), "nothing is created for nothing");
    }
}
