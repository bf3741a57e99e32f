//! The pi flavour (src/flavour.rs): what pi's SessionManager writes and reads where it
//! differs from xcsh's, each rule against the same operations in the xcsh flavour.

mod common;
use common::*;
use serde_json::{json, Value};
use std::rc::Rc;
use xcsh_session::listing;
use xcsh_session::session::{CreateOptions, Session};
use xcsh_session::storage::{MemoryStorage, Storage};
use xcsh_session::Flavour;

fn create_in(storage: &Rc<MemoryStorage>, agent_dir: &str, flavour: Option<Flavour>) -> Session {
    Session::create(
        storage.clone(),
        &CreateOptions {
            agent_dir: agent_dir.into(),
            cwd: "/work/proj".into(),
            flavour,
            ..Default::default()
        },
    )
}

fn lines(storage: &MemoryStorage, path: &str) -> Vec<Value> {
    read(storage, path)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn is_uuid_v7(id: &str) -> bool {
    let b = id.as_bytes();
    id.len() == 36
        && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-')
        && b[14] == b'7'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
        && id
            .chars()
            .all(|c| c == '-' || (c.is_ascii_hexdigit() && !c.is_ascii_uppercase()))
}

/// A base64 image large enough for xcsh to move it to the blob store.
fn big_image_message() -> String {
    let data = "A".repeat(4096);
    format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":1}}"#
    )
}

fn long_tool_result() -> String {
    let text = "x".repeat(600_000);
    format!(
        r#"{{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{{"type":"text","text":"{text}"}}],"isError":false,"timestamp":3}}"#
    )
}

#[test]
fn a_pi_session_has_a_uuid_v7_id_and_pis_directory_and_file_name() {
    let storage = mem();
    let s = create_in(&storage, "/home/u/.pi/agent", None);
    assert_eq!(s.flavour(), Flavour::Pi);
    assert!(is_uuid_v7(s.session_id()), "{}", s.session_id());
    let file = s.file().unwrap();
    let name = file.rsplit('/').next().unwrap();
    assert!(
        file.starts_with("/home/u/.pi/agent/sessions/--work-proj--/"),
        "{file}"
    );
    assert!(
        name.ends_with(&format!("_{}.jsonl", s.session_id())),
        "{name}"
    );
    assert!(
        !name.contains(':') && !name[..name.len() - 6].contains('.'),
        "{name}"
    );
    let x = create_in(&storage, "/home/u/.xcsh/agent", None);
    assert_eq!(x.flavour(), Flavour::Xcsh);
    assert_eq!(x.session_id().len(), 16);
}

#[test]
fn the_host_chooses_the_flavour_over_the_agent_dir() {
    let storage = mem();
    let s = create_in(&storage, "/agent", Some(Flavour::Pi));
    assert_eq!(s.flavour(), Flavour::Pi);
    assert!(is_uuid_v7(s.session_id()));
    let s = create_in(&storage, "/u/.pi/agent", Some(Flavour::Xcsh));
    assert_eq!(s.session_id().len(), 16);
}

#[test]
fn pi_writes_images_and_long_strings_as_given_where_xcsh_moves_and_cuts_them() {
    for flavour in [Flavour::Pi, Flavour::Xcsh] {
        let storage = mem();
        let mut s = create_in(&storage, "/agent", Some(flavour));
        s.append_message(&big_image_message()).unwrap();
        s.append_message(&assistant("ok")).unwrap();
        s.append_message(&long_tool_result()).unwrap();
        let written = lines(&storage, s.file().unwrap());
        let image = &written[1]["message"]["content"][0]["data"];
        let text = written[3]["message"]["content"][0]["text"]
            .as_str()
            .unwrap();
        match flavour {
            Flavour::Pi => {
                assert_eq!(image, &json!("A".repeat(4096)));
                assert_eq!(text.len(), 600_000);
            }
            Flavour::Xcsh => {
                assert!(image.as_str().unwrap().starts_with("blob:sha256:"));
                assert!(text.len() < 500_100, "{}", text.len());
            }
        }
    }
}

#[test]
fn pi_custom_messages_have_no_attribution() {
    for (flavour, attribution) in [(Flavour::Pi, None), (Flavour::Xcsh, Some(json!("agent")))] {
        let storage = mem();
        let mut s = create_in(&storage, "/agent", Some(flavour));
        s.append_message(&assistant("a")).unwrap();
        s.append_custom_message_entry("note", "\"t\"", true, None, None)
            .unwrap();
        let written = lines(&storage, s.file().unwrap());
        assert_eq!(written[2].get("attribution").cloned(), attribution);
    }
}

#[test]
fn pi_context_names_the_model_of_the_last_model_change_or_assistant_message() {
    let storage = mem();
    let mut s = create_in(&storage, "/agent", Some(Flavour::Pi));
    assert_eq!(context_value(&s)["model"], Value::Null);
    s.append_message(&user("q")).unwrap();
    assert_eq!(context_value(&s)["model"], Value::Null);
    let a = s.append_message(&assistant("a")).unwrap();
    let model = json!({ "provider": "anthropic", "modelId": "claude-sonnet-4-5" });
    assert_eq!(context_value(&s)["model"], model);
    s.append_entry_json(r#"{"type":"model_change","provider":"openai","modelId":"gpt-5"}"#)
        .unwrap();
    assert_eq!(
        context_value(&s)["model"],
        json!({ "provider": "openai", "modelId": "gpt-5" })
    );
    s.branch(&a).unwrap();
    assert_eq!(context_value(&s)["model"], model);
    // xcsh's context has no `model` (its `models` are by role).
    let mut x = create_in(&storage, "/agent", Some(Flavour::Xcsh));
    x.append_message(&assistant("a")).unwrap();
    assert_eq!(context_value(&x).get("model"), None);
}

#[test]
fn a_pi_fork_from_names_its_source_by_path() {
    let storage = mem();
    let mut source = create_in(&storage, "/agent", Some(Flavour::Pi));
    source.append_message(&assistant("a")).unwrap();
    let path = source.file().unwrap().to_string();
    for (flavour, parent) in [
        (Flavour::Pi, path.clone()),
        (Flavour::Xcsh, source.session_id().to_string()),
    ] {
        let (fork, _) = Session::fork_from(
            storage.clone(),
            &path,
            &CreateOptions {
                agent_dir: "/agent".into(),
                cwd: "/elsewhere".into(),
                flavour: Some(flavour),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(fork.header().parent_session(), Some(parent.as_str()));
        assert_eq!(fork.flavour(), flavour);
    }
}

#[test]
fn a_pi_listing_is_modified_at_its_latest_message() {
    let storage = mem();
    let mut s = create_in(&storage, "/agent", Some(Flavour::Pi));
    s.append_message(&assistant("a")).unwrap(); // its timestamp: 1760000000001
    let port: Rc<dyn Storage> = storage.clone();
    let list = |flavour| {
        listing::list_flavoured(
            port.clone(),
            "/agent",
            Some("/work/proj"),
            None,
            Default::default(),
            flavour,
        )
        .unwrap()
    };
    let (pi, xcsh) = (list(Flavour::Pi), list(Flavour::Xcsh));
    assert_eq!(pi[0].modified_ms, 1_760_000_000_001);
    let mtime = storage.stat(s.file().unwrap()).unwrap().mtime_ms;
    assert_eq!(xcsh[0].modified_ms, mtime);
    assert_ne!(mtime, 1_760_000_000_001);
    assert_eq!(pi[0].all_messages_text, None);
    assert_eq!(
        pi[0].clone(),
        listing::SessionInfo {
            modified_ms: 1_760_000_000_001,
            ..xcsh[0].clone()
        }
    );
}

#[test]
fn a_missing_file_opened_as_pi_starts_a_pi_session() {
    let storage = mem();
    let mut s = open(
        &storage,
        "/elsewhere/new.jsonl",
        xcsh_session::Persistence::Persistent,
    );
    assert_eq!(s.flavour(), Flavour::Xcsh);
    assert_eq!(s.session_id().len(), 16);
    s.set_flavour(Flavour::Pi);
    assert!(is_uuid_v7(s.session_id()), "{}", s.session_id());
    assert_eq!(s.header().cwd(), Some("/work"));
    s.append_message(&assistant("a")).unwrap();
    let written = lines(&storage, "/elsewhere/new.jsonl");
    assert_eq!(written[0]["id"], json!(s.session_id()));
    // A session read from its file keeps its id whatever the flavour.
    let mut again = open(
        &storage,
        "/elsewhere/new.jsonl",
        xcsh_session::Persistence::ReadOnly,
    );
    let id = again.session_id().to_string();
    again.set_flavour(Flavour::Xcsh);
    assert_eq!(again.session_id(), id);
}
