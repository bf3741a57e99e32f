//! The index's scan: one pass over a session file's lines that finds, for each, where it
//! is and its leading keys (`type`, `id`, `parentId`), without reading the rest of the
//! line. The agent writes those keys first (`custom` and `custom_message` last), so most
//! lines are matched by a few byte comparisons; any other line is parsed whole, as the
//! full reader would. A file the index cannot describe exactly (an older version, a line
//! that is not one complete record, two records glued on a line, an id used twice) gives
//! no index: its opens read it whole, as before.

use super::{Kind, SessionIndex, NO_PARENT};
use crate::entry::{Entry, EntryType, Header, Record, Text, CURRENT_SESSION_VERSION};
use crate::jsonl::next_line;

/// What the leading keys of a line say.
struct Keys<'l> {
    type_name: &'l str,
    id: &'l str,
    parent: Option<&'l str>,
}

/// A JSON string at `b[*pos..]` with no escape in it (`"…"`), advancing `*pos` past it;
/// its bytes are checked to be UTF-8 (the rest of the line is checked when read).
fn plain_string<'l>(b: &'l [u8], pos: &mut usize) -> Option<&'l str> {
    if b.get(*pos) != Some(&b'"') {
        return None;
    }
    let start = *pos + 1;
    let len = memchr::memchr2(b'"', b'\\', &b[start..])?;
    if b[start + len] != b'"' {
        return None; // an escape: the full parse decodes it
    }
    *pos = start + len + 1;
    std::str::from_utf8(&b[start..start + len]).ok()
}

fn literal(b: &[u8], pos: &mut usize, lit: &[u8]) -> Option<()> {
    b.get(*pos..*pos + lit.len()).filter(|s| *s == lit)?;
    *pos += lit.len();
    Some(())
}

/// `"id":"…","parentId":null|"…","timestamp":"…"` at `*pos`.
fn ids<'l>(b: &'l [u8], pos: &mut usize) -> Option<(&'l str, Option<&'l str>)> {
    literal(b, pos, b"\"id\":")?;
    let id = plain_string(b, pos)?;
    literal(b, pos, b",\"parentId\":")?;
    let parent = match b.get(*pos) {
        Some(b'n') => {
            literal(b, pos, b"null")?;
            None
        }
        _ => Some(plain_string(b, pos)?),
    };
    literal(b, pos, b",\"timestamp\":")?;
    plain_string(b, pos)?;
    Some((id, parent))
}

/// The leading keys as the agent writes them; `None` when the line is written otherwise.
fn leading_keys(b: &[u8]) -> Option<Keys<'_>> {
    let mut pos = 0;
    literal(b, &mut pos, b"{\"type\":")?;
    let type_name = plain_string(b, &mut pos)?;
    literal(b, &mut pos, b",")?;
    if EntryType::parse(type_name).ids_last() {
        // `…,"id":"…","parentId":…,"timestamp":"…"}`: the last `,"id":"` of the line (a
        // raw quote is never inside a JSON string, so it is a key) must start ids that
        // end the line.
        let at = memchr::memmem::rfind(b, b",\"id\":\"")? + 1;
        let mut p = at;
        let (id, parent) = ids(b, &mut p)?;
        return (p + 1 == b.len() && b[p] == b'}').then_some(Keys {
            type_name,
            id,
            parent,
        });
    }
    let (id, parent) = ids(b, &mut pos)?;
    matches!(b.get(pos), Some(b',' | b'}')).then_some(Keys {
        type_name,
        id,
        parent,
    })
}

/// Builds an index from a file's bytes, read in pieces from the start (or from where a
/// cached index stopped).
pub(crate) struct Scanner {
    index: SessionIndex,
    /// Parent ids not seen yet when their child was (`child position`, id).
    pending: Vec<(u32, Box<str>)>,
    /// Still an exact description of the file.
    exact: bool,
}

impl Scanner {
    /// The scan of the bytes after what `index` covers (a prefix of the file; all of it
    /// from an empty index, its header line first).
    pub(crate) fn resume(mut index: SessionIndex) -> Scanner {
        // New ids are checked against the old ones, and their parents found among them.
        let exact = index.ensure_lookup();
        Scanner {
            index,
            pending: Vec::new(),
            exact,
        }
    }

    /// Still an exact description of the file (else scanning further is useless).
    pub(crate) fn exact(&self) -> bool {
        self.exact
    }

    /// Index the complete lines of `bytes`, which start at byte `base` of the file (at a
    /// line start); returns how many bytes that was, up to and including the last
    /// newline (the rest, a partial line, is passed again with what follows it).
    pub(crate) fn feed(&mut self, bytes: &[u8], base: u64) -> usize {
        let Some(end) = memchr::memrchr(b'\n', bytes).map(|i| i + 1) else {
            return 0;
        };
        let mut pos = match base == 0 && bytes.starts_with("\u{feff}".as_bytes()) {
            true => 3,
            false => 0,
        };
        while self.exact {
            let Some((s, e)) = next_line(&bytes[..end], &mut pos) else {
                break;
            };
            self.line(&bytes[s..e], base + s as u64);
        }
        self.index.covered = base + end as u64;
        end
    }

    /// One line. Only its leading keys are read (lazy validation): the rest of its bytes,
    /// its UTF-8 included, is checked when an open reads the line. A line the index could
    /// misdescribe that way never changes a context unchecked: two records glued on one
    /// line hide the second, but a child of a hidden record has a parent the index does
    /// not know, which sends the open to the full reader, and the line of a last entry,
    /// like every line on the context's path, is read and checked whole.
    fn line(&mut self, line: &[u8], offset: u64) {
        let Ok(len) = u32::try_from(line.len()) else {
            self.exact = false;
            return;
        };
        if self.index.header_len == 0 {
            let fits = std::str::from_utf8(line)
                .ok()
                .and_then(Header::from_json)
                .is_some_and(|h| h.version() == CURRENT_SESSION_VERSION);
            self.exact = fits;
            self.index.header_offset = offset;
            self.index.header_len = len;
            return;
        }
        match leading_keys(line) {
            Some(k) if k.type_name == "session" => self.index.extra_headers += 1,
            Some(k) => self.push(offset, len, EntryType::parse(k.type_name), k.id, k.parent),
            None => {
                let record = std::str::from_utf8(line)
                    .ok()
                    .map(|text| Entry::parse_record(Text::Owned(text.into())));
                match record {
                    Some(Ok(Record::Header(_))) => self.index.extra_headers += 1,
                    Some(Ok(Record::Entry(e))) => {
                        let parent = e.parent_id.as_deref();
                        self.push(offset, len, e.entry_type, &e.id, parent)
                    }
                    _ => self.exact = false,
                }
            }
        }
    }

    fn push(&mut self, offset: u64, len: u32, kind: EntryType, id: &str, parent: Option<&str>) {
        let index = &mut self.index;
        let Ok(position) = u32::try_from(index.len()) else {
            self.exact = false;
            return;
        };
        if position == NO_PARENT || !index.insert_id(id, position) {
            self.exact = false; // an id used twice: the full reader decides which counts
            return;
        }
        let previous = position.checked_sub(1);
        let parent = match parent {
            None => NO_PARENT,
            // Most entries follow their parent: no lookup.
            Some(p) if previous.is_some_and(|q| index.id(q as usize) == p) => position - 1,
            Some(p) => index.position(p).unwrap_or_else(|| {
                self.pending.push((position, p.into()));
                NO_PARENT
            }),
        };
        index.offsets.push(offset);
        index.lens.push(len);
        index.parents.push(parent);
        index.kinds.push(Kind::of(kind));
    }

    /// The index, or `None` when the file is not one the index can describe exactly.
    /// `rest` is what follows the last newline: a last line without one (being written,
    /// or torn) is left to the full reader. Parents named before their entry appeared
    /// are linked now; a parent that never appears stays unlinked (the walk to the root
    /// stops there, as the full reader's) and is kept, to be linked by a later append.
    pub(crate) fn finish(mut self, rest: &[u8]) -> Option<SessionIndex> {
        let blank = rest.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r'));
        if !self.exact || !blank || self.index.header_len == 0 {
            return None;
        }
        let index = &mut self.index;
        let mut dangling = std::mem::take(&mut index.dangling);
        dangling.append(&mut self.pending);
        for (child, parent) in dangling {
            match index.position(&parent) {
                Some(p) => index.parents[child as usize] = p,
                None => index.dangling.push((child, parent)),
            }
        }
        Some(self.index)
    }
}
