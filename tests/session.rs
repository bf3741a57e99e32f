//! The session manager, named after the behaviour the seed and SPEC-NOTES describe.

mod common;
use common::*;
use serde_json::{json, Value};
use std::rc::Rc;
use xcsh_session::session::{CompactionInput, Persistence, Session};
use xcsh_session::storage::{
    Layer, MemoryStorage, Storage, StorageError, StorageExt, StorageResult,
};
use xcsh_session::{Leaf, SessionError};

fn line_of(session: &Session, id: &str) -> String {
    session.entry(id).unwrap().json().to_string()
}

fn ids_of(s: &Session, id: &str) -> (String, String) {
    let e = s.entry(id).unwrap();
    (
        e.parent_id
            .clone()
            .map(|p| format!("\"{p}\""))
            .unwrap_or("null".into()),
        e.timestamp().to_string(),
    )
}

// ---- key order and formatting (byte-identical with the agent) ----

#[test]
fn every_append_method_writes_the_agents_key_order() {
    let mut s = Session::in_memory(mem(), "/w");
    let m = s
        .append_message(r#"{"role":"user","content":"hi","timestamp":1}"#)
        .unwrap();
    let (p, t) = ids_of(&s, &m);
    assert_eq!(
        line_of(&s, &m),
        format!(
            r#"{{"type":"message","id":"{m}","parentId":{p},"timestamp":"{t}","message":{{"role":"user","content":"hi","timestamp":1}}}}"#
        )
    );

    let tl = s.append_thinking_level_change(None).unwrap();
    let (p, t) = ids_of(&s, &tl);
    assert_eq!(
        line_of(&s, &tl),
        format!(
            r#"{{"type":"thinking_level_change","id":"{tl}","parentId":{p},"timestamp":"{t}","thinkingLevel":null}}"#
        )
    );

    let mc = s
        .append_model_change("openai/gpt-4o", Some("default"))
        .unwrap();
    let (p, t) = ids_of(&s, &mc);
    assert_eq!(
        line_of(&s, &mc),
        format!(
            r#"{{"type":"model_change","id":"{mc}","parentId":{p},"timestamp":"{t}","model":"openai/gpt-4o","role":"default"}}"#
        )
    );

    let c = s
        .append_compaction(&CompactionInput {
            summary: "S".into(),
            short_summary: Some("s".into()),
            first_kept_entry_id: m.clone(),
            tokens_before: 42000,
            details: Some(r#"{"readFiles":["a"]}"#.into()),
            from_extension: Some(false),
            preserve_data: Some(r#"{"hookState":true}"#.into()),
        })
        .unwrap();
    let (p, t) = ids_of(&s, &c);
    assert_eq!(
        line_of(&s, &c),
        format!(
            r#"{{"type":"compaction","id":"{c}","parentId":{p},"timestamp":"{t}","summary":"S","shortSummary":"s","firstKeptEntryId":"{m}","tokensBefore":42000,"details":{{"readFiles":["a"]}},"fromExtension":false,"preserveData":{{"hookState":true}}}}"#
        )
    );

    let cu = s
        .append_custom_entry("ext", Some(r#"{"state":1}"#))
        .unwrap();
    let (p, t) = ids_of(&s, &cu);
    assert_eq!(
        line_of(&s, &cu),
        format!(
            r#"{{"type":"custom","customType":"ext","data":{{"state":1}},"id":"{cu}","parentId":{p},"timestamp":"{t}"}}"#
        )
    );

    let cm = s
        .append_custom_message_entry(
            "ext",
            r#""Injected""#,
            true,
            Some(r#"{"debug":false}"#),
            None,
        )
        .unwrap();
    let (p, t) = ids_of(&s, &cm);
    assert_eq!(
        line_of(&s, &cm),
        format!(
            r#"{{"type":"custom_message","customType":"ext","content":"Injected","display":true,"details":{{"debug":false}},"attribution":"agent","id":"{cm}","parentId":{p},"timestamp":"{t}"}}"#
        )
    );

    let l = s.append_label_change(&m, Some("checkpoint")).unwrap();
    let (p, t) = ids_of(&s, &l);
    assert_eq!(
        line_of(&s, &l),
        format!(
            r#"{{"type":"label","id":"{l}","parentId":{p},"timestamp":"{t}","targetId":"{m}","label":"checkpoint"}}"#
        )
    );

    let tt = s
        .append_ttsr_injection(&["ruleA".into(), "ruleB".into()])
        .unwrap();
    let (p, t) = ids_of(&s, &tt);
    assert_eq!(
        line_of(&s, &tt),
        format!(
            r#"{{"type":"ttsr_injection","id":"{tt}","parentId":{p},"timestamp":"{t}","injectedRules":["ruleA","ruleB"]}}"#
        )
    );

    let si = s
        .append_session_init(
            "sys",
            "task",
            &["read".into()],
            Some(r#"{"type":"object"}"#),
        )
        .unwrap();
    let (p, t) = ids_of(&s, &si);
    assert_eq!(
        line_of(&s, &si),
        format!(
            r#"{{"type":"session_init","id":"{si}","parentId":{p},"timestamp":"{t}","systemPrompt":"sys","task":"task","tools":["read"],"outputSchema":{{"type":"object"}}}}"#
        )
    );

    let mo = s
        .append_mode_change("plan", Some(r#"{"planFile":"/tmp/plan.md"}"#))
        .unwrap();
    let (p, t) = ids_of(&s, &mo);
    assert_eq!(
        line_of(&s, &mo),
        format!(
            r#"{{"type":"mode_change","id":"{mo}","parentId":{p},"timestamp":"{t}","mode":"plan","data":{{"planFile":"/tmp/plan.md"}}}}"#
        )
    );

    let cc = s.append_context_change("prod", "acme", "ns").unwrap();
    let (p, t) = ids_of(&s, &cc);
    assert_eq!(
        line_of(&s, &cc),
        format!(
            r#"{{"type":"context_change","id":"{cc}","parentId":{p},"timestamp":"{t}","contextName":"prod","tenant":"acme","namespace":"ns"}}"#
        )
    );

    let st = s.append_service_tier_change(Some("flex")).unwrap();
    let (p, t) = ids_of(&s, &st);
    assert_eq!(
        line_of(&s, &st),
        format!(
            r#"{{"type":"service_tier_change","id":"{st}","parentId":{p},"timestamp":"{t}","serviceTier":"flex"}}"#
        )
    );

    let mcp = s.append_mcp_tool_selection(&["mcp_a".into()]).unwrap();
    let (p, t) = ids_of(&s, &mcp);
    assert_eq!(
        line_of(&s, &mcp),
        format!(
            r#"{{"type":"mcp_tool_selection","id":"{mcp}","parentId":{p},"timestamp":"{t}","selectedToolNames":["mcp_a"]}}"#
        )
    );

    s.branch(&m).unwrap();
    let bs = s
        .branch_with_summary(Some(&m), "abandoned", None, Some(true))
        .unwrap();
    let (p, t) = ids_of(&s, &bs);
    assert_eq!(p, format!("\"{m}\""));
    assert_eq!(
        line_of(&s, &bs),
        format!(
            r#"{{"type":"branch_summary","id":"{bs}","parentId":{p},"timestamp":"{t}","fromId":"{m}","summary":"abandoned","fromExtension":true}}"#
        )
    );
}

#[test]
fn entry_ids_are_8_hex_and_timestamps_iso_with_millis() {
    let mut s = Session::in_memory(mem(), "/w");
    let id = s.append_message(&user("x")).unwrap();
    assert_eq!(id.len(), 8);
    assert!(id
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    let ts = s.entry(&id).unwrap().timestamp();
    assert_eq!(ts.len(), 24);
    assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.');
    assert_eq!(s.session_id().len(), 16);
}

#[test]
fn new_header_key_order_and_file_name() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hi")).unwrap();
    s.append_message(&assistant("hello")).unwrap();
    let file = s.file().unwrap().to_string();
    let text = read(&storage, &file);
    let header = text.lines().next().unwrap();
    let h: Value = serde_json::from_str(header).unwrap();
    assert_eq!(
        header,
        format!(
            r#"{{"type":"session","version":3,"id":"{}","timestamp":"{}","cwd":"/work/pi"}}"#,
            h["id"].as_str().unwrap(),
            h["timestamp"].as_str().unwrap()
        )
    );
    let expected_name = format!(
        "{}_{}.jsonl",
        h["timestamp"].as_str().unwrap().replace([':', '.'], "-"),
        h["id"].as_str().unwrap()
    );
    assert_eq!(file, format!("/agent/sessions/--work-pi--/{expected_name}"));
}

// ---- loading ----

#[test]
fn missing_file_gives_an_empty_session_at_that_path() {
    let storage = mem();
    let s = open(&storage, "/s/none.jsonl", Persistence::Persistent);
    assert!(s.entries().is_empty());
    assert_eq!(s.file(), Some("/s/none.jsonl"));
    assert!(
        !storage.exists("/s/none.jsonl"),
        "nothing written before an assistant message"
    );
}

#[test]
fn unknown_fields_and_types_survive_a_load_save_round_trip() {
    let storage = mem();
    let original = concat!(
        r#"{"type":"session","version":3,"id":"abc","timestamp":"2026-02-16T10:20:30.000Z","cwd":"/w","x-extra":{"k":[1,2.50,"é"]}}"#,
        "\n",
        r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-02-16T10:21:00.000Z","message":{"role":"assistant","provider":"p","model":"m","content":[],"future":1e-7},"zz":true}"#,
        "\n",
        r#"{"type":"hologram","id":"b1c2d3e4","parentId":"a1b2c3d4","timestamp":"2026-02-16T10:22:00.000Z","payload":{"deep":[{"x":null}]}}"#,
        "\n",
    );
    put(&storage, "/s/f.jsonl", original);
    let mut s = open(&storage, "/s/f.jsonl", Persistence::Persistent);
    assert_eq!(
        s.to_jsonl().unwrap(),
        original,
        "a rewrite reproduces the file byte for byte"
    );
    s.set_session_name("Named", "user").unwrap();
    let rewritten = read(&storage, "/s/f.jsonl");
    assert!(rewritten.starts_with(r#"{"type":"session","version":3,"id":"abc","timestamp":"2026-02-16T10:20:30.000Z","cwd":"/w","x-extra":{"k":[1,2.50,"é"]},"title":"Named","titleSource":"user"}"#));
    assert_eq!(
        rewritten.split_once('\n').unwrap().1,
        original.split_once('\n').unwrap().1,
        "entries untouched"
    );
    let id = s.append_message(&user("more")).unwrap();
    let appended = read(&storage, "/s/f.jsonl");
    assert!(appended.starts_with(&rewritten));
    assert_eq!(
        appended[rewritten.len()..],
        format!("{}\n", line_of(&s, &id))
    );
}

#[test]
fn invalid_header_is_salvaged_and_the_original_kept_aside() {
    let storage = mem();
    let original = concat!(
        "garbage that is not a header\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-02-16T10:21:00.000Z","message":{"role":"user","content":"keep me"}}"#,
        "\n",
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-02-16T10:21:01.000Z","message":{"role":"assistant","provider":"p","model":"m","content":[]}}"#,
        "\n",
    );
    put(&storage, "/s/bad.jsonl", original);
    // First record parses but is not a header.
    let original2 = original.replacen("garbage that is not a header\n", "", 1);
    put(&storage, "/s/bad2.jsonl", &original2);
    for (path, text) in [
        ("/s/bad.jsonl", original),
        ("/s/bad2.jsonl", original2.as_str()),
    ] {
        let mut s = open(&storage, path, Persistence::Persistent);
        assert_eq!(read(&storage, path), text, "{path}: opening never rewrites");
        s.rewrite_entries().unwrap();
        let r = s.report();
        assert_eq!(s.entries().len(), 2, "{path}: entries salvaged");
        let backup = r.backup_path.clone().expect("original kept aside");
        assert!(backup.starts_with(&format!("{path}.corrupt-")));
        assert_eq!(read(&storage, &backup), text, "original bytes preserved");
        let fixed = read(&storage, path);
        assert!(fixed
            .lines()
            .next()
            .unwrap()
            .contains(r#""type":"session""#));
        assert!(fixed.contains("keep me"));
        assert!(s.warnings().iter().any(|w| w.contains(".corrupt-")));
    }
    // bad2's first record was an entry, so the header problem is reported.
    let s = open(&storage, "/s/bad2.jsonl", Persistence::ReadOnly);
    assert!(
        s.report().header_problem.is_none(),
        "repaired file now has a header"
    );
}

#[test]
fn read_only_sessions_refuse_writes_and_never_touch_the_file() {
    let storage = mem();
    let text =
        "not a header\n{\"type\":\"label\",\"id\":\"x\",\"parentId\":null,\"timestamp\":\"t\"}\n";
    put(&storage, "/s/r.jsonl", text);
    let mut s = open(&storage, "/s/r.jsonl", Persistence::ReadOnly);
    assert!(s.report().header_problem.is_some());
    assert!(matches!(
        s.append_message(&user("x")),
        Err(SessionError::ReadOnly(_))
    ));
    assert_eq!(read(&storage, "/s/r.jsonl"), text);
    assert_eq!(
        storage.list_dir("/s").unwrap().len(),
        1,
        "no backup, no temp file"
    );
}

#[test]
fn appending_after_a_torn_tail_starts_a_new_line() {
    let storage = mem();
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-02-16T10:20:30.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-02-16T10:21:00.000Z","message":{"role":"assistant","provider":"p","model":"m","content":[]}}"#,
        "\n",
        r#"{"type":"message","id":"a2","parentId":"a1","timest"#
    );
    put(&storage, "/s/t.jsonl", text);
    let mut s = open(&storage, "/s/t.jsonl", Persistence::Persistent);
    assert_eq!(s.entries().len(), 1);
    let id = s.append_message(&user("after crash")).unwrap();
    let again = open(&storage, "/s/t.jsonl", Persistence::ReadOnly);
    assert_eq!(again.entries().len(), 2);
    assert_eq!(again.leaf_id(), Some(id.as_str()));
    assert!(
        read(&storage, "/s/t.jsonl").starts_with(text),
        "the torn bytes are kept, not overwritten"
    );
}

// ---- tree and leaf ----

#[test]
fn each_append_is_a_child_of_the_leaf_and_becomes_the_leaf() {
    let mut s = Session::in_memory(mem(), "/w");
    let a = s.append_message(&user("a")).unwrap();
    let b = s.append_message(&assistant("b")).unwrap();
    assert_eq!(s.entry(&a).unwrap().parent_id, None);
    assert_eq!(s.entry(&b).unwrap().parent_id.as_deref(), Some(a.as_str()));
    assert_eq!(s.leaf_id(), Some(b.as_str()));
}

#[test]
fn branch_moves_only_the_leaf() {
    let mut s = Session::in_memory(mem(), "/w");
    let a = s.append_message(&user("a")).unwrap();
    let b = s.append_message(&assistant("b")).unwrap();
    let before: Vec<String> = s.entries().iter().map(|e| e.json().to_string()).collect();
    s.branch(&a).unwrap();
    assert_eq!(s.leaf_id(), Some(a.as_str()));
    assert_eq!(
        before,
        s.entries()
            .iter()
            .map(|e| e.json().to_string())
            .collect::<Vec<_>>()
    );
    let c = s.append_message(&user("c")).unwrap();
    assert_eq!(s.entry(&c).unwrap().parent_id.as_deref(), Some(a.as_str()));
    let kids: Vec<&str> = s.children(&a).iter().map(|e| e.id.as_str()).collect();
    assert_eq!(kids, vec![b.as_str(), c.as_str()]);
}

#[test]
fn reset_leaf_makes_the_next_append_a_new_root() {
    let mut s = Session::in_memory(mem(), "/w");
    s.append_message(&user("a")).unwrap();
    s.reset_leaf();
    assert_eq!(s.leaf_id(), None);
    assert_eq!(
        context_value(&s)["messages"],
        json!([]),
        "null leaf: empty context"
    );
    let r = s.append_message(&user("root2")).unwrap();
    assert_eq!(s.entry(&r).unwrap().parent_id, None);
    assert_eq!(s.tree().roots.len(), 2);
}

#[test]
fn branch_with_summary_from_root_uses_the_literal_root() {
    let mut s = Session::in_memory(mem(), "/w");
    s.append_message(&user("a")).unwrap();
    let bs = s.branch_with_summary(None, "gave up", None, None).unwrap();
    let v = s.entry(&bs).unwrap().to_value();
    assert_eq!(v["fromId"], "root");
    assert_eq!(v["parentId"], Value::Null);
    let ctx = context_value(&s);
    assert_eq!(ctx["messages"][0]["role"], "branchSummary");
    assert_eq!(ctx["messages"][0]["fromId"], "root");
}

#[test]
fn lookups_of_unknown_ids_fail_with_entry_not_found() {
    let mut s = Session::in_memory(mem(), "/w");
    for err in [
        s.entry("nope").map(|_| ()).unwrap_err(),
        s.branch("nope").unwrap_err(),
        s.append_label_change("nope", Some("x"))
            .map(|_| ())
            .unwrap_err(),
        s.branch_path(Some("nope")).map(|_| ()).unwrap_err(),
        s.create_branched_session("nope").map(|_| ()).unwrap_err(),
    ] {
        assert_eq!(err.to_string(), "Entry nope not found");
        assert!(matches!(err, SessionError::EntryNotFound(_)));
    }
}

#[test]
fn tree_roots_are_null_self_and_orphan_parents_children_by_timestamp() {
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"r1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"1"}}"#,
        "\n",
        r#"{"type":"message","id":"late","parentId":"r1","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"late"}}"#,
        "\n",
        r#"{"type":"message","id":"early","parentId":"r1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"early"}}"#,
        "\n",
        r#"{"type":"message","id":"self","parentId":"self","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"self"}}"#,
        "\n",
        r#"{"type":"message","id":"orph","parentId":"gone","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"orphan"}}"#,
        "\n",
    );
    let s = Session::from_text(mem(), text, "/agent");
    let tree = s.tree();
    let roots: Vec<&str> = tree
        .roots
        .iter()
        .map(|&i| s.entries()[i].id.as_str())
        .collect();
    assert_eq!(roots, vec!["r1", "self", "orph"]);
    let kids: Vec<&str> = tree.children[0]
        .iter()
        .map(|&i| s.entries()[i].id.as_str())
        .collect();
    assert_eq!(kids, vec!["early", "late"]);
    let json: Value = serde_json::from_str(&tree.to_json(&s)).unwrap();
    assert_eq!(json[0]["children"][0]["entry"]["id"], "early");
    // The self-parented entry's own context does not loop.
    assert_eq!(
        serde_json::from_str::<Value>(&s.context_at(Leaf::Id("self")).to_json()).unwrap()
            ["messages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// A tree node as (id, parentId, type, timestamp, label, depth, children).
type FlatNode = (
    String,
    Option<String>,
    String,
    String,
    Option<String>,
    usize,
    usize,
);

/// The nested JSON tree flattened in pre-order.
fn flatten_json_tree(nodes: &Value, depth: usize, out: &mut Vec<FlatNode>) {
    for n in nodes.as_array().unwrap() {
        let e = &n["entry"];
        let kids = &n["children"];
        out.push((
            e["id"].as_str().unwrap().to_string(),
            e["parentId"].as_str().map(str::to_string),
            e["type"].as_str().unwrap().to_string(),
            e["timestamp"].as_str().unwrap_or_default().to_string(),
            n["label"].as_str().map(str::to_string),
            depth,
            kids.as_array().unwrap().len(),
        ));
        flatten_json_tree(kids, depth + 1, out);
    }
}

#[test]
fn tree_nodes_are_the_json_tree_in_pre_order_without_payloads() {
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"r1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"1"}}"#,
        "\n",
        r#"{"type":"message","id":"late","parentId":"r1","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"late"}}"#,
        "\n",
        r#"{"type":"future_kind","id":"early","parentId":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        "\n",
        r#"{"type":"message","id":"deep","parentId":"early","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"d"}}"#,
        "\n",
        r#"{"type":"message","id":"orph","parentId":"gone","message":{"role":"user","content":"orphan"}}"#,
        "\n",
        r#"{"type":"label","id":"l1","parentId":"deep","timestamp":"2026-01-01T00:00:05.000Z","targetId":"r1","label":"start"}"#,
        "\n",
    );
    let s = Session::from_text(mem(), text, "/agent");
    let tree = s.tree();
    let nodes = tree.nodes(&s);
    let mut want = Vec::new();
    flatten_json_tree(
        &serde_json::from_str(&tree.to_json(&s)).unwrap(),
        0,
        &mut want,
    );
    let got: Vec<FlatNode> = nodes
        .iter()
        .map(|n| {
            (
                n.id.clone(),
                n.parent_id.clone(),
                n.entry_type.clone(),
                n.timestamp.clone(),
                n.label.clone(),
                n.depth,
                n.child_count,
            )
        })
        .collect();
    assert_eq!(got, want);
    let ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["r1", "early", "deep", "l1", "late", "orph"]);
    assert_eq!(nodes[0].label.as_deref(), Some("start"));
    assert_eq!(
        nodes[1].entry_type, "future_kind",
        "unknown types as written"
    );
    for n in &nodes {
        assert_eq!(s.entries()[n.index].id, n.id, "index is the file position");
    }
    assert!(Session::in_memory(mem(), "/w")
        .tree()
        .nodes(&Session::in_memory(mem(), "/w"))
        .is_empty());
}

#[test]
fn labels_are_set_replaced_and_cleared() {
    let mut s = Session::in_memory(mem(), "/w");
    let a = s.append_message(&user("a")).unwrap();
    s.append_label_change(&a, Some("one")).unwrap();
    s.append_label_change(&a, Some("two")).unwrap();
    assert_eq!(s.label(&a), Some("two"));
    let clear = s.append_label_change(&a, None).unwrap();
    assert_eq!(s.label(&a), None);
    assert!(
        !s.entry(&clear).unwrap().json().contains("\"label\":"),
        "no label key when clearing"
    );
    let tree: Value = serde_json::from_str(&s.tree().to_json(&s)).unwrap();
    assert!(tree[0].get("label").is_none());
}

#[test]
fn branched_session_keeps_the_path_and_leaves_no_orphaned_parent_ids() {
    let storage = mem();
    let mut s = create(&storage);
    let a = s.append_message(&user("a")).unwrap();
    let l1 = s.append_label_change(&a, Some("start")).unwrap();
    let b = s.append_message(&assistant("b")).unwrap();
    s.append_label_change(&b, Some("answer")).unwrap();
    let c = s.append_message(&user("c")).unwrap();
    s.branch(&a).unwrap();
    s.append_message(&user("side")).unwrap();
    let old_file = s.file().unwrap().to_string();
    let new_file = s.create_branched_session(&c).unwrap().unwrap();
    assert_ne!(old_file, new_file);
    assert_eq!(s.header().parent_session(), Some(old_file.as_str()));
    let reloaded = open(&storage, &new_file, Persistence::ReadOnly);
    for e in reloaded.entries() {
        if let Some(p) = &e.parent_id {
            assert!(
                reloaded.index_of(p).is_some(),
                "dangling parentId {p} on {}",
                e.id
            );
        }
    }
    let ids: Vec<&str> = reloaded.entries().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(&ids[..3], &[a.as_str(), b.as_str(), c.as_str()]);
    assert!(!ids.contains(&l1.as_str()));
    assert_eq!(
        reloaded.entry(&b).unwrap().parent_id.as_deref(),
        Some(a.as_str()),
        "re-attached over the dropped label"
    );
    assert_eq!(reloaded.label(&a), Some("start"));
    assert_eq!(reloaded.label(&b), Some("answer"));
    assert!(!reloaded.entries().iter().any(|e| e.json().contains("side")));
}

#[test]
fn a_branched_session_is_written_at_once_without_a_name_even_before_any_reply() {
    let storage = mem();
    let mut s = create(&storage);
    s.set_session_name("the original", "user").unwrap();
    let a = s.append_message(&user("a")).unwrap();
    s.append_message(&user("b")).unwrap();
    let old_file = s.file().unwrap().to_string();
    assert!(!storage.exists(&old_file), "no reply yet: not written");
    let new_file = s.create_branched_session(&a).unwrap().unwrap();
    let reloaded = open(&storage, &new_file, Persistence::ReadOnly);
    assert_eq!(reloaded.header().parent_session(), Some(old_file.as_str()));
    assert_eq!(reloaded.header().title(), None);
    assert_eq!(reloaded.entries().len(), 1);
}

#[test]
fn an_in_memory_branched_session_has_no_parent_session() {
    let mut s = Session::in_memory(mem(), "/w");
    let a = s.append_message(&user("a")).unwrap();
    assert_eq!(s.create_branched_session(&a).unwrap(), None);
    assert_eq!(s.header().parent_session(), None);
    assert_eq!(s.entries().len(), 1);
}

// ---- context ----

fn ctx_of(lines: &[&str]) -> Value {
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    );
    text.push('\n');
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    serde_json::from_str(
        &Session::from_text(mem(), &text, "/agent")
            .context()
            .to_json(),
    )
    .unwrap()
}

#[test]
fn empty_session_context_has_every_default() {
    let s = Session::in_memory(mem(), "/w");
    assert_eq!(
        s.context().to_json(),
        r#"{"messages":[],"thinkingLevel":"off","models":{},"injectedTtsrRules":[],"selectedMCPToolNames":[],"hasPersistedMCPToolSelection":false,"mode":"none"}"#
    );
}

#[test]
fn runtime_state_is_derived_along_the_path() {
    let ctx = ctx_of(&[
        r#"{"type":"thinking_level_change","id":"1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"high"}"#,
        r#"{"type":"thinking_level_change","id":"2","parentId":"1","timestamp":"2026-01-01T00:00:02.000Z","thinkingLevel":null}"#,
        r#"{"type":"model_change","id":"3","parentId":"2","timestamp":"2026-01-01T00:00:03.000Z","model":"openai/gpt-4o"}"#,
        r#"{"type":"model_change","id":"4","parentId":"3","timestamp":"2026-01-01T00:00:04.000Z","model":"x/small","role":"smol"}"#,
        r#"{"type":"model_change","id":"5","parentId":"4","timestamp":"2026-01-01T00:00:05.000Z","provider":"old","modelId":"v1-form"}"#,
        r#"{"type":"message","id":"6","parentId":"5","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"assistant","provider":"anthropic","model":"claude","content":[]}}"#,
        r#"{"type":"ttsr_injection","id":"7","parentId":"6","timestamp":"2026-01-01T00:00:07.000Z","injectedRules":["a","b"]}"#,
        r#"{"type":"ttsr_injection","id":"8","parentId":"7","timestamp":"2026-01-01T00:00:08.000Z","injectedRules":["b","c"]}"#,
        r#"{"type":"mcp_tool_selection","id":"9","parentId":"8","timestamp":"2026-01-01T00:00:09.000Z","selectedToolNames":["x","y"]}"#,
        r#"{"type":"mcp_tool_selection","id":"10","parentId":"9","timestamp":"2026-01-01T00:00:10.000Z","selectedToolNames":["z"]}"#,
        r#"{"type":"mode_change","id":"11","parentId":"10","timestamp":"2026-01-01T00:00:11.000Z","mode":"plan","data":{"planFile":"/p.md"}}"#,
        r#"{"type":"service_tier_change","id":"12","parentId":"11","timestamp":"2026-01-01T00:00:12.000Z","serviceTier":"priority"}"#,
        r#"{"type":"context_change","id":"13","parentId":"12","timestamp":"2026-01-01T00:00:13.000Z","contextName":"prod","tenant":"acme","namespace":"n"}"#,
        r#"{"type":"session_init","id":"14","parentId":"13","timestamp":"2026-01-01T00:00:14.000Z","systemPrompt":"s","task":"t","tools":[]}"#,
        r#"{"type":"custom","customType":"e","data":{},"id":"15","parentId":"14","timestamp":"2026-01-01T00:00:15.000Z"}"#,
    ]);
    assert_eq!(ctx["thinkingLevel"], "off", "null level means off");
    assert_eq!(
        ctx["models"],
        json!({"default": "anthropic/claude", "smol": "x/small"}),
        "assistant overrides model_change; v1 form ignored"
    );
    assert_eq!(ctx["injectedTtsrRules"], json!(["a", "b", "c"]));
    assert_eq!(
        ctx["selectedMCPToolNames"],
        json!(["z"]),
        "replaced, not merged"
    );
    assert_eq!(ctx["hasPersistedMCPToolSelection"], true);
    assert_eq!(ctx["mode"], "plan");
    assert_eq!(ctx["modeData"], json!({"planFile": "/p.md"}));
    assert_eq!(ctx["serviceTier"], "priority");
    assert_eq!(ctx["activeContextName"], "prod");
    assert_eq!(ctx["activeContextTenant"], "acme");
    assert_eq!(
        ctx["messages"].as_array().unwrap().len(),
        1,
        "custom and session_init add no messages"
    );
}

#[test]
fn compaction_emits_summary_then_kept_then_later_entries() {
    let ctx = ctx_of(&[
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"dropped"}}"#,
        r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"kept"}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"m2","timestamp":"2026-01-01T00:00:03.000Z","summary":"old","firstKeptEntryId":"m1","tokensBefore":1}"#,
        r#"{"type":"message","id":"m3","parentId":"c1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"between"}}"#,
        r#"{"type":"compaction","id":"c2","parentId":"m3","timestamp":"2026-01-01T00:00:05.000Z","summary":"new","shortSummary":"short","firstKeptEntryId":"m2","tokensBefore":42}"#,
        r#"{"type":"branch_summary","id":"b1","parentId":"c2","timestamp":"2026-01-01T00:00:06.000Z","fromId":"x","summary":""}"#,
        r#"{"type":"custom_message","customType":"t","content":"hello","display":false,"id":"cm","parentId":"b1","timestamp":"2026-01-01T00:00:07.000Z"}"#,
    ]);
    assert_eq!(
        ctx["messages"],
        json!([
            {"role":"compactionSummary","summary":"new","shortSummary":"short","tokensBefore":42,"timestamp":1767225605000i64},
            {"role":"user","content":"kept"},
            {"role":"user","content":"between"},
            {"role":"custom","customType":"t","content":"hello","display":false,"timestamp":1767225607000i64}
        ]),
        "last compaction wins; empty branch summary adds nothing"
    );
}

#[test]
fn first_kept_entry_not_on_the_path_keeps_nothing_before_the_compaction() {
    let ctx = ctx_of(&[
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"m1","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"elsewhere","tokensBefore":1}"#,
    ]);
    assert_eq!(ctx["messages"].as_array().unwrap().len(), 1);
}

#[test]
fn remote_compaction_payload_replaces_the_kept_entries() {
    let ctx = ctx_of(&[
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"m1","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"m1","tokensBefore":1,"preserveData":{"openaiRemoteCompaction":{"provider":"openai","replacementHistory":[{"type":"message"}]}}}"#,
        r#"{"type":"message","id":"m2","parentId":"c1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"after"}}"#,
    ]);
    assert_eq!(
        ctx["messages"][0]["providerPayload"],
        json!({"type":"openaiResponsesHistory","provider":"openai","items":[{"type":"message"}]})
    );
    assert_eq!(ctx["messages"].as_array().unwrap().len(), 2);
    // An empty provider does not count.
    let ctx = ctx_of(&[
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"m1","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"m1","tokensBefore":1,"preserveData":{"openaiRemoteCompaction":{"provider":"","replacementHistory":[]}}}"#,
    ]);
    assert!(ctx["messages"][0].get("providerPayload").is_none());
    assert_eq!(ctx["messages"].as_array().unwrap().len(), 2);
}

#[test]
fn unknown_leaf_falls_back_to_last_entry_and_cycles_do_not_hang() {
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}"#,
        "\n",
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b"}}"#,
        "\n",
    );
    let s = Session::from_text(mem(), text, "/agent");
    let ctx = s.context_at(Leaf::Id("unknown"));
    assert_eq!(ctx.cycle_at.as_deref(), Some("b"));
    assert_eq!(ctx.messages.len(), 2);
    assert_eq!(
        s.tree().roots.len(),
        1,
        "a cycle with no root is still shown once"
    );
}

// ---- persistence ----

#[test]
fn nothing_is_written_before_the_first_assistant_message() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hi")).unwrap();
    s.append_thinking_level_change(Some("high")).unwrap();
    let file = s.file().unwrap().to_string();
    assert!(!storage.exists(&file));
    s.append_message(&assistant("hello")).unwrap();
    let text = read(&storage, &file);
    assert_eq!(
        text.lines().count(),
        4,
        "header + all three entries flushed at once"
    );
    let id = s.append_message(&user("next")).unwrap();
    let grown = read(&storage, &file);
    assert_eq!(grown.lines().count(), 5);
    assert_eq!(grown.lines().last().unwrap(), line_of(&s, &id));
}

#[test]
fn ensure_on_disk_writes_a_new_session_before_any_reply() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("do not lose me")).unwrap();
    s.ensure_on_disk().unwrap();
    let file = s.file().unwrap().to_string();
    assert!(read(&storage, &file).contains("do not lose me"));
    s.append_message(&user("second")).unwrap();
    assert_eq!(
        read(&storage, &file).lines().count(),
        3,
        "then appends incrementally"
    );
}

/// A storage that fails every write-like call after `budget` of them succeeded.
struct Failing {
    inner: MemoryStorage,
    budget: std::cell::Cell<usize>,
}

impl Failing {
    fn spend(&self, path: &str) -> StorageResult<()> {
        let left = self.budget.get();
        if left == 0 {
            return Err(StorageError::Other(format!("EIO: disk on fire: {path}")));
        }
        self.budget.set(left - 1);
        Ok(())
    }
}

impl Layer for Failing {
    fn inner(&self) -> &dyn Storage {
        &self.inner
    }
    fn write(&self, p: &str, d: &[u8]) -> StorageResult<()> {
        self.spend(p)?;
        self.inner.write(p, d)
    }
    fn append(&self, p: &str, d: &[u8]) -> StorageResult<()> {
        self.spend(p)?;
        self.inner.append(p, d)
    }
    fn rename(&self, a: &str, b: &str) -> StorageResult<()> {
        self.spend(a)?;
        self.inner.rename(a, b)
    }
    fn fsync(&self, p: &str) -> StorageResult<()> {
        self.spend(p)?;
        self.inner.fsync(p)
    }
    fn create_new(&self, p: &str, d: &[u8]) -> StorageResult<()> {
        self.spend(p)?;
        self.inner.create_new(p, d)
    }
}

#[test]
fn the_first_persistence_error_is_latched_reported_once_and_reraised() {
    let storage = Rc::new(Failing {
        inner: MemoryStorage::new(),
        budget: std::cell::Cell::new(5),
    });
    let mut s = Session::create(
        storage.clone(),
        &xcsh_session::session::CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/w".into(),
            ..Default::default()
        },
    );
    s.append_message(&user("a")).unwrap();
    s.append_message(&assistant("b")).unwrap(); // lock; write, fsync, rename, fsync: budget spent
    let err = s.append_message(&user("c")).unwrap_err();
    assert!(matches!(err, SessionError::Persistence { .. }), "{err}");
    assert!(err.to_string().contains("disk on fire"));
    storage.budget.set(100); // the disk recovers, the latch stays
    assert_eq!(s.append_message(&user("d")).unwrap_err(), err);
    assert_eq!(s.flush().unwrap_err(), err);
    assert_eq!(s.set_session_name("x", "user").unwrap_err(), err);
    assert_eq!(
        s.warnings()
            .iter()
            .filter(|w| w.contains("disk on fire"))
            .count(),
        1,
        "reported once"
    );
    assert_eq!(
        s.entries().len(),
        3,
        "the in-memory state keeps the entry that failed to persist"
    );
}

#[test]
fn a_failed_atomic_rewrite_leaves_the_old_file_and_no_temp_file() {
    let storage = Rc::new(Failing {
        inner: MemoryStorage::new(),
        budget: std::cell::Cell::new(100),
    });
    let mut s = Session::create(
        storage.clone(),
        &xcsh_session::session::CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/w".into(),
            ..Default::default()
        },
    );
    s.append_message(&user("a")).unwrap();
    s.append_message(&assistant("b")).unwrap();
    let file = s.file().unwrap().to_string();
    let before = storage.inner.read(&file).unwrap();
    storage.budget.set(1); // the temp write succeeds, its fsync fails
    assert!(s.set_session_name("new name", "user").is_err());
    assert_eq!(storage.inner.read(&file).unwrap(), before);
    let dir = xcsh_session::storage::parent(&file);
    let names: Vec<String> = storage
        .inner
        .list_dir(dir)
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert!(
        !names.iter().any(|n| n.ends_with(".tmp")),
        "temp file removed: {names:?}"
    );
    assert_eq!(
        names.len(),
        2,
        "the session file and its writer lock: {names:?}"
    );
}

#[test]
fn images_are_externalized_on_persist_and_rehydrated_on_load() {
    let storage = mem();
    let mut s = create(&storage);
    let data = "A".repeat(1024);
    let msg = format!(
        r#"{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":1}}"#
    );
    let id = s.append_message(&msg).unwrap();
    s.append_message(&assistant("nice")).unwrap();
    let file = s.file().unwrap().to_string();
    let text = read(&storage, &file);
    let hash = "ef115a0e0c15cdc41958ca46b5b14b456115f4baec5e3ca68599d2a8f435e3b8";
    assert!(text.contains(&format!("blob:sha256:{hash}")));
    assert!(!text.contains(&data));
    assert_eq!(
        storage.read(&format!("/agent/blobs/{hash}")).unwrap().len(),
        768
    );
    assert!(
        s.entry(&id).unwrap().json().contains(&data),
        "memory keeps the inline image"
    );
    let reloaded = open(&storage, &file, Persistence::ReadOnly);
    let e = reloaded.entry(&id).unwrap();
    assert!(
        reloaded.entry_json(e).contains(&data),
        "rehydrated on output"
    );
    assert!(reloaded.context().to_json().contains(&data));
    assert!(reloaded.report().missing_blobs.is_empty());
}

#[test]
fn a_missing_blob_keeps_the_reference_and_warns() {
    let storage = mem();
    let hash = "1".repeat(64);
    let text = format!(
        "{}\n{}\n",
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        format_args!(
            r#"{{"type":"message","id":"m","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"image","data":"blob:sha256:{hash}","mimeType":"image/png"}}]}}}}"#
        )
    );
    put(&storage, "/s/f.jsonl", &text);
    let s = open(&storage, "/s/f.jsonl", Persistence::ReadOnly);
    assert_eq!(s.report().missing_blobs, vec![hash.clone()]);
    assert!(s.warnings()[0].contains(&hash));
    assert!(s
        .context()
        .to_json()
        .contains(&format!("blob:sha256:{hash}")));
}

#[test]
fn set_session_name_sanitizes_and_rewrites_the_header() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("a")).unwrap();
    s.append_message(&assistant("b")).unwrap();
    assert!(s
        .set_session_name("  Fix\u{7} the  bug \nsecond line", "auto")
        .unwrap());
    assert_eq!(s.header().title(), Some("Fix the bug second line"));
    let text = read(&storage, s.file().unwrap());
    assert!(text
        .lines()
        .next()
        .unwrap()
        .ends_with(r#""title":"Fix the bug second line","titleSource":"auto"}"#));
    assert!(
        !s.set_session_name("\n\u{1}", "user").unwrap(),
        "empty once sanitized"
    );
    assert_eq!(s.header().title(), Some("Fix the bug second line"));
}

#[test]
fn an_automatic_title_never_replaces_the_users() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("a")).unwrap();
    s.append_message(&assistant("b")).unwrap();
    assert!(s.set_session_name("generated", "auto").unwrap());
    assert!(s.set_session_name("mine", "user").unwrap());
    assert!(!s.set_session_name("generated again", "auto").unwrap());
    assert!(s.set_session_name("mine", "user").unwrap(), "the same name");
    let header = read(&storage, s.file().unwrap());
    assert!(header
        .lines()
        .next()
        .unwrap()
        .ends_with(r#""title":"mine","titleSource":"user"}"#));
}

#[test]
fn append_entry_json_assigns_ids_and_keeps_field_order() {
    let mut s = Session::in_memory(mem(), "/w");
    let id = s
        .append_entry_json(r#"{"type":"custom","customType":"x","data":{"b":1,"a":2}}"#)
        .unwrap();
    let (p, t) = ids_of(&s, &id);
    assert_eq!(
        line_of(&s, &id),
        format!(
            r#"{{"type":"custom","customType":"x","data":{{"b":1,"a":2}},"id":"{id}","parentId":{p},"timestamp":"{t}"}}"#
        )
    );
    for bad in [
        r#"[1]"#,
        r#"{"no":"type"}"#,
        r#"{"type":"message"}"#,
        r#"{"type":"label","id":"x"}"#,
        r#"{"type":"session"}"#,
        "{",
    ] {
        assert!(
            matches!(s.append_entry_json(bad), Err(SessionError::InvalidInput(_))),
            "{bad}"
        );
    }
    assert!(matches!(
        s.append_entry_json(r#"{"type":"label","targetId":"zz"}"#),
        Err(SessionError::EntryNotFound(_))
    ));
}

#[test]
fn context_messages_know_their_entry_ids() {
    let ctx_text = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}"#,
        "\n",
        r#"{"type":"compaction","id":"c1","parentId":"m1","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"m1","tokensBefore":1}"#,
        "\n",
        r#"{"type":"label","id":"l1","parentId":"c1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"m1","label":"x"}"#,
        "\n",
        r#"{"type":"message","id":"m2","parentId":"l1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"b"}}"#,
        "\n",
    );
    let s = Session::from_text(mem(), ctx_text, "/agent");
    let ctx = s.context();
    assert_eq!(ctx.entry_ids, vec!["c1", "m1", "m2"]);
    assert_eq!(ctx.entry_ids.len(), ctx.messages.len());
}

#[test]
fn text_with_no_readable_record_reports_a_header_problem() {
    let s = Session::from_text(mem(), "garbage\nmore garbage\n", "/agent");
    assert!(s.report().header_problem.is_some());
    assert!(s.report().lossy());
    let empty = Session::from_text(mem(), "", "/agent");
    assert!(
        empty.report().header_problem.is_none(),
        "an empty file is just a new session"
    );
}

#[test]
fn opening_reports_parse_progress_from_zero_to_the_total_never_backwards() {
    let mut current = String::from(
        r#"{"type":"session","version":3,"id":"p","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
    );
    current.push('\n');
    let mut parent = "null".to_string();
    for i in 0..20_000 {
        current.push_str(&format!(
            r#"{{"type":"message","id":"{i:08x}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":"m{i}"}}}}"#
        ));
        current.push('\n');
        parent = format!("\"{i:08x}\"");
    }
    // A current file (the fast reader) and a v1 file (lenient reader and migration).
    for text in [current, fixture_text("large-session.jsonl")] {
        let storage = mem();
        put(&storage, "/s.jsonl", &text);
        let mut seen = Vec::new();
        let options = xcsh_session::session::OpenOptions {
            persistence: Persistence::ReadOnly,
            agent_dir: "/agent".into(),
            cwd: "/p".into(),
        };
        Session::open_with_progress(storage.clone(), "/s.jsonl", &options, &mut |d, t| {
            seen.push((d, t))
        })
        .unwrap();
        let total = text.len();
        assert_eq!(seen.first(), Some(&(0, total)));
        assert_eq!(seen.last(), Some(&(total, total)));
        assert!(seen.len() >= 4, "{} reports", seen.len());
        assert!(
            seen.windows(2).all(|w| w[0].0 <= w[1].0),
            "monotonic: {seen:?}"
        );
    }
}

/// A current session of about `bytes`, one message per line, with `extra` spliced in as
/// a line at the middle.
fn big_current_session(bytes: usize, extra: &str) -> (String, usize) {
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/big"}"#,
    );
    text.push('\n');
    let mut parent = "null".to_string();
    let mut n = 0;
    while text.len() < bytes {
        if n == 20_000 {
            text.push_str(extra);
            text.push('\n');
        }
        text.push_str(&format!(
            r#"{{"type":"message","id":"{n:08x}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":"é {n} {}"}}}}"#,
            "x\\n".repeat(100)
        ));
        text.push('\n');
        parent = format!("\"{n:08x}\"");
        n += 1;
    }
    (text, n)
}

#[test]
fn large_files_read_on_all_cores_give_what_the_sequential_reader_gives() {
    // 9 MB: UTF-8 checking and parsing split across threads at newlines. One line that
    // is JSON but no entry (reported, skipped), then one torn line that makes the
    // parallel reader hand the file to the lenient one.
    for (extra, torn) in [
        (r#"{"type":5}"#, false),
        (r#"{"type":"message","id":"#, true),
    ] {
        let (text, n) = big_current_session(9_000_000, extra);
        let storage = mem();
        put(&storage, "/big.jsonl", &text);
        let s = open(&storage, "/big.jsonl", Persistence::ReadOnly);
        let sequential = Session::from_text(storage.clone(), &text[..text.len() / 2], "/agent");
        assert_eq!(s.entries().len(), n, "torn: {torn}");
        let ids: Vec<String> = s.entries().iter().map(|e| e.id.clone()).collect();
        let expected: Vec<String> = (0..n).map(|i| format!("{i:08x}")).collect();
        assert!(ids == expected, "entries out of order (torn: {torn})");
        assert!(s
            .entries()
            .iter()
            .zip(sequential.entries())
            .all(|(a, b)| a.json() == b.json()));
        assert_eq!(s.context().messages.len(), n);
        let report = s.report();
        assert_eq!(report.non_entries.len(), usize::from(!torn), "{report:?}");
        assert_eq!(report.issues.len(), usize::from(torn), "{report:?}");
    }
}
