//! One session's sync: fetch the other machines' new segments, push this machine's new
//! lines as a segment, merge (see [`super::apply`]), record what was synced.

use std::collections::{BTreeMap, HashSet};

use super::apply::{apply, Applied};
use super::blobs;
use super::layout::{segment_key, SegmentKey};
use super::lines::{complete_lines, read_line, read_segment, Line, LineProblem};
use super::merge::plan;
use super::run::{Remote, SyncError};
use super::state::{self, SessionState};
use super::store::Put;
use crate::blob::BlobStore;
use crate::lock::SessionLock;
use crate::paths::blobs_dir;
use crate::storage::{Storage, StorageError};

/// What one session's sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSync {
    pub project: String,
    pub session: String,
    /// The local file after the sync (`None`: the remote has no header to make one from yet).
    pub file: Option<String>,
    pub pushed_entries: usize,
    pub pushed_bytes: u64,
    pub pulled_entries: usize,
    /// The file was made by this sync (a session first written elsewhere).
    pub created: bool,
    /// The file was rewritten: new entries went before its leaf, which stays last (the
    /// other machine continued from elsewhere), or before a newer label.
    pub rewritten: bool,
    /// Entries whose parent is not here yet: merged by a later sync.
    pub held: usize,
    /// The other machines' leaves that are not on this file's path: branches to switch to.
    pub branches: Vec<String>,
    /// Segments refused, each with why; nothing of them was merged.
    pub refused: Vec<String>,
    /// The file was of an older format and migrated first (as the agent does on open).
    pub migrated: bool,
    /// A writer (the agent) has the session open: this machine's complete lines were
    /// pushed, the merge waits for the next sync.
    pub in_use: bool,
}

impl SessionSync {
    /// Did anything move?
    pub fn changed(&self) -> bool {
        self.pushed_entries > 0 || self.pulled_entries > 0 || self.created
    }
}

/// The most bytes of lines one segment holds (one longer line makes a segment alone).
const SEGMENT_MAX: usize = 32 << 20;

/// A session to sync, and where.
pub(crate) struct Job<'a> {
    pub storage: &'a dyn Storage,
    pub agent_dir: &'a str,
    /// This remote's sync states ([`state::remote_dir`]).
    pub state_dir: &'a str,
    pub remote: &'a Remote<'a>,
    pub machine: &'a str,
    pub project: &'a str,
    pub session: &'a str,
    pub dry_run: bool,
}

/// A segment read from the remote and found good.
pub(crate) struct Fetched<'k> {
    key: &'k SegmentKey,
    pub header: Option<Vec<u8>>,
    pub lines: Vec<Line>,
}

/// The local file as read under the lock: its complete lines.
pub(crate) struct LocalFile {
    /// Where in the file `bytes` start (0 unless only the end was read: then there is
    /// nothing to merge, only lines to send).
    start: usize,
    bytes: Vec<u8>,
    /// Where the complete lines end in the file (a line still being written comes after).
    pub complete: usize,
    pub header: Option<Vec<u8>>,
    pub lines: Vec<Line>,
    /// Where each line ends.
    ends: Vec<usize>,
}

impl LocalFile {
    /// The file from byte `from` on (0: all of it, the header first). Only what is after
    /// `from` is read: a sync with nothing to merge reads the lines added since the last.
    fn read(
        storage: &dyn Storage,
        file: Option<&str>,
        from: u64,
    ) -> Result<LocalFile, StorageError> {
        let bytes = match file {
            Some(f) if from == 0 => storage.read(f)?,
            Some(f) => {
                let size = storage.stat(f)?.size;
                storage.read_range(f, from, size.saturating_sub(from))?
            }
            None => vec![],
        };
        let start = from as usize;
        let (spans, complete) = complete_lines(&bytes);
        let mut out = LocalFile {
            start,
            header: None,
            lines: Vec::with_capacity(spans.len()),
            ends: Vec::with_capacity(spans.len()),
            complete: start + complete,
            bytes: vec![],
        };
        for (n, &(s, e)) in spans.iter().enumerate() {
            let line = match read_line(&bytes[s..e]) {
                Ok(l) => l,
                Err(LineProblem::Header { .. }) if n == 0 && start == 0 => {
                    out.header = Some(bytes[s..e].to_vec());
                    continue;
                }
                // A later header line, or no entry: it keeps its place and is not sent
                // (another machine could not place it).
                Err(_) => Line::opaque(&bytes[s..e]),
            };
            out.lines.push(line);
            out.ends.push(start + e);
        }
        out.bytes = bytes;
        Ok(out)
    }

    /// The bytes after the complete lines (a line a writer is still writing).
    pub fn unfinished(&self) -> &[u8] {
        &self.bytes[self.complete - self.start..]
    }
}

impl Job<'_> {
    pub fn run(
        &self,
        file: Option<String>,
        segments: Vec<SegmentKey>,
    ) -> Result<SessionSync, SyncError> {
        let mut out = SessionSync {
            project: self.project.into(),
            session: self.session.into(),
            file: file.clone(),
            ..Default::default()
        };
        let prior = file
            .as_ref()
            .and_then(|_| state::load(self.storage, self.state_dir, self.project, self.session));
        let merged = prior.as_ref().map(|s| s.merged.clone()).unwrap_or_default();
        let unseen: Vec<&SegmentKey> = segments
            .iter()
            .filter(|k| {
                k.machine != self.machine && merged.get(&k.machine).is_none_or(|&m| k.seq > m)
            })
            .collect();
        // Nothing new on either side: nothing read beyond a stat.
        if let (Some(f), Some(st)) = (&file, &prior) {
            let stat = self.storage.stat(f)?;
            if unseen.is_empty() && stat.size == st.size && stat.mtime_ms == st.mtime_ms {
                return Ok(out);
            }
        }
        // Compared whole when there is no record or the file changed before what it covers
        // (a rewrite): every segment is read, this machine's too, to know what the remote has.
        let whole = match (&file, &prior) {
            (Some(f), Some(st)) => !covered_unchanged(self.storage, f, st)?,
            _ => true,
        };
        let (fetched, blocked) = self.fetch(
            if whole {
                segments.iter().collect()
            } else {
                unseen
            },
            &mut out,
        )?;
        let own_next = segments
            .iter()
            .filter(|k| k.machine == self.machine)
            .map(|k| k.seq + 1)
            .max()
            .unwrap_or(0);

        // The writer's lock for the rest (the file cannot change under us). A session the
        // agent has open is pushed from its complete lines and merged next time.
        let lock = match (&file, self.dry_run) {
            (Some(f), false) => SessionLock::acquire_idle(self.storage, f).ok(),
            _ => None,
        };
        out.in_use = file.is_some() && !self.dry_run && lock.is_none();
        let result = self.push_and_merge(
            file.as_deref(),
            prior,
            whole,
            own_next,
            &fetched,
            &blocked,
            &mut out,
        );
        if let Some(l) = lock {
            l.release(self.storage);
        }
        result?;
        Ok(out)
    }

    /// The segments `keys`, each checked; a refused one is reported and, with every later
    /// one of its machine, read again next time.
    fn fetch<'k>(
        &self,
        keys: Vec<&'k SegmentKey>,
        out: &mut SessionSync,
    ) -> Result<(Vec<Fetched<'k>>, BTreeMap<String, u64>), SyncError> {
        let mut fetched = vec![];
        let mut blocked: BTreeMap<String, u64> = BTreeMap::new();
        for k in keys {
            let key = segment_key(
                self.remote.prefix,
                self.project,
                self.session,
                &k.machine,
                k.seq,
            );
            let Some(data) = self.remote.store.get(&key)? else {
                continue;
            };
            match read_segment(&key, &data, self.session) {
                Ok((header, lines)) => fetched.push(Fetched {
                    key: k,
                    header,
                    lines,
                }),
                Err(e) => {
                    out.refused.push(e.to_string());
                    block(&mut blocked, &k.machine, k.seq);
                }
            }
        }
        Ok((fetched, blocked))
    }

    #[allow(clippy::too_many_arguments)]
    fn push_and_merge(
        &self,
        file: Option<&str>,
        prior: Option<SessionState>,
        whole: bool,
        own_next: u64,
        fetched: &[Fetched],
        blocked: &BTreeMap<String, u64>,
        out: &mut SessionSync,
    ) -> Result<(), SyncError> {
        let covered_from = if whole {
            0
        } else {
            prior.as_ref().map_or(0, |s| s.covered)
        };
        // Nothing fetched, nothing to merge: only the lines after what the remote has.
        let nothing_to_merge = fetched.iter().all(|f| f.lines.is_empty());
        let local = LocalFile::read(
            self.storage,
            file,
            if nothing_to_merge { covered_from } else { 0 },
        )?;
        let blob_store = BlobStore::new(self.storage, blobs_dir(self.agent_dir));
        let remote_ids: HashSet<&str> = fetched
            .iter()
            .flat_map(|f| &f.lines)
            .filter_map(|l| l.id.as_deref())
            .collect();
        let covered_from = covered_from as usize;
        let remote_has_header = fetched.iter().any(|f| f.header.is_some()) || !whole;
        self.push(
            &local,
            covered_from,
            &remote_ids,
            remote_has_header,
            own_next,
            &blob_store,
            out,
        )?;

        // ---- merge: the other machines' entries this file lacks ----
        let local_ids: HashSet<&str> = local.lines.iter().filter_map(|l| l.id.as_deref()).collect();
        let mut seen = HashSet::new();
        let incoming: Vec<&Line> = fetched
            .iter()
            .flat_map(|f| &f.lines)
            .filter(|l| {
                l.id.as_deref()
                    .is_some_and(|id| !local_ids.contains(id) && seen.insert(id))
            })
            .collect();
        let mut merged = prior.as_ref().map(|s| s.merged.clone()).unwrap_or_default();
        let mut blocked = blocked.clone();
        let mut end = Applied {
            file: file.map(str::to_string),
            size: local.complete as u64,
        };
        if !incoming.is_empty() && !out.in_use {
            let local_nodes: Vec<_> = local.lines.iter().map(Line::node).collect();
            let remote_nodes: Vec<_> = incoming.iter().map(|l| l.node()).collect();
            let p = plan(&local_nodes, &remote_nodes);
            out.held = p.held.len();
            out.branches = p.branches.clone();
            let header = fetched.iter().find_map(|f| f.header.as_deref());
            end = apply(self, &p.write, &local, &incoming, header, &blob_store, out)?;
            // A segment holding an entry back is read again next time.
            let holding: HashSet<&str> = p
                .held
                .iter()
                .filter_map(|&i| incoming[i].id.as_deref())
                .collect();
            for f in fetched {
                if f.lines
                    .iter()
                    .any(|l| l.id.as_deref().is_some_and(|id| holding.contains(id)))
                {
                    block(&mut blocked, &f.key.machine, f.key.seq);
                }
            }
        }
        if incoming.is_empty() || !out.in_use {
            advance(&mut merged, fetched, &blocked, self.machine);
        }
        out.file = end.file.clone();
        if self.dry_run {
            return Ok(());
        }
        let Some(f) = end.file else { return Ok(()) };
        // Everything up to the end is on the remote or came from it, unless the merge
        // waited (the file in use): then what was read and pushed.
        let covered = if out.in_use {
            local.complete as u64
        } else {
            end.size
        };
        let stat = self.storage.stat(&f)?;
        let st = SessionState {
            covered,
            tail: state::tail_hash(self.storage, &f, covered)?,
            // In use: the next sync looks again whatever the file's size.
            size: if out.in_use { u64::MAX } else { stat.size },
            mtime_ms: stat.mtime_ms,
            merged,
        };
        state::save(
            self.storage,
            self.state_dir,
            self.project,
            self.session,
            &st,
        )?;
        Ok(())
    }

    /// This machine's lines after `covered_from` that the remote lacks, as one new segment
    /// (with the header when the remote has none).
    #[allow(clippy::too_many_arguments)]
    fn push(
        &self,
        local: &LocalFile,
        covered_from: usize,
        remote_ids: &HashSet<&str>,
        remote_has_header: bool,
        own_next: u64,
        blob_store: &BlobStore,
        out: &mut SessionSync,
    ) -> Result<(), SyncError> {
        let new: Vec<&Line> = local
            .lines
            .iter()
            .zip(&local.ends)
            .filter(|(l, &end)| {
                end > covered_from && l.id.as_deref().is_some_and(|id| !remote_ids.contains(id))
            })
            .map(|(l, _)| l)
            .collect();
        let header = local.header.as_ref().filter(|_| !remote_has_header);
        if new.is_empty() && header.is_none() {
            return Ok(());
        }
        // Segments of at most SEGMENT_MAX bytes (a line longer goes alone): a large session
        // is sent in pieces a store takes in one request, never held twice in memory whole.
        let mut segments: Vec<Vec<u8>> = vec![];
        for l in header.into_iter().chain(new.iter().map(|l| &l.bytes)) {
            match segments.last_mut() {
                Some(d) if d.len() + l.len() < SEGMENT_MAX => {}
                _ => segments.push(vec![]),
            }
            let d = segments.last_mut().expect("just pushed");
            d.extend_from_slice(l);
            d.push(b'\n');
        }
        out.pushed_entries = new.len();
        out.pushed_bytes = segments.iter().map(|d| d.len() as u64).sum();
        if self.dry_run {
            return Ok(());
        }
        // Blobs first: a segment on the remote never refers to a blob that is not there.
        blobs::push(self.remote, blob_store, new.iter().copied())?;
        let mut seq = own_next;
        for data in &segments {
            // Another sync of this machine may have taken the number: the next one.
            while self.remote.store.put_if_absent(
                &segment_key(
                    self.remote.prefix,
                    self.project,
                    self.session,
                    self.machine,
                    seq,
                ),
                data,
            )? == Put::Exists
            {
                seq += 1;
            }
            seq += 1;
        }
        Ok(())
    }
}

fn block(blocked: &mut BTreeMap<String, u64>, machine: &str, seq: u64) {
    let b = blocked.entry(machine.to_string()).or_insert(seq);
    *b = (*b).min(seq);
}

/// Do the first `covered` bytes of the file still end as they did?
fn covered_unchanged(
    storage: &dyn Storage,
    file: &str,
    st: &SessionState,
) -> Result<bool, StorageError> {
    let size = storage.stat(file)?.size;
    Ok(size >= st.covered && state::tail_hash(storage, file, st.covered)? == st.tail)
}

/// Marks the fetched segments merged: per machine, up to (not including) its first
/// blocked one.
fn advance(
    merged: &mut BTreeMap<String, u64>,
    fetched: &[Fetched],
    blocked: &BTreeMap<String, u64>,
    me: &str,
) {
    for f in fetched.iter().filter(|f| f.key.machine != me) {
        if blocked.get(&f.key.machine).is_some_and(|&b| f.key.seq >= b) {
            continue;
        }
        let m = merged.entry(f.key.machine.clone()).or_insert(f.key.seq);
        *m = (*m).max(f.key.seq);
    }
}
