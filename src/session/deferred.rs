//! A session opened through its index ([`Session::open_deferred`]): the header, the leaf and
//! the id of every entry are known at once, the entries stay in the file until something
//! needs them. Resuming asks for the context and appends: those are answered from the
//! index (the context reads only the leaf's path, as [`crate::api::open_for_context`]),
//! and appends go to the file as in any session. Anything else (the entries, the tree,
//! labels, a rewrite, a fork, a move) reads the file first ([`Session::materialize`]),
//! after which the session is the one [`Session::open`] makes, with the appends since.

use super::{OpenOptions, Persistence, Session};
use crate::entry::{Header, IdIndex};
use crate::error::{Result, SessionError};
use crate::index::path::{read_path_context, OpenedContext};
use crate::index::{each_entry, header_of, open_index, IndexCache, SessionIndex};
use crate::storage::{FileStat, Storage};
use std::rc::Rc;
use std::sync::Arc;

/// How many times an open for writing indexes a file that grows while it does.
const SETTLE_ATTEMPTS: usize = 3;

/// What a deferred session knows of the file without its entries.
pub(super) struct Deferred {
    index: SessionIndex,
    /// Whether the index is kept in the cache (a context read notes in it what the next
    /// open may copy without parsing).
    cache: IndexCache,
    /// The leaf's context read through the index, once asked for (each read of it is a
    /// pass over the path's lines: a viewer asks for its count, state and a window).
    context: std::cell::OnceCell<Option<OpenedContext>>,
}

impl Session {
    /// [`Session::open`] that reads only what an index needs (see the module docs): the
    /// session's index from the agent directory's cache (`cache`), else one pass over the
    /// file. A file an index cannot describe exactly (an older version, a line that is not
    /// one record, an id used twice, no final newline), a missing or empty file, and a last
    /// entry that does not parse are opened by [`Session::open`], as is everything when
    /// `options.agent_dir` is empty and `cache` is [`IndexCache::Use`] (no cache to use).
    pub fn open_deferred(
        storage: Rc<dyn Storage>,
        path: &str,
        options: &OpenOptions,
        cache: IndexCache,
    ) -> Result<Session> {
        match Self::try_deferred(&storage, path, options, cache)? {
            Some(session) => Ok(session),
            None => Self::open(storage, path, options),
        }
    }

    fn try_deferred(
        storage: &Rc<dyn Storage>,
        path: &str,
        options: &OpenOptions,
        cache: IndexCache,
    ) -> Result<Option<Session>> {
        let writer = options.persistence == Persistence::Persistent;
        let lock = match storage.stat(path) {
            Ok(s) if s.size > 0 && writer => Some(super::write::acquire_lock(&**storage, path)?),
            Ok(s) if s.size > 0 => None,
            _ => return Ok(None),
        };
        let release = |lock: Option<crate::lock::SessionLock>| {
            if let Some(l) = lock {
                l.release(&**storage);
            }
        };
        // Under the lock, the index of the file as it is: its stat before and after the
        // index equal, and the index covering all of it (a line appended by a program that
        // takes no lock is indexed again, a few times; after that the stat taken before
        // makes the first write a conflict, as a whole read's does).
        let mut attempt = 1;
        let (index, stat) = loop {
            let before = storage.stat(path);
            let index = open_index(&**storage, path, &options.agent_dir, cache);
            let (Ok(before), Some(index)) = (before, index) else {
                release(lock);
                return Ok(None);
            };
            let settled = index.covered == before.size
                && storage.stat(path).is_ok_and(|after| after == before);
            if settled || attempt == SETTLE_ATTEMPTS {
                // Still growing: a stat of the bytes indexed, so that the first write
                // finds the file changed.
                let stat = match settled {
                    true => before,
                    false => FileStat {
                        size: index.covered,
                        ..before
                    },
                };
                break (index, stat);
            }
            attempt += 1;
        };
        match Self::deferred_parts(&**storage, path, &index) {
            Some((header, leaf)) => {
                let mut s = Self::blank(
                    storage.clone(),
                    options.persistence,
                    Some(path.to_string()),
                    &options.agent_dir,
                    header,
                );
                s.leaf = leaf;
                s.lock = lock;
                s.report.file_existed = true;
                if writer {
                    s.flushed = true;
                    s.disk = Some(stat);
                }
                s.deferred = Some(Box::new(Deferred {
                    index,
                    cache,
                    context: std::cell::OnceCell::new(),
                }));
                Ok(Some(s))
            }
            None => {
                release(lock);
                Ok(None)
            }
        }
    }

    /// The header and the leaf (the last entry, parsed to be sure the full reader keeps
    /// it: an append's parent is the leaf); `None` for anything a whole read should decide
    /// (header lines after the first, which a rewrite puts back in their places).
    fn deferred_parts(
        storage: &dyn Storage,
        path: &str,
        index: &SessionIndex,
    ) -> Option<(Header, Option<String>)> {
        if index.extra_headers > 0 {
            return None;
        }
        let header = header_of(storage, path, index).filter(|h| !h.id().is_empty())?;
        let Some(last) = index.len().checked_sub(1) else {
            return Some((header, None));
        };
        // Read and checked against the index as any line through it is.
        let mut leaf = None;
        let read = each_entry(storage, path, index, &[last], &mut |e| {
            leaf = Some(e.id.clone());
            true
        });
        match read {
            Ok(true) => Some((header, Some(leaf?))),
            _ => None,
        }
    }

    /// Were the entries left in the file (nothing has needed them yet)?
    pub fn is_deferred(&self) -> bool {
        self.deferred.is_some()
    }

    /// Ready to check new ids against those left in the file (the index loaded from the
    /// cache builds its id table now, once).
    pub(super) fn prepare_new_ids(&mut self) {
        if let Some(d) = self.deferred.as_mut() {
            d.index.ensure_lookup();
        }
    }

    /// Is `id` an entry's, read or not?
    pub(super) fn id_taken(&self, id: &str) -> bool {
        self.by_id.contains(&self.entries, id)
            || self
                .deferred
                .as_ref()
                .is_some_and(|d| d.index.position(id).is_some())
    }

    /// The context of the leaf read through the index, when the session is deferred and
    /// has not changed since it was opened (no append, the leaf where it was); `None`
    /// otherwise, or when the index cannot answer: then [`Session::materialize`] and
    /// [`Session::context`]. Read once, when first asked (the file's lines it reads are
    /// those indexed at the open, as [`Session::materialize`]'s).
    pub fn deferred_context(&self) -> Option<&OpenedContext> {
        let d = self.deferred.as_ref()?;
        let last = d.index.len().checked_sub(1).map(|i| d.index.id(i));
        if !self.entries.is_empty() || self.leaf.as_deref() != last {
            return None;
        }
        let file = self.file.as_deref()?;
        d.context
            .get_or_init(|| {
                match read_path_context(
                    self.storage.clone(),
                    file,
                    &self.agent_dir,
                    d.index.clone(),
                    last,
                    d.cache,
                ) {
                    Ok(Some(p)) => Some(OpenedContext::Path(Box::new(p))),
                    _ => None,
                }
            })
            .as_ref()
    }

    /// The title a viewer shows ([`crate::listing::session_title`]) read through the
    /// index while the session is deferred and unchanged since it was opened; `None`
    /// otherwise, or when the index cannot answer: then [`Session::materialize`] first.
    pub fn deferred_title(&self, max_chars: usize) -> Option<Option<String>> {
        let d = self.deferred.as_ref()?;
        if !self.entries.is_empty() {
            return None;
        }
        crate::listing::indexed_title(
            &*self.storage,
            self.file.as_deref()?,
            &d.index,
            &self.header,
            max_chars,
        )
    }

    /// Read the entries left in the file, so that the session is the one
    /// [`Session::open`] makes (its load report and warnings too) followed by the entries
    /// appended since. The bytes read are the ones indexed at the open; a file rewritten
    /// by another program in between is read as it is now (the next write then finds it
    /// changed and is refused, as it would be after a whole read). Nothing to do when
    /// nothing was left.
    pub fn materialize(&mut self) -> Result<()> {
        let Some(d) = self.deferred.take() else {
            return Ok(());
        };
        let file = self.file.clone().unwrap_or_default();
        let read = self.storage.read_range(&file, 0, d.index.covered);
        let bytes = match read {
            Ok(b) if b.len() as u64 == d.index.covered => b,
            Ok(_) => {
                self.deferred = Some(d);
                return Err(SessionError::ChangedWhileRead { file });
            }
            Err(e) => {
                self.deferred = Some(d);
                return Err(e.into());
            }
        };
        let (text, original) = match super::utf8(bytes) {
            Ok(s) => (s, None),
            Err(e) => {
                let bytes = e.into_bytes();
                (String::from_utf8_lossy(&bytes).into_owned(), Some(bytes))
            }
        };
        let mut base = Self::from_text_with(
            self.storage.clone(),
            Persistence::ReadOnly,
            None,
            &self.agent_dir,
            "",
            Arc::new(text),
            &mut |_, _| {},
        );
        if base.header.id() != self.header.id() {
            self.deferred = Some(d);
            return Err(SessionError::ChangedWhileRead { file });
        }
        let appended = std::mem::take(&mut self.entries);
        let leaf = self.leaf.take();
        let read = base.entries.len();
        let mut entries = std::mem::take(&mut base.entries);
        entries.extend(appended);
        self.by_id = IdIndex::new();
        self.labels.clear();
        let duplicates = self.index_loaded(entries);
        // The leaf where it was, unless it was the last line and that line was not
        // kept (then the last entry kept, as a whole read puts it).
        self.leaf = match leaf {
            Some(id) if read == self.entries.len() && !self.by_id.contains(&self.entries, &id) => {
                self.entries.last().map(|e| e.id.clone())
            }
            leaf => leaf,
        };
        self.from_file = read;
        self.extra_headers = std::mem::take(&mut base.extra_headers);
        let mut report = std::mem::take(&mut base.report);
        report.file_existed = true;
        report.invalid_utf8 = original.is_some();
        report.duplicate_ids = duplicates;
        self.report = report;
        let mut warnings = std::mem::take(&mut base.warnings);
        warnings.append(&mut self.warnings);
        self.warnings = warnings;
        self.pending_backup = match original {
            Some(bytes) => Some(super::load::Backup::Bytes(bytes)),
            None => base.pending_backup.take(),
        };
        Ok(())
    }
}

impl Session {
    /// What reads the entries is never asked of a deferred session: its shells
    /// [`Session::materialize`] it first (a debug build checks).
    pub(super) fn assert_read(&self) {
        debug_assert!(
            self.deferred.is_none(),
            "a deferred session's entries were read before materialize()"
        );
    }
}
