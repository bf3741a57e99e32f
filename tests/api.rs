//! The JSON façade every shell calls (CLI, JS, WIT): shapes and error kinds.

mod common;
use common::*;
use serde_json::Value;
use xcsh_session::api::{self, ErrorKind};
use xcsh_session::listing::ListText;
use xcsh_session::storage::{Storage, StorageExt};

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
    let gc = json(&api::gc(storage.clone(), "/agent", true, false).unwrap());
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
    let mut m = xcsh_session::ArtifactManager::for_session(&*storage, &file);
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
    let list = json(&api::list(storage.clone(), "/agent", None, ListText::Leave).unwrap());
    assert_eq!(list[0]["id"], id.as_str());
    // The text only when asked for; the rest the same.
    let mut with_text =
        json(&api::list(storage.clone(), "/agent", None, ListText::Include).unwrap());
    assert_eq!(with_text[0]["allMessagesText"], "find me please ok");
    assert_eq!(list[0].get("allMessagesText"), None);
    with_text[0]
        .as_object_mut()
        .unwrap()
        .remove("allMessagesText");
    assert_eq!(list, with_text);
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
    let cont = json(
        &api::continue_recent(storage.clone(), "/agent", "/work/pi", None, Some("pts-1")).unwrap(),
    );
    assert_eq!(cont["source"], "mostRecent");
    let again = json(
        &api::continue_recent(storage.clone(), "/agent", "/work/pi", None, Some("pts-1")).unwrap(),
    );
    assert_eq!(again["source"], "breadcrumb");
    let fresh =
        json(&api::continue_recent(storage.clone(), "/agent", "/work/new", None, None).unwrap());
    assert_eq!(fresh["source"], "new");
    assert!(!storage.exists(fresh["path"].as_str().unwrap()));
}

/// Every awkward character a JSON writer must treat exactly as `JSON.stringify` does.
const WEIRD: &str =
    "q\"b\\s/c\u{0}\u{1}\u{1f}\u{7f}\t\n\r\u{8}\u{c} é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'";

/// The façade's output of every result whose shape is known, on a deterministic storage.
fn golden_outputs() -> Vec<(&'static str, String)> {
    use std::rc::Rc;
    use xcsh_session::storage::MemoryStorage;
    let storage = Rc::new(MemoryStorage::with_seed(7, 1_760_000_000_000));
    let cwd = format!("/work/{WEIRD}");
    let dir = xcsh_session::paths::session_dir_for_cwd("/agent", &cwd);
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let missing = "ab".repeat(32);
    let file = format!("{dir}/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl");
    let text = [
        format!(
            r#"{{"type":"session","version":3,"id":"0123abcd-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":{},"title":{}}}"#,
            q(&cwd),
            q(WEIRD)
        ),
        format!(
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{}}}"#,
            user(&format!("find {WEIRD}"))
        ),
        format!(
            r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":{}}},{{"type":"image","data":"blob:sha256:{missing}","mimeType":"image/png"}}],"timestamp":1760000000001}}}}"#,
            q(WEIRD)
        ),
        format!(
            r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{}}}"#,
            assistant("dup 1.50e3 0.000003")
        ),
        "{not json at all \u{1}".to_string(),
        r#"{"noType":1}"#.to_string(),
        r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:0"#.to_string(),
    ]
    .join("\n");
    put(&storage, &file, &text);
    // A second project session, an old (v1) file elsewhere, and a file without a header.
    let other = "/agent/sessions/--work-other--/2026-01-02T00-00-00-000Z_0123abcd-0000-4000-8000-000000000002.jsonl";
    put(
        &storage,
        other,
        &format!(
            "{}\n{}\n",
            r#"{"type":"session","version":3,"id":"0123abcd-0000-4000-8000-000000000002","timestamp":"2026-01-02T00:00:00.000Z","cwd":"/work/other","parentSession":"/p\"q.jsonl"}"#,
            format_args!(
                r#"{{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T00:00:01.000Z","message":{}}}"#,
                user("hello other \\ \"quoted\"")
            )
        ),
    );
    let old = common::fixture_text("historical-session.jsonl");
    put(&storage, "/old/v1.jsonl", &format!("{old}\n{{torn"));
    put(
        &storage,
        "/old/headless.jsonl",
        "{\"type\":\"message\",\"x\":1}\n[1,2]\n",
    );

    let mut out: Vec<(&'static str, String)> = Vec::new();
    let ok = |r: api::ApiResult| r.unwrap_or_else(|e| panic!("{e:?}"));
    out.push(("show", ok(api::show_file(storage.clone(), &file, "/agent"))));
    out.push((
        "show v1",
        ok(api::show_file(storage.clone(), "/old/v1.jsonl", "/agent")),
    ));
    out.push((
        "show headless",
        ok(api::show_file(
            storage.clone(),
            "/old/headless.jsonl",
            "/agent",
        )),
    ));
    out.push((
        "migrate v1",
        ok(api::migrate_file(
            storage.clone(),
            "/old/v1.jsonl",
            "/agent",
        )),
    ));
    out.push((
        "migrate headless",
        ok(api::migrate_file(
            storage.clone(),
            "/old/headless.jsonl",
            "/agent",
        )),
    ));
    out.push((
        "recent",
        ok(api::recent(storage.clone(), "/agent", &cwd, 10)),
    ));
    out.push((
        "recent other",
        ok(api::recent(storage.clone(), "/agent", "/work/other", 10)),
    ));
    out.push((
        "list cwd",
        ok(api::list(
            storage.clone(),
            "/agent",
            Some(&cwd),
            ListText::Include,
        )),
    ));
    out.push((
        "list all",
        ok(api::list(
            storage.clone(),
            "/agent",
            None,
            ListText::Include,
        )),
    ));
    out.push((
        "search",
        ok(api::search(storage.clone(), "/agent", None, "find")),
    ));
    out.push((
        "search weird",
        ok(api::search(
            storage.clone(),
            "/agent",
            Some(&cwd),
            "日本 🎉",
        )),
    ));
    out.push((
        "search none",
        ok(api::search(storage.clone(), "/agent", None, "zzzzqqq")),
    ));
    out.push((
        "resume",
        ok(api::resume(
            storage.clone(),
            "/agent",
            &cwd,
            "0123abcd-0000-4000-8000-000000000001",
            false,
        )),
    ));
    out.push((
        "resume path",
        ok(api::resume(storage.clone(), "/agent", &cwd, &file, false)),
    ));
    out.push((
        "continue",
        ok(api::continue_recent(
            storage.clone(),
            "/agent",
            &cwd,
            None,
            Some("pts-1"),
        )),
    ));
    out.push((
        "continue breadcrumb",
        ok(api::continue_recent(
            storage.clone(),
            "/agent",
            &cwd,
            None,
            Some("pts-1"),
        )),
    ));
    out.push((
        "continue new",
        ok(api::continue_recent(
            storage.clone(),
            "/agent",
            &format!("/new/{WEIRD}"),
            None,
            None,
        )),
    ));
    out.push((
        "append",
        api::append_file(
            storage.clone(),
            "/s/new.jsonl",
            "/agent",
            WEIRD,
            r#"{"type":"custom","customType":"t"}"#,
        )
        .unwrap(),
    ));
    let agent = format!("/ag{WEIRD}");
    out.push((
        "blob put",
        ok(api::blob_put(storage.clone(), &agent, WEIRD.as_bytes())),
    ));
    out.push((
        "blob put again",
        ok(api::blob_put(storage.clone(), &agent, b"second")),
    ));
    for f in storage
        .list_dir(&xcsh_session::paths::blobs_dir(&agent))
        .unwrap()
    {
        let p = xcsh_session::storage::join(&xcsh_session::paths::blobs_dir(&agent), &f.name);
        if !f
            .name
            .starts_with(&xcsh_session::internals::sha256_hex(b"second")[..8])
        {
            storage.set_mtime(&p, 0);
        }
    }
    out.push((
        "gc empty",
        ok(api::gc(storage.clone(), "/nowhere", true, false)),
    ));
    out.push(("gc dry", ok(api::gc(storage.clone(), &agent, true, false))));
    out.push(("gc", ok(api::gc(storage.clone(), &agent, false, false))));
    out.push(("fork", ok(api::fork(storage.clone(), "/agent", other))));
    out.push((
        "move",
        ok(api::move_session(
            storage.clone(),
            "/agent",
            other,
            &format!("/moved/{WEIRD}"),
        )),
    ));
    let mut m = xcsh_session::ArtifactManager::for_session(&*storage, &file);
    m.save(&format!("{WEIRD}\nline two"), "bash").unwrap();
    out.push((
        "url",
        ok(api::resolve_url(
            storage.clone(),
            &file,
            "artifact://0",
            None,
            None,
        )),
    ));
    out.push((
        "url paged",
        ok(api::resolve_url(
            storage.clone(),
            &file,
            "artifact://0",
            Some(2),
            Some(1),
        )),
    ));
    out
}

/// The exact bytes of each output, recorded from the hand-written JSON before the
/// switch to serde records (`GOLDEN_PRINT=1` prints the current ones). One deliberate
/// change since: search hits no longer carry `allMessagesText` (the search streams over
/// the files and never holds a session's whole text).
#[test]
fn facade_output_bytes_are_unchanged() {
    let got = golden_outputs();
    if std::env::var_os("GOLDEN_PRINT").is_some() {
        for (name, text) in &got {
            println!("GOLDEN\t{name}\t{text}");
        }
    }
    assert_eq!(got.len(), GOLDEN.len(), "one golden string per output");
    for ((name, text), (gname, gtext)) in got.iter().zip(GOLDEN) {
        assert_eq!(name, gname);
        assert_eq!(text, gtext, "{name}");
        let _: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

const GOLDEN: &[(&str, &str)] = &[
    (
        "show",
        "{\"header\":{\"type\":\"session\",\"version\":3,\"id\":\"0123abcd-0000-4000-8000-000000000001\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/work/q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"title\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\"},\"entryCount\":3,\"leafId\":\"a2\",\"version\":3,\"migrationNeeded\":false,\"report\":{\"issues\":[{\"line\":5,\"kind\":\"unparsable\",\"detail\":\"key must be a string at line 1 column 2\"},{\"line\":7,\"kind\":\"tornTail\",\"detail\":\"EOF while parsing a string at line 2 column 72\"}],\"nonEntries\":1,\"duplicateIds\":1,\"missingBlobs\":[\"abababababababababababababababababababababababababababababababab\"]}}",
    ),
    (
        "show v1",
        "{\"header\":{\"type\":\"session\",\"id\":\"5fd1e58c-9635-410e-a644-133a96057c90\",\"timestamp\":\"2025-12-17T19:39:21.535Z\",\"cwd\":\"/Users/badlogic/workspaces/pi-mono\",\"provider\":\"anthropic\",\"modelId\":\"claude-opus-4-5\",\"thinkingLevel\":\"off\",\"version\":3},\"entryCount\":463,\"leafId\":\"bb2c466a\",\"version\":1,\"migrationNeeded\":true,\"report\":{\"issues\":[{\"line\":440,\"kind\":\"gluedRecord\",\"detail\":\"record glued to the previous one on the same line\"},{\"line\":465,\"kind\":\"tornTail\",\"detail\":\"key must be a string at line 465 column 2\"}],\"nonEntries\":0,\"migration\":{\"fromVersion\":1,\"toVersion\":3,\"entriesChanged\":463}}}",
    ),
    (
        "show headless",
        "{\"header\":{\"type\":\"session\",\"id\":\"13c95884014ee1c8\",\"timestamp\":\"2025-10-09T08:53:20.005Z\",\"cwd\":\"\",\"version\":3},\"entryCount\":1,\"leafId\":\"d88bcaa1\",\"version\":1,\"migrationNeeded\":true,\"report\":{\"issues\":[],\"nonEntries\":1,\"headerProblem\":\"the first record is not a session header (type \\\"session\\\" with a string id); a new header was made and the entries salvaged\",\"migration\":{\"fromVersion\":1,\"toVersion\":3,\"entriesChanged\":1}}}",
    ),
    (
        "migrate v1",
        "{\"issues\":[{\"line\":440,\"kind\":\"gluedRecord\",\"detail\":\"record glued to the previous one on the same line\"},{\"line\":465,\"kind\":\"tornTail\",\"detail\":\"key must be a string at line 465 column 2\"}],\"nonEntries\":0,\"migration\":{\"fromVersion\":1,\"toVersion\":3,\"entriesChanged\":463},\"backupPath\":\"/old/v1.jsonl.corrupt-2025-10-09T08-53-20-008Z\"}",
    ),
    (
        "migrate headless",
        "{\"issues\":[],\"nonEntries\":1,\"headerProblem\":\"the first record is not a session header (type \\\"session\\\" with a string id); a new header was made and the entries salvaged\",\"migration\":{\"fromVersion\":1,\"toVersion\":3,\"entriesChanged\":1},\"backupPath\":\"/old/headless.jsonl.corrupt-2025-10-09T08-53-20-014Z\"}",
    ),
    (
        "recent",
        "[{\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\",\"id\":\"0123abcd-0000-4000-8000-000000000001\",\"cwd\":\"/work/q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"title\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"name\":\"q\\\"b\\\\s/c\",\"fullName\":\"q\\\"b\\\\s/c\",\"timeAgo\":\"just now\",\"modified\":\"2025-10-09T08:53:20.001Z\"}]",
    ),
    (
        "recent other",
        "[{\"path\":\"/agent/sessions/--work-other--/2026-01-02T00-00-00-000Z_0123abcd-0000-4000-8000-000000000002.jsonl\",\"id\":\"0123abcd-0000-4000-8000-000000000002\",\"cwd\":\"/work/other\",\"name\":\"hello other \\\\ \\\"quoted\\\"\",\"fullName\":\"hello other \\\\ \\\"quoted\\\"\",\"timeAgo\":\"just now\",\"modified\":\"2025-10-09T08:53:20.002Z\"}]",
    ),
    (
        "list cwd",
        "[{\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\",\"id\":\"0123abcd-0000-4000-8000-000000000001\",\"cwd\":\"/work/q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"title\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"created\":\"2026-01-01T00:00:00.000Z\",\"modified\":\"2025-10-09T08:53:20.001Z\",\"messageCount\":3,\"firstMessage\":\"find q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"allMessagesText\":\"find q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&' q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&' dup 1.50e3 0.000003\"}]",
    ),
    (
        "list all",
        "[{\"path\":\"/agent/sessions/--work-other--/2026-01-02T00-00-00-000Z_0123abcd-0000-4000-8000-000000000002.jsonl\",\"id\":\"0123abcd-0000-4000-8000-000000000002\",\"cwd\":\"/work/other\",\"parentSessionPath\":\"/p\\\"q.jsonl\",\"created\":\"2026-01-02T00:00:00.000Z\",\"modified\":\"2025-10-09T08:53:20.002Z\",\"messageCount\":1,\"firstMessage\":\"hello other \\\\ \\\"quoted\\\"\",\"allMessagesText\":\"hello other \\\\ \\\"quoted\\\"\"},{\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\",\"id\":\"0123abcd-0000-4000-8000-000000000001\",\"cwd\":\"/work/q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"title\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"created\":\"2026-01-01T00:00:00.000Z\",\"modified\":\"2025-10-09T08:53:20.001Z\",\"messageCount\":3,\"firstMessage\":\"find q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"allMessagesText\":\"find q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&' q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&' dup 1.50e3 0.000003\"}]",
    ),
    (
        "search",
        "[{\"score\":2400,\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\",\"id\":\"0123abcd-0000-4000-8000-000000000001\",\"cwd\":\"/work/q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"title\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"created\":\"2026-01-01T00:00:00.000Z\",\"modified\":\"2025-10-09T08:53:20.001Z\",\"messageCount\":3,\"firstMessage\":\"find q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\"}]",
    ),
    (
        "search weird",
        "[{\"score\":7059,\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\",\"id\":\"0123abcd-0000-4000-8000-000000000001\",\"cwd\":\"/work/q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"title\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"created\":\"2026-01-01T00:00:00.000Z\",\"modified\":\"2025-10-09T08:53:20.001Z\",\"messageCount\":3,\"firstMessage\":\"find q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\"}]",
    ),
    (
        "search none",
        "[]",
    ),
    (
        "resume",
        "{\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\"}",
    ),
    (
        "resume path",
        "{\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\"}",
    ),
    (
        "continue",
        "{\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\",\"source\":\"mostRecent\"}",
    ),
    (
        "continue breadcrumb",
        "{\"path\":\"/agent/sessions/--work-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-01T00-00-00-000Z_0123abcd-0000-4000-8000-000000000001.jsonl\",\"source\":\"mostRecent\"}",
    ),
    (
        "continue new",
        "{\"path\":\"/agent/sessions/--new-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2025-10-09T08-53-20-022Z_13c95884059c9713.jsonl\",\"source\":\"new\"}",
    ),
    (
        "append",
        "{\"id\":\"5cce71e9\"}",
    ),
    (
        "blob put",
        "{\"hash\":\"31e090ff8875902e5671bdec3d3d9fc6ed5c2a0f25cd6f31901274ec0323e9d9\",\"ref\":\"blob:sha256:31e090ff8875902e5671bdec3d3d9fc6ed5c2a0f25cd6f31901274ec0323e9d9\",\"path\":\"/agq\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'/blobs/31e090ff8875902e5671bdec3d3d9fc6ed5c2a0f25cd6f31901274ec0323e9d9\"}",
    ),
    (
        "blob put again",
        "{\"hash\":\"16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4\",\"ref\":\"blob:sha256:16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4\",\"path\":\"/agq\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'/blobs/16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4\"}",
    ),
    (
        "gc empty",
        "{\"dryRun\":true,\"scannedFiles\":0,\"referenced\":0,\"deleted\":[],\"keptRecent\":[],\"keptPinned\":[],\"missing\":[],\"forgotten\":[],\"staleFiles\":[],\"staleIndexes\":[]}",
    ),
    (
        "gc dry",
        "{\"dryRun\":true,\"scannedFiles\":0,\"referenced\":0,\"deleted\":[\"31e090ff8875902e5671bdec3d3d9fc6ed5c2a0f25cd6f31901274ec0323e9d9\"],\"keptRecent\":[\"16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4\"],\"keptPinned\":[],\"missing\":[],\"forgotten\":[],\"staleFiles\":[],\"staleIndexes\":[]}",
    ),
    (
        "gc",
        "{\"dryRun\":false,\"scannedFiles\":0,\"referenced\":0,\"deleted\":[\"31e090ff8875902e5671bdec3d3d9fc6ed5c2a0f25cd6f31901274ec0323e9d9\"],\"keptRecent\":[\"16367aacb67a4a017c8da8ab95682ccb390863780f7114dda0a0e0c55644c7c4\"],\"keptPinned\":[],\"missing\":[],\"forgotten\":[],\"staleFiles\":[],\"staleIndexes\":[]}",
    ),
    (
        "fork",
        "{\"oldFile\":\"/agent/sessions/--work-other--/2026-01-02T00-00-00-000Z_0123abcd-0000-4000-8000-000000000002.jsonl\",\"newFile\":\"/agent/sessions/--work-other--/2025-10-09T08-53-20-037Z_13c958840950f44b.jsonl\",\"warnings\":[]}",
    ),
    (
        "move",
        "{\"newFile\":\"/agent/sessions/--moved-q\\\"b-s-c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'--/2026-01-02T00-00-00-000Z_0123abcd-0000-4000-8000-000000000002.jsonl\"}",
    ),
    (
        "url",
        "{\"content\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\\nline two\",\"mimeType\":\"text/plain\",\"size\":54}",
    ),
    (
        "url paged",
        "{\"content\":\"\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"mimeType\":\"text/plain\",\"size\":32}",
    ),
];

/// The typed façade (what `session-api` maps to WIT records) is what the JSON façade
/// (`session-json`, the CLI) serializes, for the same files.
#[test]
fn the_typed_facade_is_what_the_json_facade_serializes() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("typed please")).unwrap();
    s.append_message(&assistant("ok")).unwrap();
    let file = s.file().unwrap().to_string();
    s.close().unwrap();

    let shown = api::show_session(storage.clone(), &file, "/agent").unwrap();
    assert_eq!(
        api::show_json(&shown),
        api::show_file(storage.clone(), &file, "/agent").unwrap()
    );
    let recent = api::recent_sessions(storage.clone(), "/agent", "/work/pi", 3).unwrap();
    let now = storage.env().now_ms();
    assert_eq!(
        xcsh_session::listing::recent_json(&recent, now),
        api::recent(storage.clone(), "/agent", "/work/pi", 3).unwrap()
    );
    for text in [ListText::Leave, ListText::Include] {
        let list = api::list_sessions(storage.clone(), "/agent", Some("/work/pi"), text).unwrap();
        assert_eq!(
            xcsh_session::listing::list_json(&list),
            api::list(storage.clone(), "/agent", Some("/work/pi"), text).unwrap()
        );
    }
    let list =
        api::list_sessions(storage.clone(), "/agent", Some("/work/pi"), ListText::Leave).unwrap();
    let hits = api::search_sessions(storage.clone(), "/agent", None, "typed").unwrap();
    let refs: Vec<_> = hits.iter().map(|(i, score)| (i, *score)).collect();
    assert_eq!(
        xcsh_session::listing::search_json(&refs),
        api::search(storage.clone(), "/agent", None, "typed").unwrap()
    );
    assert_eq!(hits.len(), 1);
    let id = &list[0].head.id;
    assert_eq!(
        json(&api::resume(storage.clone(), "/agent", "/work/pi", id, false).unwrap())["path"],
        api::resume_path(storage.clone(), "/agent", "/work/pi", id, false).unwrap()
    );
    let (path, source) =
        api::continue_session(storage.clone(), "/agent", "/work/pi", None, None).unwrap();
    assert_eq!(
        json(&api::continue_recent(storage.clone(), "/agent", "/work/pi", None, None).unwrap()),
        serde_json::json!({"path": path, "source": "mostRecent"})
    );
    assert_eq!(source, xcsh_session::resume::ContinueSource::MostRecent);
    let put = api::put_blob(storage.clone(), "/agent", b"b").unwrap();
    assert_eq!(
        json(&api::blob_put(storage.clone(), "/agent", b"b").unwrap()),
        serde_json::json!({"hash": put.hash, "ref": put.reference, "path": put.path})
    );
    let gc = api::gc_report(storage.clone(), "/agent", true, false).unwrap();
    assert_eq!(gc.kept_recent, vec![put.hash.clone()]);
    assert_eq!(
        json(&api::gc(storage.clone(), "/agent", true, false).unwrap())["keptRecent"],
        serde_json::json!([put.hash])
    );
    let fork = api::fork_file(storage.clone(), "/agent", &file).unwrap();
    assert_eq!(fork.old_file.as_deref(), Some(file.as_str()));
    let moved = api::move_file(
        storage.clone(),
        "/agent",
        fork.new_file.as_deref().unwrap(),
        "/w/x",
    )
    .unwrap();
    assert!(moved.starts_with("/agent/sessions/--w-x--/") && storage.exists(&moved));
    let id = api::append_entry(
        storage.clone(),
        &file,
        "/agent",
        "/work/pi",
        r#"{"type":"custom","customType":"t"}"#,
    )
    .unwrap();
    let reopened = api::show_session(storage.clone(), &file, "/agent").unwrap();
    assert_eq!(
        reopened.leaf_id(),
        Some(id.as_str()),
        "appended and written"
    );
    let migrated = api::migrate_session(storage.clone(), &file, "/agent").unwrap();
    let report = api::report_json(migrated.report());
    drop(migrated); // its writer lock
    assert_eq!(
        report,
        api::migrate_file(storage.clone(), &file, "/agent").unwrap()
    );
}

/// A file of which nothing reads as a session (a text file) is refused by every file
/// command, as the viewer refuses it, and left as it was; an empty file, or a file whose
/// entries survive a broken header, still opens.
#[test]
fn a_file_that_is_not_a_session_is_refused_and_left_alone() {
    let storage = mem();
    for (text, why) in [
        ("my-laptop\n", "nothing in the file could be read as JSON"),
        (
            "{\"a\":1}\n[1,2]\n",
            "the first record is not a session header",
        ),
    ] {
        put(&storage, "/notes.txt", text);
        let errors = [
            api::show_file(storage.clone(), "/notes.txt", "/agent").unwrap_err(),
            api::tree_file(storage.clone(), "/notes.txt", "/agent").unwrap_err(),
            api::open_for_context(
                storage.clone(),
                "/notes.txt",
                "/agent",
                None,
                xcsh_session::IndexCache::Off,
            )
            .err()
            .unwrap(),
            api::migrate_session(storage.clone(), "/notes.txt", "/agent")
                .err()
                .unwrap(),
        ];
        for e in errors {
            assert_eq!(e.kind, ErrorKind::InvalidInput);
            assert!(
                e.message.starts_with("/notes.txt is not a session file: "),
                "{}",
                e.message
            );
            assert!(e.message.contains(why), "{}", e.message);
        }
        assert_eq!(read(&storage, "/notes.txt"), text, "nothing written");
        assert!(!storage.exists("/notes.txt.lock"), "no lock left");
    }
    put(&storage, "/empty.jsonl", "");
    assert!(api::show_file(storage.clone(), "/empty.jsonl", "/agent").is_ok());
    let salvaged = "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n";
    put(&storage, "/headless.jsonl", salvaged);
    assert_eq!(
        json(&api::show_file(storage.clone(), "/headless.jsonl", "/agent").unwrap())["entryCount"],
        1
    );
}
