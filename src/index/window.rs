//! A window of a context's messages: what a viewer shows of a long conversation, built
//! from the lines of those messages only. A streamed context reads the window's lines
//! from the file; one built in memory makes only the window's messages.

use super::path::{whole_leaf, OpenedContext, PathContext};
use crate::context::{compaction_parts, entry_message, SessionContext};
use crate::entry::{Entry, Payload};
use crate::error::Result;
use crate::json::push_quoted;
use std::borrow::Cow;

/// Messages `start..` of a context, each with the id of the entry it comes from (a
/// compaction's summary: the compaction's id), as the context's `messages` and
/// `entry_ids` hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextWindow {
    pub start: usize,
    /// Each message's JSON, as in the context's JSON.
    pub messages: Vec<String>,
    pub ids: Vec<String>,
}

impl ContextWindow {
    /// `{"start":N,"messages":[...],"ids":[...]}`: the messages as they are in the
    /// context's JSON.
    pub fn to_json(&self) -> String {
        let bytes: usize = self.messages.iter().map(String::len).sum();
        let mut out = String::with_capacity(bytes + 64 + self.ids.len() * 40);
        out.push_str("{\"start\":");
        out.push_str(&self.start.to_string());
        out.push_str(",\"messages\":[");
        out.push_str(&self.messages.join(","));
        out.push_str("],\"ids\":[");
        for (i, id) in self.ids.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_quoted(&mut out, id);
        }
        out.push_str("]}");
        out
    }
}

/// `start..end` within `0..len`.
pub(crate) fn clamp(start: usize, end: usize, len: usize) -> (usize, usize) {
    let end = end.min(len);
    (start.min(end), end)
}

/// Does this entry put a message in the context (when the context shows it)? The rule of
/// [`entry_message`], without making the message.
pub(crate) fn makes_message(e: &Entry) -> bool {
    match &e.payload {
        Payload::Message { .. } => e.message_json().is_some(),
        Payload::CustomMessage { .. } => true,
        Payload::BranchSummary { has_summary } => *has_summary,
        _ => false,
    }
}

/// The message an entry of a context puts there: a compaction's is its summary (a
/// compaction is only ever the context's first message), any other's as
/// [`entry_message`] makes it with `finish`.
pub(crate) fn message_of<'e>(
    e: &'e Entry,
    finish: &dyn Fn(&'e Entry, Cow<'e, str>) -> Cow<'e, str>,
) -> Option<String> {
    match &e.payload {
        Payload::Compaction { .. } => Some(compaction_parts(e).0),
        _ => entry_message(e, finish).map(Cow::into_owned),
    }
}

impl PathContext {
    /// How many messages the context has, known since the open.
    pub fn message_count(&self) -> usize {
        self.message_sources().len()
    }

    /// Messages `start..end` of the context (cut to its length), equal to those of
    /// [`PathContext::context`]: only the window's lines are read (streamed) or its
    /// messages made (built in memory). A file rewritten since the open is
    /// [`crate::SessionError::ChangedWhileRead`].
    pub fn window(&self, start: usize, end: usize) -> Result<ContextWindow> {
        let sources = self.message_sources();
        let (start, end) = clamp(start, end, sources.len());
        let mut out = ContextWindow {
            start,
            messages: Vec::with_capacity(end - start),
            ids: Vec::with_capacity(end - start),
        };
        let wanted = &sources[start..end];
        match self.streamed_parts() {
            None => {
                for &k in wanted {
                    let e = &self.kept_entries()[k as usize];
                    out.messages.push(
                        message_of(e, &|e, m| self.finish(e, m)).ok_or_else(|| self.changed())?,
                    );
                    out.ids.push(e.id.clone());
                }
            }
            Some((summary, compaction, shown)) => {
                let positions: Vec<usize> = wanted
                    .iter()
                    .filter(|&&k| k != SUMMARY)
                    .map(|&k| shown[k as usize])
                    .collect();
                let read = self
                    .lines()
                    .read(&positions)?
                    .ok_or_else(|| self.changed())?;
                let by_position: std::collections::HashMap<usize, &Entry> =
                    read.iter().map(|(p, e)| (*p, e)).collect();
                for &k in wanted {
                    if k == SUMMARY {
                        out.messages.push(summary.unwrap_or_default().to_string());
                        out.ids.push(self.index.id(compaction).to_string());
                        continue;
                    }
                    let p = shown[k as usize];
                    let e = by_position.get(&p).ok_or_else(|| self.changed())?;
                    out.messages.push(
                        message_of(e, &|e, m| self.finish(e, m)).ok_or_else(|| self.changed())?,
                    );
                    out.ids.push(e.id.clone());
                }
            }
        }
        Ok(out)
    }
}

/// In a streamed context's message sources: its summary (the first message).
pub(super) const SUMMARY: u32 = u32::MAX;

impl OpenedContext {
    /// How many messages the context has.
    pub fn message_count(&self) -> usize {
        match self {
            OpenedContext::Path(p) => p.message_count(),
            OpenedContext::Whole(s, leaf) => s.context_message_count(whole_leaf(leaf)),
        }
    }

    /// The context without its messages (see [`crate::Session::context_state`]).
    pub fn state(&self) -> Result<SessionContext<'_>> {
        match self {
            OpenedContext::Path(p) => Ok(p.state()),
            OpenedContext::Whole(s, leaf) => Ok(s.context_state(whole_leaf(leaf))),
        }
    }

    /// Messages `start..end` of the context (see [`PathContext::window`]).
    pub fn window(&self, start: usize, end: usize) -> Result<ContextWindow> {
        match self {
            OpenedContext::Path(p) => p.window(start, end),
            OpenedContext::Whole(s, leaf) => Ok(s.context_window(whole_leaf(leaf), start, end)),
        }
    }
}
