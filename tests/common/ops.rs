//! Random sessions for property tests: operations of every kind the agent records,
//! applied through the manager, and the file they leave.

use super::*;
use proptest::prelude::*;
use xcsh_session::session::{CompactionInput, CreateOptions, Session};
use xcsh_session::MemoryStorage;

/// The agent directory of the sessions written here.
pub const AGENT: &str = "/agent";

#[derive(Debug, Clone)]
pub enum Op {
    User(String),
    Assistant(String, u8),
    /// An assistant message carrying OpenAI Responses replay data (stale once read back).
    Replay(String),
    Thinking(Option<&'static str>),
    Model(u8, Option<&'static str>),
    Mode(u8),
    Tier(Option<&'static str>),
    Ttsr(u8),
    Mcp(u8),
    Label(usize),
    Branch(usize),
    Compact(usize, bool),
    Custom(u8),
    CustomMessage(String),
    Summary(usize),
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => "[a-z é😀\\n\"\\\\]{0,12}".prop_map(Op::User),
        4 => ("[a-z ]{0,12}", 0u8..3).prop_map(|(t, m)| Op::Assistant(t, m)),
        1 => "[a-z ]{0,8}".prop_map(Op::Replay),
        1 => prop_oneof![Just(None), Just(Some("high")), Just(Some("low"))].prop_map(Op::Thinking),
        1 => (0u8..3, prop_oneof![Just(None), Just(Some("smol")), Just(Some("default"))]).prop_map(|(m, r)| Op::Model(m, r)),
        1 => (0u8..3).prop_map(Op::Mode),
        1 => prop_oneof![Just(None), Just(Some("flex"))].prop_map(Op::Tier),
        1 => (0u8..4).prop_map(Op::Ttsr),
        1 => (0u8..3).prop_map(Op::Mcp),
        1 => any::<usize>().prop_map(Op::Label),
        2 => any::<usize>().prop_map(Op::Branch),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, r)| Op::Compact(i, r)),
        1 => any::<u8>().prop_map(Op::Custom),
        1 => "[a-z]{0,8}".prop_map(Op::CustomMessage),
        1 => any::<usize>().prop_map(Op::Summary),
    ]
}

pub fn assistant_of(text: &str, model: u8) -> String {
    format!(
        r#"{{"role":"assistant","provider":"p{model}","model":"m{model}","content":[{{"type":"text","text":{}}}],"timestamp":1760000000001}}"#,
        serde_json::to_string(text).unwrap()
    )
}

/// An assistant message with OpenAI Responses replay data and a signed thinking block.
pub fn replayed(text: &str) -> String {
    format!(
        r#"{{"role":"assistant","provider":"openai","model":"gpt","content":[{{"type":"thinking","thinking":"hm","thinkingSignature":"sig"}},{{"type":"text","text":{}}}],"providerPayload":{{"type":"openaiResponsesHistory","items":[1]}},"timestamp":1760000000002}}"#,
        serde_json::to_string(text).unwrap()
    )
}

pub fn apply(s: &mut Session, op: &Op) {
    match op {
        Op::User(t) => drop(s.append_message(&user(t)).unwrap()),
        Op::Assistant(t, m) => drop(s.append_message(&assistant_of(t, *m)).unwrap()),
        Op::Replay(t) => drop(s.append_message(&replayed(t)).unwrap()),
        Op::Thinking(l) => drop(s.append_thinking_level_change(*l).unwrap()),
        Op::Model(m, role) => drop(s.append_model_change(&format!("p{m}/m{m}"), *role).unwrap()),
        Op::Mode(m) => drop(
            s.append_mode_change(["plan", "code", "ask"][*m as usize], None)
                .unwrap(),
        ),
        Op::Tier(t) => drop(s.append_service_tier_change(*t).unwrap()),
        Op::Ttsr(n) => drop(s.append_ttsr_injection(&[format!("rule{n}")]).unwrap()),
        Op::Mcp(n) => drop(s.append_mcp_tool_selection(&[format!("tool{n}")]).unwrap()),
        Op::Label(i) => {
            if let Some(id) = pick_id(s, *i) {
                s.append_label_change(&id, Some("l")).unwrap();
            }
        }
        Op::Branch(i) => {
            if let Some(id) = pick_id(s, *i) {
                s.branch(&id).unwrap();
            }
        }
        Op::Compact(i, remote) => {
            if let Some(id) = pick_id(s, *i) {
                let c = CompactionInput {
                    summary: "sum".into(),
                    first_kept_entry_id: id,
                    tokens_before: 10,
                    preserve_data: remote.then(|| r#"{"remote":true}"#.to_string()),
                    ..Default::default()
                };
                s.append_compaction(&c).unwrap();
            }
        }
        Op::Custom(n) => drop(
            s.append_custom_entry("ext", Some(&format!("{{\"n\":{n}}}")))
                .unwrap(),
        ),
        Op::CustomMessage(t) => drop(
            s.append_custom_message_entry(
                "note",
                &serde_json::to_string(t).unwrap(),
                true,
                None,
                None,
            )
            .unwrap(),
        ),
        Op::Summary(i) => {
            let from = pick_id(s, *i);
            s.branch_with_summary(from.as_deref(), "went elsewhere", None, None)
                .unwrap();
        }
    }
}

/// A session file written by the manager from `ops` (always with an assistant message,
/// so it is on disk), and its entries' ids.
pub fn written(storage: &Rc<MemoryStorage>, ops: &[Op]) -> (String, Vec<String>) {
    let options = CreateOptions {
        agent_dir: AGENT.into(),
        cwd: "/w".into(),
        ..Default::default()
    };
    let mut s = Session::create(storage.clone(), &options);
    s.append_message(&assistant_of("hello", 0)).unwrap();
    for op in ops {
        apply(&mut s, op);
    }
    let ids = s.entries().iter().map(|e| e.id.clone()).collect();
    (s.file().unwrap().to_string(), ids)
}
