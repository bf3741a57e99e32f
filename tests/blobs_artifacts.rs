//! Blobs, artifacts, fork / forkFrom / moveTo, blob GC, and the seed's failure table row
//! by row.

mod common;
use common::*;
use std::rc::Rc;
use xcsh_session::paths;
use xcsh_session::session::{CreateOptions, Persistence, Session};
use xcsh_session::storage::{MemoryStorage, Storage, StorageExt};
use xcsh_session::BlobStore;
use xcsh_session::{resolve_url as resolve, Paging};
use xcsh_session::{AgentOutputManager, ArtifactManager};
use xcsh_session::{ArtifactTarget, OutputSink};

fn session_with_artifacts(storage: &Rc<MemoryStorage>) -> Session {
    let mut s = create(storage);
    s.append_message(&user("run it")).unwrap();
    s.append_message(&assistant("ran")).unwrap();
    let file = s.file().unwrap().to_string();
    let mut artifacts = ArtifactManager::for_session(&**storage, &file);
    artifacts.save("full output 0", "bash").unwrap();
    artifacts.save("full output 1", "bash").unwrap();
    AgentOutputManager::new(&**storage, paths::artifacts_dir(&file), None)
        .save("Task", "{\"ok\":true}")
        .unwrap();
    s
}

#[test]
fn a_fork_named_later_writes_the_name_right_after_the_id_and_a_new_session_at_the_end() {
    let storage = mem();
    let mut s = session_with_artifacts(&storage);
    s.fork().unwrap();
    s.set_session_name("Named later", "user").unwrap();
    let header = header_line(&storage, s.file().unwrap());
    assert!(
        header.starts_with(&format!(
            r#"{{"type":"session","version":3,"id":"{}","title":"Named later","titleSource":"user","timestamp":"#,
            s.session_id()
        )),
        "the agent's fork header holds the name's place after the id: {header}"
    );
    let mut fresh = session_with_artifacts(&storage);
    fresh.set_session_name("Named new", "user").unwrap();
    let header = header_line(&storage, fresh.file().unwrap());
    assert!(
        header.ends_with(r#","title":"Named new","titleSource":"user"}"#),
        "a new session's header has no such place: {header}"
    );
}

#[test]
fn fork_copies_entries_and_artifacts_and_links_the_parent() {
    let storage = mem();
    let mut s = session_with_artifacts(&storage);
    s.set_session_name("Named session", "user").unwrap();
    let old_id = s.session_id().to_string();
    let entries_before: Vec<String> = s.entries().iter().map(|e| e.json().to_string()).collect();
    let result = s.fork().unwrap();
    let (old, new) = (result.old_file.unwrap(), result.new_file.unwrap());
    assert_ne!(old, new);
    assert_ne!(s.session_id(), old_id);
    assert_eq!(s.header().parent_session(), Some(old_id.as_str()));
    assert_eq!(s.header().title(), Some("Named session"));
    let header = header_line(&storage, &new);
    assert!(
        header.starts_with(&format!(
            r#"{{"type":"session","version":3,"id":"{}","title":"Named session","titleSource":"user","timestamp":"#,
            s.session_id()
        )),
        "the name right after the id, as the agent writes a fork's header: {header}"
    );
    assert!(result.warnings.is_empty());
    let reloaded = open(&storage, &new, Persistence::ReadOnly);
    assert_eq!(
        reloaded
            .entries()
            .iter()
            .map(|e| e.json().to_string())
            .collect::<Vec<_>>(),
        entries_before
    );
    let new_art = paths::artifacts_dir(&new);
    assert_eq!(
        read(&storage, &format!("{new_art}/1.bash.log")),
        "full output 1"
    );
    // Ids continue after the copied ones.
    assert_eq!(
        ArtifactManager::for_session(&*storage, &new)
            .save("x", "bash")
            .unwrap(),
        "2"
    );
    assert_eq!(
        AgentOutputManager::new(&*storage, new_art, None)
            .allocate("T")
            .unwrap(),
        "1-T"
    );
    assert!(storage.exists(&old), "the old session stays");
}

#[test]
fn fork_without_an_artifacts_directory_starts_ids_from_zero() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&assistant("a")).unwrap();
    let result = s.fork().unwrap();
    assert!(
        result.warnings.is_empty(),
        "a missing artifacts dir is tolerated"
    );
    assert_eq!(
        ArtifactManager::for_session(&*storage, &result.new_file.unwrap())
            .save("x", "bash")
            .unwrap(),
        "0"
    );
}

#[test]
fn fork_from_another_project_leaves_the_source_untouched() {
    let storage = mem();
    let s = session_with_artifacts(&storage);
    let source = s.file().unwrap().to_string();
    let before = read(&storage, &source);
    let (forked, result) = Session::fork_from(
        storage.clone(),
        &source,
        &CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/work/other".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let new = result.new_file.unwrap();
    assert!(new.starts_with("/agent/sessions/--work-other--/"));
    assert_eq!(forked.header().cwd(), Some("/work/other"));
    assert_eq!(forked.header().parent_session(), Some(s.session_id()));
    assert_eq!(read(&storage, &source), before);
    assert_eq!(
        open(&storage, &new, Persistence::ReadOnly).entries().len(),
        2
    );
    assert_eq!(
        read(
            &storage,
            &format!("{}/0.bash.log", paths::artifacts_dir(&new))
        ),
        "full output 0"
    );
    assert!(Session::fork_from(
        storage.clone(),
        "/agent/none.jsonl",
        &CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/w".into(),
            ..Default::default()
        }
    )
    .is_err());
}

#[test]
fn fork_from_copies_entries_and_name_as_they_are_but_for_stale_responses_replay_data() {
    let storage = mem();
    let mut s = create(&storage);
    s.set_session_name("the source", "user").unwrap();
    let q = s.append_message(&user("question")).unwrap();
    let stale = s
        .append_message(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"{\"id\":\"rs_1\"}"},{"type":"text","text":"answer"}],"api":"openai-responses","provider":"openai","model":"gpt-5","providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[]},"stopReason":"stop","timestamp":2}"#,
        )
        .unwrap();
    s.branch(&q).unwrap();
    s.append_message(&user("side")).unwrap();
    let source = s.file().unwrap().to_string();
    let source_entries: Vec<String> = s.entries().iter().map(|e| e.json().to_string()).collect();
    let (forked, _) = Session::fork_from(
        storage.clone(),
        &source,
        &CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/work/other".into(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(forked.header().title(), Some("the source"));
    assert_eq!(forked.header().str_field("titleSource"), Some("user"));
    let copied = open(&storage, forked.file().unwrap(), Persistence::ReadOnly);
    let copied: Vec<String> = copied
        .entries()
        .iter()
        .map(|e| e.json().to_string())
        .collect();
    assert_eq!(copied.len(), source_entries.len());
    for (before, after) in source_entries.iter().zip(&copied) {
        if before.contains(&stale) && before.contains("providerPayload") {
            assert_eq!(
                after,
                &before
                    .replace(r#","thinkingSignature":"{\"id\":\"rs_1\"}""#, "")
                    .replace(
                        r#","providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[]}"#,
                        ""
                    )
            );
        } else {
            assert_eq!(after, before, "ids, tree and times as they are");
        }
    }
}

#[test]
fn move_to_relocates_file_and_artifacts() {
    let storage = mem();
    let mut s = session_with_artifacts(&storage);
    let old = s.file().unwrap().to_string();
    let new = s.move_to("/agent", "/work/moved").unwrap();
    assert!(new.starts_with("/agent/sessions/--work-moved--/"));
    assert!(!storage.exists(&old));
    assert!(!storage.exists(&paths::artifacts_dir(&old)));
    assert_eq!(
        read(
            &storage,
            &format!("{}/0.bash.log", paths::artifacts_dir(&new))
        ),
        "full output 0"
    );
    let reloaded = open(&storage, &new, Persistence::ReadOnly);
    assert_eq!(reloaded.header().cwd(), Some("/work/moved"));
    assert_eq!(reloaded.entries().len(), 2);
    s.append_message(&user("after move")).unwrap();
    assert!(read(&storage, &new).contains("after move"));
}

#[test]
fn move_to_rolls_back_when_the_destination_is_taken() {
    let storage = mem();
    let mut s = session_with_artifacts(&storage);
    let old = s.file().unwrap().to_string();
    let target = format!(
        "{}/{}",
        paths::session_dir_for_cwd("/agent", "/work/moved"),
        xcsh_session::storage::basename(&old)
    );
    put(&storage, &target, "occupied");
    assert!(s.move_to("/agent", "/work/moved").is_err());
    assert_eq!(read(&storage, &target), "occupied");
    assert!(storage.exists(&old));
    assert!(storage.exists(&format!("{}/0.bash.log", paths::artifacts_dir(&old))));
    assert_eq!(s.file(), Some(old.as_str()));
}

#[test]
fn gc_deletes_only_unreferenced_old_blobs() {
    let storage = mem();
    let mut s = create(&storage);
    let image = format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{}","mimeType":"image/png"}}]}}"#,
        "QUJD".repeat(300)
    );
    s.append_message(&image).unwrap();
    s.append_message(&assistant("ok")).unwrap();
    let store = BlobStore::new(&*storage, "/agent/blobs");
    let orphan = store.put(b"nobody uses me").unwrap();
    // A blob referenced only from a backup file is kept too.
    let backed_up = store.put(b"referenced by a backup").unwrap();
    put(
        &storage,
        "/agent/sessions/--x--/a.jsonl.corrupt-2026",
        &format!("garbage {}", backed_up.reference),
    );
    let dry = gc_at(&*storage, true, 0).unwrap();
    assert_eq!(dry.deleted, vec![orphan.hash.clone()]);
    assert!(storage.exists(&orphan.path), "dry run deletes nothing");
    let recent = gc_at(&*storage, false, 1_000_000).unwrap();
    assert_eq!(
        recent.kept_recent,
        vec![orphan.hash.clone()],
        "young blobs are kept"
    );
    let real = gc_at(&*storage, false, 0).unwrap();
    assert_eq!(real.deleted, vec![orphan.hash.clone()]);
    assert!(!storage.exists(&orphan.path));
    assert!(storage.exists(&backed_up.path));
    assert_eq!(real.referenced, 2);
    let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
    assert!(reloaded.report().missing_blobs.is_empty());
}

#[test]
fn a_custom_message_image_is_resolved_in_the_context_after_a_reopen() {
    let storage = mem();
    let mut s = create(&storage);
    let data = "QUJD".repeat(300);
    let content = format!(r#"[{{"type":"image","data":"{data}","mimeType":"image/png"}}]"#);
    s.append_custom_message_entry("note", &content, true, None, None)
        .unwrap();
    s.append_message(&assistant("seen")).unwrap();
    let file = s.file().unwrap().to_string();
    assert!(
        read(&storage, &file).contains("blob:sha256:"),
        "the image is externalized"
    );
    let reloaded = open(&storage, &file, Persistence::ReadOnly);
    let ctx = context_value(&reloaded);
    assert_eq!(ctx["messages"][0]["role"], "custom");
    assert_eq!(
        ctx["messages"][0]["content"][0]["data"].as_str(),
        Some(data.as_str()),
        "the context hands the model the image, as the agent resolves custom_message content on load"
    );
}

// ---- the failure table at the end of the blob/artifact seed ----

#[test]
fn failure_missing_blob_during_rehydration_warns_and_keeps_the_reference() {
    let storage = mem();
    let mut s = create(&storage);
    let image = format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{}"}}]}}"#,
        "QUJD".repeat(300)
    );
    s.append_message(&image).unwrap();
    s.append_message(&assistant("ok")).unwrap();
    for b in storage.list_dir("/agent/blobs").unwrap() {
        storage.unlink(&format!("/agent/blobs/{}", b.name)).unwrap();
    }
    let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
    assert_eq!(reloaded.report().missing_blobs.len(), 1);
    assert!(reloaded.context().to_json().contains("blob:sha256:"));
}

#[test]
fn failure_blob_enoent_on_get_returns_none() {
    let storage = MemoryStorage::new();
    assert_eq!(
        BlobStore::new(&storage, "/b").get(&"a".repeat(64)).unwrap(),
        None
    );
}

#[test]
fn failure_missing_artifacts_dir_lists_empty_and_allocation_starts_at_zero() {
    let storage = MemoryStorage::new();
    let mut m = ArtifactManager::new(&storage, "/nope/dir");
    assert!(m.list_files().unwrap().is_empty());
    assert_eq!(m.allocate_path("bash").unwrap().0, "0");
}

#[test]
fn failure_missing_artifacts_dir_for_urls_throws() {
    let storage = MemoryStorage::new();
    for url in ["artifact://0", "agent://0-Task"] {
        assert_eq!(
            resolve(&storage, Some("/nope"), url, Paging::default())
                .unwrap_err()
                .to_string(),
            "No artifacts directory found"
        );
    }
}

#[test]
fn failure_unknown_artifact_id_lists_the_available_ones() {
    let storage = mem();
    let s = session_with_artifacts(&storage);
    let dir = paths::artifacts_dir(s.file().unwrap());
    assert_eq!(
        resolve(&*storage, Some(&dir), "artifact://5", Paging::default())
            .unwrap_err()
            .to_string(),
        "Artifact 5 not found. Available: 0, 1"
    );
    assert_eq!(
        resolve(&*storage, Some(&dir), "agent://X", Paging::default())
            .unwrap_err()
            .to_string(),
        "Not found: X\nAvailable: 0-Task"
    );
}

#[test]
fn failure_output_sink_writer_cannot_be_created_keeps_the_tail_only() {
    let storage = std::rc::Rc::new(MemoryStorage::new());
    let mut sink = OutputSink::with_limits(
        storage,
        Some(ArtifactTarget {
            id: Some("0".into()),
            path: "/no/dir/0.bash.log".into(),
        }),
        10,
        100,
    );
    for i in 0..50 {
        sink.push(&format!("line {i}\n"));
    }
    let d = sink.dump(None);
    assert!(d.truncated && d.artifact_id.is_none());
    assert!(d.output.ends_with("line 49\n"));
}

#[test]
fn failure_no_session_file_uses_a_temporary_artifacts_dir() {
    assert_eq!(
        paths::artifacts_dir_or_temp(None, "/tmp", "abc"),
        "/tmp/xcsh-artifacts-abc"
    );
    assert_eq!(
        paths::artifacts_dir_or_temp(Some("/s/x.jsonl"), "/tmp", "abc"),
        "/s/x"
    );
    let storage = MemoryStorage::new();
    let dir = paths::artifacts_dir_or_temp(None, "/tmp", "abc");
    let id = AgentOutputManager::new(&storage, dir.clone(), None)
        .save("Sub", "# out")
        .unwrap();
    assert_eq!(
        resolve(
            &storage,
            Some(&dir),
            &format!("agent://{id}"),
            Paging::default()
        )
        .unwrap()
        .content,
        "# out"
    );
}

#[test]
fn path_traversal_attempts_fail_and_touch_nothing() {
    let storage = mem();
    let s = session_with_artifacts(&storage);
    let dir = paths::artifacts_dir(s.file().unwrap());
    put(&storage, "/agent/sessions/secret.md", "secret");
    put(&storage, "/etc/passwd", "root");
    for url in [
        "artifact://../x",
        "agent://../../etc/passwd",
        "agent://..%2F..%2Fetc%2Fpasswd",
        "agent://../secret",
    ] {
        let err = resolve(&*storage, Some(&dir), url, Paging::default())
            .unwrap_err()
            .to_string();
        assert!(
            !err.contains("secret") || err.starts_with("Not found"),
            "{url}: {err}"
        );
        assert!(
            resolve(&*storage, Some(&dir), url, Paging::default()).is_err(),
            "{url}"
        );
    }
    let store = BlobStore::new(&*storage, "/agent/blobs");
    assert!(store.get("../../etc/passwd").is_err());
    assert!(xcsh_session::parse_blob_ref("blob:sha256:../..").is_none());
}
