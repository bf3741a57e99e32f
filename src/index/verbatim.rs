//! Messages a reopen copies from the file instead of parsing their lines.
//!
//! A `message` entry whose context message is its `message` value exactly as written (no
//! blob to put back, no stale replay data to drop: what the context writes is those
//! bytes of the line) is noted in the index the first time its line is read and checked
//! whole: where the value is in the line, and a checksum of the whole line. A later open
//! whose line has that checksum copies the value as it is, without parsing the line: the
//! line is byte for byte the one that was checked, so parsing it again would give the
//! same entry, agreeing with the index as it did, and the same message.
//!
//! What is trusted: the cache's own checksum (a cache damaged on disk is dropped whole)
//! and this checksum of each line (a line changed since, whatever its length, mtime or
//! place, is parsed and checked as any line is; see [`line_sum`] for what it always
//! tells). It is no defence against a forger who crafts a line to another's checksum:
//! whoever can write the session file chooses its messages anyway. The bytes copied are
//! still checked to be UTF-8 with the rest of what is read, and a note that would cut a
//! character is not followed (the cache's soundness checks keep every note inside its
//! line).

use crate::context::entry_message;
use crate::entry::{Entry, Payload};
use std::borrow::Cow;

/// Where a line's message is in it, and the checksum of the line it was found in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Verbatim {
    pub(crate) sum: u64,
    /// The `message` value's bytes in the line: `start..start + len` (`len` 0: not known).
    pub(crate) start: u32,
    pub(crate) len: u32,
}

impl Verbatim {
    pub(crate) fn known(self) -> bool {
        self.len > 0
    }

    /// Does it fit in a line of `line_len` bytes?
    pub(crate) fn fits(self, line_len: u32) -> bool {
        !self.known() || u64::from(self.start) + u64::from(self.len) <= u64::from(line_len)
    }
}

/// What a reopen may copy of entry `e` (read from the file, checked against the index):
/// `Some` when its context message, as `finish` makes it, is its `message` value itself
/// (the very bytes of the line, not a copy that might differ).
pub(crate) fn verbatim_of<'e>(
    e: &'e Entry,
    finish: &dyn Fn(&'e Entry, Cow<'e, str>) -> Cow<'e, str>,
) -> Option<Verbatim> {
    // Blobs are put back into the message: never the line's bytes (and not made here).
    let Payload::Message {
        message,
        has_blob_refs: false,
        ..
    } = &e.payload
    else {
        return None;
    };
    let value = e.message_json()?;
    let Cow::Borrowed(made) = entry_message(e, finish)? else {
        return None;
    };
    if made.as_ptr() != value.as_ptr() || made.len() != value.len() {
        return None;
    }
    Some(Verbatim {
        sum: line_sum(e.json().as_bytes()),
        start: u32::try_from(message.start).ok()?,
        len: u32::try_from(message.len()).ok()?,
    })
}

const K: u64 = 0x9e37_79b9_7f4a_7c15;

fn step(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(K).rotate_left(29)
}

fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(w)
}

/// A 64-bit checksum of a line, the same on every platform, fast enough to run over every
/// byte a reopen reads (eight independent lanes of a word at a time). Each step is a
/// bijection of its lane for a given word, and the lanes are folded by bijective steps
/// too: two lines of the same length that differ within one aligned 8-byte word (any
/// one changed byte among them) always have different sums; other changes collide by
/// chance only (about 2^-64), and lines of other lengths are told apart by their `lens`.
pub(crate) fn line_sum(bytes: &[u8]) -> u64 {
    let mut lanes = [1u64, 2, 3, 4, 5, 6, 7, 8];
    let mut blocks = bytes.chunks_exact(64);
    for b in &mut blocks {
        for (i, lane) in lanes.iter_mut().enumerate() {
            *lane = step(*lane, word(&b[i * 8..i * 8 + 8]));
        }
    }
    let rest = blocks.remainder();
    for (i, w) in rest.chunks(8).enumerate() {
        lanes[i] = step(lanes[i], word(w));
    }
    let mut h = bytes.len() as u64;
    for lane in lanes {
        h = step(h, lane);
    }
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any change within one aligned 8-byte word (one byte, say) changes a line's
        /// checksum.
        #[test]
        fn a_change_within_a_word_changes_the_sum(
            line in proptest::collection::vec(any::<u8>(), 1..300),
            at in any::<prop::sample::Index>(),
            word in proptest::collection::vec(any::<u8>(), 8),
        ) {
            let at = at.index(line.len()) / 8 * 8;
            let mut changed = line.clone();
            for (k, b) in word.iter().enumerate() {
                if let Some(c) = changed.get_mut(at + k) {
                    *c = *b;
                }
            }
            prop_assume!(changed != line);
            prop_assert_ne!(line_sum(&changed), line_sum(&line));
        }
    }

    #[test]
    fn the_sum_tells_lengths_and_places_apart() {
        assert_ne!(line_sum(b""), line_sum(b"\0"));
        assert_ne!(line_sum(b"ab"), line_sum(b"ba"));
        let long = vec![b'x'; 100];
        let mut moved = long.clone();
        moved[40] = b'y';
        let mut other = long.clone();
        other[48] = b'y';
        assert_ne!(line_sum(&moved), line_sum(&other));
    }
}
