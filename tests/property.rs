//! Random sequences of appends, branches, labels and resets, persisted then reloaded,
//! give the same entries and context as the in-memory manager.

mod common;
use common::*;
use proptest::prelude::*;
use std::rc::Rc;
use xcsh_session::session::{CreateOptions, Persistence, Session};
use xcsh_session::{Leaf, MemoryStorage};

#[derive(Debug, Clone)]
enum Op {
    User(String),
    Assistant(String),
    Thinking(Option<&'static str>),
    Label(usize, Option<String>),
    Branch(usize),
    Reset,
    BranchSummary(Option<usize>, String),
    Custom(u8),
    Image(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => "[a-z é😀\\n\"]{0,12}".prop_map(Op::User),
        3 => "[a-z ]{0,12}".prop_map(Op::Assistant),
        1 => prop_oneof![Just(None), Just(Some("high")), Just(Some("low"))].prop_map(Op::Thinking),
        1 => (any::<usize>(), proptest::option::of("[a-z]{1,6}")).prop_map(|(i, l)| Op::Label(i, l)),
        2 => any::<usize>().prop_map(Op::Branch),
        1 => Just(Op::Reset),
        1 => (proptest::option::of(any::<usize>()), "[a-z]{0,5}").prop_map(|(i, s)| Op::BranchSummary(i, s)),
        1 => any::<u8>().prop_map(Op::Custom),
        1 => (1000usize..1100).prop_map(Op::Image),
    ]
}

fn apply(s: &mut Session, op: &Op) {
    match op {
        Op::User(t) => drop(s.append_message(&user(t)).unwrap()),
        Op::Assistant(t) => drop(s.append_message(&assistant(t)).unwrap()),
        Op::Thinking(l) => drop(s.append_thinking_level_change(*l).unwrap()),
        Op::Label(i, l) => {
            if let Some(id) = pick_id(s, *i) {
                s.append_label_change(&id, l.as_deref()).unwrap();
            }
        }
        Op::Branch(i) => {
            if let Some(id) = pick_id(s, *i) {
                s.branch(&id).unwrap();
            }
        }
        Op::Reset => s.reset_leaf(),
        Op::BranchSummary(i, summary) => {
            let from = i.and_then(|i| pick_id(s, i));
            s.branch_with_summary(from.as_deref(), summary, None, None)
                .unwrap();
        }
        Op::Custom(n) => drop(
            s.append_custom_entry("ext", Some(&format!("{{\"n\":{n}}}")))
                .unwrap(),
        ),
        Op::Image(len) => {
            let m = format!(
                r#"{{"role":"user","content":[{{"type":"image","data":"{}","mimeType":"image/png"}}]}}"#,
                "QUJD".repeat(len / 4 + 1)
            );
            s.append_message(&m).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn persisted_then_reloaded_equals_in_memory(ops in proptest::collection::vec(op(), 1..40)) {
        let disk = Rc::new(MemoryStorage::with_seed(7, 1_771_237_230_123));
        let options = CreateOptions { agent_dir: "/agent".into(), cwd: "/w".into(), ..Default::default() };
        // The manager's in-memory state is the reference; the file must reproduce it.
        let mut in_memory = Session::create(disk.clone(), &options);
        for op in &ops {
            apply(&mut in_memory, op);
        }
        let file = in_memory.file().unwrap().to_string();
        let has_assistant = ops.iter().any(|o| matches!(o, Op::Assistant(_)));
        let reloaded = open(&disk, &file, Persistence::ReadOnly);
        if !has_assistant {
            prop_assert!(reloaded.entries().is_empty(), "nothing written before an assistant message");
            return Ok(());
        }
        // Same entries (ids, parents, types, payloads with images rehydrated).
        let mine: Vec<(String, Option<String>, String)> = in_memory.entries().iter().map(|e| (e.id.clone(), e.parent_id.clone(), in_memory.entry_json(e).into_owned())).collect();
        let theirs: Vec<(String, Option<String>, String)> = reloaded.entries().iter().map(|e| (e.id.clone(), e.parent_id.clone(), reloaded.entry_json(e).into_owned())).collect();
        prop_assert_eq!(mine.len(), theirs.len());
        for (a, b) in mine.iter().zip(&theirs) {
            prop_assert_eq!(&a.0, &b.0);
            prop_assert_eq!(&a.1, &b.1);
            prop_assert_eq!(&a.2, &b.2);
        }
        // The reloaded leaf is the last entry; the context there matches the in-memory one.
        let last = in_memory.entries().last().unwrap().id.clone();
        prop_assert_eq!(reloaded.leaf_id(), Some(last.as_str()));
        prop_assert_eq!(in_memory.context_at(Leaf::Id(&last)).to_json(), reloaded.context().to_json());
        if in_memory.leaf_id() == Some(last.as_str()) {
            prop_assert_eq!(in_memory.context().to_json(), reloaded.context().to_json());
        }
        for e in in_memory.entries() {
            prop_assert_eq!(in_memory.label(&e.id), reloaded.label(&e.id));
        }
        prop_assert_eq!(in_memory.tree().roots.len(), reloaded.tree().roots.len());
    }
}
