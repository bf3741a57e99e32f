//! The `xcsh-session` binary end to end: it runs the real component (built by
//! `scripts/build-component`) on the real filesystem, and must print exactly what the
//! native core prints.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use xcsh_session::api;
use xcsh_session::fs::FsStorage;

mod common;
use common::{shared_cache, BIN};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/real");
const FIXTURE_NAMES: [&str; 4] = [
    "before-compaction.jsonl",
    "historical-compact.jsonl",
    "historical-session.jsonl",
    "large-session.jsonl",
];

fn fixture(name: &str) -> PathBuf {
    let p = Path::new(FIXTURES).join(name);
    fs::canonicalize(&p).unwrap_or_else(|e| panic!("fixture {} missing: {e}", p.display()))
}

/// A temp agent dir and the command line to run the binary with it.
struct Cli {
    agent: tempfile::TempDir,
    cache: PathBuf,
}

impl Cli {
    fn new() -> Cli {
        Cli {
            agent: tempfile::tempdir().expect("tempdir"),
            cache: shared_cache().to_path_buf(),
        }
    }

    fn with_cache(cache: &Path) -> Cli {
        Cli {
            agent: tempfile::tempdir().expect("tempdir"),
            cache: cache.to_path_buf(),
        }
    }

    fn agent_dir(&self) -> PathBuf {
        fs::canonicalize(self.agent.path()).expect("canonical agent dir")
    }

    fn cmd(&self) -> Command {
        let mut c = self.cmd_without_agent_dir();
        c.arg("--agent-dir").arg(self.agent.path());
        c
    }

    /// [`Cli::cmd`] without `--agent-dir`.
    fn cmd_without_agent_dir(&self) -> Command {
        let mut c = Command::new(BIN);
        c.env("XCSH_SESSION_CACHE_DIR", &self.cache)
            .env_remove("XCSH_SESSION_COMPONENT");
        // `continue` identifies the terminal by these: none unless a test sets one.
        for var in [
            "KITTY_WINDOW_ID",
            "TMUX_PANE",
            "TERM_SESSION_ID",
            "WT_SESSION",
        ] {
            c.env_remove(var);
        }
        c
    }

    fn run<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(&self, args: I) -> Output {
        self.cmd()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run xcsh-session")
    }

    fn ok<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(&self, args: I) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "failed ({:?}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 output")
    }
}

impl Cli {
    /// `blob put` of `bytes` (from a temp file); the hash it printed.
    fn put_blob(&self, bytes: &[u8]) -> String {
        let tmp = tempfile::tempdir().expect("tempdir");
        let f = tmp.path().join("in.bin");
        fs::write(&f, bytes).expect("write");
        json(&self.ok(["blob", "put", path_str(&f)]))["hash"]
            .as_str()
            .expect("hash")
            .to_string()
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A small v1 session: the header and the first `n` records of a real file.
fn small_v1_session(dir: &Path, n: usize) -> PathBuf {
    let text = fs::read_to_string(fixture("large-session.jsonl")).expect("fixture");
    let head: Vec<&str> = text.lines().take(n + 1).collect();
    let path = dir.join("small.jsonl");
    fs::write(&path, head.join("\n") + "\n").expect("write");
    path
}

#[test]
fn context_show_and_tree_print_exactly_what_the_native_core_prints() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    for name in FIXTURE_NAMES {
        let path = fixture(name);
        let before = fs::read(&path).expect("read fixture");
        let p = path_str(&path);
        let a = path_str(&agent);
        let native = |r: api::ApiResult| r.expect("native core") + "\n";

        let expected = native(api::context_file(Rc::new(FsStorage::new()), p, a, None));
        assert!(
            cli.ok(["context", p, "--json"]) == expected,
            "context of {name} differs from the native core"
        );

        let expected = native(api::show_file(Rc::new(FsStorage::new()), p, a));
        assert_eq!(cli.ok(["show", p, "--json"]), expected, "show of {name}");

        let expected = native(api::tree_file(Rc::new(FsStorage::new()), p, a));
        assert!(
            cli.ok(["tree", p, "--json"]) == expected,
            "tree of {name} differs from the native core"
        );

        assert!(
            fs::read(&path).expect("read fixture") == before,
            "{name} was modified"
        );
    }
}

/// A context of several MiB crosses from the component in chunks of 1 MiB (neither side
/// holds the whole text): joined, they are exactly the native core's JSON, for the last
/// entry and for an earlier leaf, with chunk edges inside multi-byte characters.
#[test]
fn a_large_context_is_printed_in_chunks_exactly_as_the_native_core_builds_it() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.jsonl");
    let mut s = xcsh_session::Session::in_memory(Rc::new(FsStorage::new()), "/w");
    let text = "é日本🎉 tool output line\n".repeat(4000);
    let mut ids = Vec::new();
    for i in 0..30 {
        let m =
            serde_json::json!({"role": "user", "content": format!("{i} {text}"), "timestamp": i});
        ids.push(s.append_message(&m.to_string()).expect("append"));
    }
    fs::write(&path, s.to_jsonl().expect("jsonl")).expect("write session");
    let (p, a) = (path_str(&path), path_str(&agent));
    for leaf in [None, Some(ids[20].as_str())] {
        let expected = api::context_file(Rc::new(FsStorage::new()), p, a, leaf).expect("native");
        assert!(expected.len() > 2 << 20, "{} bytes", expected.len());
        let mut args = vec!["context", p, "--json"];
        if let Some(id) = leaf {
            args.extend(["--leaf", id]);
        }
        assert!(
            cli.ok(&args) == expected + "\n",
            "context at {leaf:?} differs from the native core"
        );
    }
}

/// (A v1 file has no index: nothing is kept in the cache either; see
/// `a_read_only_context_keeps_the_session_index_in_the_cache_and_nothing_else`.)
#[test]
fn read_commands_write_nothing() {
    let cli = Cli::new();
    let dir = tempfile::tempdir().expect("tempdir");
    // A lossy v1 file: a read-write open would migrate it and keep a backup.
    let path = dir.path().join("s.jsonl");
    fs::copy(fixture("historical-compact.jsonl"), &path).expect("copy");
    let before = fs::read(&path).expect("read");
    let mtime = fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("mtime");
    for cmd in ["show", "context", "tree"] {
        cli.ok([cmd, path_str(&path), "--json"]);
    }
    assert_eq!(fs::read(&path).expect("read"), before);
    assert_eq!(
        fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("mtime"),
        mtime
    );
    let names: Vec<_> = fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("s.jsonl")]);
    assert_eq!(
        fs::read_dir(cli.agent.path()).expect("ls").count(),
        0,
        "the agent dir was written to"
    );
}

/// A file that is not a session (a text file, as /etc/hostname) is refused by `show`,
/// `context`, `tree` and `migrate` with exit 1 and the reason, and left as it was.
#[test]
fn a_file_that_is_not_a_session_is_refused_with_exit_1() {
    let cli = Cli::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hostname");
    fs::write(&path, "my-laptop\n").expect("write");
    for cmd in ["show", "context", "tree", "migrate"] {
        let out = cli.run([cmd, path_str(&path), "--json"]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is not a session file: no session header found"),
            "{cmd}: {err}"
        );
        assert!(out.stdout.is_empty(), "{cmd} printed a session");
    }
    assert_eq!(fs::read(&path).expect("read"), b"my-laptop\n");
    assert_eq!(
        fs::read_dir(dir.path()).expect("ls").count(),
        1,
        "nothing beside it"
    );
}

/// `search` shows its progress on stderr when it runs on a terminal, and none when its
/// output goes to a pipe (a pseudo-terminal from util-linux's `script`).
#[test]
fn search_shows_a_progress_bar_on_a_terminal_only() {
    let cli = Cli::new();
    let mut s = xcsh_session::Session::create(
        Rc::new(FsStorage::new()),
        &xcsh_session::session::CreateOptions {
            agent_dir: path_str(cli.agent.path()).to_string(),
            cwd: "/w".into(),
            ..Default::default()
        },
    );
    s.append_message(r#"{"role":"user","content":"a question","timestamp":1}"#)
        .expect("user");
    s.append_message(r#"{"role":"assistant","provider":"p","model":"m","content":[{"type":"text","text":"an answer"}],"timestamp":2}"#)
        .expect("assistant");
    drop(s);
    let run = |pipe: &str| on_terminal(&cli, "search question --all", pipe);
    let tty = run("");
    assert!(tty.contains("\"score\""), "the hits: {tty:?}");
    assert!(
        tty.contains("sessions, "),
        "a progress bar on a terminal: {tty:?}"
    );
    let piped = run(" | cat");
    assert!(piped.contains("\"score\""), "the hits: {piped:?}");
    assert!(
        !piped.contains("sessions, "),
        "no bar when the output is piped: {piped:?}"
    );
}

/// What a terminal shows of `xcsh-session --agent-dir <agent> <args><pipe>` run on it (a
/// pseudo-terminal from util-linux's `script`): with `pipe` empty, stdout and stderr are
/// the terminal; with ` | cat`, stdout is a pipe and stderr still the terminal.
fn on_terminal(cli: &Cli, args: &str, pipe: &str) -> String {
    let line = format!(
        "XCSH_SESSION_CACHE_DIR='{}' '{BIN}' --agent-dir '{}' {args}{pipe}",
        cli.cache.display(),
        cli.agent.path().display()
    );
    let out = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    assert!(out.status.success(), "{line}: {:?}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `list`, `gc` and `migrate` read whole stores or files and show on stderr how far they
/// are (files and bytes read) when they run on a terminal, and nothing when their output
/// goes to a pipe: the JSON is all a script reads.
#[test]
fn list_gc_and_migrate_show_progress_on_a_terminal_only() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    write_session(
        &project_dir(&agent, "/work/alpha"),
        "f0000001",
        "/work/alpha",
        "hello",
        None,
    );
    let tty_dir = tempfile::tempdir().expect("tempdir");
    let piped_dir = tempfile::tempdir().expect("tempdir");
    for (args, answer) in [
        ("list --all --json".to_string(), "\"firstMessage\""),
        ("gc --dry-run".to_string(), "\"scannedFiles\""),
        ("migrate '{}' --json".to_string(), "\"issues\""),
    ] {
        let with = |dir: &tempfile::TempDir| {
            args.replace("{}", path_str(&small_v1_session(dir.path(), 20)))
        };
        let tty = on_terminal(&cli, &with(&tty_dir), "");
        assert!(tty.contains(answer), "{args}: the answer: {tty:?}");
        assert!(
            tty.contains(" read from "),
            "{args}: progress on a terminal: {tty:?}"
        );
        let piped = on_terminal(&cli, &with(&piped_dir), " | cat");
        assert!(piped.contains(answer), "{args}: the answer: {piped:?}");
        assert!(
            !piped.contains(" read from "),
            "{args}: no progress when the output is piped: {piped:?}"
        );
    }
}

/// A current (v3) session of `n` user and assistant messages, written by the core.
fn small_v3_session(dir: &Path, agent: &Path, n: usize) -> PathBuf {
    let path = dir.join("v3.jsonl");
    let storage = Rc::new(FsStorage::new());
    let mut s = xcsh_session::Session::create(
        storage,
        &xcsh_session::session::CreateOptions {
            agent_dir: path_str(agent).to_string(),
            cwd: path_str(dir).to_string(),
            ..Default::default()
        },
    );
    for i in 0..n {
        let text = serde_json::to_string(&format!("question {i}")).expect("json");
        s.append_message(&format!(
            r#"{{"role":"user","content":[{{"type":"text","text":{text}}}],"timestamp":1}}"#
        ))
        .expect("user");
        s.append_message(&format!(
            r#"{{"role":"assistant","provider":"p","model":"m","content":[{{"type":"text","text":"answer {i}"}}],"timestamp":2}}"#
        ))
        .expect("assistant");
    }
    let file = PathBuf::from(s.file().expect("on disk"));
    fs::rename(&file, &path).expect("rename");
    path
}

/// A v3 session of `n` turns in a directory of its own, written with another agent
/// directory than the CLI's (the session's directory, that agent directory, the file).
fn v3_session_in_tempdir(n: usize) -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let made = tempfile::tempdir().expect("agent of the writer");
    let dir_path = fs::canonicalize(dir.path()).expect("canonical");
    let path = small_v3_session(&dir_path, made.path(), n);
    (dir, made, path)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        match p.is_dir() && !p.is_symlink() {
            true => out.extend(files_under(&p)),
            false => out.push(p),
        }
    }
    out.sort();
    out
}

#[test]
fn a_read_only_context_keeps_the_session_index_in_the_cache_and_nothing_else() {
    let cli = Cli::new();
    let (dir, made, path) = v3_session_in_tempdir(30);
    let dir_path = fs::canonicalize(dir.path()).expect("canonical");
    let before = fs::read(&path).expect("read");
    let modified = mtime(&path);
    let expected = api::context_file(
        Rc::new(FsStorage::new()),
        path_str(&path),
        path_str(made.path()),
        None,
    )
    .expect("native");
    // The first read-only `context` scans the file and keeps its index in the cache; the
    // second reads through it. Same bytes both times, the session untouched.
    for _ in 0..2 {
        let out = cli.ok(["context", path_str(&path), "--json"]);
        assert_eq!(out.trim_end(), expected);
    }
    assert_eq!(fs::read(&path).expect("read"), before);
    assert_eq!(mtime(&path), modified);
    let written = files_under(&cli.agent_dir());
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(
        written[0].starts_with(cli.agent_dir().join("cache/index")),
        "{written:?}"
    );
    assert_eq!(written[0].extension().and_then(|e| e.to_str()), Some("idx"));
    let index = fs::read(&written[0]).expect("index");
    // `--no-index-cache`: the same context, nothing read from the cache or written.
    fs::write(&written[0], b"not an index").expect("spoil");
    let out = cli.ok(["--no-index-cache", "context", path_str(&path), "--json"]);
    assert_eq!(out.trim_end(), expected);
    assert_eq!(fs::read(&written[0]).expect("index"), b"not an index");
    // A spoiled cache is written again by the next open that uses it.
    cli.ok(["context", path_str(&path), "--json"]);
    assert_eq!(fs::read(&written[0]).expect("index"), index);
    assert_eq!(files_under(&dir_path), vec![path.clone()]);
}

#[test]
fn a_cache_directory_symlinked_elsewhere_receives_no_write_from_a_read_only_command() {
    let cli = Cli::new();
    let (dir, _made, path) = v3_session_in_tempdir(3);
    let dir_path = fs::canonicalize(dir.path()).expect("canonical");
    // `<agent>/cache` leads into the session's directory (inside the roots).
    let elsewhere = dir_path.join("elsewhere");
    fs::create_dir(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, cli.agent_dir().join("cache")).expect("symlink");
    let out = cli.ok(["context", path_str(&path), "--json"]);
    assert!(out.starts_with("{\"messages\":["), "{out}");
    assert!(
        files_under(&elsewhere).is_empty(),
        "{:?}",
        files_under(&elsewhere)
    );
}

#[test]
fn relative_file_arguments_are_made_absolute() {
    let cli = Cli::new();
    let path = fixture("large-session.jsonl");
    let expected = cli.ok(["show", path_str(&path)]);
    let out = cli
        .cmd()
        .current_dir(path.parent().expect("parent"))
        .args(["show", "large-session.jsonl"])
        .output();
    let out = out.expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

#[test]
fn migrate_rewrites_a_v1_file_to_version_3() {
    let cli = Cli::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    fs::copy(fixture("before-compaction.jsonl"), &path).expect("copy");
    let p = path_str(&path);

    let show = json(&cli.ok(["show", p, "--json"]));
    assert_eq!(show["version"], 1);
    assert_eq!(show["migrationNeeded"], true);

    let report = json(&cli.ok(["migrate", p]));
    assert_eq!(report["migration"]["fromVersion"], 1);
    assert_eq!(report["migration"]["toVersion"], 3);

    let text = fs::read_to_string(&path).expect("read");
    // The native core migrates a second copy to the same bytes.
    let native_copy = dir.path().join("native").join("s.jsonl");
    fs::create_dir_all(native_copy.parent().expect("parent")).expect("mkdir");
    fs::copy(fixture("before-compaction.jsonl"), &native_copy).expect("copy");
    let agent = cli.agent_dir();
    let native_report = api::migrate_file(
        Rc::new(FsStorage::new()),
        path_str(&native_copy),
        path_str(&agent),
    );
    // The same report but for where each kept the original bytes.
    let without_backup = |mut r: Value| {
        let backup = r["backupPath"].take();
        (r, backup)
    };
    let (report, backup) = without_backup(report);
    let (native_report, native_backup) =
        without_backup(json(&native_report.expect("native migrate")));
    assert_eq!(report.to_string(), native_report.to_string());
    let backup = backup
        .as_str()
        .expect("a migration keeps a backup")
        .to_string();
    assert!(backup.starts_with(&format!("{p}.v1-")), "{backup}");
    assert!(native_backup.as_str().is_some());
    assert_eq!(
        fs::read(&backup).expect("backup"),
        fs::read(fixture("before-compaction.jsonl")).expect("fixture"),
        "the original bytes, exactly"
    );
    assert!(
        fs::read_to_string(&native_copy).expect("read") == text,
        "the migrated file differs from the native core's"
    );
    fs::remove_dir_all(dir.path().join("native")).expect("cleanup");

    let header = json(text.lines().next().expect("header line"));
    assert_eq!(header["version"], 3);
    let show = json(&cli.ok(["show", p, "--json"]));
    assert_eq!(show["version"], 3);
    assert_eq!(show["migrationNeeded"], false);
    // No stray temp files: the session and its backup.
    let mut names: Vec<_> = fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| dir.path().join(e.expect("entry").file_name()))
        .collect();
    names.sort();
    assert_eq!(names, vec![path.clone(), PathBuf::from(&backup)]);
}

/// The children of the node whose entry has `id`, searched depth-first.
fn children_of<'v>(nodes: &'v Value, id: &str) -> Option<&'v Vec<Value>> {
    for node in nodes.as_array()? {
        if node["entry"]["id"] == id {
            return node["children"].as_array();
        }
        if let Some(found) = children_of(&node["children"], id) {
            return Some(found);
        }
    }
    None
}

#[test]
fn append_adds_a_child_of_the_leaf_from_an_argument_and_from_stdin() {
    let cli = Cli::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = small_v1_session(dir.path(), 6);
    let p = path_str(&path);
    cli.ok(["migrate", p]);
    let show = json(&cli.ok(["show", p, "--json"]));
    let first_leaf = show["leafId"].as_str().expect("leaf").to_string();
    let count = show["entryCount"].as_u64().expect("count");

    let out = cli.ok([
        "append",
        p,
        "--json",
        r#"{"type":"custom","customType":"cli-test","data":{"n":1}}"#,
    ]);
    assert!(out.ends_with("}\n"), "{out}");
    let id1 = json(&out)["id"].as_str().expect("id").to_string();

    let mut child = cli
        .cmd()
        .args(["append", p, "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(br#"{"type":"custom","customType":"cli-test","data":{"n":2}}"#)
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{}", stderr(&out));
    let id2 = json(&String::from_utf8_lossy(&out.stdout))["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_ne!(id1, id2);

    let tree = json(&cli.ok(["tree", p, "--json"]));
    let kids = children_of(&tree, &first_leaf).expect("old leaf in tree");
    assert_eq!(kids.len(), 1);
    assert_eq!(kids[0]["entry"]["id"], id1.as_str());
    assert_eq!(kids[0]["entry"]["data"]["n"], 1);
    let kids = children_of(&tree, &id1).expect("first appended entry in tree");
    assert_eq!(kids.len(), 1);
    assert_eq!(kids[0]["entry"]["id"], id2.as_str());
    assert_eq!(kids[0]["entry"]["parentId"], id1.as_str());

    let show = json(&cli.ok(["show", p, "--json"]));
    assert_eq!(show["leafId"], id2.as_str());
    assert_eq!(show["entryCount"].as_u64(), Some(count + 2));
}

#[test]
fn append_rejects_invalid_entries() {
    let cli = Cli::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = small_v1_session(dir.path(), 3);
    let p = path_str(&path);
    cli.ok(["migrate", p]);
    let before = fs::read(&path).expect("read");
    let out = cli.run(["append", p, "--json", r#"{"type":"custom","id":"x"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("must not contain \"id\""),
        "{}",
        stderr(&out)
    );
    let out = cli.run(["append", p, "--json", "not json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(fs::read(&path).expect("read"), before);
}

#[test]
fn unknown_leaf_is_entry_not_found_with_exit_code_3() {
    let cli = Cli::new();
    let path = fixture("historical-session.jsonl");
    let out = cli.run(["context", path_str(&path), "--leaf", "unknownid", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stderr(&out), "Entry unknownid not found\n");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_session_file_is_not_found_with_exit_code_3_and_nothing_is_created() {
    let cli = Cli::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    // An agent dir that does not exist yet: the read-only commands must not create it.
    let agent = base.join("agent");
    let in_existing_dir = base.join("missing.jsonl");
    let in_missing_dirs = base.join("no/such/dir/s.jsonl");
    let commands: [&[&str]; 5] = [
        &["show", "--json"],
        &["context", "--json"],
        &["context", "--leaf", "abc", "--json"],
        &["tree", "--json"],
        &["migrate"],
    ];
    for file in [&in_existing_dir, &in_missing_dirs] {
        for args in commands {
            let out = cli
                .cmd_without_agent_dir()
                .arg("--agent-dir")
                .arg(&agent)
                .arg(args[0])
                .arg(file)
                .args(&args[1..])
                .stdin(Stdio::null())
                .output()
                .expect("run");
            assert_eq!(
                out.status.code(),
                Some(3),
                "{args:?} {}: {}",
                file.display(),
                stderr(&out)
            );
            assert_eq!(
                stderr(&out),
                format!("Session file {} not found\n", file.display()),
                "{args:?}"
            );
            assert!(out.stdout.is_empty(), "{args:?} printed something");
            if args[0] == "migrate" {
                // A writing command creates the agent dir (only that, empty).
                fs::remove_dir(&agent).expect("an empty agent dir");
            }
            let created: Vec<_> = fs::read_dir(&base)
                .expect("ls")
                .map(|e| e.expect("entry").file_name())
                .collect();
            assert!(created.is_empty(), "{args:?} created {created:?}");
        }
    }
    // `append` still creates a new file (and its header).
    let out = cli.run([
        "append",
        path_str(&in_existing_dir),
        "--json",
        r#"{"type":"custom","customType":"t"}"#,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        json(&cli.ok(["show", path_str(&in_existing_dir)]))["entryCount"],
        1
    );
}

#[test]
fn usage_errors_exit_with_2() {
    let cli = Cli::new();
    assert_eq!(cli.run(["show"]).status.code(), Some(2));
    assert_eq!(cli.run(["frobnicate", "x"]).status.code(), Some(2));
    assert_eq!(cli.run(["append", "/tmp/x.jsonl"]).status.code(), Some(2));
}

#[test]
fn a_session_file_symlinked_outside_the_roots_is_not_read() {
    let cli = Cli::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    let (root, outside) = (base.join("root"), base.join("outside"));
    fs::create_dir_all(&root).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    let secret = outside.join("secret.jsonl");
    fs::copy(fixture("historical-session.jsonl"), &secret).expect("copy");
    let before = fs::read(&secret).expect("read");
    std::os::unix::fs::symlink(&secret, root.join("s.jsonl")).expect("symlink");

    // Default roots (the file's directory and the agent dir), then an explicit --root.
    let link = root.join("s.jsonl");
    for extra in [
        vec![],
        vec!["--root".to_string(), path_str(&root).to_string()],
    ] {
        for cmd in ["show", "context", "tree", "migrate"] {
            let out = cli
                .cmd()
                .args(&extra)
                .args([cmd, path_str(&link)])
                .output()
                .expect("run");
            assert_eq!(
                out.status.code(),
                Some(1),
                "{cmd} {extra:?}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).contains("permission denied"),
                "{cmd}: {}",
                stderr(&out)
            );
            assert!(out.stdout.is_empty());
        }
        let out = cli
            .cmd()
            .args(&extra)
            .args(["append", path_str(&link), "--json", r#"{"type":"custom"}"#])
            .output();
        let out = out.expect("run");
        assert_eq!(out.status.code(), Some(1), "append: {}", stderr(&out));
    }
    assert_eq!(fs::read(&secret).expect("read"), before);
    assert_eq!(fs::read_dir(&outside).expect("ls").count(), 1);
}

#[test]
fn a_session_reached_by_an_absolute_symlink_that_stays_inside_the_root_is_read() {
    // cap-std follows no absolute symlink, even one pointing back inside its directory:
    // the confinement places such a path again by its resolved form.
    let cli = Cli::new();
    let dir = cli.agent_dir().join("sessions/--p--");
    fs::create_dir_all(&dir).expect("mkdir");
    let real = dir.join("2026-01-01T00-00-00-000Z_real.jsonl");
    fs::copy(fixture("historical-session.jsonl"), &real).expect("copy");
    let link = dir.join("alias.jsonl");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let root = ["--root".to_string(), path_str(&cli.agent_dir()).to_string()];
    let context = |p: &Path| {
        let out = cli
            .cmd()
            .args(&root)
            .args(["context", path_str(p), "--json"])
            .output()
            .expect("run");
        assert!(out.status.success(), "{}: {}", p.display(), stderr(&out));
        out.stdout
    };
    assert_eq!(context(&link), context(&real));
}

/// The syscalls `xcsh-session <args>` makes with `strace -f` (`None`: no strace here).
fn strace(cli: &Cli, args: &[&str]) -> Option<String> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("strace.log");
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "-e",
        "trace=openat,openat2,readlink,readlinkat,fsync",
        "-o",
    ])
    .arg(&log)
    .arg(BIN)
    .args(cli.cmd().get_args())
    .args(args)
    .env("XCSH_SESSION_CACHE_DIR", &cli.cache)
    .env_remove("XCSH_SESSION_COMPONENT")
    .stdin(Stdio::null());
    let out = cmd.output().ok()?;
    assert!(out.status.success(), "{}", stderr(&out));
    Some(fs::read_to_string(&log).expect("strace log"))
}

#[test]
fn a_storage_call_resolves_no_symlink_itself_and_walks_no_path() {
    // Each storage call is one open beneath its root's handle (cap-std): the number of
    // readlinks does not grow with the number of sessions listed, and no call walks a
    // path component by component from `/`. The hand-written confinement this replaced
    // made about 8 readlinks per storage call (309 for a `list --all` of 5 sessions).
    let cli = Cli::new();
    let dir = cli.agent_dir().join("sessions/--p--");
    fs::create_dir_all(&dir).expect("mkdir");
    let mut readlinks = Vec::new();
    for n in [1, 6] {
        for i in 0..n {
            let f = dir.join(format!("2026-01-0{}T00-00-00-000Z_s{i}.jsonl", i + 1));
            fs::copy(fixture("historical-session.jsonl"), f).expect("copy");
        }
        let Some(trace) = strace(&cli, &["list", "--all", "--json"]) else {
            eprintln!("strace is not installed: not checked");
            return;
        };
        assert!(
            !trace.contains(r#"openat(AT_FDCWD, "/", "#),
            "a path walked from /:\n{trace}"
        );
        readlinks.push(trace.matches("readlink").count());
    }
    assert_eq!(readlinks[0], readlinks[1], "readlinks for 1 and 6 sessions");
}

#[test]
fn an_append_flushes_the_file_and_its_directory() {
    // Every fsync succeeds: the directory too is opened for reading, not only as a handle
    // to resolve paths beneath (an `O_PATH` descriptor, which fsync refuses with EBADF).
    let cli = Cli::new();
    let dir = cli.agent_dir().join("sessions/--p--");
    fs::create_dir_all(&dir).expect("mkdir");
    let f = dir.join("2026-01-01T00-00-00-000Z_s.jsonl");
    fs::copy(fixture("historical-session.jsonl"), &f).expect("copy");
    let entry = r#"{"type":"custom","customType":"t"}"#;
    let Some(trace) = strace(&cli, &["append", path_str(&f), "--json", entry]) else {
        eprintln!("strace is not installed: not checked");
        return;
    };
    let fsyncs: Vec<&str> = trace.lines().filter(|l| l.contains("fsync(")).collect();
    assert!(fsyncs.len() >= 2, "file and directory: {fsyncs:?}");
    assert!(
        fsyncs.iter().all(|l| l.ends_with("= 0")),
        "an fsync failed: {fsyncs:?}"
    );
}

#[test]
fn a_session_file_hard_linked_to_an_outside_file_is_neither_read_nor_written() {
    let cli = Cli::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    let (root, outside) = (base.join("root"), base.join("outside"));
    fs::create_dir_all(&root).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    let secret = outside.join("secret.jsonl");
    // A v1 file: `migrate` would rewrite it, `append` would add to it.
    fs::copy(fixture("historical-session.jsonl"), &secret).expect("copy");
    let before = fs::read(&secret).expect("read");
    let link = root.join("s.jsonl");
    fs::hard_link(&secret, &link).expect("hard link");
    let says = format!(
        "EACCES: permission denied: {} (a hard link: the file has 2 names",
        link.display()
    );

    let entry = r#"{"type":"custom"}"#;
    let runs: [&[&str]; 5] = [
        &["show", path_str(&link), "--json"],
        &["context", path_str(&link), "--json"],
        &["tree", path_str(&link), "--json"],
        &["migrate", path_str(&link)],
        &["append", path_str(&link), "--json", entry],
    ];
    for args in runs {
        let out = cli.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&says), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(fs::read(&secret).expect("read"), before, "written through");
    let left: Vec<_> = fs::read_dir(&root)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, ["s.jsonl"], "no lock, backup or temp file left");
}

#[test]
fn a_symlink_to_etc_in_the_session_directory_does_not_escape_the_root() {
    let cli = Cli::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fs::canonicalize(tmp.path()).expect("canonical");
    fs::copy(fixture("large-session.jsonl"), root.join("s.jsonl")).expect("copy");
    std::os::unix::fs::symlink("/etc", root.join("etc")).expect("symlink");
    let r = path_str(&root);

    // The session itself is fine.
    cli.ok(["--root", r, "show", path_str(&root.join("s.jsonl"))]);
    // A file reached through the link is outside the root, existing or not.
    for name in [
        "etc/hostname",
        "etc/passwd",
        "etc/xcsh-does-not-exist.jsonl",
    ] {
        let out = cli.run(["--root", r, "show", path_str(&root.join(name))]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("permission denied"),
            "{name}: {}",
            stderr(&out)
        );
    }
    let out = cli.run([
        "--root",
        r,
        "append",
        path_str(&root.join("etc/x.jsonl")),
        "--json",
        r#"{"type":"custom"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!Path::new("/etc/x.jsonl").exists());
    // An agent dir (blobs) reached through the link is refused too, not created.
    let out = cli
        .cmd()
        .args([
            "--root",
            r,
            "--agent-dir",
            path_str(&root.join("etc/xcsh-agent")),
            "migrate",
        ])
        .arg(root.join("s.jsonl"))
        .output()
        .expect("run");
    assert!(!Path::new("/etc/xcsh-agent").exists(), "{}", stderr(&out));
}

#[test]
fn paths_outside_an_explicit_root_are_refused() {
    let cli = Cli::new();
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fs::canonicalize(tmp.path())
        .expect("canonical")
        .join("root");
    fs::create_dir_all(&root).expect("mkdir");
    let path = fixture("large-session.jsonl");
    let out = cli.run(["--root", path_str(&root), "show", path_str(&path)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("permission denied"),
        "{}",
        stderr(&out)
    );
    let out = cli.run([
        "--root",
        path_str(&root),
        "show",
        &format!("{}/../x.jsonl", path_str(&root)),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

fn cwasm_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "cwasm"));
    v
}

fn mtime(p: &Path) -> SystemTime {
    fs::metadata(p).and_then(|m| m.modified()).expect("mtime")
}

#[test]
fn the_compiled_component_is_cached_and_reused() {
    let cache = tempfile::tempdir().expect("tempdir");
    let cli = Cli::with_cache(cache.path());
    let path = fixture("large-session.jsonl");
    let p = path_str(&path);

    let cold = cli.run(["--verbose", "show", p]);
    assert!(cold.status.success(), "{}", stderr(&cold));
    assert!(
        stderr(&cold).contains("compiled (cache miss)"),
        "{}",
        stderr(&cold)
    );
    let files = cwasm_files(cache.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0]
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .to_string();
    let (hash, rest) = name.split_once('-').expect("hash-wasmtime");
    assert!(
        hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
        "{name}"
    );
    assert!(
        rest.starts_with("wasmtime48.") && rest.ends_with(".cwasm"),
        "{name}"
    );
    let written = mtime(&files[0]);

    let warm = cli.run(["--verbose", "show", p]);
    assert!(warm.status.success(), "{}", stderr(&warm));
    assert!(stderr(&warm).contains("cache hit"), "{}", stderr(&warm));
    assert_eq!(warm.stdout, cold.stdout);
    assert_eq!(mtime(&files[0]), written, "the cache file was rewritten");
    // Quiet by default.
    assert_eq!(stderr(&cli.run(["show", p])), "");
}

#[test]
fn a_corrupt_or_foreign_cache_file_is_recompiled() {
    let cache = tempfile::tempdir().expect("tempdir");
    let cli = Cli::with_cache(cache.path());
    let path = fixture("historical-session.jsonl");
    let p = path_str(&path);
    let pre = cli.run(["precompile"]);
    assert!(pre.status.success(), "{}", stderr(&pre));
    let file = PathBuf::from(String::from_utf8_lossy(&pre.stdout).trim());
    assert_eq!(cwasm_files(cache.path()), vec![file.clone()]);
    let good = fs::read(&file).expect("read cache");
    let expected = cli.ok(["show", p]);

    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let corruptions: Vec<(&str, Vec<u8>)> = vec![
        ("bit flip in the middle", flipped),
        ("truncated", good[..good.len() / 3].to_vec()),
        ("empty", Vec::new()),
        ("garbage", b"not a compiled component at all".repeat(100)),
        (
            "bare wasmtime output without trailer",
            good[..good.len() - 16].to_vec(),
        ),
    ];
    for (what, bytes) in corruptions {
        fs::write(&file, &bytes).expect("corrupt");
        let out = cli.run(["--verbose", "show", p]);
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("cache file unusable"),
            "{what}: {}",
            stderr(&out)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{what}");
        let out = cli.run(["--verbose", "show", p]);
        assert!(
            stderr(&out).contains("cache hit"),
            "{what} was not repaired: {}",
            stderr(&out)
        );
    }
    assert_eq!(cwasm_files(cache.path()), vec![file]);
}

#[test]
fn a_missing_component_is_a_clear_error() {
    let cli = Cli::new();
    let out = cli.run([
        "--component",
        "/nonexistent/x.wasm",
        "show",
        path_str(&fixture("large-session.jsonl")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/nonexistent/x.wasm"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn output_cut_short_by_the_reader_is_a_normal_end() {
    // `xcsh-session context <large> --json | head -c 120`: the output is far larger than a
    // pipe holds, so the write really hits the closed pipe.
    use std::io::Read;
    let cli = Cli::new();
    let path = fixture("large-session.jsonl");
    let p = path_str(&path);
    let agent = cli.agent_dir();
    let full = api::context_file(Rc::new(FsStorage::new()), p, path_str(&agent), None)
        .expect("native core");
    // Linux pipes hold 64 KiB unless a program enlarges them.
    assert!(
        full.len() > 256 << 10,
        "only {} bytes of output",
        full.len()
    );
    for args in [vec!["context", p, "--json"], vec!["tree", p]] {
        let mut child = cli
            .cmd()
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut head = [0u8; 120];
        child
            .stdout
            .take()
            .expect("stdout")
            .read_exact(&mut head)
            .expect("read the first bytes");
        // The pipe's read end is closed here (dropped with the ChildStdout).
        let out = child.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
        if args[0] == "context" {
            assert_eq!(head[..], full.as_bytes()[..120]);
        }
    }
}

/// The component the binary embeds (the file named by XCSH_SESSION_EMBED at build time).
fn embedded_component() -> PathBuf {
    // A runtime failure, not a compile error: the other tests still run without it.
    let Some(path) = option_env!("XCSH_SESSION_EMBEDDED_COMPONENT") else {
        panic!("built without an embedded component: build with XCSH_SESSION_EMBED set (scripts/test-component)");
    };
    PathBuf::from(path)
}

#[test]
fn the_binary_alone_runs_its_embedded_component() {
    // Copied alone into an empty directory: no .wasm beside it or in ../component.
    let tmp = tempfile::tempdir().expect("tempdir");
    let bin_dir = tmp.path().join("bin");
    fs::create_dir(&bin_dir).expect("mkdir");
    let bin = bin_dir.join("xcsh-session");
    fs::copy(BIN, &bin).expect("copy the binary");
    let cache = tmp.path().join("cache");
    let agent = tmp.path().join("agent");
    let path = fixture("historical-session.jsonl");
    let run = |args: &[&str]| {
        // A test thread that forks while the copy's write descriptor is still open
        // leaves it open in its child until that child execs: exec of the copy then
        // fails with ETXTBSY for a moment. Try again for a while, as that passes.
        let mut tries = 0;
        loop {
            let out = Command::new(&bin)
                .current_dir(tmp.path())
                .env("XCSH_SESSION_CACHE_DIR", &cache)
                .env_remove("XCSH_SESSION_COMPONENT")
                .arg("--agent-dir")
                .arg(&agent)
                .args(args)
                .stdin(Stdio::null())
                .output();
            match out {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other.expect("run the copied binary"),
            }
        }
    };
    let out = run(&["--verbose", "show", path_str(&path), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("using the embedded component"),
        "{}",
        stderr(&out)
    );
    let expected = api::show_file(Rc::new(FsStorage::new()), path_str(&path), path_str(&agent))
        .expect("native core")
        + "\n";
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    let names: Vec<_> = fs::read_dir(&bin_dir)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("xcsh-session")]);
}

#[test]
fn component_flag_and_environment_override_the_embedded_component() {
    let cache = tempfile::tempdir().expect("tempdir");
    let cli = Cli::with_cache(cache.path());
    let tmp = tempfile::tempdir().expect("tempdir");
    let copy = tmp.path().join("copy.wasm");
    fs::copy(embedded_component(), &copy).expect("copy the component");
    let garbage = tmp.path().join("garbage.wasm");
    fs::write(&garbage, b"not a component").expect("write");
    let path = fixture("historical-session.jsonl");
    let p = path_str(&path);
    let verbose_show = |env: Option<&Path>, flag: Option<&Path>| {
        let mut c = cli.cmd();
        if let Some(e) = env {
            c.env("XCSH_SESSION_COMPONENT", e);
        }
        if let Some(f) = flag {
            c.arg("--component").arg(f);
        }
        c.args(["--verbose", "show", p]).output().expect("run")
    };

    // The embedded component, compiled into the cache under the hash of its bytes.
    let out = verbose_show(None, None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("using the embedded component")
            && stderr(&out).contains("compiled (cache miss)"),
        "{}",
        stderr(&out)
    );
    let expected = out.stdout;
    assert_eq!(cwasm_files(cache.path()).len(), 1);

    // $XCSH_SESSION_COMPONENT wins over the embedded one: garbage fails, naming the file.
    let out = verbose_show(Some(&garbage), None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("compiling component {}", garbage.display())),
        "{}",
        stderr(&out)
    );
    // --component wins over $XCSH_SESSION_COMPONENT. The same bytes from a file hit the
    // cache entry the embedded bytes made.
    for (env, flag) in [(Some(&garbage), Some(&copy)), (Some(&copy), None)] {
        let out = verbose_show(env.map(PathBuf::as_path), flag.map(PathBuf::as_path));
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("using component {}", copy.display()))
                && err.contains("cache hit"),
            "{err}"
        );
        assert_eq!(out.stdout, expected);
    }
    let out = verbose_show(None, Some(&garbage));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(cwasm_files(cache.path()).len(), 1);
}

// ---- listing, search, resume, continue, blobs, URLs, fork/move, GC ----

/// The session directory of project `cwd` in `agent`.
fn project_dir(agent: &Path, cwd: &str) -> PathBuf {
    PathBuf::from(xcsh_session::paths::session_dir_for_cwd(
        path_str(agent),
        cwd,
    ))
}

/// Set a file's modification time to `secs_ago` seconds before now.
fn age(path: &Path, secs_ago: u64) {
    let t = SystemTime::now() - Duration::from_secs(secs_ago);
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(t))
        .unwrap_or_else(|e| panic!("set mtime of {}: {e}", path.display()));
}

/// A small v3 session by hand: the header (with `title` when given), one user message and
/// one assistant reply, in `dir` (created). Returns the file.
fn write_session(dir: &Path, id: &str, cwd: &str, user_text: &str, title: Option<&str>) -> PathBuf {
    fs::create_dir_all(dir).expect("mkdir");
    let mut header = serde_json::json!({
        "type": "session", "version": 3, "id": id,
        "timestamp": "2026-01-05T10:00:00.000Z", "cwd": cwd,
    });
    if let Some(t) = title {
        header["title"] = t.into();
    }
    let user = serde_json::json!({
        "type": "message", "id": format!("{id}-u"), "parentId": null,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": user_text}], "timestamp": 1767607201000i64},
    });
    let reply = serde_json::json!({
        "type": "message", "id": format!("{id}-a"), "parentId": format!("{id}-u"),
        "timestamp": "2026-01-05T10:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
            "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
            "timestamp": 1767607202000i64},
    });
    let path = dir.join(format!("2026-01-05T10-00-00-000Z_{id}.jsonl"));
    fs::write(&path, format!("{header}\n{user}\n{reply}\n")).expect("write session");
    path
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|s| s["id"].as_str().expect("id"))
        .collect()
}

#[test]
fn recent_lists_a_project_newest_first_with_names() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let dir = project_dir(&agent, "/work/alpha");
    let old = write_session(&dir, "a0000001", "/work/alpha", "first task", None);
    let mid = write_session(
        &dir,
        "a0000002",
        "/work/alpha",
        "second task",
        Some("Titled"),
    );
    let new = write_session(&dir, "a0000003", "/work/alpha", "third task\nmore", None);
    write_session(
        &project_dir(&agent, "/work/beta"),
        "b0000001",
        "/work/beta",
        "elsewhere",
        None,
    );
    // Not a session: skipped.
    fs::write(dir.join("notes.jsonl"), "not json\n").expect("write");
    age(&old, 3 * 3600);
    age(&mid, 2 * 3600);
    age(&new, 60 * 5);

    let out = json(&cli.ok(["recent", "--cwd", "/work/alpha", "--json"]));
    assert_eq!(ids(&out), ["a0000003", "a0000002", "a0000001"]);
    let names: Vec<&str> = out
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["third task", "Titled", "first task"]);
    assert_eq!(out[0]["path"], path_str(&new));
    assert_eq!(out[0]["cwd"], "/work/alpha");
    assert_eq!(out[0]["timeAgo"], "5m ago");
    assert_eq!(out[1]["timeAgo"], "2h ago");

    let out = json(&cli.ok(["recent", "--cwd", "/work/alpha", "--limit", "1"]));
    assert_eq!(ids(&out), ["a0000003"]);
    let out = json(&cli.ok(["recent", "--cwd", "/work/nothing-here"]));
    assert_eq!(out, serde_json::json!([]));
    assert_eq!(
        cli.run(["recent", "--limit", "-1"]).status.code(),
        Some(2),
        "a negative limit is a usage error"
    );

    // Without --cwd: the current directory (as getcwd reports it), `.`/`..` cleaned.
    let work = tempfile::tempdir().expect("tempdir");
    let cwd = fs::canonicalize(work.path()).expect("canonical");
    fs::create_dir(cwd.join("sub")).expect("mkdir");
    let mine = path_str(&cwd).to_string();
    write_session(&project_dir(&agent, &mine), "c0000001", &mine, "here", None);
    for args in [vec!["recent"], vec!["recent", "--cwd", "sub/.."]] {
        let out = cli
            .cmd()
            .current_dir(&cwd)
            .args(&args)
            .output()
            .expect("run");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let out = json(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(ids(&out), ["c0000001"], "{args:?}");
    }
}

#[test]
fn list_covers_one_project_or_all_projects() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let a1 = write_session(
        &project_dir(&agent, "/work/alpha"),
        "a0000001",
        "/work/alpha",
        "alpha one",
        None,
    );
    let a2 = write_session(
        &project_dir(&agent, "/work/alpha"),
        "a0000002",
        "/work/alpha",
        "alpha two",
        None,
    );
    let b1 = write_session(
        &project_dir(&agent, "/work/beta"),
        "b0000001",
        "/work/beta",
        "beta one",
        Some("Beta"),
    );
    age(&a1, 300);
    age(&b1, 200);
    age(&a2, 100);

    let all = json(&cli.ok(["list", "--all", "--json"]));
    assert_eq!(ids(&all), ["a0000002", "b0000001", "a0000001"]);
    assert_eq!(all[1]["cwd"], "/work/beta");
    assert_eq!(all[1]["title"], "Beta");
    assert_eq!(all[1]["messageCount"], 2);
    assert_eq!(all[1]["firstMessage"], "beta one");
    assert_eq!(all[1]["path"], path_str(&b1));
    // The text of every message only when asked for (it reads every message line).
    assert_eq!(all[1].get("allMessagesText"), None);
    let with_text = json(&cli.ok(["list", "--all", "--with-text"]));
    assert_eq!(ids(&with_text), ["a0000002", "b0000001", "a0000001"]);
    assert!(with_text[1]["allMessagesText"]
        .as_str()
        .is_some_and(|t| t.starts_with("beta one")));

    let alpha = json(&cli.ok(["list", "--cwd", "/work/alpha", "--json"]));
    assert_eq!(ids(&alpha), ["a0000002", "a0000001"]);
    // A first screen: the head of the same listing.
    for (limit, want) in [("0", &[][..]), ("2", &["a0000002", "b0000001"][..])] {
        let first = json(&cli.ok(["list", "--all", "--limit", limit]));
        assert_eq!(ids(&first), want);
        assert_eq!(
            first.as_array().unwrap()[..],
            all.as_array().unwrap()[..want.len()]
        );
    }
    let first = json(&cli.ok(["list", "--cwd", "/work/alpha", "--limit", "9"]));
    assert_eq!(first, alpha);
    let out = cli.run(["list", "--cwd", "/work/alpha", "--all"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--cwd and --all exclude each other"
    );
}

#[test]
fn search_ranks_the_best_match_first() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let dir = project_dir(&agent, "/work/alpha");
    write_session(&dir, "a0000001", "/work/alpha", "fix the parser bug", None);
    write_session(
        &dir,
        "a0000002",
        "/work/alpha",
        "write the docs",
        Some("Parser rewrite"),
    );
    write_session(&dir, "a0000003", "/work/alpha", "unrelated chores", None);
    write_session(
        &project_dir(&agent, "/work/beta"),
        "b0000001",
        "/work/beta",
        "parser in beta",
        None,
    );

    let out = json(&cli.ok(["search", "parser", "--cwd", "/work/alpha", "--json"]));
    let found = ids(&out);
    // The title (weight 3) beats the first message (weight 2); the other project is out.
    assert_eq!(found[..2], ["a0000002", "a0000001"], "{out}");
    assert!(!found.contains(&"b0000001"));
    let scores: Vec<u64> = out
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["score"].as_u64().expect("score"))
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(
        scores[1] > scores.get(2).copied().unwrap_or(0),
        "{scores:?}"
    );
    assert_eq!(out[1]["firstMessage"], "fix the parser bug");
    // No session's text is held, or printed.
    assert!(out
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s.get("allMessagesText").is_none()));

    let all = json(&cli.ok(["search", "parser", "--all"]));
    assert!(ids(&all).contains(&"b0000001"), "{all}");
    assert_eq!(ids(&all)[0], "a0000002");
}

#[test]
fn resume_by_prefix_ambiguity_and_another_project() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let alpha = project_dir(&agent, "/work/alpha");
    let one = write_session(&alpha, "d00d1111", "/work/alpha", "one", None);
    write_session(&alpha, "d00d2222", "/work/alpha", "two", None);
    let beta = write_session(
        &project_dir(&agent, "/work/beta"),
        "beef0001",
        "/work/beta",
        "in beta",
        None,
    );
    let art = beta.with_extension("");
    fs::create_dir_all(&art).expect("mkdir");
    fs::write(art.join("0.bash.log"), "beta output\n").expect("write");

    // A unique prefix: the path, as a plain line.
    let out = cli.ok(["resume", "d00d1", "--cwd", "/work/alpha"]);
    assert_eq!(out, format!("{}\n", path_str(&one)));
    let out = json(&cli.ok(["resume", "D00D1111", "--cwd", "/work/alpha", "--json"]));
    assert_eq!(out["path"], path_str(&one));

    // Ambiguous: exit 2, the message on stderr, the candidates on stdout.
    let out = cli.run(["resume", "d00d", "--cwd", "/work/alpha"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "Session \"d00d\" is ambiguous: 2 sessions match\n"
    );
    let candidates = json(&String::from_utf8_lossy(&out.stdout));
    let mut found = ids(&candidates);
    found.sort();
    assert_eq!(found, ["d00d1111", "d00d2222"]);

    // Not found: exit 3.
    let out = cli.run(["resume", "ffff", "--cwd", "/work/alpha"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stderr(&out), "Session \"ffff\" not found.\n");

    // Another project: exit 4 and nothing written; --yes forks it into this project.
    let before = fs::read_dir(&alpha).expect("ls").count();
    let out = cli.run(["resume", "beef", "--cwd", "/work/alpha"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "Session \"beef\" is in another project (/work/beta).\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(fs::read_dir(&alpha).expect("ls").count(), before);

    let forked = PathBuf::from(
        cli.ok(["resume", "beef", "--cwd", "/work/alpha", "--yes"])
            .trim_end(),
    );
    assert_eq!(
        forked.parent(),
        Some(alpha.as_path()),
        "{}",
        forked.display()
    );
    let show = json(&cli.ok(["show", path_str(&forked), "--json"]));
    assert_eq!(show["header"]["cwd"], "/work/alpha");
    assert_ne!(show["header"]["id"], "beef0001");
    let text = fs::read_to_string(&forked).expect("read fork");
    assert!(text.contains("in beta"), "{text}");
    assert_eq!(
        fs::read_to_string(forked.with_extension("").join("0.bash.log")).expect("artifact"),
        "beta output\n"
    );
    assert!(beta.exists(), "the source was only read");

    // A path is printed as given, made absolute; nothing is looked up.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cli
        .cmd()
        .current_dir(dir.path())
        .args(["resume", "x/s.jsonl"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}/x/s.jsonl\n", dir.path().display())
    );
}

#[test]
fn continue_picks_the_newest_session_then_a_new_one_and_follows_the_terminal() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let dir = project_dir(&agent, "/work/alpha");

    // Nothing yet: the path of a new session, not created.
    let out = json(&cli.ok(["continue", "--cwd", "/work/alpha", "--json"]));
    assert_eq!(out["source"], "new");
    let new = PathBuf::from(out["path"].as_str().expect("path"));
    assert_eq!(new.parent(), Some(dir.as_path()));
    assert!(!new.exists());
    assert!(
        !agent.join("terminal-sessions").exists(),
        "no terminal, no breadcrumb"
    );

    let old = write_session(&dir, "e0000001", "/work/alpha", "old", None);
    let newest = write_session(&dir, "e0000002", "/work/alpha", "newest", None);
    age(&old, 600);
    age(&newest, 60);
    assert_eq!(
        cli.ok(["continue", "--cwd", "/work/alpha"]),
        format!("{}\n", path_str(&newest))
    );
    let out = json(&cli.ok(["continue", "--cwd", "/work/alpha", "--json"]));
    assert_eq!(out["source"], "mostRecent");

    // A terminal (tmux pane) remembers what it continued, even when a newer one appears.
    let run = |pane: &str| {
        let out = cli
            .cmd()
            .env("TMUX_PANE", pane)
            .args(["continue", "--cwd", "/work/alpha", "--json"])
            .stdin(Stdio::null())
            .output()
            .expect("run");
        assert!(out.status.success(), "{}", stderr(&out));
        json(&String::from_utf8_lossy(&out.stdout))
    };
    let first = run("%7");
    assert_eq!(first["source"], "mostRecent");
    assert_eq!(
        fs::read_to_string(agent.join("terminal-sessions/tmux-%7")).expect("breadcrumb"),
        format!("/work/alpha\n{}\n", path_str(&newest))
    );
    let newer = write_session(&dir, "e0000003", "/work/alpha", "newer", None);
    let again = run("%7");
    assert_eq!(again["source"], "breadcrumb");
    assert_eq!(again["path"], path_str(&newest));
    let other = run("%8");
    assert_eq!(other["source"], "mostRecent");
    assert_eq!(other["path"], path_str(&newer));
}

#[test]
fn blob_put_and_get_round_trip_the_bytes() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let tmp = tempfile::tempdir().expect("tempdir");
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 3) as u8).collect();
    let file = tmp.path().join("image.bin");
    fs::write(&file, &data).expect("write");

    let put = json(&cli.ok(["blob", "put", path_str(&file)]));
    let hash = put["hash"].as_str().expect("hash").to_string();
    assert_eq!(hash.len(), 64);
    assert_eq!(put["ref"], format!("blob:sha256:{hash}"));
    let stored = agent.join("blobs").join(&hash);
    assert_eq!(put["path"], path_str(&stored));
    assert_eq!(fs::read(&stored).expect("blob file"), data);
    // Idempotent.
    assert_eq!(json(&cli.ok(["blob", "put", path_str(&file)])), put);

    for key in [hash.clone(), format!("blob:sha256:{hash}")] {
        let out = cli.run(["blob", "get", &key]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(out.stdout == data, "blob get {key} returned other bytes");
    }
    let out = cli.run(["blob", "get", &"0".repeat(64)]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stderr(&out), format!("Blob {} not found\n", "0".repeat(64)));
    let out = cli.run(["blob", "put", "/nonexistent/file"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/nonexistent/file"),
        "{}",
        stderr(&out)
    );
}

/// A session with an artifacts directory: `0.bash.log`, `3.read.log`, a subagent output
/// `sub1.md` (JSON), and a file outside every root with a secret.
struct UrlFixture {
    _tmp: tempfile::TempDir,
    session: PathBuf,
    outside: PathBuf,
}

const SECRET: &str = "TOP-SECRET-CONTENT";

fn url_fixture() -> UrlFixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    let proj = base.join("proj");
    let session = write_session(&proj, "f0000001", "/work/alpha", "hi", None);
    let art = session.with_extension("");
    fs::create_dir_all(&art).expect("mkdir");
    fs::write(art.join("0.bash.log"), "line 1\nline 2\nline 3\nline 4\n").expect("write");
    fs::write(art.join("3.read.log"), "three").expect("write");
    fs::write(
        art.join("sub1.md"),
        r#"{"result":{"files":["a.rs","b.rs"],"count":2}}"#,
    )
    .expect("write");
    let outside = base.join("outside");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(outside.join("secret.md"), SECRET).expect("write");
    fs::write(outside.join("x"), SECRET).expect("write");
    // A session's sibling that no URL may name.
    fs::write(proj.join("x"), SECRET).expect("write");
    UrlFixture {
        _tmp: tmp,
        session,
        outside,
    }
}

#[test]
fn url_resolves_artifacts_and_agent_outputs_with_paging() {
    let cli = Cli::new();
    let f = url_fixture();
    let s = path_str(&f.session);
    assert_eq!(
        cli.ok(["url", "artifact://0", "--session", s]),
        "line 1\nline 2\nline 3\nline 4\n"
    );
    // A final newline is added when the content has none.
    assert_eq!(cli.ok(["url", "artifact://3", "--session", s]), "three\n");
    assert_eq!(
        cli.ok([
            "url",
            "artifact://0",
            "--session",
            s,
            "--offset",
            "2",
            "--limit",
            "2"
        ]),
        "line 2\nline 3\n"
    );
    assert_eq!(
        cli.ok(["url", "artifact://0", "--session", s, "--offset", "4"]),
        "line 4\n"
    );
    assert_eq!(
        cli.ok(["url", "agent://sub1/result/files/1", "--session", s]),
        "\"b.rs\"\n"
    );
    assert_eq!(
        cli.ok(["url", "agent://sub1/result", "--session", s]),
        "{\n  \"files\": [\n    \"a.rs\",\n    \"b.rs\"\n  ],\n  \"count\": 2\n}\n"
    );
    assert_eq!(
        cli.ok(["url", "agent://sub1?q=result.count", "--session", s]),
        "2\n"
    );

    let out = cli.run(["url", "artifact://9", "--session", s]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stderr(&out), "Artifact 9 not found. Available: 0, 3\n");
    let out = cli.run(["url", "agent://sub1/result", "--session", s, "--limit", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "offset/limit cannot be combined with agent:// JSON extraction\n"
    );
    let out = cli.run(["url", "https://example.com", "--session", s]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "Unsupported internal URL: https://example.com\n"
    );
    // No artifacts directory: not found.
    let bare = f.session.with_file_name("none.jsonl");
    let out = cli.run(["url", "artifact://0", "--session", path_str(&bare)]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stderr(&out), "No artifacts directory found\n");
}

#[test]
fn traversal_attempts_fail_and_read_nothing_outside() {
    let cli = Cli::new();
    let f = url_fixture();
    let s = path_str(&f.session);
    let art = f.session.with_extension("");
    // Links in the artifacts directory and in the blob store that lead outside.
    std::os::unix::fs::symlink(f.outside.join("secret.md"), art.join("leak.md")).expect("symlink");
    std::os::unix::fs::symlink(f.outside.join("x"), art.join("5.bash.log")).expect("symlink");
    let blobs = cli.agent_dir().join("blobs");
    fs::create_dir_all(&blobs).expect("mkdir");
    let fake = "ab".repeat(32);
    std::os::unix::fs::symlink(f.outside.join("secret.md"), blobs.join(&fake)).expect("symlink");

    let attempts: Vec<Vec<String>> = [
        vec!["url", "artifact://../x", "--session", s],
        vec!["url", "artifact://../../outside/x", "--session", s],
        vec!["url", "agent://../../etc/passwd", "--session", s],
        vec!["url", "agent://..%2Fx", "--session", s],
        vec!["url", "agent://..", "--session", s],
        vec!["url", "agent://leak", "--session", s],
        vec!["url", "artifact://5", "--session", s],
        vec!["blob", "get", "../../etc/passwd"],
        vec!["blob", "get", "blob:sha256:../.."],
        vec!["blob", "get", "blob:sha256:../../outside/secret.md"],
        vec!["blob", "get", &fake],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect();
    for args in &attempts {
        let out = cli.run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(!stderr(&out).is_empty(), "{args:?}: no error message");
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(!all.contains(SECRET), "{args:?} leaked: {all}");
        assert!(!all.contains("root:"), "{args:?} leaked /etc/passwd: {all}");
    }
    // The same attempts are refused with the agent's messages where it has one.
    let out = cli.run(["url", "artifact://../x", "--session", s]);
    assert_eq!(stderr(&out), "artifact:// ID must be numeric, got: ../x\n");
    let out = cli.run(["url", "agent://leak", "--session", s]);
    assert!(
        stderr(&out).contains("permission denied"),
        "{}",
        stderr(&out)
    );
    let out = cli.run(["blob", "get", "blob:sha256:../.."]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("invalid blob hash"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn fork_copies_the_session_and_its_artifacts() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let dir = project_dir(&agent, "/work/alpha");
    let file = write_session(&dir, "a1b2c3d4", "/work/alpha", "fork me", None);
    let art = file.with_extension("");
    fs::create_dir_all(art.join("nested")).expect("mkdir");
    fs::write(art.join("0.bash.log"), "zero\n").expect("write");
    fs::write(art.join("nested/deep.md"), "deep").expect("write");

    let out = json(&cli.ok(["fork", path_str(&file)]));
    assert_eq!(out["oldFile"], path_str(&file));
    assert_eq!(out["warnings"], serde_json::json!([]));
    let new = PathBuf::from(out["newFile"].as_str().expect("newFile"));
    assert_ne!(new, file);
    assert_eq!(new.parent(), Some(dir.as_path()));
    let new_art = new.with_extension("");
    assert_eq!(
        fs::read_to_string(new_art.join("0.bash.log")).expect("copy"),
        "zero\n"
    );
    assert_eq!(
        fs::read_to_string(new_art.join("nested/deep.md")).expect("copy"),
        "deep"
    );
    assert_eq!(
        fs::read_to_string(art.join("0.bash.log")).expect("orig"),
        "zero\n"
    );
    let show = json(&cli.ok(["show", path_str(&new)]));
    // Linked by the old session's id, as the agent's fork writes it.
    assert_eq!(show["header"]["parentSession"], "a1b2c3d4");
    assert_eq!(show["entryCount"], 2);
    assert_eq!(
        cli.ok(["url", "artifact://0", "--session", path_str(&new)]),
        "zero\n"
    );

    let out = cli.run(["fork", path_str(&dir.join("missing.jsonl"))]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

#[test]
fn move_relocates_the_file_and_its_artifacts() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let file = write_session(
        &project_dir(&agent, "/work/alpha"),
        "a1b2c3d5",
        "/work/alpha",
        "move me",
        None,
    );
    let art = file.with_extension("");
    fs::create_dir_all(&art).expect("mkdir");
    fs::write(art.join("0.bash.log"), "zero\n").expect("write");

    let out = json(&cli.ok(["move", path_str(&file), "--to-cwd", "/work/gamma/./x/.."]));
    let target = project_dir(&agent, "/work/gamma");
    let new = target.join(file.file_name().expect("name"));
    assert_eq!(out, serde_json::json!({"newFile": path_str(&new)}));
    assert!(
        !file.exists() && !art.exists(),
        "the old file and artifacts remain"
    );
    assert_eq!(
        fs::read_to_string(new.with_extension("").join("0.bash.log")).expect("moved"),
        "zero\n"
    );
    let show = json(&cli.ok(["show", path_str(&new)]));
    assert_eq!(show["header"]["cwd"], "/work/gamma");
    let listed = json(&cli.ok(["list", "--cwd", "/work/gamma"]));
    assert_eq!(ids(&listed), ["a1b2c3d5"]);
}

#[test]
fn gc_reports_then_deletes_only_old_unreferenced_blobs() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let (unused, used, young) = (
        cli.put_blob(b"unused"),
        cli.put_blob(b"used"),
        cli.put_blob(b"young"),
    );
    let blob = |h: &str| agent.join("blobs").join(h);
    age(&blob(&unused), 2 * 3600);
    age(&blob(&used), 2 * 3600);
    let dir = project_dir(&agent, "/work/alpha");
    let file = write_session(&dir, "a0000001", "/work/alpha", "hello", None);
    let entry =
        format!(r#"{{"type":"custom","customType":"img","data":{{"ref":"blob:sha256:{used}"}}}}"#);
    cli.ok(["append", path_str(&file), "--json", &entry]);

    let report = json(&cli.ok(["gc"]));
    assert_eq!(report["dryRun"], true);
    assert_eq!(report["deleted"], serde_json::json!([unused]));
    assert_eq!(report["keptRecent"], serde_json::json!([young]));
    assert_eq!(report["referenced"], 1);
    assert!(blob(&unused).exists(), "a dry run deleted");
    assert_eq!(json(&cli.ok(["gc", "--dry-run"])), report);
    assert_eq!(
        cli.run(["gc", "--dry-run", "--delete"]).status.code(),
        Some(2)
    );

    let report = json(&cli.ok(["gc", "--delete"]));
    assert_eq!(report["dryRun"], false);
    assert_eq!(report["deleted"], serde_json::json!([unused]));
    assert!(!blob(&unused).exists());
    assert!(blob(&used).exists() && blob(&young).exists());
    let report = json(&cli.ok(["gc", "--delete"]));
    assert_eq!(report["deleted"], serde_json::json!([]));
}

/// A user message with one image (`"ABC" * 300`), as `append --json` takes it, and the
/// hash its blob gets.
fn image_entry() -> (String, String) {
    let entry = format!(
        r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"image","data":"{}","mimeType":"image/png"}}],"timestamp":1}}}}"#,
        "QUJD".repeat(300)
    );
    (
        entry,
        xcsh_session::internals::sha256_hex(&b"ABC".repeat(300)),
    )
}

#[test]
fn blob_get_refuses_bytes_that_do_not_match_their_hash() {
    let cli = Cli::new();
    let hash = cli.put_blob(b"the real bytes");
    let blob = cli.agent_dir().join("blobs").join(&hash);
    for bad in [&b"other bytes"[..], b"the real", b""] {
        fs::write(&blob, bad).expect("corrupt");
        let out = cli.run(["blob", "get", &hash]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(out.stdout.is_empty(), "served {:?}", out.stdout);
        assert!(stderr(&out).contains("is corrupt"), "{}", stderr(&out));
    }
    // A put of the same content repairs it.
    cli.put_blob(b"the real bytes");
    let out = cli.run(["blob", "get", &hash]);
    assert_eq!(out.stdout, b"the real bytes");
}

#[test]
fn an_append_whose_image_matches_an_emptied_or_truncated_blob_repairs_it() {
    let (entry, hash) = image_entry();
    for bad in [&b""[..], b"ABCABC"] {
        let cli = Cli::new();
        let agent = cli.agent_dir();
        let blob = agent.join("blobs").join(&hash);
        fs::create_dir_all(blob.parent().unwrap()).expect("mkdir");
        fs::write(&blob, bad).expect("bad blob");
        let file = project_dir(&agent, "/work/alpha").join("s.jsonl");
        cli.ok(["append", path_str(&file), "--json", &entry]);
        assert_eq!(fs::read(&blob).expect("blob"), b"ABC".repeat(300));
        let ctx = json(&cli.ok(["context", path_str(&file), "--json"]));
        assert_eq!(ctx["messages"][0]["content"][0]["data"], "QUJD".repeat(300));
    }
}

#[test]
fn gc_keeps_the_images_of_a_session_outside_the_sessions_dir() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let file = fs::canonicalize(elsewhere.path())
        .expect("canonical")
        .join("notes.jsonl");
    let (entry, hash) = image_entry();
    cli.ok(["append", path_str(&file), "--json", &entry]);
    let blob = agent.join("blobs").join(&hash);
    age(&blob, 2 * 3600);
    let report = json(&cli.ok(["gc", "--delete"]));
    assert_eq!(report["deleted"], serde_json::json!([]), "{report}");
    assert_eq!(report["scannedFiles"], 1);
    assert!(blob.exists(), "the outside session's image was deleted");
    // Deleted with its session, the image stays pinned until the session is forgotten.
    fs::remove_file(&file).expect("rm");
    let report = json(&cli.ok(["gc", "--delete"]));
    assert_eq!(report["keptPinned"], serde_json::json!([hash]), "{report}");
    let report = json(&cli.ok(["gc", "--delete", "--forget-missing"]));
    assert_eq!(report["deleted"], serde_json::json!([hash]));
}

#[test]
fn a_gc_while_another_holds_the_store_lock_is_refused_and_deletes_nothing() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let hash = cli.put_blob(b"orphan");
    let blob = agent.join("blobs").join(&hash);
    age(&blob, 2 * 3600);
    // This test process is alive: its lock stands.
    let owner = serde_json::json!({
        "pid": std::process::id(), "host": xcsh_session::storage::Storage::env(&FsStorage::new()).process_identity().host, "startedAt": "2026-01-01T00:00:00.000Z",
        "token": "00000000000000aa",
    });
    fs::write(agent.join("blobs.lock"), owner.to_string()).expect("lock");
    let out = cli.run(["gc", "--delete"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another garbage collection"),
        "{}",
        stderr(&out)
    );
    assert!(blob.exists());
    fs::remove_file(agent.join("blobs.lock")).expect("unlock");
    let report = json(&cli.ok(["gc", "--delete"]));
    assert_eq!(report["deleted"], serde_json::json!([hash]));
    assert!(!agent.join("blobs.lock").exists());
}

#[test]
fn listing_and_lookup_commands_leave_the_agent_dir_untouched() {
    // recent/list/search/url/gc (dry run)/resume without --yes run with a read-only
    // storage; they succeed (or fail for their own reasons) and change nothing but the
    // index cache (`<agent-dir>/cache/index/`, which listings keep as `context` does).
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let dir = project_dir(&agent, "/work/alpha");
    let file = write_session(&dir, "a0000001", "/work/alpha", "hello", None);
    let cache = agent.join("cache");
    let snapshot = || {
        let mut v = Vec::new();
        let mut stack = vec![agent.clone()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).expect("ls") {
                let p = e.expect("entry").path();
                if p.starts_with(&cache) {
                    continue;
                }
                if p.is_dir() {
                    stack.push(p.clone());
                }
                v.push((p.clone(), fs::metadata(&p).and_then(|m| m.modified()).ok()));
            }
        }
        v.sort();
        v
    };
    let before = snapshot();
    for args in [
        vec!["recent", "--cwd", "/work/alpha"],
        vec!["list", "--all"],
        vec!["search", "hello", "--all"],
        vec!["resume", "a000", "--cwd", "/work/alpha"],
        vec!["gc"],
    ] {
        cli.ok(&args);
    }
    let out = cli.run(["url", "artifact://0", "--session", path_str(&file)]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(snapshot(), before);
    // What the cache holds: the session's index, nothing else.
    let cached: Vec<_> = fs::read_dir(cache.join("index"))
        .expect("the listing kept the session's index")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert!(
        cached[0].extension().is_some_and(|x| x == "idx"),
        "{cached:?}"
    );
}

/// The host name the CLI records in locks (as `fshost` reads it).
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|f| fs::read_to_string(f).ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

#[test]
fn a_live_writer_lock_blocks_writes_and_a_dead_ones_lock_is_recovered() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let file = write_session(
        &project_dir(&agent, "/work/alpha"),
        "a0000001",
        "/work/alpha",
        "hi",
        None,
    );
    let lock = PathBuf::from(format!("{}.lock", path_str(&file)));
    let entry = r#"{"type":"custom","customType":"t","data":{}}"#;
    let lock_of = |pid: u32| {
        format!(
            "{{\"pid\":{pid},\"host\":{},\"startedAt\":\"2026-01-05T10:00:00.000Z\",\"token\":\"00000000deadbeef\"}}\n",
            serde_json::Value::from(host_name())
        )
    };

    // This test process is alive: its lock holds.
    fs::write(&lock, lock_of(std::process::id())).expect("write lock");
    let before = fs::read(&file).expect("read");
    let out = cli.run(["append", path_str(&file), "--json", entry]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is being written by another process"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read(&file).expect("read"), before);
    assert!(lock.exists(), "another writer's lock was removed");
    // Readers are not blocked.
    cli.ok(["show", path_str(&file)]);

    // A process that has exited: its lock is recovered, and ours released afterwards.
    let mut child = Command::new("true").spawn().expect("spawn");
    let dead = child.id();
    child.wait().expect("wait");
    fs::write(&lock, lock_of(dead)).expect("write lock");
    let id = json(&cli.ok(["append", path_str(&file), "--json", entry]))["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert!(fs::read_to_string(&file).expect("read").contains(&id));
    assert!(!lock.exists(), "the lock was left behind");
}

/// `history add | search | recent` on real SQLite files (`<agent-dir>/history.db`).
mod history {
    use super::*;
    use rusqlite::Connection;

    fn db(cli: &Cli) -> PathBuf {
        cli.agent_dir().join("history.db")
    }

    /// `(id, prompt, created_at, cwd)` of every row, by id, read directly with SQLite.
    fn rows(path: &Path) -> Vec<(i64, String, i64, Option<String>)> {
        let c = Connection::open(path).expect("open");
        let mut stmt = c
            .prepare("SELECT id, prompt, created_at, cwd FROM history ORDER BY id")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows")
    }

    fn prompts(list: &Value) -> Vec<&str> {
        list.as_array()
            .expect("array")
            .iter()
            .map(|e| e["prompt"].as_str().expect("prompt"))
            .collect()
    }

    fn now_s() -> i64 {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64
    }

    #[test]
    fn search_takes_fts5_prefixes_and_phrases_best_match_first() {
        let cli = Cli::new();
        cli.ok([
            "history",
            "add",
            "--cwd",
            "/w",
            "parse the config file",
            "a long request that mentions the parser only once among many other words",
            "write an exact phrase here",
            "phrase exact, the other way round",
            "parser parser parser",
            "unrelated",
        ]);
        let search = |q: &str| json(&cli.ok(["history", "search", q, "--json"]));

        // Prefix: every prompt with a token starting with "pars", the most relevant first.
        let hits = search("pars*");
        assert_eq!(
            prompts(&hits),
            [
                "parser parser parser",
                "parse the config file",
                "a long request that mentions the parser only once among many other words",
            ]
        );
        // A phrase is matched exactly, the words in order and adjacent.
        assert_eq!(
            prompts(&search("\"exact phrase\"")),
            ["write an exact phrase here"]
        );
        // Both words, any order.
        assert_eq!(prompts(&search("exact phrase")).len(), 2);
        // Operators pass through to FTS5.
        assert_eq!(prompts(&search("pars* NOT config")).len(), 2);
        assert_eq!(
            prompts(&search("unrelated OR config")),
            ["unrelated", "parse the config file"]
        );
        assert!(search("nothing*").as_array().expect("array").is_empty());

        // The JSON shape.
        let one = &search("unrelated")[0];
        let keys: Vec<&str> = one
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["id", "prompt", "createdAt", "cwd"]);
        assert_eq!(one["id"], 6);
        assert_eq!(one["cwd"], "/w");
        let created = one["createdAt"].as_str().expect("createdAt");
        assert!(
            created.len() == 24 && created.ends_with(".000Z") && created.starts_with("20"),
            "{created}"
        );
    }

    #[test]
    fn a_malformed_query_is_an_error_and_nothing_is_printed() {
        let cli = Cli::new();
        cli.ok(["history", "add", "x"]);
        for (q, msg) in [
            ("(", "fts5: syntax error"),
            ("\"open", "unterminated string"),
            ("nope:x", "no such column: nope"),
        ] {
            let out = cli.run(["history", "search", q, "--json"]);
            assert_eq!(out.status.code(), Some(1), "{q}: {}", stderr(&out));
            assert!(
                stderr(&out).starts_with("invalid history query: ") && stderr(&out).contains(msg),
                "{q}: {}",
                stderr(&out)
            );
            assert!(out.stdout.is_empty());
        }
    }

    #[test]
    fn consecutive_identical_prompts_are_stored_once_others_again() {
        let cli = Cli::new();
        let out = cli.ok([
            "history",
            "add",
            "--json",
            "fix it",
            "fix it",
            "  fix it\n",
            "",
            "   ",
            "other",
            "fix it",
        ]);
        assert_eq!(
            json(&out),
            json(
                r#"[{"added":true},{"added":false,"reason":"duplicate"},{"added":false,"reason":"duplicate"},
                    {"added":false,"reason":"empty"},{"added":false,"reason":"empty"},{"added":true},{"added":true}]"#
            )
        );
        // Across processes: the next process knows the last prompt from the database.
        assert_eq!(cli.ok(["history", "add", "fix it"]), "");
        cli.ok(["history", "add", "--", "  -v flag  "]);
        let stored: Vec<String> = rows(&db(&cli)).into_iter().map(|r| r.1).collect();
        assert_eq!(stored, ["fix it", "other", "fix it", "-v flag"]);
        // Another cwd does not make it a different prompt.
        cli.ok(["history", "add", "--cwd", "/elsewhere", "--", "-v flag"]);
        assert_eq!(rows(&db(&cli)).len(), 4);
        // A prompt from stdin.
        let mut child = cli
            .cmd()
            .args(["history", "add", "-"])
            .stdin(Stdio::piped())
            .spawn()
            .expect("spawn");
        std::io::Write::write_all(
            child.stdin.as_mut().expect("stdin"),
            b"line one\nline two\n",
        )
        .expect("write");
        assert!(child.wait().expect("wait").success());
        assert_eq!(rows(&db(&cli))[4].1, "line one\nline two");
    }

    #[test]
    fn cwd_filter_limit_ordering_and_seconds() {
        let cli = Cli::new();
        let before = now_s();
        cli.ok(["history", "add", "--cwd", "/a", "one a", "two b"]);
        cli.ok(["history", "add", "--cwd", "/b", "three b"]);
        cli.ok(["history", "add", "--cwd", "/a", "four b"]);
        let after = now_s();
        // Inserted in order within one second: the id breaks the tie.
        let recent = |args: &[&str]| {
            let mut a = vec!["history", "recent", "--json"];
            a.extend_from_slice(args);
            json(&cli.ok(a))
        };
        assert_eq!(
            prompts(&recent(&[])),
            ["four b", "three b", "two b", "one a"]
        );
        assert_eq!(prompts(&recent(&["--limit", "2"])), ["four b", "three b"]);
        assert_eq!(
            prompts(&recent(&["--cwd", "/a"])),
            ["four b", "two b", "one a"]
        );
        assert_eq!(
            prompts(&recent(&["--cwd", "/a", "--limit", "1"])),
            ["four b"]
        );
        assert!(prompts(&recent(&["--cwd", "/none"])).is_empty());
        assert!(prompts(&recent(&["--limit", "0"])).is_empty());
        let search = |args: &[&str]| {
            let mut a = vec!["history", "search", "--json"];
            a.extend_from_slice(args);
            json(&cli.ok(a))
        };
        assert_eq!(prompts(&search(&["b", "--cwd", "/b"])), ["three b"]);
        assert_eq!(
            search(&["b", "--limit", "2"])
                .as_array()
                .expect("array")
                .len(),
            2
        );
        assert_eq!(search(&["b"]).as_array().expect("array").len(), 3);
        // created_at is epoch seconds, as the agent stores it.
        for (_, _, created_at, _) in rows(&db(&cli)) {
            assert!((before..=after).contains(&created_at), "{created_at}");
        }
        // A relative --cwd is made absolute against the current directory.
        let here = std::env::current_dir().expect("cwd");
        cli.ok(["history", "add", "--cwd", ".", "from here"]);
        assert_eq!(
            rows(&db(&cli)).last().expect("row").3.as_deref(),
            Some(path_str(&here))
        );
    }

    #[test]
    fn two_processes_inserting_at_once_lose_nothing() {
        const N: usize = 150;
        let cli = Cli::new();
        // Each process adds N prompts; both start at once on a database neither created.
        let spawn = |tag: &str| {
            let mut c = cli.cmd();
            c.args(["history", "add"]);
            for i in 0..N {
                c.arg(format!("process {tag} prompt {i}"));
            }
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        };
        let (a, b) = (spawn("a"), spawn("b"));
        for child in [a, b] {
            let out = child.wait_with_output().expect("wait");
            assert!(out.status.success(), "failed: {}", stderr(&out));
            assert!(!stderr(&out).contains("locked"), "{}", stderr(&out));
        }
        // Then many short processes from two threads at once (open/close contention).
        std::thread::scope(|s| {
            for tag in ["c", "d"] {
                let cli = &cli;
                s.spawn(move || {
                    for i in 0..8 {
                        let out = cli.run(["history", "add", &format!("process {tag} prompt {i}")]);
                        assert!(out.status.success(), "{}", stderr(&out));
                    }
                });
            }
        });
        let all = rows(&db(&cli));
        assert_eq!(all.len(), 2 * N + 16);
        for tag in ["a", "b"] {
            for i in 0..N {
                let p = format!("process {tag} prompt {i}");
                assert_eq!(all.iter().filter(|r| r.1 == p).count(), 1, "{p}");
            }
        }
        // Each process's prompts are in its own order.
        let ids_of = |tag: &str| -> Vec<i64> {
            all.iter()
                .filter(|r| r.1.starts_with(&format!("process {tag} ")))
                .map(|r| r.0)
                .collect()
        };
        let a = ids_of("a");
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        // The index agrees with the table.
        let hits = json(&cli.ok(["history", "search", "\"process b\"", "--limit", "1000"]));
        assert_eq!(hits.as_array().expect("array").len(), N);
        let c = Connection::open(db(&cli)).expect("open");
        c.execute_batch("INSERT INTO history_fts(history_fts) VALUES('integrity-check');")
            .expect("fts integrity");
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("mode");
        assert_eq!(mode, "wal");
    }

    /// The agent's older schema: `created_at` defaulting to `unixepoch()` (seconds).
    const OLD_SCHEMA: &str = "
        CREATE TABLE history (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            prompt TEXT NOT NULL,
            created_at INTEGER NOT NULL DEFAULT (unixepoch()),
            cwd TEXT
        );
        CREATE INDEX idx_history_created_at ON history(created_at DESC);
        CREATE VIRTUAL TABLE history_fts USING fts5(prompt, content='history', content_rowid='id');
        CREATE TRIGGER history_ai AFTER INSERT ON history BEGIN
            INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
        END;";

    #[test]
    fn a_database_with_the_older_schema_is_migrated_keeping_every_row() {
        let cli = Cli::new();
        let path = db(&cli);
        {
            let c = Connection::open(&path).expect("create");
            c.execute_batch(OLD_SCHEMA).expect("old schema");
            c.execute_batch(
                "INSERT INTO history (prompt, created_at, cwd) VALUES
                    ('parse the legacy config', 1700000000, '/old'),
                    ('an exact phrase from before', 1700000100, NULL);
                 INSERT INTO history (prompt, cwd) VALUES ('inserted with the default', '/old');
                 DELETE FROM history WHERE id = 2;
                 INSERT INTO history (prompt, created_at) VALUES ('an exact phrase again', 1700000200);",
            )
            .expect("rows");
        }
        let before = rows(&path);
        assert_eq!(
            before.iter().map(|r| r.0).collect::<Vec<_>>(),
            [1, 3, 4],
            "ids with a gap"
        );

        // Reading migrates it (as the agent does on open).
        let recent = json(&cli.ok(["history", "recent", "--json"]));
        let listed: Vec<(i64, &str)> = recent
            .as_array()
            .expect("array")
            .iter()
            .map(|e| {
                (
                    e["id"].as_i64().expect("id"),
                    e["prompt"].as_str().expect("p"),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                (3, "inserted with the default"),
                (4, "an exact phrase again"),
                (1, "parse the legacy config")
            ]
        );
        assert_eq!(recent[2]["createdAt"], "2023-11-14T22:13:20.000Z");
        assert_eq!(recent[2]["cwd"], "/old");
        assert_eq!(recent[1]["cwd"], Value::Null);
        assert_eq!(rows(&path), before, "rows and ids kept");

        let c = Connection::open(&path).expect("open");
        let sql: String = c
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'history'",
                [],
                |r| r.get(0),
            )
            .expect("sql");
        assert!(!sql.contains("unixepoch("), "{sql}");
        assert!(sql.contains("strftime('%s','now')"), "{sql}");
        assert_eq!(
            c.query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE '%legacy%'",
                [],
                |r| r.get::<_, i64>(0)
            )
            .expect("count"),
            0
        );
        drop(c);

        // The index covers the old rows.
        let hits = json(&cli.ok(["history", "search", "\"exact phrase\"", "--json"]));
        assert_eq!(prompts(&hits), ["an exact phrase again"]);
        let hits = json(&cli.ok(["history", "search", "legac*", "--cwd", "/old"]));
        assert_eq!(prompts(&hits), ["parse the legacy config"]);

        // New rows continue the ids; the last old row counts for the duplicate check.
        cli.ok(["history", "add", "an exact phrase again", "new one"]);
        let after = rows(&path);
        assert_eq!(after.len(), 4);
        assert_eq!(after[3].0, 5);
        assert_eq!(after[3].1, "new one");
    }

    #[test]
    fn older_tables_without_cwd_or_fts_are_brought_up_to_date() {
        let cli = Cli::new();
        let path = db(&cli);
        {
            let c = Connection::open(&path).expect("create");
            c.execute_batch(
                "CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, prompt TEXT NOT NULL,
                     created_at INTEGER NOT NULL DEFAULT (unixepoch()));
                 INSERT INTO history (prompt, created_at) VALUES ('very old prompt', 1600000000);",
            )
            .expect("old");
        }
        let hits = json(&cli.ok(["history", "search", "old"]));
        assert_eq!(prompts(&hits), ["very old prompt"]);
        assert_eq!(hits[0]["cwd"], Value::Null);
        assert_eq!(hits[0]["createdAt"], "2020-09-13T12:26:40.000Z");

        // A current-schema database as the agent creates it (insert trigger only) gets
        // the update/delete triggers; its rows stay searchable.
        let cli = Cli::new();
        let path = db(&cli);
        {
            let c = Connection::open(&path).expect("create");
            c.execute_batch(
                "CREATE TABLE history (id INTEGER PRIMARY KEY AUTOINCREMENT, prompt TEXT NOT NULL,
                     created_at INTEGER NOT NULL DEFAULT (CAST(strftime('%s','now') AS INTEGER)), cwd TEXT);
                 CREATE INDEX idx_history_created_at ON history(created_at DESC);
                 CREATE VIRTUAL TABLE history_fts USING fts5(prompt, content='history', content_rowid='id');
                 CREATE TRIGGER history_ai AFTER INSERT ON history BEGIN
                     INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
                 END;
                 INSERT INTO history (prompt, cwd) VALUES ('agent wrote this', '/p');",
            )
            .expect("agent schema");
        }
        let sql_before: String = Connection::open(&path)
            .expect("open")
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'history'",
                [],
                |r| r.get(0),
            )
            .expect("sql");
        assert_eq!(
            prompts(&json(&cli.ok(["history", "search", "agent"]))),
            ["agent wrote this"]
        );
        let c = Connection::open(&path).expect("open");
        let sql_after: String = c
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'history'",
                [],
                |r| r.get(0),
            )
            .expect("sql");
        assert_eq!(sql_before, sql_after, "the agent's table is not rebuilt");
        let triggers: i64 = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'",
                [],
                |r| r.get(0),
            )
            .expect("triggers");
        assert_eq!(triggers, 3);
    }

    #[test]
    fn reading_an_absent_history_creates_nothing() {
        let cli = Cli::new();
        assert_eq!(cli.ok(["history", "recent", "--json"]), "[]\n");
        assert_eq!(cli.ok(["history", "search", "x*", "--json"]), "[]\n");
        assert!(!db(&cli).exists());
        assert_eq!(fs::read_dir(cli.agent.path()).expect("ls").count(), 0);
    }

    #[test]
    fn the_database_is_confined_to_the_agent_dir() {
        let cli = Cli::new();
        let outside = tempfile::tempdir().expect("tempdir");
        let target = outside.path().join("stolen.db");
        std::os::unix::fs::symlink(&target, db(&cli)).expect("symlink");
        let out = cli.run(["history", "add", "secret"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("permission denied"),
            "{}",
            stderr(&out)
        );
        assert!(!target.exists(), "written outside the agent dir");
        let out = cli.run(["history", "recent"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(!target.exists());
    }
}

#[test]
fn a_session_larger_than_a_read_chunk_crosses_in_pieces_and_reads_the_same() {
    // The component reads files of 4 MiB or more through `open-reader`, 4 MiB a call;
    // 9 MB of multi-byte text puts chunk boundaries inside characters and lines.
    let cli = Cli::new();
    let dir = cli.agent_dir().join("sessions").join("--big--");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("2026-01-01T00-00-00-000Z_big.jsonl");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/big"}"#,
    );
    text.push('\n');
    let mut parent = "null".to_string();
    let mut i = 0;
    while text.len() < 9_000_000 {
        let id = format!("{i:08x}");
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let body = format!("entry {i} é日本🎉 \\n \\\"quoted\\\" ").repeat(40);
        text.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{body}"}}],"timestamp":{i}}}}}"#
        ));
        text.push('\n');
        parent = format!("\"{id}\"");
        i += 1;
    }
    fs::write(&path, &text).expect("write");
    let p = path_str(&path);
    let agent = cli.agent_dir();
    let a = path_str(&agent);
    let expected = api::context_file(Rc::new(FsStorage::new()), p, a, None).expect("native") + "\n";
    assert!(
        cli.ok(["context", p, "--json"]) == expected,
        "context of a 9 MB session differs"
    );
    let expected = api::show_file(Rc::new(FsStorage::new()), p, a).expect("native") + "\n";
    let shown = cli.ok(["show", p, "--json"]);
    assert_eq!(shown, expected);
    assert_eq!(json(&shown)["entryCount"], Value::from(i), "{shown}");
    assert!(
        fs::read_to_string(&path).expect("read") == text,
        "the file was modified"
    );
}

#[test]
fn append_to_a_new_file_records_the_cwd_in_its_header() {
    let cli = Cli::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let entry = r#"{"type":"custom","customType":"cli-test","data":{}}"#;
    // --cwd given, and (the default) the process's current directory.
    let explicit = dir.path().join("explicit.jsonl");
    cli.ok([
        "append",
        path_str(&explicit),
        "--cwd",
        "/work/project",
        "--json",
        entry,
    ]);
    let implicit = dir.path().join("implicit.jsonl");
    let out = cli
        .cmd()
        .current_dir(dir.path())
        .args(["append", path_str(&implicit), "--json", entry])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let header = |p: &Path| -> Value {
        let text = fs::read_to_string(p).expect("read");
        json(text.lines().next().expect("header line"))
    };
    assert_eq!(header(&explicit)["cwd"], "/work/project");
    let here = fs::canonicalize(dir.path()).expect("canonical");
    let cwd = header(&implicit)["cwd"].as_str().expect("cwd").to_string();
    assert!(
        cwd == path_str(dir.path()) || cwd == path_str(&here),
        "{cwd} is not {}",
        dir.path().display()
    );
    // An existing file keeps its header.
    cli.ok([
        "append",
        path_str(&explicit),
        "--cwd",
        "/elsewhere",
        "--json",
        entry,
    ]);
    assert_eq!(header(&explicit)["cwd"], "/work/project");
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Run `cmd` to its end, or fail the test when it is still running after 10 s (it is
/// killed then: a command blocked opening a FIFO never ends on its own).
fn run_within_10s(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn xcsh-session");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn a_fifo_named_like_a_session_is_refused_or_skipped_and_never_hangs_a_command() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let dir = project_dir(&agent, "/work/alpha");
    write_session(&dir, "a0000001", "/work/alpha", "hello", None);
    let in_sessions = dir.join("2026-01-05T11-00-00-000Z_fifo0001.jsonl");
    mkfifo(&in_sessions);
    mkfifo(&agent.join("sessions").join("stray.jsonl"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let elsewhere = fs::canonicalize(tmp.path())
        .expect("canonical")
        .join("s.jsonl");
    mkfifo(&elsewhere);

    // Direct use: a clear error.
    for fifo in [&in_sessions, &elsewhere] {
        let p = path_str(fifo);
        let entry = r#"{"type":"custom","customType":"x","data":{}}"#;
        for args in [vec!["show", p], vec!["append", p, "--json", entry]] {
            let out = run_within_10s(cli.cmd().args(&args));
            assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
            assert!(
                stderr(&out).contains(&format!("{p} is not a regular file")),
                "{args:?}: {}",
                stderr(&out)
            );
        }
    }
    // Scans: skipped.
    let out = run_within_10s(cli.cmd().args(["recent", "--cwd", "/work/alpha", "--json"]));
    assert!(out.status.success(), "recent: {}", stderr(&out));
    assert_eq!(
        ids(&json(&String::from_utf8_lossy(&out.stdout))),
        ["a0000001"]
    );
    for args in [vec!["list", "--all"], vec!["list", "--cwd", "/work/alpha"]] {
        let out = run_within_10s(cli.cmd().args(&args));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(
            ids(&json(&String::from_utf8_lossy(&out.stdout))),
            ["a0000001"],
            "{args:?}"
        );
    }
    for args in [vec!["gc"], vec!["gc", "--delete"]] {
        let out = run_within_10s(cli.cmd().args(&args));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let report = json(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(report["scannedFiles"], 1, "{args:?}: {report}");
    }
}

/// Exchange two paths atomically (`renameat2(RENAME_EXCHANGE)`): a directory and a
/// symlink trade places, so the name is always one of them.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).expect("no NUL");
    let (a, b) = (c(a), c(b));
    // SAFETY: two valid NUL-terminated paths, alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(target_os = "linux")]
#[test]
fn blob_put_writes_nothing_outside_while_the_blobs_dir_is_swapped_for_a_symlink() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    let outside = base.join("outside");
    fs::create_dir_all(&outside).expect("mkdir");
    let blobs = agent.join("blobs");
    fs::create_dir_all(&blobs).expect("mkdir");
    let link = agent.join("blobs-swap");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    exchange(&blobs, &link).expect("renameat2(RENAME_EXCHANGE)");
    exchange(&blobs, &link).expect("renameat2(RENAME_EXCHANGE)");

    // `agent/blobs` flips between the real directory and a symlink to `outside` for as
    // long as the puts run.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, blobs, link) = (stop.clone(), blobs.clone(), link.clone());
        std::thread::spawn(move || {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                exchange(&blobs, &link).expect("exchange");
                flips += 1;
            }
            if flips % 2 == 1 {
                exchange(&blobs, &link).expect("exchange");
            }
            flips
        })
    };
    let input = base.join("in.bin");
    let mut stored = 0;
    for i in 0..40u32 {
        fs::write(&input, format!("blob {i}")).expect("write");
        let out = run_within_10s(cli.cmd().args(["blob", "put", path_str(&input)]));
        stored += usize::from(out.status.success());
    }
    stop.store(true, Ordering::Relaxed);
    let flips = swapper.join().expect("swapper");
    let escaped: Vec<_> = fs::read_dir(&outside)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(
        escaped.is_empty(),
        "written outside the roots ({flips} flips, {stored} puts stored): {escaped:?}"
    );
    assert!(flips > 40, "the swap did not run ({flips} flips)");
}

/// A session pi wrote (tests/fixtures/pi: pi 0.73.1's own SessionManager) in a pi agent
/// directory: listed with pi's name for it (its latest `session_info`), its context read.
#[test]
fn a_pi_agent_directory_lists_and_reads_pi_sessions_with_their_names() {
    let cli = Cli::new();
    let agent = cli.agent_dir();
    let from = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/pi/agent/sessions/--work-pi--"
    ));
    let to = agent.join("sessions").join("--work-pi--");
    fs::create_dir_all(&to).expect("mkdir");
    let mut file = PathBuf::new();
    for e in fs::read_dir(from).expect("fixture") {
        let e = e.expect("entry");
        file = to.join(e.file_name());
        fs::copy(e.path(), &file).expect("copy");
    }
    let all = json(&cli.ok(["list", "--all", "--json"]));
    assert_eq!(all.as_array().map(Vec::len), Some(1));
    assert_eq!(all[0]["title"], "Listing hidden files");
    assert_eq!(all[0]["cwd"], "/work/pi");
    assert_eq!(all[0]["messageCount"], 4);
    assert_eq!(all[0]["firstMessage"], "How do I list the files here?");
    let here = json(&cli.ok(["list", "--cwd", "/work/pi", "--json"]));
    assert_eq!(here[0]["title"], "Listing hidden files");
    let context = json(&cli.ok(["context", path_str(&file), "--json"]));
    assert_eq!(context["messages"].as_array().map(Vec::len), Some(4));
    assert_eq!(context["messages"][3]["content"][0]["text"], "ls -a");
}
