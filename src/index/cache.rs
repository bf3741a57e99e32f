//! The index kept as a cache: `<agent-dir>/cache/index/<hash of the file's path>.idx`,
//! never in the sessions directory (the agent lists, copies and deletes what is there).
//! It is session data of nobody: a missing, foreign, corrupt, truncated or stale cache
//! is ignored and written again, and deleting it changes nothing but speed.
//!
//! Trusted only after checks against the file: the path it was built for, a checksum of
//! its own bytes, the file at least as long as what it covers, the header line and the
//! last bytes covered unchanged (a hash of each), and, for a file of exactly the covered
//! length, the same mtime. Bytes appended since are scanned and added.
//!
//! What those checks let it trust is only where the lines are and what their leading
//! keys say (id, parent, type), for the lines an open does not read: every line an open
//! reads is checked again. A line changed in place (same length, the mtime set back, or
//! within the mtime's granularity), away from the header and the last bytes, is not seen
//! by them; so the messages noted for copying ([`super::verbatim`]) are trusted only
//! through a checksum of their own line, taken as it is read: a line that does not match
//! is parsed and checked as any other.

use super::verbatim::Verbatim;
use super::{Kind, SessionIndex, NO_PARENT};
use crate::storage::{join, FileStat, Storage, StorageExt};
use sha2::{Digest as _, Sha256};

const MAGIC: &[u8; 8] = b"XCSHIDX\x04";
/// How many of the last covered bytes are hashed.
const TAIL: u64 = 4096;

/// Where the cache of `file` lives.
pub(crate) fn location(agent_dir: &str, file: &str) -> String {
    let hash = Sha256::digest(file.as_bytes());
    let name: String = hash[..16].iter().map(|b| format!("{b:02x}")).collect();
    join(
        &join(&join(agent_dir, "cache"), "index"),
        &format!("{name}.idx"),
    )
}

/// A 64-bit checksum, the same on every platform: it tells a cache that was damaged,
/// cut short or changed from one written whole (it is no defence against a forger:
/// whoever can write the agent directory can write its sessions too, and every line an
/// open reads is checked against the file anyway, a line whose message a note lets it
/// copy against the checksum in the note: a forged note can make an open copy another
/// part of that line, never bytes from elsewhere, never a cut character). A word at a time, so that a reopen of
/// a large session does not spend its time here (SHA-256 of a 2 MB index took most of a
/// reopen in wasm); fed a piece at a time, so that a cache is written as it is encoded,
/// never held whole.
#[derive(Default)]
struct Checksum {
    h: u64,
    len: u64,
    /// The bytes of a word not complete yet.
    part: [u8; 8],
    part_len: usize,
}

impl Checksum {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;

    fn word(&mut self, w: [u8; 8]) {
        self.h = (self.h ^ u64::from_le_bytes(w))
            .wrapping_mul(Self::K)
            .rotate_left(29);
    }

    fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.part_len > 0 {
            let n = (8 - self.part_len).min(bytes.len());
            self.part[self.part_len..self.part_len + n].copy_from_slice(&bytes[..n]);
            self.part_len += n;
            bytes = &bytes[n..];
            if self.part_len < 8 {
                return;
            }
            self.word(self.part);
            self.part_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.word(w.try_into().unwrap_or_default());
        }
        let rest = words.remainder();
        self.part[..rest.len()].copy_from_slice(rest);
        self.part_len = rest.len();
    }

    fn finish(mut self) -> u64 {
        self.part[self.part_len..].fill(0);
        let last = self.part;
        self.word(last);
        let h = (self.h ^ self.len).wrapping_mul(Self::K);
        h ^ (h >> 32)
    }
}

fn digest(bytes: &[u8]) -> u64 {
    let mut d = Checksum::default();
    d.update(bytes);
    d.finish()
}

/// What the cache records about the file it describes.
struct Seal {
    covered: u64,
    mtime_ms: i64,
    header: u64,
    tail: u64,
}

fn seal_of(
    storage: &dyn Storage,
    file: &str,
    index: &SessionIndex,
    stat: FileStat,
) -> Option<Seal> {
    let header = storage
        .read_range(file, index.header_offset, u64::from(index.header_len))
        .ok()?;
    let from = index.covered.saturating_sub(TAIL);
    let tail = storage.read_range(file, from, index.covered - from).ok()?;
    (tail.len() as u64 == index.covered - from).then(|| Seal {
        covered: index.covered,
        mtime_ms: stat.mtime_ms,
        header: digest(&header),
        tail: digest(&tail),
    })
}

/// The cache's bytes for `index` of `file` (as it is now: `stat`), handed to `out` a
/// piece at a time, its checksum last; `None` (nothing handed) when the file cannot be
/// read for its seal.
fn encode(
    storage: &dyn Storage,
    file: &str,
    index: &SessionIndex,
    stat: FileStat,
    out: &mut dyn FnMut(&[u8]),
) -> Option<()> {
    let seal = seal_of(storage, file, index, stat)?;
    let mut out = Summed {
        sum: Checksum::default(),
        out,
    };
    let mut head = Vec::with_capacity(128 + file.len());
    head.extend_from_slice(MAGIC);
    put_bytes(&mut head, file.as_bytes());
    for v in [seal.covered, seal.mtime_ms as u64, seal.header, seal.tail] {
        head.extend_from_slice(&v.to_le_bytes());
    }
    head.extend_from_slice(&index.header_offset.to_le_bytes());
    head.extend_from_slice(&index.header_len.to_le_bytes());
    head.extend_from_slice(&index.extra_headers.to_le_bytes());
    head.extend_from_slice(&(index.len() as u64).to_le_bytes());
    out.put(&head);
    // Each column a block of entries at a time: no copy of the whole index.
    let mut block = Vec::with_capacity(BLOCK * 8);
    let mut column = |out: &mut Summed, each: &dyn Fn(&mut Vec<u8>, usize)| {
        for start in (0..index.len()).step_by(BLOCK) {
            block.clear();
            for i in start..(start + BLOCK).min(index.len()) {
                each(&mut block, i);
            }
            out.put(&block);
        }
    };
    column(&mut out, &|b, i| {
        b.extend_from_slice(&index.offsets[i].to_le_bytes())
    });
    column(&mut out, &|b, i| {
        b.extend_from_slice(&index.lens[i].to_le_bytes())
    });
    column(&mut out, &|b, i| {
        b.extend_from_slice(&index.parents[i].to_le_bytes())
    });
    column(&mut out, &|b, i| b.push(index.kinds[i].byte()));
    column(&mut out, &|b, i| {
        b.extend_from_slice(&index.id_ends[i].to_le_bytes())
    });
    out.put(&(index.ids.len() as u64).to_le_bytes());
    for ids in index.ids.chunks(BLOCK * 8) {
        out.put(ids);
    }
    let mut tail = Vec::new();
    tail.extend_from_slice(&(index.dangling.len() as u64).to_le_bytes());
    for (child, parent) in &index.dangling {
        tail.extend_from_slice(&child.to_le_bytes());
        put_bytes(&mut tail, parent.as_bytes());
    }
    tail.extend_from_slice(&(index.verbatim.len() as u64).to_le_bytes());
    out.put(&tail);
    column_of(&mut out, &index.verbatim, &|b, v| {
        b.extend_from_slice(&v.sum.to_le_bytes());
        b.extend_from_slice(&v.start.to_le_bytes());
        b.extend_from_slice(&v.len.to_le_bytes());
    });
    let sum = std::mem::take(&mut out.sum).finish();
    (out.out)(&sum.to_le_bytes());
    Some(())
}

/// `items` handed to `out` a block at a time, each encoded by `each`.
fn column_of<T>(out: &mut Summed, items: &[T], each: &dyn Fn(&mut Vec<u8>, &T)) {
    let mut block = Vec::new();
    for items in items.chunks(BLOCK) {
        block.clear();
        for item in items {
            each(&mut block, item);
        }
        out.put(&block);
    }
}

/// Bytes handed on and summed.
struct Summed<'o> {
    sum: Checksum,
    out: &'o mut dyn FnMut(&[u8]),
}

impl Summed<'_> {
    fn put(&mut self, b: &[u8]) {
        self.sum.update(b);
        (self.out)(b);
    }
}

/// Entries per block of a column as the cache is written.
const BLOCK: usize = 64 << 10;

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

/// Reads the cache's fields in order; `None` at the first that does not fit.
struct Fields<'b>(&'b [u8]);

impl<'b> Fields<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
    fn bytes(&mut self) -> Option<&'b [u8]> {
        let n = self.len()?;
        self.take(n)
    }

    /// `n` items of `size` bytes each, as one slice (checked against what is left
    /// before anything is allocated).
    fn array(&mut self, n: usize, size: usize) -> Option<&'b [u8]> {
        self.take(n.checked_mul(size)?)
    }
}

/// The index in `bytes` if they are a sound cache of `file` (its checksum holds and it
/// names `file`); not yet checked against the file (see [`check`]).
fn decode(bytes: &[u8], file: &str) -> Option<(Seal, SessionIndex)> {
    let (body, sum) = bytes.split_at(bytes.len().checked_sub(8)?);
    if digest(body).to_le_bytes() != sum || !body.starts_with(MAGIC) {
        return None;
    }
    let mut f = Fields(&body[MAGIC.len()..]);
    if f.bytes()? != file.as_bytes() {
        return None;
    }
    let seal = Seal {
        covered: f.u64()?,
        mtime_ms: f.u64()? as i64,
        header: f.u64()?,
        tail: f.u64()?,
    };
    let mut index = SessionIndex {
        header_offset: f.u64()?,
        header_len: f.u32()?,
        covered: seal.covered,
        extra_headers: f.u32()?,
        ..SessionIndex::default()
    };
    let n = f.len()?;
    let offsets = f.array(n, 8)?;
    let lens = f.array(n, 4)?;
    let parents = f.array(n, 4)?;
    let kinds = f.array(n, 1)?;
    let id_ends = f.array(n, 4)?;
    index.offsets = offsets
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    index.lens = lens
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    index.parents = parents
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    index.kinds = kinds
        .iter()
        .map(|&b| Kind::from_byte(b))
        .collect::<Option<_>>()?;
    index.id_ends = id_ends
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    index.ids = f.bytes()?.to_vec();
    let dangling = f.len()?;
    for _ in 0..dangling {
        let child = f.u32()?;
        let parent = std::str::from_utf8(f.bytes()?).ok()?;
        index.dangling.push((child, parent.into()));
    }
    let known = f.len()?;
    if known > n {
        return None;
    }
    index.verbatim = f
        .array(known, 16)?
        .chunks_exact(16)
        .map(|c| Verbatim {
            sum: u64::from_le_bytes(c[..8].try_into().unwrap_or_default()),
            start: u32::from_le_bytes(c[8..12].try_into().unwrap_or_default()),
            len: u32::from_le_bytes(c[12..].try_into().unwrap_or_default()),
        })
        .collect();
    if !f.0.is_empty() {
        return None;
    }
    sound(&index).then_some((seal, index))
}

/// Every position, offset and id in range: a cache written by a bug (or by hand) never
/// makes an open index out of bounds.
fn sound(index: &SessionIndex) -> bool {
    let n = index.len();
    let ids_ok = index.id_ends.windows(2).all(|w| w[0] <= w[1])
        && index
            .id_ends
            .last()
            .is_none_or(|&e| e as usize == index.ids.len())
        && std::str::from_utf8(&index.ids).is_ok();
    let lines_ok = index.offsets.iter().zip(&index.lens).all(|(&o, &l)| {
        o.checked_add(u64::from(l))
            .is_some_and(|e| e <= index.covered)
    });
    let header_ok = index.header_offset + u64::from(index.header_len) <= index.covered;
    let verbatim_ok = index.verbatim.len() <= n
        && index
            .verbatim
            .iter()
            .zip(&index.lens)
            .all(|(v, &l)| v.fits(l));
    ids_ok
        && verbatim_ok
        && lines_ok
        && header_ok
        && index
            .parents
            .iter()
            .all(|&p| p == NO_PARENT || (p as usize) < n)
        && index.dangling.iter().all(|(c, _)| (*c as usize) < n)
}

/// The cached index of `file`, if there is one and it still describes the file's first
/// `covered` bytes. Every failure (no cache, unreadable, foreign, stale) is `None`.
pub(crate) fn load(
    storage: &dyn Storage,
    agent_dir: &str,
    file: &str,
    stat: FileStat,
) -> Option<SessionIndex> {
    let bytes = storage.read(&location(agent_dir, file)).ok()?;
    let (seal, index) = decode(&bytes, file)?;
    let fresh =
        stat.size > seal.covered || stat.size == seal.covered && stat.mtime_ms == seal.mtime_ms;
    if !fresh {
        return None;
    }
    let now = seal_of(storage, file, &index, stat)?;
    if now.header != seal.header || now.tail != seal.tail {
        return None;
    }
    // Its ids are distinct as the scan that made it checked (the checksum holds); the
    // table that finds an id is built when something first needs it.
    Some(index)
}

/// The cached indexes in `agent_dir` whose session file is gone (or that are no index
/// this library wrote): removed unless `dry_run`; their names, sorted. Failures are left
/// alone: it is only a cache.
pub(crate) fn prune(storage: &dyn Storage, agent_dir: &str, dry_run: bool) -> Vec<String> {
    let dir = join(&join(agent_dir, "cache"), "index");
    let Ok(names) = storage.list_dir(&dir) else {
        return Vec::new();
    };
    let mut stale = Vec::new();
    for entry in names
        .into_iter()
        .filter(|e| !e.is_dir && e.name.ends_with(".idx"))
    {
        let at = join(&dir, &entry.name);
        let Ok(head) = storage.read_prefix(&at, 64 << 10) else {
            continue;
        };
        let gone = match recorded_path(&head) {
            Some(file) => storage.stat(&file).is_err_and(|e| e.is_not_found()),
            None => true,
        };
        if gone && (dry_run || storage.unlink(&at).is_ok()) {
            stale.push(entry.name);
        }
    }
    crate::sort::sort_by(&mut stale, Ord::cmp);
    stale
}

/// The session file a cache's first bytes name (`None`: not a cache of this format).
fn recorded_path(head: &[u8]) -> Option<String> {
    let mut f = Fields(head.strip_prefix(MAGIC.as_slice())?);
    String::from_utf8(f.bytes()?.to_vec()).ok()
}

/// Keep `index` as the cache of `file`; a failure is ignored (it is only a cache). Not
/// fsynced: a cache a power cut left empty or cut short fails its checksum and is
/// written again. Written a piece at a time as it is encoded (a 1 GB session's index is
/// tens of megabytes, which neither this memory nor a host's copy of it needs to hold).
pub(crate) fn save(
    storage: &dyn Storage,
    agent_dir: &str,
    file: &str,
    index: &SessionIndex,
    stat: FileStat,
) {
    let at = location(agent_dir, file);
    let _ = storage.replace_unsynced_with(&at, &mut |tmp| {
        let mut pending = Vec::with_capacity(WRITE_PIECE);
        let mut written = false;
        let mut failed = None;
        let mut flush = |pending: &mut Vec<u8>| {
            if failed.is_some() || pending.is_empty() && written {
                return;
            }
            let r = match written {
                false => storage.write(tmp, pending),
                true => storage.append(tmp, pending),
            };
            written = true;
            pending.clear();
            failed = r.err();
        };
        let encoded = encode(storage, file, index, stat, &mut |b| {
            pending.extend_from_slice(b);
            if pending.len() >= WRITE_PIECE {
                flush(&mut pending);
            }
        });
        flush(&mut pending);
        match (encoded, failed) {
            (_, Some(e)) => Err(e),
            (None, None) => Err(crate::storage::StorageError::Other(
                "the session changed as its index was written".to_string(),
            )),
            (Some(()), None) => Ok(()),
        }
    });
}

/// How many bytes of a cache are written at a time.
const WRITE_PIECE: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A checksum fed in pieces, however cut, is the checksum of the whole.
        #[test]
        fn a_checksum_fed_in_pieces_is_that_of_the_whole(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            cuts in proptest::collection::vec(0usize..200, 0..8),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut d = Checksum::default();
            let mut at = 0;
            for c in cuts.into_iter().chain([bytes.len()]) {
                d.update(&bytes[at..c]);
                at = c;
            }
            prop_assert_eq!(d.finish(), digest(&bytes));
        }
    }

    /// A note of a message beyond its line, or of more entries than there are (a cache
    /// written by a bug, its checksum sound), is refused before anything reads by it.
    #[test]
    fn a_note_beyond_its_line_or_entry_is_refused() {
        let mut index = SessionIndex {
            covered: 100,
            header_len: 10,
            offsets: vec![10],
            lens: vec![50],
            parents: vec![NO_PARENT],
            kinds: vec![Kind(0)],
            ids: b"a".to_vec(),
            id_ends: vec![1],
            ..SessionIndex::default()
        };
        let note = |start, len| Verbatim { sum: 1, start, len };
        index.verbatim = vec![note(10, 40)];
        assert!(sound(&index));
        index.verbatim = vec![note(10, 41)];
        assert!(!sound(&index));
        index.verbatim = vec![note(u32::MAX, 2)];
        assert!(!sound(&index));
        index.verbatim = vec![note(0, 0), note(0, 1)];
        assert!(!sound(&index));
    }

    #[test]
    fn the_checksum_tells_bytes_moved_added_or_dropped() {
        let a = digest(b"0123456789abcdef");
        assert_ne!(a, digest(b"1023456789abcdef"));
        assert_ne!(a, digest(b"0123456789abcdef\0"));
        assert_ne!(a, digest(b"0123456789abcde"));
        assert_ne!(digest(b""), digest(b"\0"));
    }
}
