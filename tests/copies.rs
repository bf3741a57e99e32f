//! The sessions `fork` and `createBranchedSession` make of a loaded session, as the
//! agent's: stale OpenAI Responses replay data read from the file reaches neither the
//! model nor the new file (the agent cleans its in-memory entries at load and writes
//! those), while the file it was read from keeps it.

mod common;
use common::*;
use xcsh_session::session::{Persistence, Session};

const FILE: &str = "/agent/sessions/--work-pi--/2026-01-01T00-00-00-000Z_s.jsonl";
const STALE_REPLY: &str = r#"{"role":"assistant","provider":"openai","model":"gpt-5","content":[{"type":"thinking","thinking":"r","thinkingSignature":"sig"},{"type":"text","text":"done"}],"providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[{"id":"rs_1"}]},"timestamp":2}"#;

fn loaded_with_stale_replay(
    storage: &std::rc::Rc<xcsh_session::storage::MemoryStorage>,
) -> Session {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/pi"}"#;
    let user_line = format!(
        r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{}}}"#,
        user("hi")
    );
    let reply_line = format!(
        r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{STALE_REPLY}}}"#
    );
    put(
        storage,
        FILE,
        &format!("{header}\n{user_line}\n{reply_line}\n"),
    );
    open(storage, FILE, Persistence::Persistent)
}

fn stale(text: &str) -> bool {
    text.contains("openaiResponsesHistory") || text.contains("thinkingSignature")
}

#[test]
fn a_fork_of_a_loaded_session_holds_no_stale_replay_data() {
    let storage = mem();
    let mut s = loaded_with_stale_replay(&storage);
    let new = s.fork().unwrap().new_file.unwrap();
    assert!(
        !stale(&context_value(&s).to_string()),
        "context after the fork"
    );
    assert!(!stale(&read(&storage, &new)), "the forked file");
    assert!(
        stale(&read(&storage, FILE)),
        "the old file is left as it is"
    );
    // What is appended to the fork now is written as given.
    s.append_message(STALE_REPLY).unwrap();
    assert!(stale(&read(&storage, &new)));
}

#[test]
fn a_branched_session_of_a_loaded_session_holds_no_stale_replay_data() {
    let storage = mem();
    let mut s = loaded_with_stale_replay(&storage);
    let new = s.create_branched_session("b").unwrap().unwrap();
    assert!(
        !stale(&context_value(&s).to_string()),
        "context after the branch"
    );
    assert!(!stale(&read(&storage, &new)), "the branched file");
}
