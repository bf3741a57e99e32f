//! `xcsh-session session`: the component's `session` resource driven turn by turn over
//! JSON lines, as a program in another language would drive it. The scenario is the one
//! the jco and wasmtime-py hosts run (create, append, label, branch, name, context, fork,
//! reopen); contexts must equal the native core's for the same files, byte for byte.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::rc::Rc;

use serde_json::{json, Value};
use xcsh_session::api;
use xcsh_session::fs::FsStorage;

mod common;
use common::{shared_cache, BIN};

/// A running `xcsh-session session`: one request written, one answer read.
struct Driver {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Driver {
    fn start(agent_dir: &Path, extra: &[&str]) -> Driver {
        let mut child = Command::new(BIN)
            .env("XCSH_SESSION_CACHE_DIR", shared_cache())
            .env_remove("XCSH_SESSION_COMPONENT")
            .arg("--agent-dir")
            .arg(agent_dir)
            .arg("session")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn xcsh-session session");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Driver {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    /// Send one raw line, read one answer.
    fn raw(&mut self, line: &str) -> Value {
        self.raw_bytes(line.as_bytes())
    }

    /// Send one line of any bytes (a newline is added), read one answer.
    fn raw_bytes(&mut self, line: &[u8]) -> Value {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).expect("write request");
        stdin.write_all(b"\n").expect("write request");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).expect("read answer");
        assert!(
            answer.ends_with('\n'),
            "one answer per line, got {answer:?}"
        );
        serde_json::from_str(&answer).expect("the answer is JSON")
    }

    /// Call `call` (on `this`, if any) and return the whole answer.
    fn answer(&mut self, call: &str, this: Option<&str>, args: Value) -> Value {
        self.next_id += 1;
        let mut request = json!({ "id": self.next_id, "call": call, "args": args });
        if let Some(h) = this {
            request["self"] = json!(h);
        }
        let answer = self.raw(&request.to_string());
        assert_eq!(
            answer["id"],
            json!(self.next_id),
            "the id comes back: {answer}"
        );
        answer
    }

    /// A call that must succeed: its `ok` value.
    fn ok(&mut self, call: &str, this: Option<&str>, args: Value) -> Value {
        let answer = self.answer(call, this, args);
        assert!(answer.get("error").is_none(), "{call} failed: {answer}");
        answer["ok"].clone()
    }

    /// A call that must fail: its `error`.
    fn err(&mut self, call: &str, this: Option<&str>, args: Value) -> Value {
        let answer = self.answer(call, this, args);
        assert!(answer.get("ok").is_none(), "{call} should fail: {answer}");
        answer["error"].clone()
    }

    /// Close stdin and wait: the exit status.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("wait")
    }
}

fn text(v: &Value) -> &str {
    v.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {v}"))
}

/// The native core's context JSON of `file` (at `leaf`).
fn native_context(file: &str, agent_dir: &str, leaf: Option<&str>) -> String {
    api::context_file(Rc::new(FsStorage::new()), file, agent_dir, leaf).expect("native context")
}

fn user(t: &str) -> Value {
    json!(json!({ "role": "user", "content": t, "timestamp": 1 }).to_string())
}

fn reply(t: &str) -> Value {
    json!(json!({
        "role": "assistant", "content": [{ "type": "text", "text": t }],
        "provider": "p", "model": "m", "timestamp": 2
    })
    .to_string())
}

#[test]
fn the_scenario_turn_by_turn_equals_the_native_core() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = std::fs::canonicalize(dir.path()).expect("canonical");
    let agent_dir = agent.to_str().expect("utf-8");
    let mut d = Driver::start(&agent, &[]);

    let s = d.ok(
        "session.create",
        None,
        json!([agent_dir, "/work/pi", null, null]),
    );
    let s = text(&s).to_string();
    assert_eq!(s, "session#1");
    let first = d.ok("session.append-message", Some(&s), json!([user("hello")]));
    let first = text(&first).to_string();
    // Answered before stdin ends: the session stays open between lines.
    let file = d.ok("session.file", Some(&s), json!([]));
    let file = text(&file).to_string();
    assert!(
        !Path::new(&file).exists(),
        "not written before the first reply"
    );
    d.ok(
        "session.append-message",
        Some(&s),
        json!([reply("hi there")]),
    );
    assert!(
        file.starts_with(&format!("{agent_dir}/sessions/")),
        "{file}"
    );
    assert!(Path::new(&file).exists(), "written with the first reply");
    assert!(
        Path::new(&format!("{file}.lock")).exists(),
        "the writer lock is held"
    );

    d.ok("session.append-label", Some(&s), json!([first, "start"]));
    assert_eq!(
        d.ok("session.label", Some(&s), json!([first])),
        json!("start")
    );
    d.ok("session.branch", Some(&s), json!([first]));
    let other = d.ok(
        "session.append-message",
        Some(&s),
        json!([reply("another answer")]),
    );
    assert_eq!(d.ok("session.leaf-id", Some(&s), json!([])), other);
    assert_eq!(
        d.ok(
            "session.set-name",
            Some(&s),
            json!(["The pi session", "user"])
        ),
        json!(true)
    );
    d.ok(
        "session.append-model-change",
        Some(&s),
        json!(["claude", "default"]),
    );
    let compaction = json!({
        "summary": "so far", "short-summary": null, "first-kept-entry-id": first,
        "tokens-before": 1200, "details-json": null, "from-extension": null, "preserve-data-json": null
    });
    d.ok("session.append-compaction", Some(&s), json!([compaction]));
    d.ok(
        "session.append-message",
        Some(&s),
        json!([user("after the compaction")]),
    );

    let context = d.ok("session.context", Some(&s), json!([null]));
    assert_eq!(
        text(&context),
        native_context(&file, agent_dir, None),
        "the context is the native core's, byte for byte"
    );
    let at_first = d.ok("session.context", Some(&s), json!([first]));
    assert_eq!(
        text(&at_first),
        native_context(&file, agent_dir, Some(&first))
    );
    let tree: Value =
        serde_json::from_str(text(&d.ok("session.tree", Some(&s), json!([])))).expect("tree JSON");
    assert_eq!(tree[0]["label"], json!("start"));
    assert_eq!(
        tree[0]["children"].as_array().map(Vec::len),
        Some(2),
        "two branches under the first message"
    );
    let usage = d.ok("session.usage-statistics", Some(&s), json!([]));
    assert_eq!(usage["cost"], json!(0.0), "a typed record: {usage}");

    let forked = d.ok("session.fork", Some(&s), json!([]));
    assert_eq!(forked["old-file"], json!(file));
    let new_file = text(&forked["new-file"]).to_string();
    assert_ne!(new_file, file);
    let forked_context = d.ok("session.context", Some(&s), json!([null]));
    assert_eq!(
        text(&forked_context),
        native_context(&new_file, agent_dir, None),
        "the fork continues, on disk as in memory"
    );

    // Reopen the first file read-only in a second resource: the same context.
    let r = d.ok(
        "session.open",
        None,
        json!([file, agent_dir, "/work/pi", true]),
    );
    let r = text(&r).to_string();
    assert_eq!(r, "session#2");
    assert_eq!(d.ok("session.context", Some(&r), json!([null])), context);
    assert_eq!(
        d.err("session.append-message", Some(&r), json!([user("no")]))["kind"],
        json!("read-only")
    );
    d.ok("drop", Some(&r), json!([]));
    assert_eq!(
        d.err("session.id", Some(&r), json!([]))["kind"],
        json!("invalid-input"),
        "a dropped handle is gone"
    );

    d.ok("session.close", Some(&s), json!([]));
    assert!(
        !Path::new(&format!("{new_file}.lock")).exists(),
        "close releases the lock"
    );
    d.ok("session.append-message", Some(&s), json!([user("later")]));
    assert!(
        Path::new(&format!("{new_file}.lock")).exists(),
        "a later write takes it again"
    );
    assert!(d.finish().success());
    assert!(
        !Path::new(&format!("{new_file}.lock")).exists(),
        "the end of stdin releases it"
    );
    let last = std::fs::read_to_string(&new_file).expect("read");
    let last_line = last.lines().last().unwrap_or_default();
    assert!(
        last_line.contains(r#""content":"later""#),
        "the last append is on disk: {last_line}"
    );
}

#[test]
fn a_bad_request_gets_a_clear_error_and_the_loop_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = std::fs::canonicalize(dir.path()).expect("canonical");
    let mut d = Driver::start(&agent, &[]);
    let not_json = d.raw("{oops");
    assert_eq!(not_json["error"]["kind"], json!("invalid-input"));
    assert!(text(&not_json["error"]["message"]).starts_with("the request is not JSON"));
    let e = d.err("bogus", None, json!([]));
    assert_eq!(
        e["message"],
        json!("no function bogus in xcsh:session/session-api@0.2.0")
    );
    let e = d.err("session.append-message", Some("session#9"), json!(["{}"]));
    assert_eq!(
        e["message"],
        json!("session.append-message: self: no open resource \"session#9\"")
    );
    let s = d.ok("session.in-memory", None, json!(["/work/pi"]));
    let s = text(&s).to_string();
    let e = d.err("session.append-label", Some(&s), json!([1]));
    assert_eq!(
        e["message"],
        json!("session.append-label: argument `target-id`: expected a string, got 1")
    );
    let e = d.err("session.append-message", Some(&s), json!([]));
    assert_eq!(
        e["message"],
        json!("session.append-message: missing argument `message-json`")
    );
    let e = d.err("session.branch", Some(&s), json!(["a", "b"]));
    assert_eq!(
        e["message"],
        json!("session.branch takes 1 argument(s), got 2")
    );
    let e = d.err("session.set-name", Some(&s), json!(["n", "robot"]));
    assert_eq!(
        e["message"],
        json!("session.set-name: argument `source`: expected one of auto, user, got \"robot\"")
    );
    // The core's own errors come through with their kind and message.
    let e = d.err("session.append-message", Some(&s), json!(["not json"]));
    assert_eq!(e["kind"], json!("invalid-input"), "{e}");
    let e = d.err("session.branch", Some(&s), json!(["nope"]));
    assert_eq!(
        e,
        json!({ "kind": "entry-not-found", "message": "Entry nope not found" })
    );
    // After all that the session still works.
    let id = d.ok(
        "session.append-message",
        Some(&s),
        json!([user("still here")]),
    );
    assert_eq!(d.ok("session.leaf-id", Some(&s), json!([])), id);
    assert!(d.finish().success());
}

#[test]
fn a_handle_of_another_type_as_self_is_an_error_answer_and_the_loop_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = std::fs::canonicalize(dir.path()).expect("canonical");
    let mut d = Driver::start(&agent, &[]);
    let s = d.ok("session.in-memory", None, json!(["/work/pi"]));
    let s = text(&s).to_string();
    let sink = d.ok("output-sink.new", None, json!([null, null, null, null]));
    let sink = text(&sink).to_string();
    assert_eq!(sink, "output-sink#2");

    let e = d.err("session.id", Some(&sink), json!([]));
    assert_eq!(
        e,
        json!({
            "kind": "invalid-input",
            "message": "session.id: self: \"output-sink#2\" is of type output-sink, not session"
        })
    );
    let e = d.err("output-sink.push", Some(&s), json!(["x"]));
    assert_eq!(
        e["message"],
        json!("output-sink.push: self: \"session#1\" is of type session, not output-sink")
    );
    // `self` on what is not a method: refused, not passed as the first argument.
    let e = d.err("show", Some(&s), json!(["/nowhere"]));
    assert_eq!(
        e["message"],
        json!("show is not a method: \"self\" is only for TYPE.NAME methods")
    );
    let e = d.err("output-sink.new", Some(&s), json!([]));
    assert_eq!(e["kind"], json!("invalid-input"), "{e}");

    // Both handles still work.
    let id = d.ok(
        "session.append-message",
        Some(&s),
        json!([user("still here")]),
    );
    assert_eq!(d.ok("session.leaf-id", Some(&s), json!([])), id);
    d.ok("output-sink.push", Some(&sink), json!(["hello\n"]));
    let dump = d.ok("output-sink.dump", Some(&sink), json!([null]));
    assert_eq!(dump["output"], json!("hello\n"), "{dump}");
    assert!(d.finish().success());
}

#[test]
fn a_line_that_is_not_utf8_is_an_error_answer_with_a_null_id_and_the_loop_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = std::fs::canonicalize(dir.path()).expect("canonical");
    let mut d = Driver::start(&agent, &[]);
    let s = d.ok("session.in-memory", None, json!(["/work/pi"]));
    let s = text(&s).to_string();
    let answer =
        d.raw_bytes(b"{\"id\": 7, \"call\": \"session.id\", \"self\": \"session#1\" \xff\xfe}");
    assert_eq!(
        answer,
        json!({
            "id": null,
            "error": {
                "kind": "invalid-input",
                "message": "the request is not UTF-8 (an invalid byte at offset 52)"
            }
        })
    );
    // The same handle, on the next line.
    let id = d.ok("session.append-message", Some(&s), json!([user("after")]));
    assert_eq!(d.ok("session.leaf-id", Some(&s), json!([])), id);
    assert!(d.finish().success());
}

#[test]
fn an_acknowledged_user_message_is_not_on_disk_until_a_reply_or_ensure_on_disk_and_is_on_disk_says_so(
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = std::fs::canonicalize(dir.path()).expect("canonical");
    let agent_dir = agent.to_str().expect("utf-8");
    let mut d = Driver::start(&agent, &[]);
    let create = json!([agent_dir, "/work/pi", null, null]);

    let s = d.ok("session.create", None, create.clone());
    let s = text(&s).to_string();
    d.ok("session.append-message", Some(&s), json!([user("hi")]));
    let file = d.ok("session.file", Some(&s), json!([]));
    let file = text(&file).to_string();
    assert_eq!(
        d.ok("session.is-on-disk", Some(&s), json!([])),
        json!(false)
    );
    d.ok("session.close", Some(&s), json!([]));
    assert!(
        !Path::new(&file).exists(),
        "acknowledged, closed, not written"
    );
    d.ok("session.ensure-on-disk", Some(&s), json!([]));
    assert_eq!(d.ok("session.is-on-disk", Some(&s), json!([])), json!(true));
    let written = std::fs::read_to_string(&file).expect("written by ensure-on-disk");
    assert!(written.contains(r#""content":"hi""#), "{written}");

    // The agent's way: written with the first assistant message.
    let r = d.ok("session.create", None, create);
    let r = text(&r).to_string();
    d.ok("session.append-message", Some(&r), json!([user("hello")]));
    assert_eq!(
        d.ok("session.is-on-disk", Some(&r), json!([])),
        json!(false)
    );
    d.ok(
        "session.append-message",
        Some(&r),
        json!([reply("hi there")]),
    );
    assert_eq!(d.ok("session.is-on-disk", Some(&r), json!([])), json!(true));

    let m = d.ok("session.in-memory", None, json!(["/work/pi"]));
    d.ok(
        "session.append-message",
        Some(text(&m)),
        json!([reply("x")]),
    );
    assert_eq!(
        d.ok("session.is-on-disk", Some(text(&m)), json!([])),
        json!(false)
    );
    assert!(d.finish().success());
}

#[test]
fn files_outside_the_roots_are_refused_and_dir_adds_a_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let agent = base.join("agent");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let outside = elsewhere.join("s.jsonl");
    let outside = outside.to_str().expect("utf-8");
    let agent_dir = agent.to_str().expect("utf-8");

    let mut d = Driver::start(&agent, &[]);
    let e = d.err(
        "session.open",
        None,
        json!([outside, agent_dir, "/work/pi", false]),
    );
    assert_eq!(e["kind"], json!("storage"), "{e}");
    assert!(
        text(&e["message"]).contains("outside the allowed roots"),
        "{e}"
    );
    let e = d.err("show", None, json!(["/etc/passwd", agent_dir]));
    assert!(
        text(&e["message"]).contains("outside the allowed roots"),
        "{e}"
    );
    assert!(d.finish().success());
    assert!(
        !Path::new(outside).exists(),
        "nothing written outside the roots"
    );

    let mut d = Driver::start(&agent, &["--dir", elsewhere.to_str().expect("utf-8")]);
    let s = d.ok(
        "session.open",
        None,
        json!([outside, agent_dir, "/work/pi", false]),
    );
    d.ok("session.ensure-on-disk", Some(text(&s)), json!([]));
    assert!(d.finish().success());
    assert!(Path::new(outside).exists(), "--dir allows it");
}

#[test]
fn timings_add_the_hosts_microseconds_to_each_answer_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("agent");
    let mut plain = Driver::start(&agent, &[]);
    let mut timed = Driver::start(&agent, &["--timings"]);
    for d in [&mut plain, &mut timed] {
        let s = d.ok("session.in-memory", None, json!(["/w"]));
        d.ok(
            "session.append-message",
            text(&s).into(),
            json!([user("hi")]),
        );
    }
    let a = plain.raw(r#"{"id": 7, "call": "session.leaf-id", "self": "session#1"}"#);
    let b = timed.raw(r#"{"id": 7, "call": "session.leaf-id", "self": "session#1"}"#);
    assert_eq!(a.get("us"), None, "no timings unless asked for");
    let us = b
        .get("us")
        .and_then(Value::as_u64)
        .expect("a number of microseconds");
    assert!(us < 10_000_000, "{us} µs for a leaf id");
    let mut b = b;
    b.as_object_mut().expect("object").remove("us");
    assert_eq!(a.get("id"), b.get("id"));
    assert!(a.get("ok").is_some() && b.get("ok").is_some());
    // An error answer is timed too.
    let e =
        timed.raw(r#"{"id": 8, "call": "session.branch", "self": "session#1", "args": ["nope"]}"#);
    assert!(e.get("error").is_some() && e.get("us").is_some(), "{e}");
    assert!(plain.finish().success() && timed.finish().success());
}
