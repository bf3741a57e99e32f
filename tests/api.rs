//! The JSON façade every shell calls (CLI, JS, WIT): shapes and error kinds.

mod common;
use common::*;
use serde_json::Value;
use xcsh_session::api::{self, ErrorKind};
use xcsh_session::storage::Storage;

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[test]
fn blob_put_get_and_gc_through_the_facade() {
    let storage = mem();
    let put = json(&api::blob_put(storage.clone(), "/agent", b"bytes").unwrap());
    let hash = put["hash"].as_str().unwrap().to_string();
    assert_eq!(put["ref"], format!("blob:sha256:{hash}"));
    assert_eq!(
        api::blob_get(storage.clone(), "/agent", &hash).unwrap(),
        b"bytes"
    );
    assert_eq!(
        api::blob_get(storage.clone(), "/agent", &format!("blob:sha256:{hash}")).unwrap(),
        b"bytes"
    );
    assert_eq!(
        api::blob_get(storage.clone(), "/agent", "../x")
            .unwrap_err()
            .kind,
        ErrorKind::InvalidInput
    );
    assert_eq!(
        api::blob_get(storage.clone(), "/agent", &"0".repeat(64))
            .unwrap_err()
            .kind,
        ErrorKind::NotFound
    );
    let gc = json(&api::gc(storage.clone(), "/agent", true).unwrap());
    assert_eq!(gc["dryRun"], true);
    assert_eq!(
        gc["keptRecent"].as_array().unwrap().len(),
        1,
        "a fresh blob is inside the grace period"
    );
}

#[test]
fn url_fork_and_move_through_the_facade() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&assistant("a")).unwrap();
    let file = s.file().unwrap().to_string();
    let mut m = xcsh_session::artifacts::ArtifactManager::for_session(&*storage, &file);
    m.save("one\ntwo\nthree", "bash").unwrap();
    s.close().unwrap(); // release the writer lock: the façade opens the file itself
    let r =
        json(&api::resolve_url(storage.clone(), &file, "artifact://0", Some(2), Some(1)).unwrap());
    assert_eq!(
        r,
        serde_json::json!({"content": "two", "mimeType": "text/plain", "size": 3})
    );
    let e = api::resolve_url(storage.clone(), &file, "artifact://9", None, None).unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::NotFound, "Artifact 9 not found. Available: 0")
    );
    let f = json(&api::fork(storage.clone(), "/agent", &file).unwrap());
    let new_file = f["newFile"].as_str().unwrap().to_string();
    assert!(storage.exists(&new_file) && storage.exists(&file));
    let moved =
        json(&api::move_session(storage.clone(), "/agent", &new_file, "/work/else").unwrap());
    assert!(moved["newFile"]
        .as_str()
        .unwrap()
        .starts_with("/agent/sessions/--work-else--/"));
    assert_eq!(
        api::fork(storage.clone(), "/agent", "/agent/missing.jsonl")
            .unwrap_err()
            .kind,
        ErrorKind::NotFound
    );
}

#[test]
fn listing_resume_and_continue_through_the_facade() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("find me please")).unwrap();
    s.append_message(&assistant("ok")).unwrap();
    let id = s.session_id().to_string();
    let recent = json(&api::recent(storage.clone(), "/agent", "/work/pi", 3).unwrap());
    assert_eq!(recent[0]["name"], "find me please");
    assert_eq!(recent[0]["timeAgo"], "just now");
    let list = json(&api::list(storage.clone(), "/agent", None).unwrap());
    assert_eq!(list[0]["id"], id.as_str());
    let found = json(&api::search(storage.clone(), "/agent", Some("/work/pi"), "find").unwrap());
    assert!(found[0]["score"].as_u64().unwrap() > 0);
    assert_eq!(found[0]["id"], id.as_str());
    let resumed =
        json(&api::resume(storage.clone(), "/agent", "/work/pi", &id[..6], false).unwrap());
    assert_eq!(resumed["path"], s.file().unwrap());
    let other = api::resume(storage.clone(), "/agent", "/work/other", &id[..6], false).unwrap_err();
    assert_eq!(other.kind, ErrorKind::OtherProject);
    assert_eq!(
        other.message,
        format!("Session \"{}\" is in another project (/work/pi).", &id[..6])
    );
    let cont =
        json(&api::continue_recent(storage.clone(), "/agent", "/work/pi", Some("pts-1")).unwrap());
    assert_eq!(cont["source"], "mostRecent");
    let again =
        json(&api::continue_recent(storage.clone(), "/agent", "/work/pi", Some("pts-1")).unwrap());
    assert_eq!(again["source"], "breadcrumb");
    let fresh = json(&api::continue_recent(storage.clone(), "/agent", "/work/new", None).unwrap());
    assert_eq!(fresh["source"], "new");
    assert!(!storage.exists(fresh["path"].as_str().unwrap()));
}
