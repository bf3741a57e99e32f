//! A cwd's legacy session folder (`--<encoded cwd>--`) folded into the folder new sessions
//! of that cwd go to (`-<rel>`, `-tmp-<rel>`), as the agent folds it, without its losses.
//!
//! The agent renames each file over unless the target has one of that name, then deletes
//! the legacy folder with whatever was left in it; a plain file where the target folder
//! should be is deleted too. Here nothing is deleted:
//! - a name the target already has stays where it is (both copies are kept, and both
//!   folders are read: listing and resume accept every form);
//! - a session whose lock file (`<file>.jsonl.lock`) is there is being written, or was
//!   by a process that died: its file, lock and artifacts stay together where they are;
//! - the legacy folder is removed only once it is empty;
//! - a target that is not a folder stops the merge, with nothing moved.
//!
//! Each move is one rename, so a session and its artifacts folder are never half moved.

use crate::storage::{join, Storage, StorageExt, StorageResult};

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
    let locked: std::collections::HashSet<&str> = entries
        .iter()
        .filter(|e| e.name.ends_with(".jsonl.lock"))
        .map(|e| session_stem(&e.name))
        .collect();
    for entry in &entries {
        let name = &entry.name;
        let to = join(target, name);
        if locked.contains(session_stem(name)) {
            merge.kept.push((name.clone(), KeptBecause::Locked));
        } else if storage.exists(&to) {
            merge.kept.push((name.clone(), KeptBecause::TargetHasIt));
        } else {
            storage.rename(&join(legacy, name), &to)?;
            merge.moved.push(name.clone());
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
