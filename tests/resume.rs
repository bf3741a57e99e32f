//! Resume resolution, --continue with terminal breadcrumbs, and the switch flow, over
//! generated session directories (many projects, shared prefixes, corrupt files, files
//! without messages).

mod common;
use common::*;
use std::rc::Rc;
use xcsh_session::resume::{
    self, clamp_thinking_level, continue_recent, open_for_use, switch_session, terminal_id,
    ContinueTarget, RestoreOptions, ResumeError, ResumeTarget, SwitchHooks,
};
use xcsh_session::storage::MemoryStorage;

fn session_file(
    storage: &MemoryStorage,
    cwd: &str,
    id: &str,
    mtime: i64,
    with_message: bool,
) -> String {
    let dir = xcsh_session::paths::session_dir_for_cwd("/agent", cwd);
    let path = format!("{dir}/2026-02-16T10-20-30-123Z_{id}.jsonl");
    let mut text = format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-02-16T10:20:30.123Z","cwd":"{cwd}"}}"#
    );
    text.push('\n');
    if with_message {
        text.push_str(r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-02-16T10:21:00.000Z","message":{"role":"user","content":"hello"}}"#);
        text.push('\n');
    }
    put(storage, &path, &text);
    storage.set_mtime(&path, mtime);
    path
}

/// 30 projects × 3 sessions, plus shared prefixes, corrupt and empty files.
fn world() -> Rc<MemoryStorage> {
    let storage = mem();
    for p in 0..30 {
        for s in 0..3 {
            session_file(
                &storage,
                &format!("/work/p{p}"),
                &format!("{p:02x}{s:02x}aaaa0000{p:02x}{s:02x}"),
                (p * 10 + s) as i64,
                true,
            );
        }
    }
    session_file(&storage, "/work/here", "abcdef0011223344", 5000, true);
    session_file(&storage, "/work/here", "abcdef0099999999", 5001, true);
    session_file(&storage, "/work/here", "feedfeed00000000", 5002, false);
    put(
        &storage,
        "/agent/sessions/--work-here--/broken.jsonl",
        "{not json",
    );
    session_file(&storage, "/work/elsewhere", "c0ffee0000000001", 10, true);
    storage
}

#[test]
fn id_prefixes_resolve_case_insensitively_in_the_local_project() {
    let storage = world();
    for arg in [
        "abcdef0011",
        "ABCDEF0011",
        "2026-02-16T10-20-30-123Z_abcdef0011",
    ] {
        match resume::resolve(storage.clone(), "/agent", "/work/here", arg, None).unwrap() {
            ResumeTarget::Local(s) => assert_eq!(s.head.id, "abcdef0011223344", "{arg}"),
            other => panic!("{arg}: {other:?}"),
        }
    }
}

#[test]
fn an_ambiguous_prefix_reports_the_candidates() {
    let storage = world();
    match resume::resolve(storage.clone(), "/agent", "/work/here", "abcdef", None) {
        Err(ResumeError::Ambiguous { candidates, .. }) => {
            let mut ids: Vec<_> = candidates.iter().map(|c| c.head.id.as_str()).collect();
            ids.sort();
            assert_eq!(ids, vec!["abcdef0011223344", "abcdef0099999999"]);
            let json: serde_json::Value =
                serde_json::from_str(&resume::candidates_json(&candidates)).unwrap();
            assert!(json[0]["cwd"].is_string() && json[0]["modified"].is_string());
        }
        other => panic!("{other:?}"),
    }
    // An exact id wins over other prefixes.
    assert!(matches!(
        resume::resolve(storage, "/agent", "/work/here", "abcdef0011223344", None),
        Ok(ResumeTarget::Local(_))
    ));
}

#[test]
fn a_session_without_messages_is_resumable_by_id_as_the_agent_lists_it() {
    let storage = world();
    let target = resume::resolve(storage, "/agent", "/work/here", "feedfeed", None).unwrap();
    assert!(
        matches!(&target, ResumeTarget::Local(s) if s.head.id == "feedfeed00000000" && s.message_count == 0),
        "{target:?}"
    );
}

#[test]
fn another_projects_session_needs_confirmation_and_is_then_forked_here() {
    let storage = world();
    let target = resume::resolve(storage.clone(), "/agent", "/work/here", "c0ffee", None).unwrap();
    assert!(matches!(&target, ResumeTarget::OtherProject(s) if s.head.cwd == "/work/elsewhere"));
    let refused = resume::open_target(
        storage.clone(),
        "/agent",
        "/work/here",
        "c0ffee",
        target.clone(),
        false,
    )
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Session \"c0ffee\" is in another project (/work/elsewhere)."
    );
    let path = resume::open_target(
        storage.clone(),
        "/agent",
        "/work/here",
        "c0ffee",
        target,
        true,
    )
    .unwrap();
    assert!(path.starts_with("/agent/sessions/--work-here--/"));
    assert!(read(&storage, &path).contains("hello"));
}

#[test]
fn explicit_session_dir_searches_only_there_and_paths_open_directly() {
    let storage = world();
    let err = resume::resolve(
        storage.clone(),
        "/agent",
        "/work/here",
        "c0ffee",
        Some("/agent/sessions/--work-here--"),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Session \"c0ffee\" not found.");
    assert_eq!(
        resume::resolve(storage.clone(), "/agent", "/work/here", "x/y", None).unwrap(),
        ResumeTarget::Path("x/y".into())
    );
    assert_eq!(
        resume::resolve(storage, "/agent", "/work/here", "a.jsonl", None).unwrap(),
        ResumeTarget::Path("a.jsonl".into())
    );
    assert_eq!(
        resume::resolve(world(), "/agent", "/work/here", "nothing", None)
            .unwrap_err()
            .to_string(),
        "Session \"nothing\" not found."
    );
}

#[test]
fn terminal_ids_come_from_the_tty_or_the_terminal_variables() {
    let none = |_: &str| None;
    assert_eq!(
        terminal_id(Some("/dev/pts/3"), &none).as_deref(),
        Some("pts-3")
    );
    assert_eq!(
        terminal_id(None, &|v: &str| (v == "TMUX_PANE")
            .then(|| "%4".to_string()))
        .as_deref(),
        Some("tmux-%4")
    );
    assert_eq!(
        terminal_id(None, &|v: &str| (v == "KITTY_WINDOW_ID")
            .then(|| "2".to_string()))
        .as_deref(),
        Some("kitty-2")
    );
    assert_eq!(
        terminal_id(None, &|v: &str| (v == "TERM_SESSION_ID")
            .then(|| "w0t0p0:ABC".to_string()))
        .as_deref(),
        Some("apple-w0t0p0:ABC")
    );
    assert_eq!(
        terminal_id(None, &|v: &str| (v == "WT_SESSION")
            .then(|| "../../x".to_string()))
        .as_deref(),
        Some("wt-..-..-x")
    );
    assert_eq!(terminal_id(None, &none), None);
}

#[test]
fn continue_prefers_a_valid_breadcrumb_then_the_newest_file_then_new() {
    let storage = world();
    let older = "/agent/sessions/--work-here--/2026-02-16T10-20-30-123Z_abcdef0011223344.jsonl";
    resume::write_breadcrumb(&*storage, "/agent", "pts-3", "/work/here", older).unwrap();
    assert_eq!(
        read(&storage, "/agent/terminal-sessions/pts-3"),
        format!("/work/here\n{older}\n")
    );
    assert_eq!(
        continue_recent(&*storage, "/agent", "/work/here", None, Some("pts-3")).unwrap(),
        ContinueTarget::Breadcrumb(older.into())
    );
    assert_eq!(
        continue_recent(&*storage, "/agent", "/work/here/", None, Some("pts-3")).unwrap(),
        ContinueTarget::Breadcrumb(older.into()),
        "resolved paths compare"
    );
    let newest = ContinueTarget::MostRecent(
        "/agent/sessions/--work-here--/2026-02-16T10-20-30-123Z_feedfeed00000000.jsonl".into(),
    );
    assert_eq!(
        continue_recent(&*storage, "/agent", "/work/here", None, Some("pts-9")).unwrap(),
        newest,
        "no breadcrumb"
    );
    assert_eq!(
        continue_recent(&*storage, "/agent", "/work/here", None, None).unwrap(),
        newest,
        "unknown terminal"
    );
    resume::write_breadcrumb(&*storage, "/agent", "pts-4", "/work/other", older).unwrap();
    assert_eq!(
        continue_recent(&*storage, "/agent", "/work/here", None, Some("pts-4")).unwrap(),
        newest,
        "cwd differs"
    );
    resume::write_breadcrumb(
        &*storage,
        "/agent",
        "pts-5",
        "/work/here",
        "/agent/gone.jsonl",
    )
    .unwrap();
    assert_eq!(
        continue_recent(&*storage, "/agent", "/work/here", None, Some("pts-5")).unwrap(),
        newest,
        "file gone"
    );
    assert_eq!(
        continue_recent(&*storage, "/agent", "/work/empty", None, Some("pts-3")).unwrap(),
        ContinueTarget::New
    );
}

#[test]
fn thinking_levels_are_clamped_to_the_model() {
    assert_eq!(clamp_thinking_level("high", Some("medium")), "medium");
    assert_eq!(clamp_thinking_level("low", Some("xhigh")), "low");
    assert_eq!(clamp_thinking_level("high", None), "off");
}

#[test]
fn opening_for_use_restores_model_thinking_and_mode_and_survives_breadcrumb_failures() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("a")).unwrap();
    s.append_message(&assistant("b")).unwrap();
    s.append_mode_change("plan", Some(r#"{"planFile":"/p.md"}"#))
        .unwrap();
    let file = s.file().unwrap().to_string();
    s.close().unwrap();
    // A file where the breadcrumb directory should be: the write fails, the open does not.
    put(&storage, "/agent/terminal-sessions", "not a directory");
    let options = RestoreOptions {
        agent_dir: "/agent".into(),
        cwd: "/work/pi".into(),
        default_thinking_level: "high".into(),
        model_max_thinking_level: Some("medium".into()),
        terminal: Some("pts-1".into()),
    };
    let (session, restored) = open_for_use(storage.clone(), &file, &options).unwrap();
    assert!(restored.breadcrumb_error.is_some());
    assert_eq!(
        restored.model.as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
    assert_eq!(
        restored.thinking_level, "medium",
        "default clamped to the model"
    );
    assert!(restored.appended_thinking_level);
    assert_eq!(restored.mode, "plan");
    assert_eq!(
        restored.mode_data.as_deref(),
        Some(r#"{"planFile":"/p.md"}"#)
    );
    drop(session);
    let (_, again) = open_for_use(storage.clone(), &file, &options).unwrap();
    assert!(!again.appended_thinking_level, "the branch now has a level");
    assert_eq!(again.thinking_level, "medium");
}

struct Recorder {
    allow: bool,
    seen: Vec<String>,
}

impl SwitchHooks for Recorder {
    fn before_switch(&mut self, from: Option<&str>, to: &str) -> bool {
        self.seen
            .push(format!("before {} -> {to}", from.unwrap_or("-")));
        self.allow
    }
    fn after_switch(&mut self, _from: Option<&str>, to: &str, r: &resume::Restored) {
        self.seen.push(format!("after {to} {}", r.thinking_level));
    }
}

#[test]
fn switch_session_runs_hooks_can_be_cancelled_and_restores_like_startup() {
    let storage = mem();
    let mut a = create(&storage);
    a.append_message(&user("in a")).unwrap();
    a.append_message(&assistant("a")).unwrap();
    let a_file = a.file().unwrap().to_string();
    let mut b = xcsh_session::Session::create(
        storage.clone(),
        &xcsh_session::session::CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/work/pi".into(),
            ..Default::default()
        },
    );
    b.append_message(&user("in b")).unwrap();
    b.append_message(&assistant("b")).unwrap();
    b.append_thinking_level_change(Some("low")).unwrap();
    let b_file = b.file().unwrap().to_string();
    b.close().unwrap();
    let options = RestoreOptions {
        agent_dir: "/agent".into(),
        cwd: "/work/pi".into(),
        default_thinking_level: "high".into(),
        model_max_thinking_level: Some("xhigh".into()),
        terminal: None,
    };

    let mut cancel = Recorder {
        allow: false,
        seen: vec![],
    };
    assert_eq!(
        switch_session(&mut a, &b_file, &options, &mut cancel).unwrap(),
        None
    );
    assert_eq!(
        a.file(),
        Some(a_file.as_str()),
        "cancelled: nothing changed"
    );

    let mut hooks = Recorder {
        allow: true,
        seen: vec![],
    };
    let restored = switch_session(&mut a, &b_file, &options, &mut hooks)
        .unwrap()
        .unwrap();
    assert_eq!(a.file(), Some(b_file.as_str()));
    assert_eq!(
        restored.thinking_level, "low",
        "the branch's own level wins"
    );
    assert!(!restored.appended_thinking_level);
    assert!(restored.context_json.contains("in b"));
    assert_eq!(
        hooks.seen,
        vec![
            format!("before {a_file} -> {b_file}"),
            format!("after {b_file} low")
        ]
    );
    a.close().unwrap();
    let (_, at_startup) = open_for_use(storage.clone(), &b_file, &options).unwrap();
    assert_eq!(
        at_startup, restored,
        "start-up and switch restore the same things"
    );
}
