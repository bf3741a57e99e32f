//! The `xcsh-session` binary end to end: it runs the real component (built by
//! `scripts/build-component`) on the real filesystem, and must print exactly what the
//! native core prints.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::SystemTime;

use serde_json::Value;
use xcsh_session::api;
use xcsh_session::fs::FsStorage;

const BIN: &str = env!("CARGO_BIN_EXE_xcsh-session");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures/real");
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

/// One AOT cache for the whole test binary, compiled once up front, so the tests that do
/// not test the cache do not each compile the component.
fn shared_cache() -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xcsh-session-aot-cache");
        let out = Command::new(BIN)
            .arg("precompile")
            .env("XCSH_SESSION_CACHE_DIR", &dir)
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "precompile failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
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
        let mut c = Command::new(BIN);
        c.env("XCSH_SESSION_CACHE_DIR", &self.cache)
            .env_remove("XCSH_SESSION_COMPONENT");
        c.arg("--agent-dir").arg(self.agent.path());
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
        let native = |r: xcsh_session::error::Result<String>| r.expect("native core") + "\n";

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
    assert_eq!(
        serde_json::to_string(&report).ok(),
        native_report.ok().map(|r| json(&r).to_string())
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
    // No stray temp files.
    let names: Vec<_> = fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("s.jsonl")]);
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
