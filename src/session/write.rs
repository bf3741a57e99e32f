//! Persistence: the writability check, the latched first failure, the first write and
//! atomic rewrites (keeping a lossy file's bytes aside), appends, fsync, and the writer
//! lock taken before any write and released on close or drop.

use super::{Persistence, Session};
use crate::blob;
use crate::entry::Entry;
use crate::error::{Result, SessionError};
use crate::persist::{prepare_for_persistence, Transforms};
use crate::storage::{FileStat, Storage, StorageError, StorageExt};
use crate::time::iso_from_ms;
use std::borrow::Cow;

/// The blobs pinned for one session file (see [`Session::pin_before_writing`]).
#[derive(Debug, Default)]
pub(super) struct Pins {
    file: Option<String>,
    hashes: std::collections::HashSet<String>,
}

/// How an entry about to be added reaches the file ([`Session::plan_append`]).
pub(super) enum Persist {
    /// Not now: in memory, or before the first assistant message.
    Nothing,
    /// The whole file (the first write, or one after a migration or repair).
    Whole,
    /// One line appended to the file, which is `size` bytes long.
    Line { size: u64 },
}

impl Session {
    pub(super) fn check_writable(&self) -> Result<()> {
        if let Some(e) = &self.persist_error {
            return Err(e.clone());
        }
        if self.persistence == Persistence::ReadOnly {
            return Err(SessionError::ReadOnly(
                self.file.clone().unwrap_or_default(),
            ));
        }
        Ok(())
    }

    fn latch<T>(&mut self, result: std::result::Result<T, StorageError>) -> Result<T> {
        result.map_err(|e| {
            let err = SessionError::Persistence {
                file: self.file.clone().unwrap_or_default(),
                cause: e.to_string(),
            };
            if self.persist_error.is_none() {
                self.warnings.push(err.to_string());
                self.persist_error = Some(err.clone());
            }
            err
        })
    }

    fn persisted_line<'e>(
        &self,
        entry: &'e Entry,
        transforms: Transforms,
    ) -> std::result::Result<Cow<'e, str>, StorageError> {
        let Some(transforms) = self.flavour.transforms(transforms) else {
            return Ok(Cow::Borrowed(entry.json()));
        };
        let store = self.blob_store();
        prepare_for_persistence(
            entry.json(),
            &mut |bytes: &[u8]| {
                if self.agent_dir.is_empty() {
                    return Err(StorageError::Other(
                        "this session keeps images in the agent directory's blob store, and it \
                         was opened without one (pass agentDir)"
                            .into(),
                    ));
                }
                store.put(bytes).map(|p| p.reference).map_err(|e| match e {
                    blob::BlobError::Storage(s) => s,
                    other => StorageError::Other(other.to_string()),
                })
            },
            transforms,
        )
    }

    /// Would the next write pin every blob the session references (a deferred session
    /// must read its entries for that)? The first write to a file whose writes pin blobs
    /// does ([`Self::pin_before_writing`]).
    pub(super) fn pins_whole_session_next(&self) -> bool {
        self.deferred.is_some()
            && self.file.as_deref().is_some_and(|file| {
                pins_blobs(&self.agent_dir, file) && self.pins.file.as_deref() != Some(file)
            })
    }

    /// Before text is written to a file outside `<agentDir>/sessions`: pin every blob it
    /// references that is not pinned yet (`gc/referrers.rs`), so garbage collection keeps
    /// them even once the file is moved or deleted. The first time for a file, every
    /// blob the whole session references is pinned (a session recorded late, or copied
    /// here by a fork or a move, references blobs it never put). `whole`: `text` is the
    /// whole file.
    fn pin_before_writing(
        &mut self,
        text: &str,
        whole: bool,
    ) -> std::result::Result<(), StorageError> {
        let Some(file) = self.file.as_deref() else {
            return Ok(());
        };
        if !pins_blobs(&self.agent_dir, file) {
            return Ok(());
        }
        let mut wanted: Vec<String> = Vec::new();
        if self.pins.file.as_deref() != Some(file) {
            self.pins = Pins {
                file: Some(file.to_string()),
                hashes: Default::default(),
            };
            // A line alone is not the whole session (the whole file's text already is).
            if !whole {
                for entry in &self.entries {
                    wanted.extend(blob::referenced_hashes(entry.json()));
                }
            }
        }
        wanted.extend(blob::referenced_hashes(text));
        crate::sort::sort_by(&mut wanted, Ord::cmp);
        wanted.dedup();
        wanted.retain(|h| !self.pins.hashes.contains(h));
        crate::gc::referrers::pin(&*self.storage, &self.agent_dir, file, &wanted)?;
        self.pins.hashes.extend(wanted);
        Ok(())
    }

    fn keep_backup(&mut self) -> std::result::Result<(), StorageError> {
        let (Some(original), Some(file)) = (self.pending_backup.as_ref(), self.file.as_ref())
        else {
            return Ok(());
        };
        let stamp = iso_from_ms(self.storage.env().now_ms()).replace([':', '.'], "-");
        let (backup, warning) = match &self.report.migration {
            Some(m) if !self.report.lossy() => {
                let backup = format!("{file}.v{}-{stamp}", m.from_version);
                let warning = format!(
                    "{file} was migrated from session format v{} to v{}; its original bytes are kept in {backup}",
                    m.from_version, m.to_version
                );
                (backup, warning)
            }
            _ => {
                let backup = format!("{file}.corrupt-{stamp}");
                let warning = format!(
                    "{file} had unreadable content; its original bytes are kept in {backup}"
                );
                (backup, warning)
            }
        };
        self.storage.atomic_write(&backup, original.bytes())?;
        self.report.backup_path = Some(backup);
        self.warnings.push(warning);
        self.pending_backup = None;
        Ok(())
    }

    /// The whole file as this session would write it.
    pub fn to_jsonl(&self) -> std::result::Result<String, StorageError> {
        self.assert_read();
        let mut out = String::with_capacity(
            self.entries
                .iter()
                .map(|e| e.json().len() + 1)
                .sum::<usize>()
                + 256,
        );
        out.push_str(&self.header.to_json());
        out.push('\n');
        let mut headers = self.extra_headers.iter().peekable();
        let mut headers_before = |out: &mut String, i: usize| {
            while let Some((_, h)) = headers.next_if(|(at, _)| *at <= i) {
                out.push_str(h.as_str());
                out.push('\n');
            }
        };
        for (i, e) in self.entries.iter().enumerate() {
            headers_before(&mut out, i);
            let transforms = if i < self.from_file && !self.edited.contains(&i) {
                Transforms::Lossless
            } else {
                Transforms::All
            };
            out.push_str(&self.persisted_line(e, transforms)?);
            out.push('\n');
        }
        headers_before(&mut out, usize::MAX);
        Ok(out)
    }

    /// Take the writer lock if this session does not hold it yet.
    pub(super) fn take_lock(&mut self) -> Result<()> {
        if self.lock.is_some() || self.persistence != Persistence::Persistent {
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        match acquire_lock(&*self.storage, &file) {
            Ok(lock) => {
                self.lock = Some(lock);
                Ok(())
            }
            // A write that fails while taking the lock is a persistence failure like any other.
            Err(SessionError::Storage(e)) => self.latch(Err(e)),
            Err(e) => Err(e),
        }
    }

    /// Before any write: hold the lock, and make sure the file is as we last saw it. A
    /// file we read or wrote must not have changed since (a full rewrite would silently
    /// drop the change, an append would hang off a stale leaf); a file we never saw must
    /// still be absent (another process created it meanwhile: writing ours would replace
    /// theirs). Under the lock, so no well-behaved writer can slip in between.
    ///
    /// A file this session had read or written that is gone (deleted behind its back) is
    /// written again whole from memory by the caller, as the agent does: nothing another
    /// writer made is lost by that.
    ///
    /// Returns the file's size now (0 when it is absent): what a write appends to.
    pub(super) fn guard_write(&mut self) -> Result<u64> {
        self.take_lock()?;
        let Some(file) = self.file.clone() else {
            return Ok(0);
        };
        if !std::mem::take(&mut self.lock_checked) {
            self.keep_lock()?;
        }
        let now = match self.storage.stat(&file) {
            Ok(s) => Some((s.size, s.mtime_ms)),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e.into()),
        };
        if now.is_none() && self.disk.is_some() && self.flushed {
            self.disk = None;
            self.needs_rewrite = true;
            self.needs_newline = false;
            return Ok(0);
        }
        let size = now.map_or(0, |(size, _)| size);
        let expected = match (self.disk, self.flushed) {
            (Some(seen), true) => Some((seen.size, seen.mtime_ms)),
            (None, _) => None,
            // Seen but never written by us (not reached today): nothing to compare.
            (Some(_), false) => return Ok(size),
        };
        if now != expected {
            return Err(SessionError::ExternallyModified { file });
        }
        Ok(size)
    }

    /// At the start of an append: refuse if this session was fenced (its lock taken
    /// over), before the entry reaches memory; take the lock again if its file is gone.
    /// The write that follows in the same call then checks the lock file no second time.
    pub(super) fn fence(&mut self) -> Result<()> {
        self.keep_lock()?;
        self.lock_checked = true;
        Ok(())
    }

    /// [`Self::check_lock`], and the lock taken again when its file is gone.
    fn keep_lock(&mut self) -> Result<()> {
        if self.check_lock()? {
            self.lock = None;
            self.take_lock()?;
        }
        Ok(())
    }

    /// Is this session's lock still its own? `Superseded` when someone took it over (a
    /// newer open in this process, or another process); `Ok(true)` when the lock file is
    /// gone and must be taken again.
    pub(super) fn check_lock(&self) -> Result<bool> {
        let (Some(lock), Some(file)) = (&self.lock, &self.file) else {
            return Ok(false);
        };
        match lock.check(&*self.storage, self.wrote_ms) {
            crate::lock::LockCheck::Held => Ok(false),
            crate::lock::LockCheck::Missing => Ok(true),
            crate::lock::LockCheck::Replaced(owner) => {
                let me = self.storage.env().process_identity();
                let by = if owner.pid == me.pid && owner.host == me.host {
                    "by a newer open in this process".to_string()
                } else {
                    format!("by another process ({owner})")
                };
                Err(SessionError::Superseded {
                    file: file.clone(),
                    by,
                })
            }
        }
    }

    /// Record the file as this session has just written it, `size` bytes long. The stat
    /// comes after the write: a line that a program taking no lock appended in between
    /// is in it. Its size is then not ours, and the size we wrote is recorded instead, so
    /// the next write is refused (`conflict`) rather than overwriting that line.
    fn remember_disk(&mut self, size: u64) {
        self.disk = self
            .file
            .as_deref()
            .and_then(|f| self.storage.stat(f).ok())
            .map(|now| FileStat { size, ..now });
        self.wrote_ms = self.disk.map(|d| d.mtime_ms);
    }

    /// Guarded, latched atomic rewrite of the whole file.
    pub(super) fn write_whole(&mut self) -> Result<()> {
        self.guard_write()?;
        self.write_whole_guarded()
    }

    /// [`Self::write_whole`] once its guard has passed.
    pub(super) fn write_whole_guarded(&mut self) -> Result<()> {
        self.materialize()?;
        let r = self.rewrite_file();
        let size = self.latch(r)?;
        self.remember_disk(size);
        Ok(())
    }

    /// The whole file written atomically; its size.
    fn rewrite_file(&mut self) -> std::result::Result<u64, StorageError> {
        let Some(file) = self.file.clone() else {
            return Ok(0);
        };
        self.keep_backup()?;
        let content = self.to_jsonl()?;
        self.pin_before_writing(&content, true)?;
        self.storage.atomic_write(&file, content.as_bytes())?;
        self.needs_newline = false;
        self.needs_rewrite = false;
        self.flushed = true;
        Ok(content.len() as u64)
    }

    /// `rewriteEntries`: write the whole file now from what this session holds (after
    /// editing entries in place, or to persist a migration at once), atomically, under
    /// the writer lock.
    pub fn rewrite_entries(&mut self) -> Result<()> {
        self.check_writable()?;
        self.materialize()?;
        if self.persistence == Persistence::Persistent {
            self.write_whole()?;
        }
        Ok(())
    }

    /// Before an entry is added: how it will reach the file, with the write's guard
    /// (fence, lock, file unchanged) already passed. A refusal thus comes while the
    /// session is as it was: a refused append leaves no trace, in memory or on disk.
    pub(super) fn plan_append(&mut self, assistant: bool) -> Result<Persist> {
        if self.persistence != Persistence::Persistent || self.file.is_none() {
            return Ok(Persist::Nothing);
        }
        // Nothing is written before the first assistant message.
        if !self.flushed && !self.has_assistant && !assistant {
            return Ok(Persist::Nothing);
        }
        let size = self.guard_write()?;
        Ok(if !self.flushed || self.needs_rewrite {
            Persist::Whole
        } else {
            Persist::Line { size }
        })
    }

    /// Write the entry just added as [`Self::plan_append`] planned. A failure here is a
    /// persistence failure (latched), and the entry stays in memory, as in the agent.
    pub(super) fn persist_last(&mut self, plan: Persist) -> Result<()> {
        let size = match plan {
            Persist::Nothing => return Ok(()),
            Persist::Whole => return self.write_whole_guarded(),
            Persist::Line { size } => size,
        };
        let entry = self.entries.last().expect("called after a push");
        let r = self
            .persisted_line(entry, Transforms::All)
            .map(|line| {
                let mut data = String::with_capacity(line.len() + 2);
                if self.needs_newline {
                    data.push('\n');
                }
                data.push_str(&line);
                data.push('\n');
                data
            })
            .and_then(|data| {
                self.pin_before_writing(&data, false)?;
                self.storage
                    .append(self.file.as_deref().unwrap_or_default(), data.as_bytes())
                    .map(|()| data.len() as u64)
            });
        if r.is_ok() {
            self.needs_newline = false;
        }
        let appended = self.latch(r)?;
        self.remember_disk(size + appended);
        Ok(())
    }

    /// Write the session now even without an assistant message (a new session is not lost
    /// when the process is interrupted before the first reply).
    pub fn ensure_on_disk(&mut self) -> Result<()> {
        self.check_writable()?;
        if self.persistence == Persistence::Persistent && (!self.flushed || self.needs_rewrite) {
            self.write_whole()?;
        }
        Ok(())
    }

    /// fsync the session file.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(e) = &self.persist_error {
            return Err(e.clone());
        }
        if self.persistence == Persistence::Persistent && self.flushed {
            let file = self.file.clone().unwrap_or_default();
            let r = self.storage.fsync(&file);
            self.latch(r)?;
        }
        Ok(())
    }

    /// Does the file on disk still lack what loading it changed (a migration or a repair
    /// not persisted yet)? The next persisted write, `ensure_on_disk` or
    /// `rewrite_entries` writes it whole.
    pub fn needs_rewrite(&self) -> bool {
        self.needs_rewrite
    }

    /// Is the session's file written (entries appended from now on reach it)? Before the
    /// first assistant message, or `ensure_on_disk`, it is not, and `flush` has nothing
    /// to make durable.
    pub fn is_on_disk(&self) -> bool {
        self.persistence == Persistence::Persistent && self.flushed
    }

    /// The latched persistence error, if any.
    pub fn persist_error(&self) -> Option<&SessionError> {
        self.persist_error.as_ref()
    }

    /// fsync and release the writer lock; later writes take it again.
    pub fn close(&mut self) -> Result<()> {
        let flushed = self.flush();
        if let Some(lock) = self.lock.take() {
            lock.release(&*self.storage);
        }
        flushed
    }

    /// The writer lock this session holds, if any.
    pub fn lock(&self) -> Option<&crate::lock::SessionLock> {
        self.lock.as_ref()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(lock) = self.lock.take() {
            lock.release(&*self.storage);
        }
    }
}

/// Do writes to `file` pin the blobs they reference? Those of a file outside
/// `<agent_dir>/sessions` do (garbage collection finds the others by their place).
fn pins_blobs(agent_dir: &str, file: &str) -> bool {
    !agent_dir.is_empty() && !crate::paths::is_under_sessions_root(agent_dir, file)
}

/// Take the writer lock of `file`; a lock held by another live writer (or unreadable) is
/// [`SessionError::Locked`], a failing storage is [`SessionError::Storage`].
pub(super) fn acquire_lock(storage: &dyn Storage, file: &str) -> Result<crate::lock::SessionLock> {
    use crate::lock::{LockError, SessionLock};
    SessionLock::acquire(storage, file).map_err(|e| match e {
        LockError::Held(owner) => SessionError::Locked {
            file: file.to_string(),
            owner: owner.to_string(),
        },
        LockError::Unreadable => SessionError::Locked {
            file: file.to_string(),
            owner: "an unreadable lock file (another writer may be starting)".into(),
        },
        LockError::Storage(e) => SessionError::Storage(e),
    })
}
