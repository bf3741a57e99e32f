//! The failure modes users of the reference agent lost work to, each shown impossible.

mod common;
use common::*;
use xcsh_session::session::Persistence;
use xcsh_session::storage::Storage;
use xcsh_session::SessionError;

fn written_session() -> (
    std::rc::Rc<xcsh_session::MemoryStorage>,
    xcsh_session::Session,
) {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hello")).unwrap();
    s.append_message(&assistant("hi")).unwrap();
    (storage, s)
}

#[test]
fn two_writers_on_one_file_are_refused_not_interleaved() {
    let (storage, mut first) = written_session();
    let file = first.file().unwrap().to_string();
    let opts = xcsh_session::OpenOptions {
        persistence: Persistence::Persistent,
        agent_dir: "/agent".into(),
        cwd: "/w".into(),
    };
    let err = xcsh_session::Session::open(storage.clone(), &file, &opts)
        .err()
        .expect("second writer refused");
    assert!(matches!(err, SessionError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("being written by another process"));
    // A viewer can still read it.
    let viewer = open(&storage, &file, Persistence::ReadOnly);
    assert_eq!(viewer.entries().len(), 2);
    // The first writer keeps working; after it closes, a new writer may open.
    first.append_message(&user("still mine")).unwrap();
    first.close().unwrap();
    let mut second = open(&storage, &file, Persistence::Persistent);
    second.append_message(&user("now mine")).unwrap();
    assert_eq!(
        open(&storage, &file, Persistence::ReadOnly).entries().len(),
        4
    );
}

#[test]
fn dropping_a_session_releases_its_lock() {
    let (storage, s) = written_session();
    let file = s.file().unwrap().to_string();
    assert!(storage.exists(&format!("{file}.lock")));
    drop(s);
    assert!(!storage.exists(&format!("{file}.lock")));
}

#[test]
fn an_external_edit_is_never_overwritten_by_a_rewrite_or_an_append() {
    let (storage, mut s) = written_session();
    let file = s.file().unwrap().to_string();
    let edited = format!(
        "{}{}\n",
        read(&storage, &file),
        r#"{"type":"label","id":"ext00001","parentId":null,"timestamp":"2026-02-16T10:30:00.000Z","targetId":"x","label":"by hand"}"#
    );
    storage.write(&file, edited.as_bytes()).unwrap();
    let err = s.set_session_name("rename", "user").unwrap_err();
    assert!(
        matches!(err, SessionError::ExternallyModified { .. }),
        "{err}"
    );
    let err = s.append_message(&user("more")).unwrap_err();
    assert!(
        matches!(err, SessionError::ExternallyModified { .. }),
        "{err}"
    );
    assert_eq!(
        read(&storage, &file),
        edited,
        "the external change survives"
    );
    // Reloading picks it up and writing works again.
    s.close().unwrap();
    let mut again = open(&storage, &file, Persistence::Persistent);
    again.append_message(&user("after reload")).unwrap();
    let text = read(&storage, &file);
    assert!(text.contains("by hand") && text.contains("after reload"));
}

#[test]
fn a_new_session_can_be_made_durable_before_the_first_reply() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("important first prompt")).unwrap();
    s.ensure_on_disk().unwrap();
    let file = s.file().unwrap().to_string();
    drop(s); // the process is interrupted here
    assert!(read(&storage, &file).contains("important first prompt"));
}
