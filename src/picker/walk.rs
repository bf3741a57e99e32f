//! [`SessionSearch`]: the picker's ranking over a store, one session file at a time and a
//! piece of it at a time, holding no session's text.

use super::stream::TextScore;
use super::{best_first, fuzzy_score, head_score, text_cannot_win, total};
use crate::index::{each_entry, open_index, IndexCache, SessionIndex};
use crate::listing::{
    indexed_info, listed_text, messages_of, newest_first_files, session_files, session_info_whole,
    ListText, SessionInfo,
};
use crate::storage::{Storage, StorageResult};
use std::rc::Rc;

/// What a cost of opening one file counts for against a step's budget (its header, its
/// first message, its index), so that a step over many small files still returns.
const OPEN_COST: u64 = 64 << 10;

/// The first piece of a file's text read: a token is often found early, and a piece is
/// read whole before it is scored; each next piece is twice as long, up to the budget.
const FIRST_PIECE: u64 = 16 << 10;

/// How far a [`SessionSearch`] has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchProgress {
    /// Session files searched, of `files`.
    pub files_done: usize,
    pub files: usize,
    /// Bytes of those files searched, of `bytes` (their sizes when the search began).
    pub bytes_done: u64,
    pub bytes: u64,
    /// Sessions found so far.
    pub hits: usize,
}

/// The picker's search ([`super::search`]) over the sessions of one project or of all,
/// streamed: each step reads about as many bytes as it is given, so the caller shows
/// progress between steps and stops whenever it wants (a search stopped is only
/// dropped). Files are searched newest first; a session's text is read only where the
/// score needs it (no other field scores as high for a token), a message at a time and
/// never held, and only until every token's first match in it is found. Its hits are
/// those of [`super::search`] over a listing with the text, in the same order, the text
/// left out.
pub struct SessionSearch {
    storage: Rc<dyn Storage>,
    agent_dir: String,
    tokens: Vec<String>,
    /// Every file with its size, newest first.
    files: Vec<(String, u64)>,
    bytes: u64,
    next: usize,
    current: Option<Current>,
    hits: Vec<(usize, SessionInfo, u32)>,
    /// The sizes of the files done.
    bytes_done: u64,
}

/// A file part-way: its text being read.
struct Current {
    order: usize,
    info: SessionInfo,
    index: SessionIndex,
    messages: Vec<usize>,
    next: usize,
    heads: Vec<Option<u32>>,
    /// Per token: its score in the text so far (`None`: the text cannot change it).
    texts: Vec<Option<TextScore>>,
    /// Whether a message's text was taken (the next is joined after a space).
    joined: bool,
    /// Bytes of message lines read.
    read: u64,
    /// The next piece's length.
    piece: u64,
}

impl Current {
    fn settled(&self) -> bool {
        self.texts.iter().flatten().all(TextScore::settled)
    }

    fn finished(&self) -> bool {
        self.next >= self.messages.len() || self.settled()
    }

    fn score(&self) -> Option<u32> {
        let texts: Vec<_> = self
            .texts
            .iter()
            .map(|t| t.as_ref().and_then(TextScore::score))
            .collect();
        total(&self.heads, &texts)
    }
}

impl SessionSearch {
    /// A search for `query` over the sessions of `cwd`'s project, or (`None`) of every
    /// project under `<agent_dir>/sessions`. Lists the files and stats them; reads none.
    pub fn new(
        storage: Rc<dyn Storage>,
        agent_dir: &str,
        cwd: Option<&str>,
        query: &str,
    ) -> StorageResult<SessionSearch> {
        let files = session_files(&*storage, agent_dir, cwd, None)?;
        let files: Vec<(String, u64)> = newest_first_files(&*storage, files)
            .into_iter()
            .map(|(p, s)| (p, s.size))
            .collect();
        Ok(SessionSearch {
            storage,
            agent_dir: agent_dir.to_string(),
            tokens: query.split_whitespace().map(str::to_string).collect(),
            bytes: files.iter().map(|f| f.1).sum(),
            files,
            next: 0,
            current: None,
            hits: Vec::new(),
            bytes_done: 0,
        })
    }

    pub fn progress(&self) -> SearchProgress {
        let current = self.current.as_ref().map_or(0, |c| c.read);
        SearchProgress {
            files_done: self.next - usize::from(self.current.is_some()),
            files: self.files.len(),
            bytes_done: (self.bytes_done + current).min(self.bytes),
            bytes: self.bytes,
            hits: self.hits.len(),
        }
    }

    pub fn is_done(&self) -> bool {
        self.current.is_none() && self.next >= self.files.len()
    }

    /// Search on until about `budget` bytes are read (at least one message line or one
    /// file), or to the end; `true` when the search is done.
    pub fn step(&mut self, budget: u64) -> bool {
        let mut spent = 0;
        while spent < budget.max(1) && !self.is_done() {
            match self.current.take() {
                Some(mut c) => {
                    let (read, as_indexed) = self.advance(&mut c, budget.saturating_sub(spent));
                    spent += read;
                    if !as_indexed {
                        // Not what the index says (changed meanwhile): read it whole.
                        self.bytes_done += self.files[c.order].1;
                        self.whole(c.order);
                    } else if c.finished() {
                        self.finish(c);
                    } else {
                        self.current = Some(c);
                    }
                }
                None => {
                    self.next += 1;
                    spent += self.begin(self.next - 1);
                }
            }
        }
        self.is_done()
    }

    /// Search to the end, calling `on_progress` after every piece of about `budget`
    /// bytes; `false` from it stops the search (the hits so far are kept).
    pub fn run(&mut self, budget: u64, on_progress: &mut dyn FnMut(&SearchProgress) -> bool) {
        while !self.step(budget) {
            if !on_progress(&self.progress()) {
                return;
            }
        }
        on_progress(&self.progress());
    }

    /// The sessions found so far, best first.
    pub fn hits(&self) -> Vec<(&SessionInfo, u32)> {
        let hits = self.hits.iter().map(|(i, s, sc)| (*i, s, *sc)).collect();
        best_first(hits)
    }

    pub fn into_hits(self) -> Vec<(SessionInfo, u32)> {
        best_first(self.hits)
    }

    /// Open file `order`: score it now when its text need not (or cannot) be read in
    /// pieces; else make it the current file. Returns the bytes it counts for.
    fn begin(&mut self, order: usize) -> u64 {
        let (path, size) = self.files[order].clone();
        let storage = &*self.storage;
        let index = open_index(storage, &path, &self.agent_dir, IndexCache::Use);
        let info = index
            .as_ref()
            .and_then(|index| indexed_info(storage, &path, index, ListText::Leave));
        let (Some(index), Some(info)) = (index, info) else {
            self.whole(order);
            self.bytes_done += size;
            return size.max(OPEN_COST);
        };
        let Some(info) = info else {
            self.bytes_done += size; // not a session
            return OPEN_COST;
        };
        let heads: Vec<_> = self.tokens.iter().map(|t| head_score(&info, t)).collect();
        let texts = self
            .tokens
            .iter()
            .zip(&heads)
            .map(|(t, h)| (!text_cannot_win(*h)).then(|| TextScore::new(t)))
            .collect();
        let c = Current {
            order,
            messages: messages_of(&index),
            info,
            index,
            next: 0,
            heads,
            texts,
            joined: false,
            read: 0,
            piece: FIRST_PIECE,
        };
        match c.finished() {
            true => self.finish(c),
            false => self.current = Some(c),
        }
        OPEN_COST
    }

    /// Feed the current file's next message lines, about `budget` bytes of them (one at
    /// least, and no more than its next piece), to its scores. Returns the bytes read, and `false` when a line was not
    /// what the index says.
    fn advance(&mut self, c: &mut Current, budget: u64) -> (u64, bool) {
        let budget = budget.min(c.piece);
        c.piece = c.piece.saturating_mul(2);
        let mut end = c.next;
        let mut bytes = 0u64;
        while end < c.messages.len() && (end == c.next || bytes < budget) {
            bytes += u64::from(c.index.lens[c.messages[end]]);
            end += 1;
        }
        let Current {
            index,
            messages,
            texts,
            joined,
            ..
        } = c;
        let path = &self.files[c.order].0;
        let read = each_entry(
            &*self.storage,
            path,
            index,
            &messages[c.next..end],
            &mut |e| {
                if let Some((_, t)) = listed_text(e) {
                    let piece = match *joined {
                        true => format!(" {t}").to_lowercase(),
                        false => t.to_lowercase(),
                    };
                    *joined = true;
                    texts.iter_mut().flatten().for_each(|s| s.feed(&piece));
                }
                !texts.iter().flatten().all(TextScore::settled)
            },
        );
        if !matches!(read, Ok(true)) {
            return (bytes, false);
        }
        c.next = end;
        c.read += bytes;
        (bytes, true)
    }

    /// Score file `order` read whole, as the picker scores a listing with the text.
    fn whole(&mut self, order: usize) {
        let path = &self.files[order].0;
        let Some(mut info) = session_info_whole(self.storage.clone(), path) else {
            return;
        };
        let text = info.all_messages_text.take().unwrap_or_default();
        let heads: Vec<_> = self.tokens.iter().map(|t| head_score(&info, t)).collect();
        let texts: Vec<_> = self.tokens.iter().map(|t| fuzzy_score(&text, t)).collect();
        if let Some(score) = total(&heads, &texts) {
            self.hits.push((order, info, score));
        }
    }

    fn finish(&mut self, c: Current) {
        self.bytes_done += self.files[c.order].1;
        if let Some(score) = c.score() {
            self.hits.push((c.order, c.info, score));
        }
    }
}
