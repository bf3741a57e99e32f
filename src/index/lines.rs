//! Lines of a session file read by their place in the index, in as few ranged reads as
//! the gaps between them allow, each checked whole against what the index says of it.

use super::verbatim::line_sum;
use super::SessionIndex;
use crate::entry::{Entry, EntryType, Payload, Record, Text};
use crate::storage::{Storage, StorageResult};
use std::collections::HashMap;
use std::sync::Arc;

/// Lines closer than this are read together (one call instead of two).
const GAP: u64 = 4 << 10;
/// At most this many bytes per read, beyond a single longer line.
const PIECE: u64 = 16 << 20;

/// A line read: parsed and checked, or (its checksum the one noted) only its message.
pub(super) enum Line {
    Entry(Entry),
    /// The context message, the line's `message` value as it is.
    Message(Text),
    /// Its message is the one noted, as it is in the line ([`Notes::Confirm`]).
    Confirmed,
}

/// What [`Lines::read_lines`] makes of a line the index noted ([`super::verbatim`])
/// whose checksum is the one noted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Notes {
    /// Parse it as any line.
    Ignore,
    /// Hand its message, as it is in the line.
    Copy,
    /// Only say so (a piece of such lines alone is not even made text).
    Confirm,
}

thread_local! {
    /// Lines parsed on this thread (see [`parsed`]).
    static PARSED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many lines were parsed (not copied) on this thread: tests tell a reopen that
/// copies its messages from one that parses them again.
pub(super) fn parsed() -> u64 {
    PARSED.with(std::cell::Cell::get)
}

/// Reads lines of one file by position, validating each against the index.
pub(super) struct Lines<'a> {
    pub(super) storage: &'a dyn Storage,
    pub(super) path: &'a str,
    pub(super) index: &'a SessionIndex,
    /// Position → entry read (and kept).
    pub(super) read: HashMap<usize, Entry>,
}

impl Lines<'_> {
    /// Read the lines at `positions` (any order) and keep them. `Ok(false)`: a line is
    /// not what the index says.
    pub(super) fn load(&mut self, positions: &[usize]) -> StorageResult<bool> {
        let want: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|p| !self.read.contains_key(p))
            .collect();
        match self.read(&want)? {
            Some(read) => {
                self.read.extend(read);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Read the lines at `positions` (any order), in as few calls as the gaps allow,
    /// each checked whole; in file order. `Ok(None)`: a line is not what the index says.
    pub(super) fn read(&self, positions: &[usize]) -> StorageResult<Option<Vec<(usize, Entry)>>> {
        let read = self.read_lines(positions, Notes::Ignore)?;
        Ok(read.map(|lines| {
            lines
                .into_iter()
                .filter_map(|(p, line)| match line {
                    Line::Entry(e) => Some((p, e)),
                    Line::Message(_) | Line::Confirmed => None, // never when ignored
                })
                .collect()
        }))
    }

    /// [`Self::read`], where a line whose checksum is the one the index noted with its
    /// message ([`super::verbatim`]) is not parsed (unless `notes` ignores them): its
    /// message is handed as it is in the line, or only confirmed.
    pub(super) fn read_lines(
        &self,
        positions: &[usize],
        notes: Notes,
    ) -> StorageResult<Option<Vec<(usize, Line)>>> {
        let mut want = positions.to_vec();
        let offsets = &self.index.offsets;
        crate::sort::sort_by(&mut want, |a, b| offsets[*a].cmp(&offsets[*b]));
        want.dedup();
        let mut out = Vec::with_capacity(want.len());
        let mut k = 0;
        while k < want.len() {
            let start = self.index.offsets[want[k]];
            let mut end = start + u64::from(self.index.lens[want[k]]);
            let mut last = k + 1;
            while last < want.len() {
                let o = self.index.offsets[want[last]];
                let e = o + u64::from(self.index.lens[want[last]]);
                if o > end + GAP || e - start > PIECE {
                    break;
                }
                end = e;
                last += 1;
            }
            let mut bytes = self.storage.read_range(self.path, start, end - start)?;
            if bytes.len() as u64 != end - start {
                return Ok(None); // shorter than indexed: the file changed
            }
            // The lines between the wanted ones were read only to save calls: blanked,
            // so that what they hold (unchecked) decides nothing.
            let mut at = 0;
            for &p in &want[k..last] {
                let s = (self.index.offsets[p] - start) as usize;
                bytes[at..s].fill(b' ');
                at = s + self.index.lens[p] as usize;
            }
            // Noted lines whose checksum is the one noted (see `super::verbatim`).
            let noted: Vec<bool> = want[k..last]
                .iter()
                .map(|&p| {
                    let s = (self.index.offsets[p] - start) as usize;
                    let end = s + self.index.lens[p] as usize;
                    notes != Notes::Ignore
                        && self.index.verbatim(p).is_some_and(|v| {
                            line_sum(&bytes[s..end]) == v.sum
                                && cuts_no_character(&bytes[s..end], v)
                        })
                })
                .collect();
            if notes == Notes::Confirm && noted.iter().all(|&n| n) {
                // Nothing of these bytes is kept: no text to make of them.
                out.extend(want[k..last].iter().map(|&p| (p, Line::Confirmed)));
                k = last;
                continue;
            }
            if simdutf8::basic::from_utf8(&bytes).is_err() {
                return Ok(None);
            }
            // SAFETY: just checked.
            let text = unsafe { String::from_utf8_unchecked(bytes) };
            let buf = Arc::new(text);
            for (&p, noted) in want[k..last].iter().zip(noted) {
                let s = (self.index.offsets[p] - start) as usize;
                let end = s + self.index.lens[p] as usize;
                match self.index.verbatim(p).filter(|_| noted) {
                    Some(_) if notes == Notes::Confirm => out.push((p, Line::Confirmed)),
                    Some(v) => {
                        let at = s + v.start as usize;
                        let text = Text::Shared {
                            buf: buf.clone(),
                            start: at,
                            end: at + v.len as usize,
                        };
                        out.push((p, Line::Message(text)));
                    }
                    None => {
                        let text = Text::Shared {
                            buf: buf.clone(),
                            start: s,
                            end,
                        };
                        PARSED.with(|n| n.set(n.get() + 1));
                        match Entry::parse_record(text) {
                            Ok(Record::Entry(e)) if self.agrees(p, &e) => {
                                out.push((p, Line::Entry(e)))
                            }
                            _ => return Ok(None),
                        }
                    }
                }
            }
            k = last;
        }
        Ok(Some(out))
    }

    /// The entry read at `p` is the one the index describes: its id, type, and parent
    /// (the one the index linked, or one it does not know, as it recorded).
    fn agrees(&self, p: usize, e: &Entry) -> bool {
        let parent_agrees = match (self.index.parent(p), e.parent_id.as_deref()) {
            (Some(q), Some(id)) => self.index.id(q) == id,
            (None, None) => true,
            (None, Some(id)) => self
                .index
                .dangling
                .iter()
                .any(|(child, parent)| *child as usize == p && &**parent == id),
            (Some(_), None) => false,
        };
        parent_agrees
            && e.id == self.index.id(p)
            && super::Kind::of(e.entry_type) == self.index.kinds[p]
    }

    /// Read message lines of `order` one by one until one is an assistant message with a
    /// model (`Some(true)`), or there is none (`Some(false)`); `None`: a line is not what
    /// the index says.
    pub(super) fn find_assistant(
        &mut self,
        order: impl Iterator<Item = usize>,
    ) -> StorageResult<Option<bool>> {
        for p in order {
            if self.index.kinds[p].entry_type() != EntryType::Message {
                continue;
            }
            if !self.load(&[p])? {
                return Ok(None);
            }
            if matches!(
                &self.read[&p].payload,
                Payload::Message {
                    model_key: Some(_),
                    ..
                }
            ) {
                return Ok(Some(true));
            }
        }
        Ok(Some(false))
    }
}

/// Does the note's message start and end where characters do (as any a parse noted
/// does)? One that does not (a cache written by hand or by a bug, its checksum sound) is
/// not followed: the line is parsed.
fn cuts_no_character(line: &[u8], v: super::verbatim::Verbatim) -> bool {
    let boundary = |i: usize| line.get(i).is_none_or(|&b| (b as i8) >= -0x40);
    boundary(v.start as usize) && boundary((v.start + v.len) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::scan::Scanner;
    use crate::index::verbatim::{line_sum, Verbatim};

    /// A note whose message would start inside a character, on a line whose checksum it
    /// has: the line is parsed instead (no slice of a character, no panic).
    #[test]
    fn a_note_that_cuts_a_character_is_not_followed() {
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"é"}}"#;
        let text = format!("{header}\n{line}\n");
        let storage = crate::MemoryStorage::new();
        storage.write("/f", text.as_bytes()).unwrap();
        let mut scanner = Scanner::resume(SessionIndex::default());
        scanner.feed(text.as_bytes(), 0);
        let mut index = scanner.finish(b"").unwrap();
        let (at, len) = (index.offsets[0] as usize, index.lens[0] as usize);
        let sum = line_sum(&text.as_bytes()[at..at + len]);
        let inside = line.find('\u{e9}').unwrap() + 1;
        let lines = |index: &SessionIndex| {
            let lines = Lines {
                storage: &storage,
                path: "/f",
                index,
                read: HashMap::new(),
            };
            let read = lines.read_lines(&[0], Notes::Copy).unwrap().unwrap();
            read.into_iter().next().unwrap().1
        };
        for (start, len) in [(inside, 3), (inside - 5, 5)] {
            index.verbatim = vec![Verbatim {
                sum,
                start: start as u32,
                len: len as u32,
            }];
            assert!(matches!(lines(&index), Line::Entry(_)), "{start} {len}");
        }
        // Where characters start and end, it is followed (copied as it is).
        index.verbatim = vec![Verbatim {
            sum,
            start: (inside - 1) as u32,
            len: 2,
        }];
        assert!(matches!(lines(&index), Line::Message(t) if t.as_str() == "\u{e9}"));
    }
}
