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

use super::lines::{Line, Lines, Notes};
use super::stream::{batches, ContextReader, StreamedReader};
use super::verbatim::verbatim_of;
use super::window::{makes_message, SUMMARY};
use super::IndexCache;
use super::SessionIndex;
use crate::blob::BlobStore;
use crate::context::{
    compaction_parts, context_along, entry_message, state_along, SessionContext, JSON_HEAD,
};
use crate::entry::{Entry, EntryType};
use crate::error::{Result, SessionError};
use crate::paths;
use crate::session::model_message;
use crate::storage::{Storage, StorageResult};
use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

thread_local! {
    /// A context whose shown lines hold more bytes than this (64 MiB) is streamed.
    static STREAM_ABOVE: std::cell::Cell<u64> = const { std::cell::Cell::new(64 << 20) };
}

/// Tests stream small contexts: set the threshold (bytes of shown lines) for opens on
/// this thread.
pub fn set_stream_above(bytes: u64) {
    STREAM_ABOVE.with(|t| t.set(bytes));
}

/// How many lines opens through an index parsed on this thread, rather than copied
/// their messages from (see `index::verbatim`): for tests.
pub fn lines_parsed() -> u64 {
    super::lines::parsed()
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
    /// Built in memory: the place in `entries` each message comes from, when first asked.
    sources: std::cell::OnceCell<Vec<u32>>,
    cycle: Option<String>,
    storage: Rc<dyn Storage>,
    file: String,
    agent_dir: String,
    pub(super) index: SessionIndex,
}

/// What a streamed context reads again.
pub(super) struct Streamed {
    /// Positions (in the index) of the entries after the summary, in order.
    pub(super) shown: Vec<usize>,
    /// The position of the compaction whose summary comes first.
    compaction: usize,
    /// The compaction's summary message, first.
    pub(super) summary: Option<String>,
    /// The JSON's length and its number of messages, measured when first asked (one more
    /// pass over the shown lines).
    size: std::cell::OnceCell<(usize, usize)>,
    /// Where each message comes from: [`SUMMARY`], or a place in `shown` (found as the
    /// shown lines were checked at open).
    sources: Vec<u32>,
}

impl PathContext {
    /// `buildSessionContext` for the leaf it was read for: equal to the full reader's.
    /// A streamed context is read whole into it (its lines read again; a file rewritten
    /// since the open is [`SessionError::ChangedWhileRead`]); [`PathContext::json_reader`]
    /// streams it instead.
    pub fn context(&self) -> Result<SessionContext<'_>> {
        let Some(st) = &self.streamed else {
            return Ok(self.built());
        };
        let mut ctx = self.state();
        if let Some(s) = &st.summary {
            ctx.messages.push(Cow::Owned(s.clone()));
            ctx.entry_ids.push(self.index.id(st.compaction));
        }
        let lines = self.lines();
        for batch in batches(&self.index, &st.shown) {
            let read = lines
                .read_lines(batch, Notes::Copy)?
                .ok_or_else(|| self.changed())?;
            for (p, line) in &read {
                if let Some(m) = self.line_message(line) {
                    ctx.messages.push(Cow::Owned(m.into_owned()));
                    ctx.entry_ids.push(self.index.id(*p));
                }
            }
        }
        Ok(ctx)
    }

    /// A streamed context's JSON length and message count: its shown lines read once
    /// more (not kept), the first time it is asked.
    pub(super) fn measure(&self) -> Result<(usize, usize)> {
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
            let read = lines
                .read_lines(batch, Notes::Confirm)?
                .ok_or_else(|| self.changed())?;
            for (p, line) in &read {
                let len = match line {
                    Line::Confirmed => self.index.verbatim(*p).map(|v| v.len as usize),
                    line => self.line_message(line).map(|m| m.len()),
                };
                if let Some(len) = len {
                    total += len;
                    messages += 1;
                }
            }
        }
        total += messages.saturating_sub(1);
        Ok(*st.size.get_or_init(|| (total, messages)))
    }

    pub(super) fn changed(&self) -> SessionError {
        SessionError::ChangedWhileRead {
            file: self.file.clone(),
        }
    }

    /// The context's JSON, a chunk at a time; a streamed context reads its lines as it
    /// goes, so nothing holds the whole text.
    pub fn json_reader(&self) -> ContextReader<'_> {
        match &self.streamed {
            None => ContextReader::Built(Box::new(self.built().into_json_reader())),
            Some(st) => ContextReader::Streamed(Box::new(StreamedReader::new(self, st))),
        }
    }

    /// The context of entries all read and kept (not streamed).
    fn built(&self) -> SessionContext<'_> {
        let path: Vec<&Entry> = self.entries.iter().collect();
        context_along(&path, self.cycle.clone(), &|e, m| self.finish(e, m))
    }

    /// The state along the path, without messages (a streamed context's).
    pub(super) fn state(&self) -> SessionContext<'_> {
        let path: Vec<&Entry> = self.entries.iter().collect();
        state_along(&path, self.cycle.clone()).0
    }

    pub(super) fn finish<'e>(&self, e: &'e Entry, m: Cow<'e, str>) -> Cow<'e, str> {
        let store = BlobStore::new(&*self.storage, paths::blobs_dir(&self.agent_dir));
        // Every entry here was read from the file, under an id no other entry has.
        model_message(e, m, true, &store)
    }

    /// The message a line read puts in the context, if any: a line read for its message
    /// only (see [`super::verbatim`]) hands it as it is in the file.
    pub(super) fn line_message<'l>(&'l self, line: &'l Line) -> Option<Cow<'l, str>> {
        match line {
            Line::Message(text) => Some(Cow::Borrowed(text.as_str())),
            Line::Entry(e) => entry_message(e, &|e, m| self.finish(e, m)),
            Line::Confirmed => None, // never read for its message
        }
    }

    pub(super) fn lines(&self) -> Lines<'_> {
        Lines {
            storage: &*self.storage,
            path: &self.file,
            index: &self.index,
            read: HashMap::new(),
        }
    }

    /// Where the lines read (and checked whole) start in the file, in file order: the
    /// entries kept and, streamed, every shown line (made when asked: a 10 GB session's
    /// would be 48 MB).
    pub fn checked_lines(&self) -> Vec<u64> {
        let shown = self.streamed.iter().flat_map(|st| &st.shown);
        let mut all: Vec<u64> = self
            .offsets
            .iter()
            .copied()
            .chain(shown.map(|&p| self.index.offsets[p]))
            .collect();
        crate::sort::sort_by(&mut all, Ord::cmp);
        all.dedup();
        all
    }

    /// How many entry lines were not checked beyond their leading keys (a line the
    /// context does not need is only checked when something reads it; `show` checks
    /// every line).
    pub fn unchecked_lines(&self) -> usize {
        self.unchecked
    }

    /// Where each message comes from: streamed, [`SUMMARY`] or a place in the shown
    /// lines; built, a place in the entries kept.
    pub(super) fn message_sources(&self) -> &[u32] {
        if let Some(st) = &self.streamed {
            return &st.sources;
        }
        self.sources.get_or_init(|| {
            let ctx = self.built();
            let place: HashMap<&str, u32> = (0..self.entries.len())
                .map(|k| (self.entries[k].id.as_str(), k as u32))
                .collect();
            ctx.entry_ids.iter().map(|id| place[*id]).collect()
        })
    }

    /// The entries read and kept, root first.
    pub(super) fn kept_entries(&self) -> &[Entry] {
        &self.entries
    }

    /// A streamed context's summary, its compaction's place and the shown lines' places.
    pub(super) fn streamed_parts(&self) -> Option<(Option<&str>, usize, &[usize])> {
        let st = self.streamed.as_ref()?;
        Some((st.summary.as_deref(), st.compaction, &st.shown))
    }

    /// Keep the index, with what this open noted in it, as the file's cache (a failure,
    /// or a file shorter than the index now, leaves the cache as it was).
    fn keep_index(&self, cache: IndexCache) {
        if cache != IndexCache::Use || self.agent_dir.is_empty() {
            return;
        }
        let storage = &*self.storage;
        if let Ok(stat) = storage.stat(&self.file) {
            if stat.size >= self.index.covered {
                super::cache::save(storage, &self.agent_dir, &self.file, &self.index, stat);
            }
        }
    }

    /// Is the context streamed (read from the file again as its JSON is read)?
    pub fn streamed(&self) -> bool {
        self.streamed.is_some()
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

/// The context of the leaf `leaf` (`None`: the last entry) read through `index`.
/// `Ok(None)` when a line read is not what the index says (or the path starts at a
/// parent the index does not know): read the file whole instead.
pub(crate) fn read_path_context(
    storage: Rc<dyn Storage>,
    file: &str,
    agent_dir: &str,
    index: SessionIndex,
    leaf: Option<&str>,
    cache: IndexCache,
) -> StorageResult<Option<PathContext>> {
    let mut pc = PathContext {
        entries: Vec::new(),
        offsets: Vec::new(),
        streamed: None,
        unchecked: 0,
        sources: std::cell::OnceCell::new(),
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
    // The lines read, in the path's order: marked first, so that the walk along a long
    // path looks each position up in an array, not in the map (hashing every position
    // cost a reopen more than all else in wasm).
    let mut was_read = vec![false; index.len()];
    for &p in read.keys() {
        was_read[p] = true;
    }
    let (offsets, entries): (Vec<u64>, Vec<Entry>) = chain
        .iter()
        .filter(|&&p| was_read[p])
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
        // Where each message comes from is noted as they are checked (a window then
        // reads only its own lines).
        // A line parsed here whose message is its `message` value as written is noted in
        // the index, so that the next open copies it without parsing the line.
        let mut sources: Vec<u32> = summary.iter().map(|_| SUMMARY).collect();
        let mut first = 0;
        let mut learned = false;
        let cuts: Vec<usize> = batches(&pc.index, &shown).map(<[usize]>::len).collect();
        for n in cuts {
            let batch = &shown[first..first + n];
            let Some(read) = pc.lines().read_lines(batch, Notes::Confirm)? else {
                return Ok(None);
            };
            // Each line's place in `shown`, for this batch only (a map of the whole path
            // would cost a 1 GB session tens of megabytes).
            let place: HashMap<usize, u32> = (0..batch.len())
                .map(|i| (batch[i], (first + i) as u32))
                .collect();
            let mut made: Vec<u32> = read
                .iter()
                .filter(|(_, line)| match line {
                    Line::Message(_) | Line::Confirmed => true,
                    Line::Entry(e) => makes_message(e),
                })
                .map(|(p, _)| place[p])
                .collect();
            made.sort_unstable();
            sources.extend(made);
            first += batch.len();
            let noted: Vec<_> = read
                .iter()
                .filter_map(|(p, line)| match line {
                    Line::Entry(e) => Some((*p, verbatim_of(e, &|e, m| pc.finish(e, m))?)),
                    Line::Message(_) | Line::Confirmed => None,
                })
                .collect();
            drop(read);
            for (p, v) in noted {
                learned |= pc.index.learn(p, v);
            }
        }
        if learned {
            pc.keep_index(cache);
        }
        // The lines checked: those kept (marked read) and the shown ones, counted once.
        let kept_not_shown = was_read.iter().filter(|&&r| r).count()
            - shown.iter().filter(|&&p| was_read[p]).count();
        pc.unchecked = pc.index.len() - shown.len() - kept_not_shown;
        pc.streamed = Some(Streamed {
            compaction: cpos.map_or(0, |c| chain[c]),
            shown,
            summary,
            size: std::cell::OnceCell::new(),
            sources,
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
            OpenedContext::Whole(s, leaf) => Ok(whole_context(s, leaf)),
        }
    }

    /// The context's JSON a chunk at a time (streamed from the file when large).
    pub fn json_reader(&self) -> ContextReader<'_> {
        match self {
            OpenedContext::Path(p) => p.json_reader(),
            OpenedContext::Whole(s, leaf) => {
                ContextReader::Built(Box::new(whole_context(s, leaf).into_json_reader()))
            }
        }
    }

    /// Was it read through the index?
    pub fn through_index(&self) -> bool {
        matches!(self, OpenedContext::Path(_))
    }
}

/// The context of a file read whole, at `leaf` (default: its last entry).
fn whole_context<'s>(s: &'s crate::session::Session, leaf: &Option<String>) -> SessionContext<'s> {
    s.context_at(whole_leaf(leaf))
}

/// The leaf a file read whole was opened for (default: its last entry).
pub(super) fn whole_leaf(leaf: &Option<String>) -> crate::context::Leaf<'_> {
    leaf.as_deref()
        .map_or(crate::context::Leaf::Last, crate::context::Leaf::Id)
}
