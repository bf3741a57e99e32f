//! `xcsh-session sync` end to end with a `file://` remote (the object_store local
//! backend, a shared folder): two agent directories as two machines. The S3 path against
//! a real Garage cluster is the `sync` tier's (tests/sync/).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::{shared_cache, BIN};

/// A machine: an agent directory of its own.
struct Machine {
    agent: tempfile::TempDir,
}

const PROJECT: &str = "-tmp-proj";
const CWD: &str = "/tmp/proj";

impl Machine {
    fn new() -> Machine {
        Machine {
            agent: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }

    /// Runs with no `AWS_*` variable but `env`.
    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(BIN);
        c.arg("--agent-dir")
            .arg(self.agent.path())
            .args(args)
            .env("XCSH_SESSION_CACHE_DIR", shared_cache());
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("AWS_")) {
            c.env_remove(k);
        }
        c.envs(env.iter().copied());
        c.output().expect("run")
    }

    fn sync(&self, remote: &Path, extra: &[&str]) -> Value {
        let url = format!("file://{}", remote.display());
        let mut args = vec!["sync", "--remote", &url, "--cwd", CWD, "--json"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert!(
            out.status.success(),
            "sync failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON report")
    }

    /// A session of the project with one entry; its file.
    fn start(&self) -> PathBuf {
        let dir = self.agent.path().join("sessions").join(PROJECT);
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("2026-01-01T00-00-00-000Z_s1.jsonl");
        fs::write(&file, "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp/proj\"}\n").unwrap();
        self.append(&file, "hello");
        file
    }

    fn file(&self) -> PathBuf {
        self.agent
            .path()
            .join("sessions")
            .join(PROJECT)
            .join("2026-01-01T00-00-00-000Z_s1.jsonl")
    }

    /// Appends a user message through the CLI (the agent's way); its id.
    fn append(&self, file: &Path, text: &str) -> String {
        let entry = serde_json::json!({"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}}).to_string();
        let out = self.run(&[
            "append",
            "--cwd",
            CWD,
            "--json",
            &entry,
            file.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "append failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["id"].as_str().unwrap().to_string()
    }
}

fn ids(file: &Path) -> Vec<String> {
    fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn two_machines_end_with_the_same_entries_each_on_its_own_leaf() {
    let remote = tempfile::tempdir().unwrap();
    let (a, b) = (Machine::new(), Machine::new());
    let fa = a.start();
    let r = a.sync(remote.path(), &[]);
    assert_eq!(r["sessions"][0]["pushedEntries"], 1);
    let r = b.sync(remote.path(), &[]);
    assert_eq!(r["sessions"][0]["created"], true);
    assert_eq!(
        fs::read(&fa).unwrap(),
        fs::read(b.file()).unwrap(),
        "the same file on both"
    );

    let on_a = a.append(&fa, "on a");
    let on_b = b.append(&b.file(), "on b");
    a.sync(remote.path(), &[]);
    let r = b.sync(remote.path(), &[]);
    assert_eq!(r["sessions"][0]["pulledEntries"], 1);
    assert_eq!(r["sessions"][0]["branches"], serde_json::json!([on_a]));
    let r = a.sync(remote.path(), &[]);
    assert_eq!(r["sessions"][0]["branches"], serde_json::json!([on_b]));
    assert_eq!(sorted(ids(&fa)), sorted(ids(&b.file())));
    assert_eq!(ids(&fa).last(), Some(&on_a), "a resumes where a was");
    assert_eq!(ids(&b.file()).last(), Some(&on_b), "b resumes where b was");
    // The file is one the CLI reads without a problem.
    let out = a.run(&["show", fa.to_str().unwrap()]);
    assert!(out.status.success());
    let show: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(show["entryCount"].as_u64(), Some(3), "{show}");
}

#[test]
fn a_dry_run_moves_nothing_and_writes_nothing() {
    let remote = tempfile::tempdir().unwrap();
    let a = Machine::new();
    a.start();
    let before = listing(a.agent.path());
    let r = a.sync(remote.path(), &["--dry-run"]);
    assert_eq!(r["dryRun"], true);
    assert_eq!(
        r["sessions"][0]["pushedEntries"], 1,
        "it says what would move"
    );
    assert_eq!(listing(a.agent.path()), before, "nothing written locally");
    assert!(listing(remote.path()).is_empty(), "nothing sent");
}

#[test]
fn a_remote_that_cannot_be_used_is_one_clear_error_and_changes_nothing() {
    let a = Machine::new();
    a.start();
    let before = listing(a.agent.path());
    let missing = a.agent.path().join("no-such-folder");
    for (url, says) in [
        (format!("file://{}", missing.display()), "create it first"),
        (
            "ftp://host/x".to_string(),
            "not a remote this command knows",
        ),
        ("s3://".to_string(), "no bucket"),
    ] {
        let out = a.run(&["sync", "--remote", &url, "--all"]);
        assert_eq!(out.status.code(), Some(1), "{url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{url}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    // A store other than AWS with no credentials given.
    let s3 = [
        "sync",
        "--remote",
        "s3://bucket/p",
        "--endpoint",
        "http://127.0.0.1:9",
        "--all",
    ];
    let out = a.run_env(&s3, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
        "{err}"
    );
    // An endpoint nobody answers on: refused quickly, after the client's few retries.
    let keys = [
        ("AWS_ACCESS_KEY_ID", "GKtest"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
    ];
    let out = a.run_env(&s3, &keys);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be reached"), "{err}");
    assert_eq!(listing(a.agent.path()), before, "nothing changed locally");
}

fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}
