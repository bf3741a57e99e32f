//! A session's index: for each entry, where its line is in the file and what an open
//! needs to know without reading the line (its parent and its type), so an open reads
//! only the lines its answer needs (the leaf's path, from the compaction the context
//! starts at) instead of every byte.
//!
//! The index is built by one pass over the file ([`scan`]) and kept as a cache
//! ([`cache`]): never session data, never in the sessions directory, trusted only after
//! a check against the file, rebuilt when anything is off. Deleting it changes nothing
//! but speed. An open through the index ([`path`]) validates every line it reads and
//! hands the open back to the full reader when a line is not what the index says; a
//! message line it checked once is noted, so that the next open copies its message
//! without parsing the line again, as long as the line's checksum is the one noted
//! ([`verbatim`]).

pub(crate) mod cache;
mod lines;
pub mod path;
pub(crate) mod scan;
pub mod stream;
pub(crate) mod verbatim;
pub mod window;

use crate::entry::EntryType;
use crate::storage::Storage;
use std::hash::BuildHasher;

/// No parent (a root, or a parent that is not in the file).
pub(crate) const NO_PARENT: u32 = u32::MAX;

fn tag_of(hash: u64) -> u64 {
    hash >> 32
}

fn tag(slot: u64) -> u64 {
    slot >> 32
}

fn position_of(slot: u64) -> usize {
    (slot & 0xffff_ffff) as usize - 1
}

/// An entry's type, in one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Kind(u8);

impl Kind {
    pub(crate) fn of(t: EntryType) -> Kind {
        let i = EntryType::ALL.iter().position(|x| *x == t);
        Kind(i.map_or(EntryType::ALL.len() as u8, |i| i as u8))
    }

    pub(crate) fn entry_type(self) -> EntryType {
        EntryType::ALL
            .get(self.0 as usize)
            .copied()
            .unwrap_or(EntryType::Unknown)
    }

    pub(crate) fn from_byte(b: u8) -> Option<Kind> {
        (b as usize <= EntryType::ALL.len()).then_some(Kind(b))
    }

    pub(crate) fn byte(self) -> u8 {
        self.0
    }
}

/// The index of one session file (see the module docs). Positions are entry numbers in
/// file order, the order of the full reader's entries.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionIndex {
    /// Where the header line is.
    pub(crate) header_offset: u64,
    pub(crate) header_len: u32,
    /// The bytes of the file described: up to and including its last newline.
    pub(crate) covered: u64,
    /// Header lines after the first (no entries).
    pub(crate) extra_headers: u32,
    pub(crate) offsets: Vec<u64>,
    pub(crate) lens: Vec<u32>,
    pub(crate) parents: Vec<u32>,
    pub(crate) kinds: Vec<Kind>,
    /// The ids, one after the other; `id_ends[i]` is where entry `i`'s ends.
    pub(crate) ids: Vec<u8>,
    pub(crate) id_ends: Vec<u32>,
    /// Entries whose parent id names no entry (yet): a later append may.
    pub(crate) dangling: Vec<(u32, Box<str>)>,
    /// Per entry, the messages a reopen may copy from their lines ([`verbatim`]); shorter
    /// than the entries when the last ones are not known (none is, after a scan).
    pub(crate) verbatim: Vec<verbatim::Verbatim>,
    /// id → position + 1 (0: empty slot), linear probing, at most half full; seeded per
    /// index, so crafted ids cannot make lookups linear.
    /// Each slot: the top 32 bits of the id's hash (its tag: it picks the slot, and is
    /// compared before the ids are) and `position + 1` (0: empty).
    slots: Vec<u64>,
    hasher: foldhash::fast::RandomState,
}

impl SessionIndex {
    pub(crate) fn len(&self) -> usize {
        self.offsets.len()
    }

    pub(crate) fn id(&self, i: usize) -> &str {
        let start = match i {
            0 => 0,
            i => self.id_ends[i - 1] as usize,
        };
        let bytes = &self.ids[start..self.id_ends[i] as usize];
        // SAFETY: ids are pushed from `&str`s and cut at their own ends; a loaded cache's
        // are checked to be UTF-8 cut at character boundaries (`cache::sound`).
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    pub(crate) fn parent(&self, i: usize) -> Option<usize> {
        let p = self.parents[i];
        (p != NO_PARENT).then_some(p as usize)
    }

    /// The position of the entry with this id: through the id table, or, where it is not
    /// built ([`Self::ensure_lookup`]), by comparing the ids one after the other (the last
    /// first: a leaf is usually the last entry).
    pub(crate) fn position(&self, id: &str) -> Option<u32> {
        if self.slots.is_empty() {
            return (0..self.len())
                .rev()
                .find(|&i| self.id(i) == id)
                .map(|i| i as u32);
        }
        let hash = self.hasher.hash_one(id);
        let mask = self.slots.len() - 1;
        let mut slot = tag_of(hash) as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return None,
                v if tag(v) == tag_of(hash) && self.id(position_of(v)) == id => {
                    return Some(position_of(v) as u32)
                }
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// Record `id` as entry `position`'s (the next one); `false` when an entry has it
    /// (the index is then no use: the scan stops).
    pub(crate) fn insert_id(&mut self, id: &str, position: u32) -> bool {
        self.ids.extend_from_slice(id.as_bytes());
        let Ok(end) = u32::try_from(self.ids.len()) else {
            return false;
        };
        self.id_ends.push(end);
        if (position as usize + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.place(position)
    }

    /// Build the id table if it is not (a loaded cache has none: a reopen that reads only
    /// the leaf's path never hashes an id); `false` when two entries have the same id.
    pub(crate) fn ensure_lookup(&mut self) -> bool {
        if self.slots.is_empty() {
            self.rehash()
        } else {
            true
        }
    }

    /// Link every id to its position again (after loading); `false` when two entries
    /// have the same id.
    pub(crate) fn rehash(&mut self) -> bool {
        self.slots = vec![0; (self.len() * 2).next_power_of_two().max(16)];
        let mut distinct = true;
        for p in 0..self.id_ends.len() as u32 {
            distinct &= self.place(p);
        }
        distinct
    }

    /// Twice the slots, each id placed again by the hash its slot keeps.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        let mask = size - 1;
        for v in old.into_iter().filter(|&v| v != 0) {
            // The tag picks the slot: no id is hashed again.
            let mut slot = tag(v) as usize & mask;
            while self.slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = v;
        }
    }

    /// `false` when the id is there already (it is not placed again).
    fn place(&mut self, position: u32) -> bool {
        let mask = self.slots.len() - 1;
        let id = self.id(position as usize);
        let hash = self.hasher.hash_one(id);
        let mut slot = tag_of(hash) as usize & mask;
        while self.slots[slot] != 0 {
            let v = self.slots[slot];
            if tag(v) == tag_of(hash) && self.id(position_of(v)) == id {
                return false;
            }
            slot = (slot + 1) & mask;
        }
        self.slots[slot] = (tag_of(hash) << 32) | (u64::from(position) + 1);
        true
    }

    /// An empty index with room for the entries of a file of `bytes` (real sessions hold
    /// one per 1–2 KiB: room for one per 2 KiB never reserves much more than the file
    /// needs): the scan then grows its arrays and its id table once at most, where each
    /// growth from empty would copy all of it again.
    pub(crate) fn for_bytes(bytes: u64) -> SessionIndex {
        let n = usize::try_from(bytes / 2048)
            .unwrap_or(usize::MAX)
            .min(1 << 24);
        SessionIndex {
            offsets: Vec::with_capacity(n),
            lens: Vec::with_capacity(n),
            parents: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            ids: Vec::with_capacity(n * 8),
            id_ends: Vec::with_capacity(n),
            slots: vec![0; (n * 2).next_power_of_two().max(16)],
            ..SessionIndex::default()
        }
    }

    /// What a reopen may copy of entry `p`'s line, if known.
    pub(crate) fn verbatim(&self, p: usize) -> Option<verbatim::Verbatim> {
        self.verbatim.get(p).copied().filter(|v| v.known())
    }

    /// Note what a reopen may copy of entry `p`'s line; `true` if it was not known.
    pub(crate) fn learn(&mut self, p: usize, v: verbatim::Verbatim) -> bool {
        if p >= self.len() || self.verbatim(p) == Some(v) {
            return false;
        }
        if self.verbatim.len() <= p {
            // Room for every entry at once, and no more (a 10 GB session has 6 million).
            self.verbatim
                .reserve_exact(self.len() - self.verbatim.len());
            self.verbatim
                .resize(self.len(), verbatim::Verbatim::default());
        }
        self.verbatim[p] = v;
        true
    }

    /// Free the id lookup (ids stay): an open that has its path needs no more lookups.
    pub(crate) fn drop_lookup(&mut self) {
        self.slots = Vec::new();
    }

    /// The path from the root to entry `leaf`, as positions; and the id where a parent
    /// cycle stopped the walk (`context::walk_to_root`, the full reader's walk too).
    pub(crate) fn path_to(&self, leaf: usize) -> (Vec<usize>, Option<String>) {
        let (path, cycle) = crate::context::walk_to_root(leaf, self.len(), |i| self.parent(i));
        (path, cycle.map(|i| self.id(i).to_string()))
    }
}

/// The header line `file` starts with, read where the index says it is; `None` when it is
/// no header there (the file changed since, or is not what the index says).
pub(crate) fn header_of(
    storage: &dyn Storage,
    file: &str,
    index: &SessionIndex,
) -> Option<crate::entry::Header> {
    let line = storage
        .read_range(file, index.header_offset, u64::from(index.header_len))
        .ok()?;
    crate::entry::Header::from_json(std::str::from_utf8(&line).ok()?)
}

/// Hand `each` the entries at `positions`, in the order given, read a piece of about
/// 4 MiB of lines at a time (never all held) and each checked whole against the index,
/// until it returns `false`. `Ok(false)`: a line is not what the index says (the file
/// changed, or holds a line the index cannot see): the caller reads the file whole.
pub(crate) fn each_entry(
    storage: &dyn Storage,
    file: &str,
    index: &SessionIndex,
    positions: &[usize],
    each: &mut dyn FnMut(&crate::entry::Entry) -> bool,
) -> crate::storage::StorageResult<bool> {
    let lines = lines::Lines {
        storage,
        path: file,
        index,
        read: std::collections::HashMap::new(),
    };
    for batch in stream::batches(index, positions) {
        let Some(read) = lines.read(batch)? else {
            return Ok(false);
        };
        // Read in file order: handed in the order asked.
        let mut read: std::collections::HashMap<usize, _> = read.into_iter().collect();
        for p in batch {
            match read.remove(p) {
                Some(e) if each(&e) => {}
                Some(_) => return Ok(true),
                None => return Ok(false),
            }
        }
    }
    Ok(true)
}

/// How much of a file one read of the scan takes.
const SCAN_PIECE: u64 = 8 << 20;

/// Whether opens keep their index in the agent directory's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexCache {
    /// Read the cached index, and write one after a scan (the default).
    Use,
    /// Neither read nor write it (`--no-index-cache`, `indexCache: false`): every open
    /// scans the file.
    Off,
}

/// The index of `file` as it is now: the cached one when it still fits (with the bytes
/// appended since scanned and added), else a scan of the whole file, read in pieces.
/// `None` when the file is not one an index can describe exactly (see [`scan`]), or
/// cannot be read: the caller reads it whole, and reports what it finds.
pub(crate) fn open_index(
    storage: &dyn Storage,
    file: &str,
    agent_dir: &str,
    use_cache: IndexCache,
) -> Option<SessionIndex> {
    let stat = storage.stat(file).ok()?;
    let use_cache = use_cache == IndexCache::Use && !agent_dir.is_empty();
    let cached = match use_cache {
        true => cache::load(storage, agent_dir, file, stat),
        false => None,
    };
    let (mut scanner, from) = match cached {
        Some(index) if index.covered == stat.size => return Some(index),
        Some(index) => {
            let from = index.covered;
            (scan::Scanner::resume(index), from)
        }
        None => (scan::Scanner::resume(SessionIndex::for_bytes(stat.size)), 0),
    };
    // The bytes up to the size of the stat: a line appended while this runs is left to
    // the next open. Each piece is scanned where it was read; only the line cut by its
    // end is copied, to be completed by the next piece.
    let mut carry: Vec<u8> = Vec::new();
    let mut at = from;
    while at < stat.size && scanner.exact() {
        let piece = storage
            .read_range(file, at, SCAN_PIECE.min(stat.size - at))
            .ok()?;
        if piece.is_empty() {
            return None; // shorter than its stat: changed under the scan
        }
        let base = at;
        at += piece.len() as u64;
        let mut start = 0;
        if !carry.is_empty() {
            match memchr::memchr(b'\n', &piece) {
                Some(nl) => {
                    carry.extend_from_slice(&piece[..=nl]);
                    scanner.feed(&carry, base - (carry.len() - nl - 1) as u64);
                    carry.clear();
                    start = nl + 1;
                }
                None => {
                    carry.extend_from_slice(&piece);
                    continue;
                }
            }
        }
        let used = scanner.feed(&piece[start..], base + start as u64);
        carry.extend_from_slice(&piece[start + used..]);
    }
    let index = scanner.finish(&carry)?;
    if use_cache {
        cache::save(storage, agent_dir, file, &index, stat);
    }
    Some(index)
}
