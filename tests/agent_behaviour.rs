//! Behaviour of the agent's `SessionManager` that the drop-in must match, each written
//! from what the agent's own session tests check: empty labels, tree roots, legacy files
//! migrated in memory until the next persisted write, a file deleted behind the session's
//! back, and stale OpenAI Responses replay data dropped from loaded sessions.

mod common;
use common::*;
use std::rc::Rc;
use xcsh_session::session::Persistence;
use xcsh_session::session::{OpenOptions, Session};
use xcsh_session::storage::{
    Environment, FileStat, Layer, MemoryStorage, ProcessIdentity, Storage, StorageExt,
};

const FILE: &str = "/agent/sessions/--work--/s.jsonl";

fn lines(records: &[&str]) -> String {
    let mut text = String::new();
    for r in records {
        text.push_str(r);
        text.push('\n');
    }
    text
}

const HEADER_V3: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#;

#[test]
fn an_empty_label_clears_the_label_like_no_label() {
    let storage = mem();
    let mut s = create(&storage);
    let id = s.append_message(&user("hi")).unwrap();
    s.append_label_change(&id, Some("bookmark")).unwrap();
    assert_eq!(s.label(&id), Some("bookmark"));
    s.append_label_change(&id, Some("")).unwrap();
    assert_eq!(s.label(&id), None, "an empty label clears");
    s.append_label_change(&id, Some("again")).unwrap();
    s.append_label_change(&id, None).unwrap();
    assert_eq!(s.label(&id), None);
    // The same when read back from a file.
    s.append_message(&assistant("ok")).unwrap();
    s.append_label_change(&id, Some("kept")).unwrap();
    s.append_label_change(&id, Some("")).unwrap();
    let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
    assert_eq!(reloaded.label(&id), None);
    let tree: serde_json::Value =
        serde_json::from_str(&reloaded.tree().to_json(&reloaded)).unwrap();
    assert!(tree[0].get("label").is_none(), "{tree}");
}

#[test]
fn tree_roots_keep_file_order_and_only_children_are_sorted_by_time() {
    let storage = mem();
    put(
        &storage,
        FILE,
        &lines(&[
            HEADER_V3,
            // The first root is the newest; the orphan (missing parent) is older.
            r#"{"type":"message","id":"r1","parentId":null,"timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"root"}}"#,
            r#"{"type":"message","id":"o1","parentId":"gone","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"orphan"}}"#,
            r#"{"type":"message","id":"c2","parentId":"r1","timestamp":"2026-01-01T00:00:12.000Z","message":{"role":"user","content":"later child"}}"#,
            r#"{"type":"message","id":"c1","parentId":"r1","timestamp":"2026-01-01T00:00:10.000Z","message":{"role":"user","content":"earlier child"}}"#,
        ]),
    );
    let s = open(&storage, FILE, Persistence::ReadOnly);
    let tree: serde_json::Value = serde_json::from_str(&s.tree().to_json(&s)).unwrap();
    let id = |v: &serde_json::Value| v["entry"]["id"].as_str().unwrap().to_string();
    let roots: Vec<String> = tree.as_array().unwrap().iter().map(id).collect();
    assert_eq!(roots, ["r1", "o1"], "roots in file order");
    let children: Vec<String> = tree[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(id)
        .collect();
    assert_eq!(children, ["c1", "c2"], "children oldest first");
}

/// A v1 file (no ids): a user message and an assistant reply.
fn legacy_file() -> String {
    lines(&[
        r#"{"type":"session","id":"legacy","timestamp":"2025-01-01T00:00:00Z","cwd":"/work"}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hello","timestamp":1}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"legacy reply"}],"provider":"anthropic","model":"m","timestamp":2}}"#,
    ])
}

#[test]
fn a_legacy_file_stays_migrated_in_memory_until_the_next_persisted_write() {
    let storage = mem();
    put(&storage, FILE, &legacy_file());
    let before = storage.stat(FILE).unwrap();
    let mut s = open(&storage, FILE, Persistence::Persistent);
    let entries = s.entries();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].parent_id, None);
    assert_eq!(
        entries[1].parent_id.as_deref(),
        Some(entries[0].id.as_str())
    );
    s.flush().unwrap();
    assert_eq!(
        read(&storage, FILE),
        legacy_file(),
        "opening and flushing never rewrite"
    );
    assert_eq!(storage.stat(FILE).unwrap().mtime_ms, before.mtime_ms);

    s.append_message(&user("follow up")).unwrap();
    s.flush().unwrap();
    let written = read(&storage, FILE);
    assert!(written.lines().next().unwrap().contains(r#""version":3"#));
    assert_eq!(
        written.lines().count(),
        4,
        "header, the two migrated entries, the new one"
    );
    let reloaded = open(&storage, FILE, Persistence::ReadOnly);
    assert!(reloaded.report().migration.is_none());
    assert!(reloaded.entries().iter().all(|e| !e.id.is_empty()));
    // The original bytes were kept aside before that rewrite.
    let backup = s.report().backup_path.clone().expect("a backup");
    assert_eq!(read(&storage, &backup), legacy_file());
}

#[test]
fn rewrite_entries_and_ensure_on_disk_write_a_deferred_migration_at_once() {
    for explicit in ["rewrite_entries", "ensure_on_disk"] {
        let storage = mem();
        put(&storage, FILE, &legacy_file());
        let mut s = open(&storage, FILE, Persistence::Persistent);
        assert!(s.needs_rewrite());
        match explicit {
            "rewrite_entries" => s.rewrite_entries().unwrap(),
            _ => s.ensure_on_disk().unwrap(),
        }
        assert!(!s.needs_rewrite(), "{explicit}");
        let written = read(&storage, FILE);
        assert!(written.contains(r#""version":3"#), "{explicit}");
        assert_eq!(written.lines().count(), 3, "{explicit}");
        assert!(written.contains(r#""parentId":null"#), "{explicit}");
    }
}

#[test]
fn a_file_deleted_behind_the_sessions_back_is_written_again_from_memory() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("first")).unwrap();
    s.append_message(&assistant("reply")).unwrap();
    let file = s.file().unwrap().to_string();
    storage.unlink(&file).unwrap();
    let id = s.append_message(&user("after the delete")).unwrap();
    let written = read(&storage, &file);
    assert!(written
        .lines()
        .next()
        .unwrap()
        .contains(r#""type":"session""#));
    assert_eq!(written.lines().count(), 4, "header and all three entries");
    assert!(s.persist_error().is_none());
    let reloaded = open(&storage, &file, Persistence::ReadOnly);
    assert_eq!(reloaded.leaf_id(), Some(id.as_str()));
    // A file another writer replaced is still refused, never overwritten.
    storage.write(&file, b"someone else's file\n").unwrap();
    let err = s.append_message(&user("refused")).unwrap_err();
    assert!(err.to_string().contains("changed by someone else"), "{err}");
    assert_eq!(read(&storage, &file), "someone else's file\n");
}

fn assistant_with_replay() -> String {
    r#"{"role":"assistant","content":[{"type":"thinking","thinking":"reasoning","thinkingSignature":"{\"type\":\"reasoning\",\"encrypted_content\":\"enc_stale\"}"},{"type":"text","text":"done"}],"provider":"openai","model":"gpt-5-mini","providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[{"type":"reasoning","encrypted_content":"enc_stale"}]},"timestamp":2}"#.to_string()
}

#[test]
fn a_loaded_session_hands_out_its_entries_without_stale_replay_data_and_keeps_the_file() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("continue")).unwrap();
    let id = s.append_message(&assistant_with_replay()).unwrap();
    let live: serde_json::Value =
        serde_json::from_str(&s.entry_json(s.entry(&id).unwrap())).unwrap();
    assert_eq!(
        live["message"]["providerPayload"]["type"],
        "openaiResponsesHistory"
    );
    let file = s.file().unwrap().to_string();
    let on_disk = read(&storage, &file);
    s.close().unwrap();

    let reloaded = open(&storage, &file, Persistence::Persistent);
    let entry: serde_json::Value =
        serde_json::from_str(&reloaded.entry_json(reloaded.entry(&id).unwrap())).unwrap();
    assert!(entry["message"].get("providerPayload").is_none(), "{entry}");
    assert_eq!(
        entry["message"]["content"][0],
        serde_json::json!({"type": "thinking", "thinking": "reasoning"})
    );
    assert_eq!(read(&storage, &file), on_disk, "the file is not rewritten");
}

#[test]
fn a_loaded_session_drops_stale_openai_responses_replay_data_from_the_context() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("continue")).unwrap();
    s.append_message(&assistant_with_replay()).unwrap();
    // The live session keeps what it was given.
    let live = context_value(&s);
    assert_eq!(
        live["messages"][1]["providerPayload"]["type"],
        "openaiResponsesHistory"
    );
    let file = s.file().unwrap().to_string();
    let on_disk = read(&storage, &file);
    s.close().unwrap();

    let reloaded = open(&storage, &file, Persistence::Persistent);
    let ctx = context_value(&reloaded);
    let message = &ctx["messages"][1];
    assert!(message.get("providerPayload").is_none(), "{message}");
    assert_eq!(
        message["content"][0],
        serde_json::json!({"type": "thinking", "thinking": "reasoning"})
    );
    assert_eq!(message["content"][1]["text"], "done");
    assert_eq!(read(&storage, &file), on_disk, "the file is not rewritten");
    // A user message's payload is not replay data of a provider connection: kept.
    let text = on_disk.replace(
        r#""role":"assistant","content":[{"type":"thinking""#,
        r#""role":"user","content":[{"type":"thinking""#,
    );
    storage.write(&file, text.as_bytes()).unwrap();
    let as_user = open(&storage, &file, Persistence::ReadOnly);
    assert_eq!(
        context_value(&as_user)["messages"][1]["providerPayload"]["type"],
        "openaiResponsesHistory"
    );
}

/// A storage whose processes are known: this one is pid 42 on host `h`, every pid runs.
struct KnownProcess {
    inner: Rc<MemoryStorage>,
    pid: u32,
}

impl Layer for KnownProcess {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn env(&self) -> &dyn Environment {
        self
    }
}

impl Environment for KnownProcess {
    fn now_ms(&self) -> i64 {
        self.inner.env().now_ms()
    }
    fn random_u64(&self) -> u64 {
        self.inner.env().random_u64()
    }
    fn process_identity(&self) -> ProcessIdentity {
        ProcessIdentity {
            pid: self.pid,
            host: "h".into(),
        }
    }
    fn process_alive(&self, _pid: u32) -> Option<bool> {
        Some(true)
    }
}

fn open_as(storage: &Rc<MemoryStorage>, pid: u32) -> xcsh_session::error::Result<Session> {
    Session::open(
        Rc::new(KnownProcess {
            inner: storage.clone(),
            pid,
        }),
        FILE,
        &OpenOptions {
            persistence: Persistence::Persistent,
            agent_dir: "/agent".into(),
            cwd: "/work".into(),
        },
    )
}

#[test]
fn the_newest_open_in_a_process_takes_the_lock_and_fences_the_older_object() {
    let storage = mem();
    put(&storage, FILE, &lines(&[HEADER_V3]));
    let mut older = open_as(&storage, 42).unwrap();
    older.append_message(&user("one")).unwrap();
    older.append_message(&assistant("two")).unwrap();
    let mut newer = open_as(&storage, 42).unwrap();
    let err = older
        .append_message(&user("from the fenced object"))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("opened for writing again by a newer open in this process"),
        "{err}"
    );
    assert_eq!(xcsh_session::api::ErrorKind::of(&err).as_str(), "conflict");
    assert_eq!(older.entries().len(), 2, "no entry taken, even in memory");
    assert_eq!(
        context_value(&older)["messages"].as_array().unwrap().len(),
        2
    );
    newer.append_message(&user("three")).unwrap();
    older.close().unwrap();
    assert!(
        storage.exists(&format!("{FILE}.lock")),
        "the newer lock stays"
    );
    newer.append_message(&assistant("four")).unwrap();
    let text = read(&storage, FILE);
    assert!(text.contains("three") && text.contains("four") && !text.contains("fenced"));
    // Across processes the lock stays: another live process is refused, and says so.
    let refused = open_as(&storage, 7).err().expect("refused");
    assert!(
        refused
            .to_string()
            .contains("being written by another process (pid 42 on h"),
        "{refused}"
    );
    newer.close().unwrap();
    assert!(!storage.exists(&format!("{FILE}.lock")));
}

fn assistant_with_usage(premium: Option<f64>) -> String {
    let premium = premium.map_or(String::new(), |p| format!(r#","premiumRequests":{p}"#));
    format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":"hi"}}],"provider":"github-copilot","model":"gpt-4o","usage":{{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":15{premium},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.25}}}},"stopReason":"stop","timestamp":2}}"#
    )
}

fn task_result(premium: f64) -> String {
    format!(
        r#"{{"role":"toolResult","toolCallId":"task_1","toolName":"task","content":[{{"type":"text","text":"task output"}}],"details":{{"usage":{{"input":2,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":5,"premiumRequests":{premium},"cost":{{"total":0.5}}}}}},"isError":false,"timestamp":3}}"#
    )
}

#[test]
fn usage_statistics_add_assistant_usage_and_task_tool_results_on_every_branch() {
    let storage = mem();
    let mut s = create(&storage);
    let root = s.append_message(&user("hello")).unwrap();
    s.append_message(&assistant_with_usage(Some(1.0))).unwrap();
    s.append_message(&task_result(2.0)).unwrap();
    // Another tool's details are not a subagent's usage.
    s.append_message(&task_result(5.0).replace(r#""toolName":"task""#, r#""toolName":"bash""#))
        .unwrap();
    // A side branch counts too.
    s.branch(&root).unwrap();
    s.append_message(&assistant_with_usage(Some(0.33))).unwrap();
    let u = s.usage_statistics();
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (22.0, 13.0, 2.0, 4.0)
    );
    assert!(
        (u.premium_requests - 3.33).abs() < 1e-9,
        "{}",
        u.premium_requests
    );
    assert!((u.cost - 1.0).abs() < 1e-9);
    // The same after a reload.
    let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
    assert_eq!(reloaded.usage_statistics(), u);
}

#[test]
fn premium_requests_default_to_zero_when_usage_omits_them() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hello")).unwrap();
    s.append_message(&assistant_with_usage(None)).unwrap();
    assert_eq!(s.usage_statistics().premium_requests, 0.0);
    assert_eq!(s.usage_statistics().input, 10.0);
}

#[test]
fn usage_totals_are_the_agents_double_sums_of_the_exact_numbers() {
    let storage = mem();
    let mut s = create(&storage);
    let with_cost = |total: &str, premium: &str| {
        assistant_with_usage(None)
            .replace(r#""total":0.25"#, &format!(r#""total":{total}"#))
            .replace(
                r#""totalTokens":15"#,
                &format!(r#""totalTokens":15,"premiumRequests":{premium}"#),
            )
    };
    // 0.20000010000000001 is the double nearest 0.2 + 1e-7 (JSON.stringify writes it so);
    // a parse one ulp off reads 0.2000001.
    s.append_message(&with_cost("0.20000010000000001", "0.1"))
        .unwrap();
    let u = s.usage_statistics();
    assert_eq!(u.cost, 0.2 + 1e-7);
    assert_eq!(u.cost.to_string(), "0.20000010000000001");
    // Message by message, in the file's order, as doubles: 0.1 + 1e-7 is not 0.1000001.
    s.append_message(&with_cost("1e-7", "0.2")).unwrap();
    let u = s.usage_statistics();
    assert_eq!(u.cost, 0.2 + 1e-7 + 1e-7);
    assert_eq!(u.premium_requests, 0.1 + 0.2);
    let reloaded = open(&storage, s.file().unwrap(), Persistence::ReadOnly);
    assert_eq!(reloaded.usage_statistics(), u);
}

#[test]
fn the_last_model_change_role_is_the_nearest_on_the_path_to_the_leaf() {
    let storage = mem();
    let mut s = create(&storage);
    assert_eq!(s.last_model_change_role(), None);
    s.append_model_change("anthropic/claude", None).unwrap();
    assert_eq!(s.last_model_change_role(), Some("default"));
    let here = s.append_message(&user("hi")).unwrap();
    s.append_model_change("openai/gpt-5", Some("smol")).unwrap();
    s.append_message(&user("later")).unwrap();
    assert_eq!(s.last_model_change_role(), Some("smol"));
    s.branch(&here).unwrap();
    assert_eq!(
        s.last_model_change_role(),
        Some("default"),
        "off the branch"
    );
}

#[test]
fn an_empty_file_gets_its_header_before_the_first_entry() {
    let storage = mem();
    put(&storage, FILE, "");
    let mut s = open(&storage, FILE, Persistence::Persistent);
    s.append_message(&user("hi")).unwrap();
    s.append_message(&assistant("hello")).unwrap();
    let text = read(&storage, FILE);
    assert!(
        text.lines().next().unwrap().contains(r#""type":"session""#),
        "{text}"
    );
    assert_eq!(text.lines().count(), 3);
}

#[test]
fn session_artifacts_are_numbered_per_session_file_and_kept_in_memory_without_one() {
    // A session that is never written keeps saved artifacts in memory; allocation has
    // nothing to give.
    let mut memory = Session::in_memory(mem(), "/work");
    assert_eq!(memory.allocate_artifact_path("bash").unwrap(), None);
    let id = memory.save_artifact("early output", "bash").unwrap();
    assert_eq!(
        (id.as_str(), memory.memory_artifact(&id)),
        ("0", Some("early output"))
    );
    assert_eq!(memory.artifact_path(&id).unwrap(), None);
    // A persistent session has its file path from the start (written with the first
    // reply): artifacts go under it at once.
    let storage = mem();
    let mut s = create(&storage);
    let file = s.file().unwrap().to_string();
    let dir = file.strip_suffix(".jsonl").unwrap().to_string();
    let (a, path_a) = s.allocate_artifact_path("bash").unwrap().unwrap();
    let (b, path_b) = s.allocate_artifact_path("python").unwrap().unwrap();
    assert_eq!(
        (a.as_str(), b.as_str()),
        ("0", "1"),
        "a counter, not a rescan"
    );
    assert_eq!(path_a, format!("{dir}/0.bash.log"));
    assert_eq!(path_b, format!("{dir}/1.python.log"));
    let saved = s.save_artifact("long output", "read").unwrap();
    assert_eq!(saved, "2");
    assert_eq!(read(&storage, &format!("{dir}/2.read.log")), "long output");
    assert_eq!(
        s.artifact_path("2").unwrap(),
        Some(format!("{dir}/2.read.log"))
    );
    assert_eq!(s.artifact_path("9").unwrap(), None);
    assert_eq!(s.artifact_path("../x").unwrap(), None);
    // Another session object on the same file counts from what is on disk.
    s.close().unwrap();
    let mut again = open(&storage, &file, Persistence::Persistent);
    assert_eq!(again.save_artifact("more", "bash").unwrap(), "3");
}

#[test]
fn an_entry_edited_in_place_is_persisted_by_rewrite_entries() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("run it")).unwrap();
    let tool = s
        .append_message(r#"{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"a very long output"}],"isError":false,"timestamp":2}"#)
        .unwrap();
    s.append_message(&assistant("done")).unwrap();
    let file = s.file().unwrap().to_string();
    s.close().unwrap();
    // Reloaded, the old tool output is pruned in place and the file rewritten.
    let mut s = open(&storage, &file, Persistence::Persistent);
    let mut edited: serde_json::Value =
        serde_json::from_str(s.entry(&tool).unwrap().json()).unwrap();
    edited["message"]["content"][0]["text"] = "[pruned]".into();
    s.replace_entry(&edited.to_string()).unwrap();
    assert_eq!(
        read(&storage, &file).matches("a very long output").count(),
        1,
        "nothing written yet"
    );
    s.rewrite_entries().unwrap();
    let text = read(&storage, &file);
    assert!(text.contains("[pruned]") && !text.contains("a very long output"));
    let reloaded = open(&storage, &file, Persistence::ReadOnly);
    assert_eq!(reloaded.entries().len(), 3);
    assert_eq!(reloaded.leaf_id(), s.leaf_id());
    // An edit may not move an entry in the tree or change its kind.
    let mut moved = edited.clone();
    moved["parentId"] = serde_json::Value::Null;
    assert!(s.replace_entry(&moved.to_string()).is_err());
    let mut retyped = edited.clone();
    retyped["type"] = "custom".into();
    assert!(s.replace_entry(&retyped.to_string()).is_err());
    let mut unknown = edited;
    unknown["id"] = "nope".into();
    assert!(s.replace_entry(&unknown.to_string()).is_err());
}

#[test]
fn new_sessions_go_where_the_agent_puts_them_and_every_form_is_still_read() {
    let agent = "/home/me/.xcsh/agent";
    let dir_of = |cwd: &str| {
        let s = Session::create(
            mem(),
            &xcsh_session::session::CreateOptions {
                agent_dir: agent.into(),
                cwd: cwd.into(),
                ..Default::default()
            },
        );
        xcsh_session::storage::parent(s.file().unwrap()).to_string()
    };
    assert_eq!(
        dir_of("/home/me/work/pi"),
        format!("{agent}/sessions/-work-pi")
    );
    assert_eq!(
        dir_of("/tmp/scratch/x"),
        format!("{agent}/sessions/-tmp-scratch-x")
    );
    assert_eq!(dir_of("/srv/app"), format!("{agent}/sessions/--srv-app--"));
    // An agent dir outside a home: the seed's form.
    assert_eq!(
        xcsh_session::paths::session_dir_for_cwd("/agent", "/home/me/work/pi"),
        "/agent/sessions/--home-me-work-pi--"
    );
    // Reading looks in the old form too, and finds sessions of both.
    let storage = mem();
    let old = format!("{agent}/sessions/--home-me-work-pi--/2026-01-01T00-00-00-000Z_old.jsonl");
    let new = format!("{agent}/sessions/-work-pi/2026-01-02T00-00-00-000Z_new.jsonl");
    for (path, id) in [(&old, "old"), (&new, "new")] {
        put(
            &storage,
            path,
            &lines(&[
                &format!(
                    r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/me/work/pi"}}"#
                ),
                r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            ]),
        );
    }
    let dirs = xcsh_session::paths::session_dirs_for_cwd(agent, "/home/me/work/pi");
    let recent = xcsh_session::listing::recent_sessions_in(&*storage, &dirs, 10).unwrap();
    let mut ids: Vec<&str> = recent.iter().map(|r| r.head.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["new", "old"]);
}

// ---- legacy session folders (the agent's "migrates legacy temp-root absolute session
// dirs to -tmp prefixes", without deleting what it cannot move) ----

fn create_in(storage: &Rc<MemoryStorage>, agent_dir: &str, cwd: &str) -> Session {
    Session::create(
        storage.clone(),
        &xcsh_session::session::CreateOptions {
            agent_dir: agent_dir.into(),
            cwd: cwd.into(),
            ..Default::default()
        },
    )
}

#[test]
fn a_new_session_folds_the_legacy_folder_of_its_cwd_into_the_newer_one() {
    let storage = mem();
    let agent = "/home/me/.xcsh/agent";
    let legacy = format!("{agent}/sessions/--tmp-proj-x--");
    put(&storage, &format!("{legacy}/carried.jsonl"), "marker\n");
    put(&storage, &format!("{legacy}/carried/0.bash.log"), "out");
    let s = create_in(&storage, agent, "/tmp/proj/x");
    let newer = format!("{agent}/sessions/-tmp-proj-x");
    assert_eq!(
        std::path::Path::new(s.file().unwrap())
            .parent()
            .unwrap()
            .to_str(),
        Some(newer.as_str())
    );
    assert_eq!(
        read(&storage, &format!("{newer}/carried.jsonl")),
        "marker\n"
    );
    assert_eq!(
        read(&storage, &format!("{newer}/carried/0.bash.log")),
        "out"
    );
    assert!(
        !storage.exists(&legacy),
        "the emptied legacy folder is gone"
    );
}

#[test]
fn a_name_both_folders_have_is_kept_in_both_and_the_legacy_folder_stays() {
    let storage = mem();
    let agent = "/home/me/.xcsh/agent";
    let legacy = format!("{agent}/sessions/--home-me-w--");
    let newer = format!("{agent}/sessions/-w");
    put(&storage, &format!("{legacy}/same.jsonl"), "old copy\n");
    put(&storage, &format!("{legacy}/only-old.jsonl"), "moved\n");
    put(&storage, &format!("{newer}/same.jsonl"), "new copy\n");
    let merge = xcsh_session::merge_legacy_dir(&*storage, &legacy, &newer).unwrap();
    assert_eq!(merge.moved, ["only-old.jsonl"]);
    assert_eq!(
        merge.kept,
        [(
            "same.jsonl".to_string(),
            xcsh_session::KeptBecause::TargetHasIt
        )]
    );
    assert!(!merge.removed);
    // The agent deletes the legacy copy here; both survive.
    assert_eq!(
        read(&storage, &format!("{legacy}/same.jsonl")),
        "old copy\n"
    );
    assert_eq!(read(&storage, &format!("{newer}/same.jsonl")), "new copy\n");
    assert_eq!(
        read(&storage, &format!("{newer}/only-old.jsonl")),
        "moved\n"
    );
}

#[test]
fn a_session_with_a_lock_stays_with_its_lock_and_artifacts() {
    let storage = mem();
    let (legacy, newer) = ("/a/sessions/--w--", "/a/sessions/-w");
    put(&storage, &format!("{legacy}/busy.jsonl"), "being written\n");
    put(&storage, &format!("{legacy}/busy.jsonl.lock"), "{}");
    put(&storage, &format!("{legacy}/busy/0.bash.log"), "out");
    put(&storage, &format!("{legacy}/idle.jsonl"), "idle\n");
    let merge = xcsh_session::merge_legacy_dir(&*storage, legacy, newer).unwrap();
    assert_eq!(merge.moved, ["idle.jsonl"]);
    let mut kept: Vec<&str> = merge.kept.iter().map(|(n, _)| n.as_str()).collect();
    kept.sort();
    assert_eq!(kept, ["busy", "busy.jsonl", "busy.jsonl.lock"]);
    assert!(merge
        .kept
        .iter()
        .all(|(_, why)| *why == xcsh_session::KeptBecause::Locked));
    assert!(storage.exists(&format!("{legacy}/busy/0.bash.log")));
    assert!(storage.exists(&format!("{newer}/idle.jsonl")));
}

#[test]
fn a_file_where_the_newer_folder_should_be_stops_the_merge_and_is_kept() {
    let storage = mem();
    let (legacy, newer) = ("/a/sessions/--w--", "/a/sessions/-w");
    put(&storage, &format!("{legacy}/s.jsonl"), "session\n");
    put(&storage, newer, "a user's file\n");
    let merge = xcsh_session::merge_legacy_dir(&*storage, legacy, newer).unwrap();
    assert!(merge.moved.is_empty());
    assert_eq!(
        read(&storage, newer),
        "a user's file\n",
        "the agent deletes it"
    );
    assert_eq!(read(&storage, &format!("{legacy}/s.jsonl")), "session\n");
}

#[test]
fn an_append_that_fails_after_its_lock_check_leaves_no_check_for_a_later_write() {
    // An append checks the lock once for its own write; when it fails before writing,
    // the next write must check again, or a takeover in between would go unseen.
    let storage = mem();
    put(&storage, FILE, &lines(&[HEADER_V3]));
    let mut older = open_as(&storage, 42).unwrap();
    older.append_message(&user("one")).unwrap();
    older.append_message(&assistant("two")).unwrap();
    let refused = older
        .append_entry_json(r#"{"type":"session"}"#)
        .unwrap_err();
    assert!(refused.to_string().contains("header type"), "{refused}");
    let _newer = open_as(&storage, 42).unwrap();
    let err = older.rewrite_entries().unwrap_err();
    assert!(
        err.to_string().contains("by a newer open in this process"),
        "{err}"
    );
}

/// A storage that records the files read, and whose `stat` gives file identities as
/// `ids` says.
struct Counting {
    inner: KnownProcess,
    ids: Ids,
    reads: std::cell::RefCell<Vec<String>>,
}

impl Layer for Counting {
    fn inner(&self) -> &dyn Storage {
        &self.inner
    }
    fn read(&self, path: &str) -> xcsh_session::storage::StorageResult<Vec<u8>> {
        self.reads.borrow_mut().push(path.to_string());
        Storage::read(&self.inner, path)
    }
    fn read_prefix(&self, path: &str, max: u64) -> xcsh_session::storage::StorageResult<Vec<u8>> {
        self.reads.borrow_mut().push(path.to_string());
        Storage::read_prefix(&self.inner, path, max)
    }
    fn read_range(
        &self,
        path: &str,
        offset: u64,
        len: u64,
    ) -> xcsh_session::storage::StorageResult<Vec<u8>> {
        self.reads.borrow_mut().push(path.to_string());
        Storage::read_range(&self.inner, path, offset, len)
    }
    fn stat(&self, path: &str) -> xcsh_session::storage::StorageResult<FileStat> {
        let stat = Storage::stat(&self.inner, path)?;
        Ok(match self.ids {
            Ids::None => FileStat { id: None, ..stat },
            Ids::Real => stat,
            Ids::Reused => FileStat {
                id: stat.id.map(|_| (0, 1)),
                ..stat
            },
            Ids::ReusedCoarse => FileStat {
                id: stat.id.map(|_| (0, 1)),
                mtime_ms: stat.mtime_ms / 1_000_000_000 * 1_000_000_000,
                ..stat
            },
        })
    }
}

#[derive(Clone, Copy, Debug)]
enum Ids {
    /// None (the WIT storage gives none).
    None,
    /// The memory storage's (the native and Node storages give device and inode).
    Real,
    /// One for every file: a filesystem that gives a deleted file's inode number again.
    Reused,
    /// That, with a clock so coarse that every mtime is the same: a lock file deleted
    /// and another created in its place look alike (ext4 gives the inode number again at
    /// once, and files created within the same tick of its clock have the same mtime).
    ReusedCoarse,
}

/// A session of [`FILE`] opened for writing by pid 42 over a [`Counting`] storage, with one
/// user and one assistant message written (the lock taken and checked once).
fn counted_session(ids: Ids) -> (Rc<MemoryStorage>, Rc<Counting>, Session) {
    let storage = mem();
    put(&storage, FILE, &lines(&[HEADER_V3]));
    let counting = Rc::new(Counting {
        inner: KnownProcess {
            inner: storage.clone(),
            pid: 42,
        },
        ids,
        reads: Default::default(),
    });
    let mut s = Session::open(
        counting.clone(),
        FILE,
        &OpenOptions {
            persistence: Persistence::Persistent,
            agent_dir: "/agent".into(),
            cwd: "/work".into(),
        },
    )
    .unwrap();
    s.append_message(&user("one")).unwrap();
    s.append_message(&assistant("two")).unwrap();
    counting.reads.borrow_mut().clear();
    (storage, counting, s)
}

#[test]
fn an_append_reads_the_lock_file_once_and_the_session_file_never() {
    // A storage that cannot tell files apart: the lock is checked by reading it.
    let (_, counting, mut s) = counted_session(Ids::None);
    s.append_message(&user("three")).unwrap();
    assert_eq!(
        *counting.reads.borrow(),
        [format!("{FILE}.lock")],
        "one lock check, no re-read of the session"
    );
}

#[test]
fn an_append_reads_no_file_where_the_storage_identifies_files() {
    // The lock file's stat, unchanged since a read found the lock ours, is the check.
    let (_, counting, mut s) = counted_session(Ids::Real);
    s.append_message(&user("three")).unwrap();
    s.append_message(&user("four")).unwrap();
    assert_eq!(*counting.reads.borrow(), Vec::<String>::new());
}

#[test]
fn a_takeover_is_seen_through_the_lock_files_stat() {
    // What the stat check must still see, each time at the very next append: a newer open
    // of this process (its lock renamed over ours), a lock deleted (taken again: the stat
    // finds none, nothing to read), and a process that found this one dead (ours deleted,
    // its own created, of the same size), also where the new lock file gets the inode
    // number ours had (`Ids::Reused`: then its later mtime tells), and the same mtime
    // too (`Ids::ReusedCoarse`: then the stat is never trusted, the lock is read).
    let cases = [
        ("newer open", Ids::Real),
        ("deleted", Ids::Real),
        ("dead owner's lock replaced", Ids::Real),
        ("newer open", Ids::Reused),
        ("dead owner's lock replaced", Ids::Reused),
        ("newer open", Ids::ReusedCoarse),
        ("dead owner's lock replaced", Ids::ReusedCoarse),
    ];
    for (takeover, ids) in cases {
        let (storage, counting, mut s) = counted_session(ids);
        s.append_message(&user("three")).unwrap();
        let lock = format!("{FILE}.lock");
        let _newer = match takeover {
            "newer open" => Some(open_as(&storage, 42).unwrap()),
            "deleted" => {
                storage.unlink(&lock).unwrap();
                None
            }
            _ => {
                let ours = storage.read(&lock).unwrap();
                let theirs = String::from_utf8(ours)
                    .unwrap()
                    .replace(&s.lock().unwrap().owner.token, "ffffffffffffffff")
                    .replace("\"pid\":42", "\"pid\":43");
                storage.unlink(&lock).unwrap();
                storage.create_new(&lock, theirs.as_bytes()).unwrap();
                None
            }
        };
        counting.reads.borrow_mut().clear();
        let before = read(&storage, FILE);
        let r = s.append_message(&user("after"));
        match takeover {
            "deleted" => {
                r.unwrap();
                assert!(
                    read(&storage, &lock).contains(&s.lock().unwrap().owner.token),
                    "taken again"
                );
            }
            _ => {
                let err = r.unwrap_err();
                assert!(
                    matches!(err, xcsh_session::error::SessionError::Superseded { .. }),
                    "{takeover}, {ids:?}: {err}"
                );
                assert_eq!(
                    read(&storage, FILE),
                    before,
                    "{takeover}, {ids:?}: nothing written"
                );
            }
        }
        let reads: &[String] = match takeover {
            "deleted" => &[],
            _ => std::slice::from_ref(&lock),
        };
        assert_eq!(
            *counting.reads.borrow(),
            reads,
            "{takeover}, {ids:?}: the changed stat sent the check to the file"
        );
    }
}
