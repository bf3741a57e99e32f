//! The sessions `fork` and `createBranchedSession` make of a loaded session, as the
//! agent's: stale OpenAI Responses replay data read from the file reaches neither the
//! model nor the new file (the agent cleans its in-memory entries at load and writes
//! those), while the file it was read from keeps it.

mod common;
use common::*;

#[test]
fn a_fork_of_a_loaded_session_holds_no_stale_replay_data() {
    let storage = mem();
    let mut s = loaded_with_stale_replay(&storage);
    let new = s.fork().unwrap().new_file.unwrap();
    assert!(
        !holds_stale_replay(&context_value(&s).to_string()),
        "context after the fork"
    );
    assert!(
        !holds_stale_replay(&read(&storage, &new)),
        "the forked file"
    );
    assert!(
        holds_stale_replay(&read(&storage, STALE_REPLAY_FILE)),
        "the old file is left as it is"
    );
    // What is appended to the fork now is written as given.
    s.append_message(STALE_REPLY).unwrap();
    assert!(holds_stale_replay(&read(&storage, &new)));
}

#[test]
fn a_branched_session_of_a_loaded_session_holds_no_stale_replay_data() {
    let storage = mem();
    let mut s = loaded_with_stale_replay(&storage);
    let new = s.create_branched_session("b").unwrap().unwrap();
    assert!(
        !holds_stale_replay(&context_value(&s).to_string()),
        "context after the branch"
    );
    assert!(
        !holds_stale_replay(&read(&storage, &new)),
        "the branched file"
    );
}
