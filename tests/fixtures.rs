//! The four real session files from the wild (v1 format, two with glued records) load,
//! migrate and build contexts.

mod common;
use common::*;
use std::rc::Rc;
use xcsh_session::session::{Persistence, Session};
use xcsh_session::storage::Storage;

/// (file, entries after load, context messages, models.default, thinkingLevel)
/// Context message counts were cross-checked against an independent Python
/// implementation of the seed's algorithm.
const EXPECTED: [(&str, usize, usize, &str, &str); 4] = [
    (
        "before-compaction.jsonl",
        1002,
        446,
        "anthropic/claude-opus-4-5",
        "off",
    ),
    (
        "historical-compact.jsonl",
        1013,
        1,
        "anthropic/claude-opus-4-5",
        "off",
    ),
    (
        "historical-session.jsonl",
        463,
        109,
        "anthropic/claude-opus-4-5",
        "medium",
    ),
    (
        "large-session.jsonl",
        1018,
        914,
        "anthropic/claude-sonnet-4-5",
        "off",
    ),
];

#[test]
fn real_fixtures_load_migrate_and_build_contexts() {
    for (name, entries, messages, model, thinking) in EXPECTED {
        let s = Session::from_text(mem(), &fixture_text(name), "/agent");
        assert_eq!(s.entries().len(), entries, "{name}: entries");
        let report = s.report();
        assert_eq!(report.file_version, 1, "{name}");
        assert_eq!(
            report.migration.as_ref().map(|m| m.to_version),
            Some(3),
            "{name}"
        );
        let ctx = context_value(&s);
        assert_eq!(
            ctx["messages"].as_array().unwrap().len(),
            messages,
            "{name}: messages"
        );
        assert_eq!(ctx["models"]["default"], model, "{name}");
        assert_eq!(ctx["thinkingLevel"], thinking, "{name}");
        assert_eq!(ctx["mode"], "none");
    }
}

#[test]
fn glued_records_in_historical_files_are_recovered() {
    for name in ["historical-compact.jsonl", "historical-session.jsonl"] {
        let s = Session::from_text(mem(), &fixture_text(name), "/agent");
        let glued = s
            .report()
            .issues
            .iter()
            .filter(|i| i.kind == xcsh_session::IssueKind::GluedRecord)
            .count();
        assert_eq!(glued, 1, "{name}");
        // Both halves of the glued line are entries: the file has one line per record
        // except the glued one.
        let lines = fixture_text(name).lines().count();
        assert_eq!(
            s.entries().len(),
            lines,
            "{name}: header line + glued extra record"
        );
    }
}

#[test]
fn historical_compaction_index_maps_to_the_compaction_itself() {
    // historical-compact.jsonl: firstKeptEntryIndex 1013 is the compaction's own index
    // (header = 0), so nothing before it is kept and the context is the summary alone.
    let s = Session::from_text(mem(), &fixture_text("historical-compact.jsonl"), "/agent");
    let comp = s
        .entries()
        .iter()
        .rfind(|e| e.entry_type == xcsh_session::EntryType::Compaction)
        .unwrap();
    assert_eq!(
        s.entries().last().unwrap().id,
        comp.id,
        "the glued compaction is the last record"
    );
    let v = comp.to_value();
    assert_eq!(v["firstKeptEntryId"], comp.id.as_str());
    assert!(v.get("firstKeptEntryIndex").is_none());
    let ctx = context_value(&s);
    assert_eq!(ctx["messages"][0]["role"], "compactionSummary");
    assert_eq!(ctx["messages"][0]["tokensBefore"], 131140);
}

#[test]
fn migrated_fixture_rewrites_atomically_and_reloads_identically() {
    for name in FIXTURES {
        let storage = mem();
        let path = format!("/agent/sessions/--x--/{name}");
        put(&storage, &path, &fixture_text(name));
        let mut first = open(&storage, &path, Persistence::Persistent);
        assert_eq!(
            read(&storage, &path),
            fixture_text(name),
            "{name}: opening never rewrites"
        );
        first.rewrite_entries().unwrap();
        first.close().unwrap();
        let written = read(&storage, &path);
        // The rewrite drops transient fields (partialJson) but no message.
        assert!(!written.contains("\"partialJson\""), "{name}");
        assert!(
            written.starts_with('{') && written.lines().next().unwrap().contains(r#""version":3"#),
            "{name}"
        );
        let again = open(&storage, &path, Persistence::Persistent);
        assert!(
            again.report().migration.is_none(),
            "{name}: second open needs no migration"
        );
        assert_eq!(
            read(&storage, &path),
            written,
            "{name}: a current file is not rewritten"
        );
        assert_eq!(first.entries().len(), again.entries().len());
        let ids: Vec<_> = first.entries().iter().map(|e| &e.id).collect();
        assert_eq!(
            ids,
            again.entries().iter().map(|e| &e.id).collect::<Vec<_>>(),
            "{name}: ids survive"
        );
        let third = open(&storage, &path, Persistence::ReadOnly);
        assert_eq!(
            again.context().to_json(),
            third.context().to_json(),
            "{name}"
        );
        let first_ctx = context_value(&first);
        let again_ctx = context_value(&again);
        assert_eq!(
            first_ctx["messages"].as_array().unwrap().len(),
            again_ctx["messages"].as_array().unwrap().len(),
            "{name}"
        );
        // No temp file is left behind; a migrated file's original bytes are kept aside.
        let backup = first.report().backup_path.clone();
        if first.report().migration.is_some() {
            let backup = backup.as_deref().expect("a migration keeps a backup");
            assert_eq!(read(&storage, backup), fixture_text(name), "{name}");
        }
        let names: Vec<_> = storage
            .list_dir("/agent/sessions/--x--")
            .unwrap()
            .into_iter()
            .map(|e| format!("/agent/sessions/--x--/{}", e.name))
            .filter(|n| !n.ends_with(".lock") && Some(n) != backup.as_ref())
            .collect();
        assert_eq!(names, vec![path.clone()], "{name}");
    }
}

#[test]
fn read_only_open_of_an_old_file_never_writes() {
    let storage = mem();
    let path = "/s/large-session.jsonl";
    let text = fixture_text("large-session.jsonl");
    put(&storage, path, &text);
    let s = open(&storage, path, Persistence::ReadOnly);
    assert!(s.report().migration.is_some());
    assert_eq!(read(&storage, path), text);
    let s2 = Session::from_text(Rc::new(xcsh_session::MemoryStorage::new()), &text, "/agent");
    assert_eq!(
        s.context().to_json(),
        s2.context().to_json(),
        "migration ids are deterministic"
    );
}

/// A context read in chunks ([`SessionContext::into_json_reader`], what the CLI, the
/// component's `context-reader` and npm's `writeContextJson` stream) is the same bytes as
/// `to_json`, for every chunk size, on the real fixtures, an empty session and a context
/// whose state fields are all set; chunk boundaries may cut a UTF-8 character.
#[test]
fn a_context_read_in_chunks_is_the_same_json_as_the_whole_text() {
    use std::io::Read;
    let mut sessions: Vec<Session> = EXPECTED
        .iter()
        .map(|(name, ..)| Session::from_text(mem(), &fixture_text(name), "/agent"))
        .collect();
    sessions.push(Session::in_memory(mem(), "/w"));
    let mut state = Session::in_memory(mem(), "/w");
    state
        .append_message(r#"{"role":"user","content":"héllo 日本 🎉","timestamp":1}"#)
        .unwrap();
    state.append_thinking_level_change(Some("high")).unwrap();
    state
        .append_model_change("anthropic/claude", Some("smol"))
        .unwrap();
    state.append_service_tier_change(Some("flex")).unwrap();
    state
        .append_mode_change("plan", Some(r#"{"a":1}"#))
        .unwrap();
    state.append_context_change("ctx", "tenant", "ns").unwrap();
    state
        .append_mcp_tool_selection(&["t1".into(), "t\"2".into()])
        .unwrap();
    state
        .append_message(r#"{"role":"user","content":"again","timestamp":2}"#)
        .unwrap();
    let all_set = state.context().to_json();
    for field in [
        "serviceTier",
        "modeData",
        "activeContextTenant",
        "selectedMCPToolNames\":[\"t1\"",
    ] {
        assert!(all_set.contains(field), "{field} in {all_set}");
    }
    sessions.push(state);
    for s in &sessions {
        let whole = s.context().to_json();
        for max in [1, 2, 3, 7, 64, 4096, whole.len(), whole.len() + 1] {
            let mut reader = s.context().into_json_reader();
            assert_eq!(reader.total_bytes(), whole.len());
            let mut joined = Vec::new();
            loop {
                let n = reader.read_into(&mut joined, max);
                assert!(n <= max);
                if n == 0 {
                    break;
                }
            }
            assert_eq!(String::from_utf8(joined).unwrap(), whole, "chunks of {max}");
            assert_eq!(
                reader.read_into(&mut Vec::new(), max),
                0,
                "stays at the end"
            );
        }
        // As std::io::Read, with a buffer of another size.
        let mut text = String::new();
        let mut reader = s.context().into_json_reader();
        let mut buf = [0u8; 5];
        let mut bytes = Vec::new();
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        text.push_str(std::str::from_utf8(&bytes).unwrap());
        assert_eq!(text, whole);
    }
}
