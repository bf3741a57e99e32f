//! `moveTo` as the agent's: the header's cwd follows the move even when the file stays
//! where it is, a file deleted behind the session's back is written again from memory in
//! the new place, and stale OpenAI Responses replay data read from the file never reaches
//! the model after a move.

mod common;
use common::*;
use xcsh_session::paths;
use xcsh_session::session::Persistence;
use xcsh_session::storage::{Storage, StorageExt};

#[test]
fn move_into_the_directory_the_file_is_in_updates_the_header_cwd() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hi")).unwrap();
    s.append_message(&assistant("hello")).unwrap();
    let file = s.file().unwrap().to_string();
    let dir = xcsh_session::storage::parent(&file).to_string();
    assert_eq!(s.move_to_dir(&dir, "/work/alias").unwrap(), file);
    assert_eq!(s.header().cwd(), Some("/work/alias"));
    let reloaded = open(&storage, &file, Persistence::ReadOnly);
    assert_eq!(reloaded.header().cwd(), Some("/work/alias"));
    assert_eq!(reloaded.entries().len(), 2);
}

#[test]
fn move_after_the_file_was_deleted_writes_the_session_from_memory() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hi")).unwrap();
    s.append_message(&assistant("hello")).unwrap();
    let old = s.file().unwrap().to_string();
    storage.unlink(&old).unwrap();
    let new = s.move_to("/agent", "/work/moved").unwrap();
    assert_ne!(new, old);
    assert!(!storage.exists(&old));
    let reloaded = open(&storage, &new, Persistence::ReadOnly);
    assert_eq!(reloaded.header().cwd(), Some("/work/moved"));
    assert_eq!(reloaded.entries().len(), 2);
    s.append_message(&user("after")).unwrap();
    assert!(read(&storage, &new).contains("after"));
}

#[test]
fn a_session_never_written_stays_unwritten_when_moved() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hi")).unwrap();
    let new = s.move_to("/agent", "/work/moved").unwrap();
    assert!(new.starts_with(&paths::session_dir_for_cwd("/agent", "/work/moved")));
    assert!(!storage.exists(&new));
    s.append_message(&assistant("hello")).unwrap();
    assert!(read(&storage, &new).contains(r#""cwd":"/work/moved""#));
}

#[test]
fn a_moved_session_hands_the_model_no_stale_replay_data() {
    let storage = mem();
    let mut s = loaded_with_stale_replay(&storage);
    let stale = |context: &serde_json::Value| holds_stale_replay(&context.to_string());
    assert!(!stale(&context_value(&s)));
    let new = s.move_to("/agent", "/work/moved").unwrap();
    assert!(!stale(&context_value(&s)), "after the move");
    let reopened = open(&storage, &new, Persistence::ReadOnly);
    assert!(!stale(&context_value(&reopened)), "reopened after the move");
}

#[test]
fn a_migrated_file_moved_before_any_rewrite_keeps_its_original_bytes_aside() {
    let storage = mem();
    let file = "/agent/sessions/--work-pi--/2026-01-01T00-00-00-000Z_s.jsonl";
    let v1 = format!(
        "{}\n{}\n",
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/pi"}"#,
        format_args!(
            r#"{{"type":"message","timestamp":"t","message":{}}}"#,
            assistant("old")
        )
    );
    put(&storage, file, &v1);
    let mut s = open(&storage, file, Persistence::Persistent);
    let new = s.move_to("/agent", "/work/moved").unwrap();
    let dir = xcsh_session::storage::parent(&new).to_string();
    let kept: Vec<String> = storage
        .list_dir(&dir)
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .filter(|name| name.contains(".jsonl.v1-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(read(&storage, &format!("{dir}/{}", kept[0])), v1);
}

#[test]
fn an_in_memory_session_moved_takes_the_new_cwd_in_its_header() {
    let storage = mem();
    let mut s = xcsh_session::session::Session::in_memory(storage.clone(), "/work/pi");
    s.append_message(&user("hi")).unwrap();
    assert_eq!(s.move_to("/agent", "/work/moved").unwrap(), "");
    assert_eq!(s.header().cwd(), Some("/work/moved"));
}

#[test]
fn a_session_in_its_cwds_own_folder_moves_within_that_sessions_root() {
    let storage = mem();
    let own = |cwd: &str| {
        xcsh_session::storage::basename(&paths::session_dir_for_cwd("/agent", cwd)).to_string()
    };
    let mut s = xcsh_session::session::Session::create(
        storage.clone(),
        &xcsh_session::session::CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/work/pi".into(),
            session_dir: Some(format!("/other/{}", own("/work/pi"))),
            ..Default::default()
        },
    );
    s.append_message(&user("hi")).unwrap();
    s.append_message(&assistant("hello")).unwrap();
    let new = s.move_to("/agent", "/work/moved").unwrap();
    assert_eq!(
        xcsh_session::storage::parent(&new),
        format!("/other/{}", own("/work/moved"))
    );
    assert!(storage.exists(&new));
}
