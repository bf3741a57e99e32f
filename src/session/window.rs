//! A window of a context's messages from a session read whole: the path is walked (cheap),
//! and only the window's messages are made as the model sees them (blob references
//! resolved, stale replay data dropped), not every message of the path.

use super::Session;
use crate::context::{branch_of, build_session_context, build_session_state, Leaf, SessionContext};
use crate::entry::{Entry, Payload};
use crate::index::window::{clamp, makes_message, message_of, ContextWindow};

impl Session {
    /// How many messages the context of `leaf` has (as [`Session::context_at`]'s).
    pub fn context_message_count(&self, leaf: Leaf) -> usize {
        self.assert_read();
        build_session_context(&self.entries, &self.by_id, leaf, &|_, m| m)
            .messages
            .len()
    }

    /// The context of `leaf` without its messages (its thinking level, models, mode and
    /// the rest): what a viewer's header shows, with no message made.
    pub fn context_state(&self, leaf: Leaf) -> SessionContext<'_> {
        self.assert_read();
        build_session_state(&self.entries, &self.by_id, leaf)
    }

    /// Messages `start..end` (cut to its length) of the context of `leaf`, each with its
    /// entry's id: equal to that slice of [`Session::context_at`]'s.
    pub fn context_window(&self, leaf: Leaf, start: usize, end: usize) -> ContextWindow {
        self.assert_read();
        // The path's messages as they are in the entries (nothing resolved yet): each
        // message's entry is the one its id names (the path was walked by id).
        let raw = build_session_context(&self.entries, &self.by_id, leaf, &|_, m| m);
        let (start, end) = clamp(start, end, raw.messages.len());
        let store = self.blob_store();
        let mut out = ContextWindow {
            start,
            messages: Vec::with_capacity(end - start),
            ids: Vec::with_capacity(end - start),
        };
        for &id in &raw.entry_ids[start..end] {
            let e = self
                .by_id
                .get(&self.entries, id)
                .map(|i| &self.entries[i])
                .expect("a context's entry is in the session");
            let finish = |e, m| self.message_text(e, m, &store);
            out.messages
                .push(message_of(e, &finish).expect("a context's entry makes its message"));
            out.ids.push(id.to_string());
        }
        out
    }

    /// How many messages the whole history of `leaf`'s branch has (see
    /// [`Session::history_window`]).
    pub fn history_message_count(&self, leaf: Leaf) -> usize {
        self.assert_read();
        self.history_of(leaf).len()
    }

    /// Messages `start..end` (cut to its length) of the whole history of `leaf`'s branch,
    /// each with its entry's id: every entry of the branch, root first, that makes a
    /// message, and each compaction as its summary where it happened. The context is what
    /// the model sees (the last compaction's summary, then what it kept and what came
    /// after); the history is what a reader scrolls through, the messages every compaction
    /// replaced included, as the agent's own export shows them.
    pub fn history_window(&self, leaf: Leaf, start: usize, end: usize) -> ContextWindow {
        self.assert_read();
        let history = self.history_of(leaf);
        let (start, end) = clamp(start, end, history.len());
        let store = self.blob_store();
        let finish = |e, m| self.message_text(e, m, &store);
        let history = &history[start..end];
        ContextWindow {
            start,
            messages: history
                .iter()
                .map(|e| message_of(e, &finish).expect("a history entry makes a message"))
                .collect(),
            ids: history.iter().map(|e| e.id.clone()).collect(),
        }
    }

    /// The entries of `leaf`'s branch that put a message in its history.
    fn history_of(&self, leaf: Leaf) -> Vec<&Entry> {
        let (mut branch, _) = branch_of(&self.entries, &self.by_id, leaf);
        branch.retain(|e| makes_message(e) || matches!(e.payload, Payload::Compaction { .. }));
        branch
    }
}
