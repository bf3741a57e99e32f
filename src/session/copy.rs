//! Sessions made from this one: `fork`, `fork_from` (another project's file), `move_to`
//! (another cwd) and `create_branched_session` (one path of the tree).

use super::{CreateOptions, OpenOptions, Persistence, Session};
use crate::entry::{Entry, EntryType, Header, Text};
use crate::error::{Result, SessionError};
use crate::flavour::Flavour;
use crate::json::to_text;
use crate::paths;
use crate::storage::{join, parent, Storage, StorageError, StorageExt};
use serde_json::Value;
use std::collections::HashMap;
use std::rc::Rc;

/// What a fork did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkResult {
    pub old_file: Option<String>,
    pub new_file: Option<String>,
    /// Artifact copy failures other than "not found" (the fork still completes).
    pub warnings: Vec<String>,
}

/// `fork` as the shells print it: a file that is not there is `""`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkRecord<'a> {
    pub old_file: &'a str,
    pub new_file: &'a str,
    pub warnings: &'a [String],
}

impl ForkResult {
    /// The record the shells print.
    pub fn record(&self) -> ForkRecord<'_> {
        ForkRecord {
            old_file: self.old_file.as_deref().unwrap_or_default(),
            new_file: self.new_file.as_deref().unwrap_or_default(),
            warnings: &self.warnings,
        }
    }
}

/// `move`: where the session file is now.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MovedRecord<'a> {
    pub new_file: &'a str,
}

impl Session {
    /// A copy of this session's entries under a new header, at `file`.
    fn copy_to(&self, header: Header, file: Option<String>) -> Session {
        let mut next = Session::blank(
            self.storage.clone(),
            self.persistence,
            file,
            &self.agent_dir,
            header,
        );
        next.flavour = self.flavour;
        for e in &self.entries {
            next.push_entry(e.clone());
        }
        next.leaf = self.leaf.clone();
        next
    }

    /// A new session holding this one's entries under a new header, at `file`, as the
    /// agent writes a copy of its in-memory entries: those read from the file without
    /// their stale OpenAI Responses replay data (the load path's rule, `replay.rs`).
    fn fresh_copy(&self, header: Header, file: Option<String>) -> Session {
        let mut next = self.copy_to(header, file);
        for i in 0..next.entries.len() {
            next.entries[i] = self.copied(&next.entries[i]);
        }
        next
    }

    /// An entry as a copy of this session holds it (see [`Self::fresh_copy`]).
    fn copied(&self, e: &Entry) -> Entry {
        match self.read_from_file(e) && self.flavour.drops_stale_replay() {
            true => crate::replay::entry_without_stale_replay(e).unwrap_or_else(|| e.clone()),
            false => e.clone(),
        }
    }

    fn write_new_file(&mut self) -> Result<()> {
        if self.persistence == Persistence::Persistent && self.file.is_some() {
            self.write_whole()?;
        }
        Ok(())
    }

    /// A fresh header for a copy of this session, linked to `parent_session`, and the
    /// copy's file beside the old one (none in memory).
    fn sibling_header(&self, parent_session: Option<&str>) -> (Header, Option<String>) {
        let header = Self::new_header(
            &*self.storage,
            self.flavour,
            self.header.cwd().unwrap_or_default(),
            parent_session,
        );
        let new_file = self.file.as_deref().map(|f| {
            join(
                parent(f),
                &paths::session_file_name(header.timestamp().unwrap_or_default(), header.id()),
            )
        });
        (header, new_file)
    }

    /// `fork()`: the same entries and name under a new session id and file in the same
    /// directory, linked by `parentSession` to the old session's id, as the agent writes
    /// it (entries read from the file without their stale replay data, see
    /// [`Self::fresh_copy`]); the artifacts directory is copied. This session then
    /// continues in the new file.
    pub fn fork(&mut self) -> Result<ForkResult> {
        self.check_writable()?;
        self.materialize()?;
        let old_file = self.file.clone();
        let (header, new_file) = self.sibling_header(Some(self.header.id()));
        let mut next = self.fresh_copy(header.named_after(&self.header), new_file.clone());
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
    /// project's session file, as the agent makes it: the entries as they are (ids, tree,
    /// times) but for stale OpenAI Responses replay data, which is dropped as on load; the
    /// source's name; linked by `parentSession` to the source's id. The source is only read.
    pub fn fork_from(
        storage: Rc<dyn Storage>,
        source: &str,
        options: &CreateOptions,
    ) -> Result<(Session, ForkResult)> {
        let mut source_session = Session::open(
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
        let flavour = options
            .flavour
            .unwrap_or_else(|| Flavour::of_agent_dir(&options.agent_dir));
        source_session.flavour = flavour;
        let parent = flavour.fork_parent(source_session.header.id(), source);
        let fresh = Session::create(
            storage.clone(),
            &CreateOptions {
                parent_session: Some(parent.to_string()),
                flavour: Some(flavour),
                ..options.clone()
            },
        );
        let mut header = fresh.header.clone();
        for key in ["title", "titleSource"] {
            if let Some(v) = source_session.header.fields().get(key) {
                header.set(key, v.clone());
            }
        }
        let mut next = source_session.fresh_copy(header, fresh.file.clone());
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
    /// session directory, the header's cwd updated, as the agent does: the file is
    /// written at its new place when it was on disk (even when that place is where it
    /// already is) or when the session holds an assistant message (a file deleted behind
    /// the session's back is written again from memory); a session never written stays
    /// unwritten; in memory, only the header's cwd changes (the path returned is `""`). A
    /// failing step undoes the earlier ones, so the session is never split between two
    /// places.
    ///
    /// The new directory is `new_cwd`'s in the sessions root the session is in when its
    /// directory is its cwd's own folder, else in `<agent_dir>/sessions`
    /// ([`paths::moved_session_dir`]).
    pub fn move_to(&mut self, agent_dir: &str, new_cwd: &str) -> Result<String> {
        let dir = match &self.file {
            Some(file) => paths::moved_session_dir(
                agent_dir,
                parent(file),
                self.header.cwd().unwrap_or_default(),
                new_cwd,
            ),
            None => paths::session_dir_for_cwd(agent_dir, new_cwd),
        };
        self.move_to_dir(&dir, new_cwd)
    }

    /// [`Self::move_to`] with the target directory given (a host that places sessions by
    /// its own home and temp directories, see [`paths::session_dir_name`]).
    pub fn move_to_dir(&mut self, new_dir: &str, new_cwd: &str) -> Result<String> {
        self.check_writable()?;
        self.materialize()?;
        let Some(old_file) = self.file.clone() else {
            // In memory there is no file to move (`""`), only the header's cwd.
            self.header.set("cwd", Value::String(new_cwd.to_string()));
            return Ok(String::new());
        };
        let new_file = join(new_dir, crate::storage::basename(&old_file));
        let storage = self.storage.clone();
        let had_file = storage.exists(&old_file);
        if had_file {
            // The file must be as this session last saw it (a file it never wrote is
            // someone else's): refused before anything moves.
            self.guard_write()?;
        }
        let write = had_file || self.has_assistant;
        if new_file == old_file {
            self.header.set("cwd", Value::String(new_cwd.to_string()));
            if write {
                self.write_whole()?;
            }
            return Ok(new_file);
        }
        if storage.exists(&new_file) {
            return Err(StorageError::AlreadyExists(new_file).into());
        }
        let (old_art, new_art) = (
            paths::artifacts_dir(&old_file),
            paths::artifacts_dir(&new_file),
        );
        let mut header = self.header.clone();
        header.set("cwd", Value::String(new_cwd.to_string()));
        // 1. the new file, complete, written atomically; the entries read from the old
        //    file stay entries read from a file (written as they are, and their stale
        //    replay data kept from the model)
        let mut moved = self.copy_to(header, Some(new_file.clone()));
        moved.from_file = self.from_file;
        moved.edited = self.edited.clone();
        moved.extra_headers = self.extra_headers.clone();
        // A file not rewritten since its lossy load or migration keeps its original
        // bytes aside at the new place, as a rewrite in place would.
        moved.pending_backup = self.pending_backup.clone();
        moved.report = self.report.clone();
        if write {
            storage.mkdir_all(new_dir)?;
            moved.write_whole()?;
        }
        // 2. the artifacts directory
        let had_artifacts = storage.exists(&old_art);
        if had_artifacts {
            if let Err(e) = storage
                .mkdir_all(new_dir)
                .and_then(|_| storage.rename(&old_art, &new_art))
            {
                let _ = storage.unlink(&new_file);
                return Err(e.into());
            }
        }
        // 3. the old file
        if had_file {
            if let Err(e) = storage.unlink(&old_file) {
                if had_artifacts {
                    let _ = storage.rename(&new_art, &old_art);
                }
                let _ = storage.unlink(&new_file);
                return Err(e.into());
            }
        }
        moved.warnings = std::mem::take(&mut self.warnings);
        moved.has_assistant = self.has_assistant;
        *self = moved;
        Ok(new_file)
    }

    /// `createBranchedSession`: a new session holding the path root → `leaf_id`, with the
    /// labels of its entries re-created at the end. Label entries on the path are dropped
    /// and their children re-attached to the label's parent, so no `parentId` dangles;
    /// entries read from the file lose their stale replay data (see [`Self::fresh_copy`]).
    /// As the agent's: the new header has no name and names the old file as its
    /// `parentSession` (nothing in memory), and the new file is written at once, assistant
    /// message or not. This session then continues in the new file; returns its path
    /// (`None` in memory).
    pub fn create_branched_session(&mut self, leaf_id: &str) -> Result<Option<String>> {
        self.check_writable()?;
        self.materialize()?;
        let path: Vec<Entry> = self
            .branch_path(Some(leaf_id))?
            .into_iter()
            .map(|e| self.copied(e))
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
        // (target, label, the time it was set: kept by pi's rule, else the copy's own)
        let labels: Vec<(String, String, Option<String>)> = match self.flavour.labels_as_set() {
            false => kept
                .iter()
                .filter_map(|e| {
                    let label = self.labels.get(&e.id)?;
                    Some((e.id.clone(), label.clone(), None))
                })
                .collect(),
            true => {
                let on_path: std::collections::HashSet<&str> =
                    kept.iter().map(|e| e.id.as_str()).collect();
                self.labels_in_set_order()
                    .into_iter()
                    .filter(|(target, ..)| on_path.contains(target.as_str()))
                    .map(|(target, label, at)| (target, label, Some(at)))
                    .collect()
            }
        };
        let old_file = self.file.clone();
        let (header, new_file) = self.sibling_header(old_file.as_deref());
        let mut next = Self::blank(
            self.storage.clone(),
            self.persistence,
            new_file.clone(),
            &self.agent_dir,
            header,
        );
        next.flavour = self.flavour;
        for e in kept {
            next.push_entry(e);
        }
        let saved_persistence = next.persistence;
        next.persistence = Persistence::InMemory;
        for (target, label, at) in labels {
            next.append_label_change(&target, Some(&label))?;
            if let Some(at) = at {
                let last = next.entries.len() - 1;
                next.entries[last] =
                    with_field(&next.entries[last], "timestamp", Value::String(at))?;
            }
        }
        next.persistence = saved_persistence;
        next.write_new_file()?;
        *self = next;
        Ok(new_file)
    }
}

impl Session {
    /// The labels set now, in the order they were first set (a cleared one set again
    /// comes last), each with the time it was last set: pi's `labelsById` (a JS `Map`).
    fn labels_in_set_order(&self) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = Vec::new();
        for e in &self.entries {
            let crate::entry::Payload::Label {
                target_id: Some(target),
                label,
            } = &e.payload
            else {
                continue;
            };
            let at = out.iter().position(|(t, ..)| t == target);
            match (label.as_deref().filter(|l| !l.is_empty()), at) {
                (Some(l), Some(i)) => {
                    out[i].1 = l.to_string();
                    out[i].2 = e.timestamp().to_string();
                }
                (Some(l), None) => {
                    out.push((target.clone(), l.to_string(), e.timestamp().to_string()))
                }
                (None, Some(i)) => {
                    out.remove(i);
                }
                (None, None) => {}
            }
        }
        out
    }
}

/// `entry` with `key` set to `value`.
fn with_field(entry: &Entry, key: &str, value: Value) -> Result<Entry> {
    let mut v = entry.to_value();
    if let Value::Object(obj) = &mut v {
        obj.insert(key.into(), value);
    }
    Entry::parse(Text::from(to_text(&v))).map_err(|e| SessionError::InvalidInput(e.to_string()))
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
