//! The whole history of a branch (what a reader scrolls through, the agent's export):
//! every message of the branch from its root, each compaction as its summary where it
//! happened. Without a compaction it is the context; with one, it holds the messages the
//! compaction replaced, and its summary where the context starts with it.

mod common;
use common::ops::*;
use common::*;
use proptest::prelude::*;
use xcsh_session::session::{Persistence, Session};
use xcsh_session::{ContextWindow, Leaf};

fn whole_history(s: &Session, leaf: Leaf) -> ContextWindow {
    s.history_window(leaf, 0, usize::MAX)
}

/// The entries of the branch ending at `leaf`, root first.
fn branch(s: &Session, leaf: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = Some(leaf.to_string());
    while let Some(id) = at {
        if out.contains(&id) {
            break; // a parent cycle
        }
        at = s.entry(&id).unwrap().parent_id.clone();
        out.push(id);
    }
    out.reverse();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn the_history_is_every_message_of_the_branch_with_compactions_where_they_happened(
        ops in proptest::collection::vec(op(), 0..40),
        pick in any::<usize>(),
    ) {
        let storage = mem();
        let (file, ids) = written(&storage, &ops);
        let s = open(&storage, &file, Persistence::ReadOnly);
        let leaf = ids[pick % ids.len()].clone();
        let history = whole_history(&s, Leaf::Id(&leaf));
        prop_assert_eq!(s.history_message_count(Leaf::Id(&leaf)), history.messages.len());
        prop_assert_eq!(history.start, 0);

        // Each entry of the branch adds what it adds to its own context: a compaction its
        // summary, any other entry the message its context ends with (if any).
        let path = branch(&s, &leaf);
        let mut want_ids = Vec::new();
        let mut want = Vec::new();
        for id in &path {
            let here = s.context_at(Leaf::Id(id));
            let compaction = s.entry(id).unwrap().entry_type == xcsh_session::EntryType::Compaction;
            if compaction {
                prop_assert_eq!(here.entry_ids[0], id.as_str(), "a compaction's context starts with its summary");
                want.push(here.messages[0].to_string());
                want_ids.push(id.clone());
            } else if here.entry_ids.last() == Some(&id.as_str()) {
                want.push(here.messages.last().unwrap().to_string());
                want_ids.push(id.clone());
            }
        }
        prop_assert_eq!(&history.ids, &want_ids);
        prop_assert_eq!(&history.messages, &want);

        // Without a compaction on the branch, the history is the context.
        let ctx = s.context_at(Leaf::Id(&leaf));
        let compacted = path.iter().any(|id| s.entry(id).unwrap().entry_type == xcsh_session::EntryType::Compaction);
        if !compacted {
            prop_assert_eq!(&history.messages, &ctx.messages.iter().map(|m| m.to_string()).collect::<Vec<_>>());
        }
        // Windows are slices of it.
        let n = history.messages.len();
        for (a, b) in [(1, 3), (n / 2, n + 2), (n + 1, n + 4)] {
            let w = s.history_window(Leaf::Id(&leaf), a, b);
            let (a, b) = (a.min(b.min(n)), b.min(n));
            prop_assert_eq!(w.start, a);
            prop_assert_eq!(&w.messages[..], &history.messages[a..b]);
            prop_assert_eq!(&w.ids[..], &history.ids[a..b]);
        }
    }
}

#[test]
fn a_compacted_session_keeps_the_replaced_messages_in_its_history() {
    let storage = mem();
    put(
        &storage,
        "/f.jsonl",
        &fixture_text("historical-compact.jsonl"),
    );
    let s = open(&storage, "/f.jsonl", Persistence::ReadOnly);
    let context = s.context();
    let history = whole_history(&s, s.current_leaf());
    assert!(
        history.messages.len() > context.messages.len() * 3,
        "{} messages in the history, {} in the context",
        history.messages.len(),
        context.messages.len()
    );
    // Every message of the context is in the history, in the same order.
    let mut rest = history.ids.iter();
    for id in &context.entry_ids {
        assert!(
            rest.any(|h| h == id),
            "{id} of the context is not in the history (in order)"
        );
    }
}
