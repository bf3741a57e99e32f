//! An open that reads only what a context needs: the leaf's path from the index, then
//! the lines of that path the context reads (every entry from the compaction's first
//! kept one to the leaf, the state changes before them, the first and last assistant
//! messages), each validated as the full reader would. A line that is not what the index
//! says (another id, parent or type, or not one whole entry) gives `None`: the caller
//! then reads the file whole.
//!
//! A context whose shown lines exceed 64 MiB is streamed: its lines are read
//! and checked once at open without being kept (which also gives the JSON's length),
//! and read again, a piece at a time, as its JSON is read. Memory then stays at a piece
//! plus the index, whatever the size of the session.

use super::SessionIndex;
use crate::blob::BlobStore;
use crate::context::{
    compaction_parts, context_along, entry_message, state_along, ContextJsonReader, SessionContext,
    JSON_HEAD,
};
use crate::entry::{Entry, EntryType, Payload, Record, Text};
use crate::error::{Result, SessionError};
use crate::paths;
use crate::session::model_message;
use crate::storage::{Storage, StorageResult};
use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// Lines closer than this are read together (one call instead of two).
const GAP: u64 = 4 << 10;
/// At most this many bytes per read, beyond a single longer line.
const PIECE: u64 = 16 << 20;
thread_local! {
    /// A context whose shown lines hold more bytes than this (64 MiB) is streamed.
    static STREAM_ABOVE: std::cell::Cell<u64> = const { std::cell::Cell::new(64 << 20) };
}

/// Tests stream small contexts: set the threshold (bytes of shown lines) for opens on
/// this thread.
pub fn set_stream_above(bytes: u64) {
    STREAM_ABOVE.with(|t| t.set(bytes));
}

/// The entries a context of one leaf reads, read from the file through its index.
pub struct PathContext {
    /// Root first: the entries read and kept (the state changes, compactions, first and
    /// last assistant messages, and, unless streamed, every shown entry).
    entries: Vec<Entry>,
    /// Where each of them is in the file.
    offsets: Vec<u64>,
    /// Streamed: the positions of the shown entries, read again as the JSON is read.
    streamed: Option<Streamed>,
    /// Lines of the file whose bytes beyond their leading keys were not checked.
    unchecked: usize,
    cycle: Option<String>,
    storage: Rc<dyn Storage>,
    file: String,
    agent_dir: String,
    index: SessionIndex,
}

/// What a streamed context reads again.
struct Streamed {
    /// Positions (in the index) of the entries after the summary, in order.
    shown: Vec<usize>,
    /// The position of the compaction whose summary comes first.
    compaction: usize,
    /// The compaction's summary message, first.
    summary: Option<String>,
    /// The JSON's length and its number of messages, measured when first asked (one more
    /// pass over the shown lines).
    size: std::cell::OnceCell<(usize, usize)>,
}

impl PathContext {
    /// `buildSessionContext` for the leaf it was read for: equal to the full reader's.
    /// A streamed context is read whole into it (its lines read again; a file rewritten
    /// since the open is [`SessionError::ChangedWhileRead`]); [`PathContext::json_reader`]
    /// streams it instead.
    pub fn context(&self) -> Result<SessionContext<'_>> {
        let Some(st) = &self.streamed else {
            let path: Vec<&Entry> = self.entries.iter().collect();
            return Ok(context_along(&path, self.cycle.clone(), &|e, m| {
                self.finish(e, m)
            }));
        };
        let mut ctx = self.state();
        if let Some(s) = &st.summary {
            ctx.messages.push(Cow::Owned(s.clone()));
            ctx.entry_ids.push(self.index.id(st.compaction));
        }
        let lines = self.lines();
        for batch in batches(&self.index, &st.shown) {
            let read = lines.read(batch)?.ok_or_else(|| self.changed())?;
            for (p, e) in &read {
                if let Some(m) = entry_message(e, &|e, m| self.finish(e, m)) {
                    ctx.messages.push(Cow::Owned(m.into_owned()));
                    ctx.entry_ids.push(self.index.id(*p));
                }
            }
        }
        Ok(ctx)
    }

    /// A streamed context's JSON length and message count: its shown lines read once
    /// more (not kept), the first time it is asked.
    fn measure(&self) -> Result<(usize, usize)> {
        let Some(st) = &self.streamed else {
            let ctx = self.context()?;
            let json = ctx.to_json();
            return Ok((json.len(), ctx.messages.len()));
        };
        if let Some(size) = st.size.get() {
            return Ok(*size);
        }
        let mut total = JSON_HEAD.len() + self.state().json_tail().len();
        let mut messages = usize::from(st.summary.is_some());
        total += st.summary.as_ref().map_or(0, String::len);
        let lines = self.lines();
        for batch in batches(&self.index, &st.shown) {
            let read = lines.read(batch)?.ok_or_else(|| self.changed())?;
            for (_, e) in &read {
                if let Some(m) = entry_message(e, &|e, m| self.finish(e, m)) {
                    total += m.len();
                    messages += 1;
                }
            }
        }
        total += messages.saturating_sub(1);
        Ok(*st.size.get_or_init(|| (total, messages)))
    }

    fn changed(&self) -> SessionError {
        SessionError::ChangedWhileRead {
            file: self.file.clone(),
        }
    }

    /// The context's JSON, a chunk at a time; a streamed context reads its lines as it
    /// goes, so nothing holds the whole text.
    pub fn json_reader(&self) -> ContextReader<'_> {
        match &self.streamed {
            None => {
                let path: Vec<&Entry> = self.entries.iter().collect();
                let ctx = context_along(&path, self.cycle.clone(), &|e, m| self.finish(e, m));
                ContextReader::Built(Box::new(ctx.into_json_reader()))
            }
            Some(st) => {
                let ctx = self.state();
                ContextReader::Streamed(Box::new(StreamedReader {
                    tail: ctx.json_tail(),
                    pc: self,
                    st,
                    stage: Stage::Head,
                    pending: Vec::new(),
                    at: 0,
                    next: 0,
                    first: true,
                    failed: None,
                }))
            }
        }
    }

    /// The state along the path, without messages (a streamed context's).
    fn state(&self) -> SessionContext<'_> {
        let path: Vec<&Entry> = self.entries.iter().collect();
        state_along(&path, self.cycle.clone()).0
    }

    fn finish<'e>(&self, e: &'e Entry, m: Cow<'e, str>) -> Cow<'e, str> {
        let store = BlobStore::new(&*self.storage, paths::blobs_dir(&self.agent_dir));
        // Every entry here was read from the file, under an id no other entry has.
        model_message(e, m, true, &store)
    }

    fn lines(&self) -> Lines<'_> {
        Lines {
            storage: &*self.storage,
            path: &self.file,
            index: &self.index,
            read: HashMap::new(),
        }
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

    /// Is the context streamed (read from the file again as its JSON is read)?
    pub fn streamed(&self) -> bool {
        self.streamed.is_some()
    }
}

/// How many bytes of lines a streamed context reads at a time.
const STREAM_PIECE: u64 = 4 << 20;

/// The positions cut into pieces of about [`STREAM_PIECE`] bytes of lines.
fn batches<'p>(index: &'p SessionIndex, shown: &'p [usize]) -> impl Iterator<Item = &'p [usize]> {
    let mut rest = shown;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let n = rest
            .iter()
            .take_while(|&&p| {
                bytes += u64::from(index.lens[p]);
                bytes <= STREAM_PIECE
            })
            .count()
            .max(1);
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    })
}

/// A context's JSON read a chunk at a time, however it was opened.
pub enum ContextReader<'a> {
    /// Built in memory.
    Built(Box<ContextJsonReader<'a>>),
    /// Read from the file as it goes.
    Streamed(Box<StreamedReader<'a>>),
}

impl ContextReader<'_> {
    /// The whole JSON's length in bytes, read or not.
    /// A streamed context measures it by reading its lines once more (see
    /// [`PathContext::measure`]).
    pub fn total_bytes(&self) -> Result<usize> {
        match self {
            ContextReader::Built(r) => Ok(r.total_bytes()),
            ContextReader::Streamed(r) => Ok(r.pc.measure()?.0),
        }
    }

    /// How many messages the context has (a streamed context: as [`Self::total_bytes`]).
    pub fn messages(&self) -> Result<usize> {
        match self {
            ContextReader::Built(r) => Ok(r.context().messages.len()),
            ContextReader::Streamed(r) => Ok(r.pc.measure()?.1),
        }
    }

    /// Append at most `max` more bytes of the JSON to `out`; 0 at the end. A streamed
    /// context whose file changed since it was opened (a rewrite: appends change nothing
    /// it reads) fails instead of handing out other bytes.
    pub fn read_into(&mut self, out: &mut Vec<u8>, max: usize) -> Result<usize> {
        match self {
            ContextReader::Built(r) => Ok(r.read_into(out, max)),
            ContextReader::Streamed(r) => r.read_into(out, max),
        }
    }
}

impl std::io::Read for ContextReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            ContextReader::Built(r) => r.read(buf),
            ContextReader::Streamed(r) => {
                let mut out = Vec::with_capacity(buf.len());
                let n = r
                    .read_into(&mut out, buf.len())
                    .map_err(std::io::Error::other)?;
                buf[..n].copy_from_slice(&out);
                Ok(n)
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Head,
    Summary,
    Messages,
    Tail,
    Done,
}

/// The JSON of a streamed context: the head, the summary, each shown message (read a
/// piece of lines at a time), the tail.
pub struct StreamedReader<'a> {
    pc: &'a PathContext,
    st: &'a Streamed,
    tail: String,
    stage: Stage,
    /// Bytes ready to hand out, and how many of them were.
    pending: Vec<u8>,
    at: usize,
    /// The next shown position to read.
    next: usize,
    first: bool,
    failed: Option<SessionError>,
}

impl StreamedReader<'_> {
    fn read_into(&mut self, out: &mut Vec<u8>, max: usize) -> Result<usize> {
        let mut done = 0;
        while done < max {
            if self.at == self.pending.len() {
                self.pending.clear();
                self.at = 0;
                self.refill()?;
                if self.pending.is_empty() {
                    break;
                }
            }
            let take = (self.pending.len() - self.at).min(max - done);
            out.extend_from_slice(&self.pending[self.at..self.at + take]);
            self.at += take;
            done += take;
        }
        Ok(done)
    }

    fn push_message(&mut self, m: &str) {
        if !self.first {
            self.pending.push(b',');
        }
        self.first = false;
        self.pending.extend_from_slice(m.as_bytes());
    }

    /// The next bytes: the head, the summary, a piece of messages, the tail.
    fn refill(&mut self) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        loop {
            match self.stage {
                Stage::Head => {
                    self.pending.extend_from_slice(JSON_HEAD.as_bytes());
                    self.stage = Stage::Summary;
                    return Ok(());
                }
                Stage::Summary => {
                    self.stage = Stage::Messages;
                    if let Some(s) = &self.st.summary {
                        self.push_message(&s.clone());
                        return Ok(());
                    }
                }
                Stage::Messages => {
                    let Some(batch) = batches(&self.pc.index, &self.st.shown[self.next..]).next()
                    else {
                        self.stage = Stage::Tail;
                        continue;
                    };
                    self.next += batch.len();
                    let read = self.pc.lines().read(batch);
                    let Ok(Some(read)) = read else {
                        let why = match read {
                            Err(e) => SessionError::Storage(e),
                            Ok(_) => self.pc.changed(),
                        };
                        self.failed = Some(why.clone());
                        return Err(why);
                    };
                    let pc = self.pc;
                    for (_, e) in &read {
                        if let Some(m) = entry_message(e, &|e, m| pc.finish(e, m)) {
                            self.push_message(&m);
                        }
                    }
                    if !self.pending.is_empty() {
                        return Ok(());
                    }
                }
                Stage::Tail => {
                    self.pending.extend_from_slice(self.tail.as_bytes());
                    self.stage = Stage::Done;
                    return Ok(());
                }
                Stage::Done => return Ok(()),
            }
        }
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

/// A state change of this kind counts however many follow it.
fn every_one_counts(t: EntryType) -> bool {
    matches!(t, EntryType::ModelChange | EntryType::TtsrInjection)
}

/// Reads lines of one file by position, validating each against the index.
struct Lines<'a> {
    storage: &'a dyn Storage,
    path: &'a str,
    index: &'a SessionIndex,
    /// Position → entry read (and kept).
    read: HashMap<usize, Entry>,
}

impl Lines<'_> {
    /// Read the lines at `positions` (any order) and keep them. `Ok(false)`: a line is
    /// not what the index says.
    fn load(&mut self, positions: &[usize]) -> StorageResult<bool> {
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
    fn read(&self, positions: &[usize]) -> StorageResult<Option<Vec<(usize, Entry)>>> {
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
            if simdutf8::basic::from_utf8(&bytes).is_err() {
                return Ok(None);
            }
            // SAFETY: just checked.
            let text = unsafe { String::from_utf8_unchecked(bytes) };
            let buf = Arc::new(text);
            for &p in &want[k..last] {
                let s = (self.index.offsets[p] - start) as usize;
                let text = Text::Shared {
                    buf: buf.clone(),
                    start: s,
                    end: s + self.index.lens[p] as usize,
                };
                match Entry::parse_record(text) {
                    Ok(Record::Entry(e)) if self.agrees(p, &e) => out.push((p, e)),
                    _ => return Ok(None),
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
    fn find_assistant(
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

/// The context of the leaf `leaf` (`None`: the last entry) read through `index`.
/// `Ok(Err(index))` when a line read is not what the index says (or the path starts at a
/// parent the index does not know): read the file whole instead.
pub(crate) fn read_path_context(
    storage: Rc<dyn Storage>,
    file: &str,
    agent_dir: &str,
    index: SessionIndex,
    leaf: Option<&str>,
) -> StorageResult<Option<PathContext>> {
    let mut pc = PathContext {
        entries: Vec::new(),
        offsets: Vec::new(),
        streamed: None,
        unchecked: 0,
        cycle: None,
        storage,
        file: file.to_string(),
        agent_dir: agent_dir.to_string(),
        index,
    };
    let last = pc.index.len().checked_sub(1);
    let Some(leaf) = leaf
        .and_then(|id| pc.index.position(id).map(|p| p as usize))
        .or(last)
    else {
        return Ok(Some(pc));
    };
    let (chain, cycle) = pc.index.path_to(leaf);
    // Lines are checked against the index by their ids, not looked up: the table goes.
    pc.index.drop_lookup();
    let index = &pc.index;
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
        storage: &*pc.storage,
        path: file,
        index,
        read: HashMap::new(),
    };
    // The state changes the context keeps: of most kinds only the last counts (thinking
    // level, service tier, mode, active context, MCP selection, the compaction); model
    // changes (each role's first one fixes its place) and TTSR injections (a union) all.
    let mut last_of = std::collections::HashSet::new();
    let mut changes: Vec<usize> = chain
        .iter()
        .rev()
        .copied()
        .filter(|&p| {
            let t = kind(p);
            state_change(t) && (every_one_counts(t) || last_of.insert(index.kinds[p]))
        })
        .collect();
    changes.reverse();
    if !lines.load(&changes)? {
        return Ok(None);
    }
    // What the context shows: the last compaction's summary, then from its first kept
    // entry (if it keeps any) up to it, then everything after it; without one, the path.
    let cpos = chain
        .iter()
        .rposition(|&p| kind(p) == EntryType::Compaction);
    let (summary, shown): (Option<String>, Vec<usize>) = match cpos {
        None => (None, chain.clone()),
        Some(c) => {
            let (summary, first_kept) = compaction_parts(&lines.read[&chain[c]]);
            let kept = first_kept.and_then(|id| chain[..c].iter().position(|&p| index.id(p) == id));
            let before = kept.map_or(&[][..], |k| &chain[k..c]);
            (
                Some(summary),
                before.iter().chain(&chain[c + 1..]).copied().collect(),
            )
        }
    };
    // The default model is set by assistant messages: the first one fixes its place
    // among the models, the last one its value.
    let Some(found) = lines.find_assistant(chain.iter().copied())? else {
        return Ok(None);
    };
    if found && lines.find_assistant(chain.iter().rev().copied())?.is_none() {
        return Ok(None);
    }
    let shown_bytes: u64 = shown.iter().map(|&p| u64::from(index.lens[p])).sum();
    let streamed = shown_bytes > STREAM_ABOVE.with(|t| t.get());
    if !streamed && !lines.load(&shown)? {
        return Ok(None);
    }
    let mut read = std::mem::take(&mut lines.read);
    let (offsets, entries): (Vec<u64>, Vec<Entry>) = chain
        .iter()
        .filter_map(|&p| Some((index.offsets[p], read.remove(&p)?)))
        .unzip();
    let unchecked = index.len() - entries.len();
    pc.entries = entries;
    pc.offsets = offsets;
    pc.cycle = cycle;
    pc.unchecked = unchecked;
    if streamed {
        // Every shown line read and checked now, none kept: reading the JSON later meets
        // no line it cannot show.
        let mut checked = Vec::new();
        for batch in batches(&pc.index, &shown) {
            if pc.lines().read(batch)?.is_none() {
                return Ok(None);
            }
            checked.extend(batch.iter().map(|&p| pc.index.offsets[p]));
        }
        pc.offsets.extend(checked);
        crate::sort::sort_by(&mut pc.offsets, Ord::cmp);
        pc.offsets.dedup();
        pc.unchecked = pc.index.len() - pc.offsets.len();
        pc.streamed = Some(Streamed {
            compaction: cpos.map_or(0, |c| chain[c]),
            shown,
            summary,
            size: std::cell::OnceCell::new(),
        });
    }
    Ok(Some(pc))
}

/// A session file opened to build the context of one leaf: through its index when the
/// file has one (only the lines the context reads are read), else read whole.
pub enum OpenedContext {
    /// Read through the index.
    Path(Box<PathContext>),
    /// Read whole (an older version, a line the index cannot describe, a line that was
    /// not what the index said), with the leaf asked for.
    Whole(Box<crate::session::Session>, Option<String>),
}

impl OpenedContext {
    /// The context, equal whichever way the file was read (see [`PathContext::context`]).
    pub fn context(&self) -> Result<SessionContext<'_>> {
        match self {
            OpenedContext::Path(p) => p.context(),
            OpenedContext::Whole(s, leaf) => Ok(s.context_at(
                leaf.as_deref()
                    .map_or(crate::context::Leaf::Last, crate::context::Leaf::Id),
            )),
        }
    }

    /// The context's JSON a chunk at a time (streamed from the file when large).
    pub fn json_reader(&self) -> ContextReader<'_> {
        match self {
            OpenedContext::Path(p) => p.json_reader(),
            OpenedContext::Whole(s, leaf) => ContextReader::Built(Box::new(
                s.context_at(
                    leaf.as_deref()
                        .map_or(crate::context::Leaf::Last, crate::context::Leaf::Id),
                )
                .into_json_reader(),
            )),
        }
    }

    /// Was it read through the index?
    pub fn through_index(&self) -> bool {
        matches!(self, OpenedContext::Path(_))
    }
}
