//! The bad-input corpus (`tests/corpus/`, plus large inputs generated here): every input
//! has a defined outcome (no panic, no hang, nothing dropped without a report), listed in
//! `tests/corpus/README.md`.

mod common;
use common::*;
use std::rc::Rc;
use xcsh_session::session::Persistence;
use xcsh_session::storage::Storage;
use xcsh_session::IssueKind;
use xcsh_session::{Leaf, MemoryStorage, Session};

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/corpus")
            .join(name),
    )
    .unwrap()
}

/// Load bytes through a persistent open (the path that may rewrite) and a read-only one.
fn load(name: &str, bytes: &[u8]) -> (Rc<MemoryStorage>, Session) {
    let storage = mem();
    let path = format!("/s/{name}");
    storage.mkdir_all("/s").unwrap();
    storage.write(&path, bytes).unwrap();
    let s = open(&storage, &path, Persistence::ReadOnly);
    (storage, s)
}

fn ids(s: &Session) -> Vec<&str> {
    s.entries().iter().map(|e| e.id.as_str()).collect()
}

#[test]
fn parent_cycle_loads_and_the_context_walk_stops() {
    let (_, s) = load("c", &corpus("parent-cycle.jsonl"));
    assert_eq!(ids(&s), ["a1", "b1"]);
    let ctx = s.context_at(Leaf::Last);
    assert!(ctx.cycle_at.is_some());
    assert_eq!(ctx.messages.len(), 2);
    assert_eq!(s.tree().roots.len(), 1);
}

#[test]
fn duplicate_ids_keep_both_entries_and_lookups_take_the_last() {
    let (_, s) = load("d", &corpus("duplicate-ids.jsonl"));
    assert_eq!(ids(&s), ["a1", "a1", "c1"]);
    assert_eq!(s.report().duplicate_ids, ["a1"]);
    assert!(s.entry("a1").unwrap().json().contains("same id again"));
    assert_eq!(
        s.to_jsonl().unwrap(),
        String::from_utf8(corpus("duplicate-ids.jsonl")).unwrap(),
        "nothing dropped on save"
    );
}

#[test]
fn missing_and_self_parents_become_roots() {
    let (_, s) = load("m", &corpus("missing-parent.jsonl"));
    assert_eq!(s.tree().roots.len(), 2);
    let ctx = s.context_at(Leaf::Id("c1"));
    assert_eq!(ctx.messages.len(), 2, "the orphan's path is partial");
    let (_, s) = load("s", &corpus("self-parent.jsonl"));
    assert_eq!(s.tree().roots.len(), 1);
    assert_eq!(s.context().messages.len(), 1);
}

#[test]
fn wrong_json_types_are_tolerated_or_reported() {
    let (_, s) = load("w", &corpus("wrong-types.jsonl"));
    assert_eq!(
        s.report().non_entries.len(),
        1,
        "a numeric id makes a record unaddressable: reported"
    );
    assert_eq!(ids(&s), ["w2", "w3", "w4", "w5", "w6"]);
    assert_eq!(s.entry("w2").unwrap().parent_id, None);
    let ctx: serde_json::Value = serde_json::from_str(&s.context().to_json()).unwrap();
    assert_eq!(ctx["thinkingLevel"], 42, "passed through as the agent does");
    assert_eq!(ctx["injectedTtsrRules"], serde_json::json!([]));
    assert_eq!(ctx["models"]["3"], serde_json::json!(["x"]));
    assert_eq!(s.label("w3"), None);
}

#[test]
fn bom_crlf_blank_lines_and_glued_records_are_read() {
    let (_, s) = load("b", &corpus("bom-crlf.jsonl"));
    assert_eq!(ids(&s), ["a1"]);
    assert!(s.report().issues.is_empty());
    let (_, s) = load("g", &corpus("glued.jsonl"));
    assert_eq!(ids(&s), ["a1", "b1"]);
    assert_eq!(s.report().issues[0].kind, IssueKind::GluedRecord);
}

#[test]
fn empty_and_header_only_files_are_empty_sessions() {
    let (_, s) = load("e", &corpus("empty.jsonl"));
    assert!(s.entries().is_empty() && s.report().header_problem.is_none());
    let (_, s) = load("h", &corpus("header-only.jsonl"));
    assert!(s.entries().is_empty());
    assert_eq!(s.session_id(), "corpus0000000001");
}

#[test]
fn non_object_lines_are_reported_and_kept_aside_before_a_rewrite() {
    let bytes = corpus("non-objects.jsonl");
    let (storage, s) = load("n", &bytes);
    assert_eq!(ids(&s), ["a1"]);
    assert_eq!(s.report().non_entries.len(), 4);
    drop(s);
    let mut w = open(&storage, "/s/n", Persistence::Persistent);
    w.set_session_name("x", "user").unwrap();
    let backup = w.report().backup_path.clone().expect("original kept");
    assert_eq!(storage.read(&backup).unwrap(), bytes);
}

#[test]
fn invalid_utf8_is_replaced_in_memory_and_the_original_bytes_are_kept() {
    let bytes = corpus("invalid-utf8.jsonl");
    let (storage, s) = load("u", &bytes);
    assert!(s.report().invalid_utf8);
    assert_eq!(ids(&s), ["u1", "a2"]);
    drop(s);
    let mut w = open(&storage, "/s/u", Persistence::Persistent);
    w.set_session_name("x", "user").unwrap();
    assert_eq!(
        storage
            .read(w.report().backup_path.as_ref().unwrap())
            .unwrap(),
        bytes
    );
}

#[test]
fn nul_bytes_make_their_line_unreadable_and_reported() {
    let (_, s) = load("z", &corpus("nul-bytes.jsonl"));
    assert_eq!(ids(&s), ["a2"]);
    assert_eq!(
        s.report()
            .issues
            .iter()
            .filter(|i| i.kind == IssueKind::Unparsable)
            .count(),
        2
    );
}

#[test]
fn a_file_without_a_header_is_salvaged_never_replaced() {
    let bytes = corpus("bad-header.jsonl");
    let (storage, s) = load("x", &bytes);
    assert!(s.report().header_problem.is_some());
    assert_eq!(ids(&s), ["a1"]);
    drop(s);
    let mut w = open(&storage, "/s/x", Persistence::Persistent);
    assert_eq!(
        read(&storage, "/s/x").as_bytes(),
        bytes,
        "opening never rewrites"
    );
    w.rewrite_entries().unwrap();
    assert_eq!(
        storage
            .read(w.report().backup_path.as_ref().unwrap())
            .unwrap(),
        bytes
    );
    assert!(read(&storage, "/s/x").contains("salvage me"));
}

#[test]
fn a_100_mb_single_line_loads() {
    let big = "x".repeat(100 * 1024 * 1024);
    let text = format!(
        "{}\n{{\"type\":\"message\",\"id\":\"big1\",\"parentId\":null,\"timestamp\":\"2026-02-16T10:21:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{big}\"}}}}\n",
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-02-16T10:20:30.000Z","cwd":"/w"}"#
    );
    let s = Session::from_string(mem(), text, "/agent");
    assert_eq!(s.entries().len(), 1);
    assert!(s.context().to_json().len() > 100 * 1024 * 1024);
    // A rewrite keeps it whole: content already on disk is never cut (the agent's
    // 500,000-character limit is for what is persisted now: tests/adversary.rs).
    let line = s.to_jsonl().unwrap();
    assert!(line.len() > 100 * 1024 * 1024 && !line.contains("[Session persistence truncated"));
}

#[test]
fn nesting_deeper_than_the_parser_allows_neither_crashes_nor_loses_data() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let v3 = format!(
        "{}\n{{\"type\":\"message\",\"id\":\"d1\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{{\"role\":\"user\",\"content\":{deep}}}}}\n",
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-02-16T10:20:30.000Z","cwd":"/w"}"#
    );
    let s = Session::from_string(mem(), v3.clone(), "/agent");
    assert_eq!(ids(&s), ["d1"], "read without building a tree");
    assert!(s.context().to_json().contains(&deep));
    assert_eq!(s.to_jsonl().unwrap(), v3, "saved unchanged");
    // In a v1 file the record must be parsed to add an id: it cannot be, so it is
    // reported (and its bytes kept aside before any rewrite), never replaced by null.
    let v1 = format!(
        "{}\n{{\"type\":\"message\",\"message\":{{\"content\":{deep}}}}}\n",
        r#"{"type":"session","id":"old"}"#
    );
    let (storage, s) = load("v1", v1.as_bytes());
    assert_eq!(s.report().non_entries.len(), 1);
    drop(s);
    let mut w = open(&storage, "/s/v1", Persistence::Persistent);
    w.rewrite_entries().unwrap();
    assert_eq!(
        storage
            .read(w.report().backup_path.as_ref().unwrap())
            .unwrap(),
        v1.as_bytes()
    );
}

#[test]
fn a_fuzz_finding_blob_prefix_before_a_multibyte_character_loads() {
    // Found by `scripts/fuzz` (context target): `blob:sha256:` followed by a non-ASCII
    // character made the reference scan slice inside a character.
    let bytes = corpus("fuzz-blob-ref-multibyte.jsonl");
    let s = Session::from_text(mem(), &String::from_utf8_lossy(&bytes), "/agent");
    let _ = s.context().to_json();
}
