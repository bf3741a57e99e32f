//! An open that reads only what a context needs: the leaf's path from the index, then
//! the lines of that path the context reads (every entry from the compaction's first
//! kept one to the leaf, the state changes before them, the first and last assistant
//! messages), each validated as the full reader would. A line that is not what the index
//! says (another id, parent or type, or not one whole entry) gives `None`: the caller
//! then reads the file whole.

use super::SessionIndex;
use crate::blob::BlobStore;
use crate::context::{context_along, SessionContext};
use crate::entry::{Entry, EntryType, Payload, Record, Text};
use crate::paths;
use crate::session::model_message;
use crate::storage::{Storage, StorageResult};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// Lines closer than this are read together (one call instead of two).
const GAP: u64 = 64 << 10;
/// At most this many bytes per read, beyond a single longer line.
const PIECE: u64 = 16 << 20;

/// The entries a context of one leaf reads, read from the file through its index.
pub struct PathContext {
    /// Root first; only the entries the context reads.
    entries: Vec<Entry>,
    /// Where each of them is in the file (its line was checked).
    offsets: Vec<u64>,
    /// Lines of the file whose bytes beyond their leading keys were not checked.
    unchecked: usize,
    cycle: Option<String>,
    storage: Rc<dyn Storage>,
    agent_dir: String,
}

impl PathContext {
    /// `buildSessionContext` for the leaf it was read for: equal to the full reader's.
    pub fn context<'s>(&'s self) -> SessionContext<'s> {
        let store = BlobStore::new(&*self.storage, paths::blobs_dir(&self.agent_dir));
        let path: Vec<&'s Entry> = self.entries.iter().collect();
        // Every entry here was read from the file, under an id no other entry has.
        let finish = |e: &'s Entry, m: Cow<'s, str>| model_message(e, m, true, &store);
        context_along(&path, self.cycle.clone(), &finish)
    }

    /// Where the lines read (and checked whole) start in the file.
    pub fn checked_lines(&self) -> &[u64] {
        &self.offsets
    }

    /// How many entry lines were not checked beyond their leading keys (a line the
    /// context does not need is only checked when something reads it; `show` checks
    /// every line).
    pub fn unchecked_lines(&self) -> usize {
        self.unchecked
    }
}

fn state_change(t: EntryType) -> bool {
    matches!(
        t,
        EntryType::ThinkingLevelChange
            | EntryType::ModelChange
            | EntryType::ServiceTierChange
            | EntryType::TtsrInjection
            | EntryType::McpToolSelection
            | EntryType::ModeChange
            | EntryType::ContextChange
            | EntryType::Compaction
    )
}

/// Reads lines of one file by position, validating each against the index.
struct Lines<'a> {
    storage: &'a dyn Storage,
    path: &'a str,
    index: &'a SessionIndex,
    /// Position → entry read.
    read: BTreeMap<usize, Entry>,
}

impl Lines<'_> {
    /// Read the lines at `positions` (any order), in as few calls as the gaps allow.
    /// `Ok(false)`: a line is not what the index says.
    fn load(&mut self, positions: &[usize]) -> StorageResult<bool> {
        let mut want: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|p| !self.read.contains_key(p))
            .collect();
        want.sort_unstable_by_key(|&p| self.index.offsets[p]);
        want.dedup();
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
            let bytes = self.storage.read_range(self.path, start, end - start)?;
            if bytes.len() as u64 != end - start {
                return Ok(false); // shorter than indexed: the file changed
            }
            let Ok(text) = String::from_utf8(bytes) else {
                return Ok(false);
            };
            let buf = Arc::new(text);
            for &p in &want[k..last] {
                let s = (self.index.offsets[p] - start) as usize;
                let text = Text::Shared {
                    buf: buf.clone(),
                    start: s,
                    end: s + self.index.lens[p] as usize,
                };
                match Entry::parse_record(text) {
                    Ok(Record::Entry(e)) if self.agrees(p, &e) => {
                        self.read.insert(p, e);
                    }
                    _ => return Ok(false),
                }
            }
            k = last;
        }
        Ok(true)
    }

    /// The entry read at `p` is the one the index describes.
    fn agrees(&self, p: usize, e: &Entry) -> bool {
        let parent = e
            .parent_id
            .as_deref()
            .and_then(|id| self.index.position(id))
            .map(|q| q as usize);
        e.id == self.index.id(p)
            && parent == self.index.parent(p)
            && super::Kind::of(e.entry_type) == self.index.kinds[p]
    }

    /// The first position of `order` whose entry is an assistant message, reading the
    /// message lines one by one until it is found.
    fn first_assistant(
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

/// The context of the leaf `leaf` (`None`: the last entry; an id the index lacks: the
/// last entry too, as the full reader does) read through `index`. `Ok(None)` when a line
/// read is not what the index says: read the file whole instead.
pub(crate) fn read_path_context(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    index: &SessionIndex,
    leaf: Option<&str>,
) -> StorageResult<Option<PathContext>> {
    let empty = |storage| PathContext {
        entries: Vec::new(),
        offsets: Vec::new(),
        unchecked: 0,
        cycle: None,
        storage,
        agent_dir: agent_dir.to_string(),
    };
    let last = index.len().checked_sub(1);
    let Some(leaf) = leaf
        .and_then(|id| index.position(id).map(|p| p as usize))
        .or(last)
    else {
        return Ok(Some(empty(storage)));
    };
    let (chain, cycle) = index.path_to(leaf);
    // A parent the index does not know may be a record it could not see (one the full
    // reader recovers): the full reader decides.
    if index
        .dangling
        .iter()
        .any(|(child, _)| *child as usize == chain[0])
    {
        return Ok(None);
    }
    let kind = |p: usize| index.kinds[p].entry_type();
    let mut lines = Lines {
        storage: &*storage,
        path,
        index,
        read: BTreeMap::new(),
    };
    // The state changes and compactions, everywhere on the path.
    let changes: Vec<usize> = chain
        .iter()
        .copied()
        .filter(|&p| state_change(kind(p)))
        .collect();
    if !lines.load(&changes)? {
        return Ok(None);
    }
    // What the context shows: from the last compaction's first kept entry (or the
    // root) to the leaf, every entry.
    let cpos = chain
        .iter()
        .rposition(|&p| kind(p) == EntryType::Compaction);
    let shown_from = match cpos {
        None => 0,
        Some(c) => {
            let first_kept = match &lines.read[&chain[c]].payload {
                Payload::Compaction {
                    first_kept_entry_id,
                } => first_kept_entry_id.clone(),
                _ => None,
            };
            first_kept
                .and_then(|id| chain[..c].iter().position(|&p| index.id(p) == id))
                .unwrap_or(c)
        }
    };
    if !lines.load(&chain[shown_from..])? {
        return Ok(None);
    }
    // The default model is set by assistant messages: the first one fixes its place
    // among the models, the last one its value.
    let found = lines.first_assistant(chain.iter().copied())?;
    let Some(found) = found else { return Ok(None) };
    if found
        && lines
            .first_assistant(chain.iter().rev().copied())?
            .is_none()
    {
        return Ok(None);
    }
    let (offsets, entries): (Vec<u64>, Vec<Entry>) = chain
        .iter()
        .filter_map(|&p| Some((index.offsets[p], lines.read.remove(&p)?)))
        .unzip();
    Ok(Some(PathContext {
        unchecked: index.len() - entries.len(),
        entries,
        offsets,
        cycle,
        storage,
        agent_dir: agent_dir.to_string(),
    }))
}

/// A session file opened to build the context of one leaf: through its index when the
/// file has one (only the lines the context reads are read), else read whole.
pub enum OpenedContext {
    /// Read through the index.
    Path(PathContext),
    /// Read whole (an older version, a line the index cannot describe, a line that was
    /// not what the index said), with the leaf asked for.
    Whole(Box<crate::session::Session>, Option<String>),
}

impl OpenedContext {
    /// The context, equal whichever way the file was read.
    pub fn context(&self) -> SessionContext<'_> {
        match self {
            OpenedContext::Path(p) => p.context(),
            OpenedContext::Whole(s, leaf) => s.context_at(
                leaf.as_deref()
                    .map_or(crate::context::Leaf::Last, crate::context::Leaf::Id),
            ),
        }
    }

    /// Was it read through the index?
    pub fn through_index(&self) -> bool {
        matches!(self, OpenedContext::Path(_))
    }
}
