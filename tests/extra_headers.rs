//! A header line after the first (type `"session"`), as the agent treats it: kept in its
//! place among the file's records, never an entry, written back by a rewrite and a move,
//! seen by the migration (its version set, its position counted), left behind by a fork
//! and a branched session. Nothing is lost, so nothing is kept aside.

mod common;
use common::*;
use xcsh_session::session::Persistence;
use xcsh_session::storage::Storage;

const FILE: &str = "/agent/sessions/--work-pi--/2026-01-01T00-00-00-000Z_s.jsonl";
const H1: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/pi"}"#;
const H2: &str = r#"{"type":"session","id":"second","cwd":"/else","version":3}"#;

fn line(id: &str, parent: Option<&str>, message: &str) -> String {
    let parent = parent.map_or("null".into(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{message}}}"#
    )
}

fn with_second_header(storage: &std::rc::Rc<xcsh_session::storage::MemoryStorage>) -> String {
    let text = format!(
        "{H1}\n{}\n{H2}\n{}\n",
        line("u", None, &user("hi")),
        line("a", Some("u"), &assistant("hello"))
    );
    put(storage, FILE, &text);
    text
}

fn nothing_kept_aside(storage: &xcsh_session::storage::MemoryStorage, dir: &str) {
    let names: Vec<String> = storage
        .list_dir(dir)
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert!(!names.iter().any(|n| n.contains(".corrupt-")), "{names:?}");
}

#[test]
fn a_second_header_is_no_entry_and_a_rewrite_writes_it_back_in_its_place() {
    let storage = mem();
    let text = with_second_header(&storage);
    let mut s = open(&storage, FILE, Persistence::Persistent);
    let ids: Vec<&str> = s.entries().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["u", "a"]);
    assert!(s.entry("second").is_err());
    assert_eq!(s.report().non_entries.len(), 0);
    assert!(!s.report().lossy());
    s.rewrite_entries().unwrap();
    assert_eq!(read(&storage, FILE), text);
    nothing_kept_aside(&storage, "/agent/sessions/--work-pi--");
    s.append_message(&user("after")).unwrap();
    s.rewrite_entries().unwrap();
    let lines: Vec<String> = read(&storage, FILE).lines().map(String::from).collect();
    assert_eq!(lines[2], H2);
    assert_eq!(lines.len(), 5);
}

#[test]
fn a_second_header_at_the_end_stays_at_the_end() {
    let storage = mem();
    let text = format!("{H1}\n{}\n{H2}\n", line("u", None, &user("hi")));
    put(&storage, FILE, &text);
    let mut s = open(&storage, FILE, Persistence::Persistent);
    s.rewrite_entries().unwrap();
    assert_eq!(read(&storage, FILE), text);
}

#[test]
fn a_move_writes_the_second_header_back_with_its_own_cwd() {
    let storage = mem();
    with_second_header(&storage);
    let mut s = open(&storage, FILE, Persistence::Persistent);
    let new = s.move_to("/agent", "/work/moved").unwrap();
    let lines: Vec<String> = read(&storage, &new).lines().map(String::from).collect();
    assert!(lines[0].contains(r#""cwd":"/work/moved""#));
    assert_eq!(lines[2], H2);
    assert_eq!(lines.len(), 4);
}

#[test]
fn a_fork_and_a_branched_session_leave_the_second_header_behind() {
    let storage = mem();
    with_second_header(&storage);
    let mut s = open(&storage, FILE, Persistence::Persistent);
    let forked = s.fork().unwrap().new_file.unwrap();
    let text = read(&storage, &forked);
    assert_eq!(text.matches(r#""type":"session""#).count(), 1, "{text}");
    assert_eq!(text.lines().count(), 3);
    s.rewrite_entries().unwrap();
    assert_eq!(read(&storage, &forked).lines().count(), 3);
    let branched = s.create_branched_session("a").unwrap().unwrap();
    assert_eq!(
        read(&storage, &branched)
            .matches(r#""type":"session""#)
            .count(),
        1
    );
}

#[test]
fn migration_counts_a_second_header_in_first_kept_entry_index_and_sets_its_version() {
    let storage = mem();
    let v1 = [
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/pi"}"#,
        r#"{"type":"message","timestamp":"t1","message":{"role":"user","content":"one"}}"#,
        r#"{"type":"session","id":"second","cwd":"/else"}"#,
        r#"{"type":"message","timestamp":"t3","message":{"role":"user","content":"two"}}"#,
        r#"{"type":"compaction","timestamp":"t4","summary":"s","firstKeptEntryIndex":3,"tokensBefore":1}"#,
        r#"{"type":"compaction","timestamp":"t5","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}"#,
    ]
    .join("\n");
    put(&storage, FILE, &v1);
    let mut s = open(&storage, FILE, Persistence::Persistent);
    let e = s.entries();
    assert_eq!(e.len(), 4);
    assert_eq!(e[1].parent_id.as_deref(), Some(e[0].id.as_str()));
    let kept = |i: usize| e[i].to_value().get("firstKeptEntryId").cloned();
    assert_eq!(kept(2), Some(serde_json::Value::String(e[1].id.clone())));
    assert_eq!(kept(3), None, "a header cannot be kept");
    assert_eq!(s.report().migration.as_ref().unwrap().entries_changed, 4);
    s.rewrite_entries().unwrap();
    let written: Vec<String> = read(&storage, FILE).lines().map(String::from).collect();
    assert_eq!(
        written[2],
        r#"{"type":"session","id":"second","cwd":"/else","version":3}"#
    );
}

#[test]
fn a_v2_migration_sets_the_version_of_a_second_header_in_place() {
    let storage = mem();
    let text = format!(
        "{}\n{}\n{}\n",
        r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/work/pi"}"#,
        line("u", None, &user("hi")),
        r#"{"type":"session","version":2,"id":"second"}"#
    );
    put(&storage, FILE, &text);
    let mut s = open(&storage, FILE, Persistence::Persistent);
    s.rewrite_entries().unwrap();
    let written: Vec<String> = read(&storage, FILE).lines().map(String::from).collect();
    assert_eq!(
        written[2],
        r#"{"type":"session","version":3,"id":"second"}"#
    );
}
