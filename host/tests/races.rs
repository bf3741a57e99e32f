//! Processes racing on one agent dir: writers stopped (SIGSTOP) between reading a session
//! and writing it, many writers creating one new file at once, and a stress run of
//! writers, a mover, a migrator and `gc --delete` together. Whatever a process was told is
//! written (exit 0 and an id) must be in the files afterwards, on the active branch, and
//! every blob a session references must still be in the store.
#![cfg(target_os = "linux")]

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_xcsh-session");

/// One AOT cache for this test binary, compiled once up front.
fn cache() -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xcsh-session-aot-cache");
        let out = Command::new(BIN)
            .arg("precompile")
            .env("XCSH_SESSION_CACHE_DIR", &dir)
            .output()
            .expect("run");
        assert!(out.status.success(), "precompile: {out:?}");
        dir
    })
}

fn cli(agent: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("XCSH_SESSION_CACHE_DIR", cache())
        .env_remove("XCSH_SESSION_COMPONENT")
        .arg("--agent-dir")
        .arg(agent)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn text(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

/// The id an `append --json` printed, if it succeeded.
fn acknowledged(out: &Output) -> Option<String> {
    if !out.status.success() {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(v["id"].as_str()?.to_string())
}

fn custom(n: usize) -> String {
    format!(r#"{{"type":"custom","customType":"race","data":{{"n":{n}}}}}"#)
}

/// The ids on the active branch of a session file (root first), read by the native core.
fn branch_ids(file: &Path) -> Vec<String> {
    let storage = Rc::new(xcsh_session::fs::FsStorage::new());
    let s = xcsh_session::Session::open(
        storage,
        file.to_str().unwrap(),
        &xcsh_session::OpenOptions {
            persistence: xcsh_session::Persistence::ReadOnly,
            agent_dir: String::new(),
            cwd: String::new(),
        },
    )
    .expect("open");
    s.branch_path(None)
        .expect("branch")
        .iter()
        .map(|e| e.id.clone())
        .collect()
}

/// A v2 session (ids, no `custom` role yet) of a user message and a reply.
fn v2_session(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let lines = [
        r#"{"type":"session","version":2,"id":"race-s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"root","timestamp":1}}"#,
        r#"{"type":"message","id":"b1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2}}"#,
    ];
    fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The state letter of a process (`T`: stopped), from /proc.
fn state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// Spawns `cmd` with the test hook that stops it (SIGSTOP) right after it reads `file`,
/// and waits until it is stopped there.
fn spawn_stopped_after_reading(mut cmd: Command, file: &Path) -> Child {
    let child = cmd
        .env("XCSH_SESSION_STOP_AFTER_READ", file)
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    while state(child.id()) != Some('T') {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the writer never reached its read of {}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

fn resume(child: Child) -> Output {
    // SAFETY: kill with a valid pid of our own child and a standard signal.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGCONT);
    }
    child.wait_with_output().expect("wait")
}

struct Agent {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Agent {
    fn new() -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        Agent { _dir: dir, root }
    }
    fn session(&self) -> PathBuf {
        self.root.join("sessions/--work--/race.jsonl")
    }
    fn append(&self, file: &Path, n: usize) -> Output {
        cli(&self.root)
            .args(["append", file.to_str().unwrap(), "--json", &custom(n)])
            .output()
            .unwrap()
    }
}

#[test]
fn a_migration_stopped_after_its_read_loses_no_append_made_meanwhile() {
    let agent = Agent::new();
    let file = agent.session();
    v2_session(&file);
    let mut migrate = cli(&agent.root);
    migrate.args(["migrate", file.to_str().unwrap()]);
    let stopped = spawn_stopped_after_reading(migrate, &file);
    let meanwhile = agent.append(&file, 1);
    let migrated = resume(stopped);
    assert!(migrated.status.success(), "{migrated:?}");
    if let Some(id) = acknowledged(&meanwhile) {
        assert!(text(&file).contains(&id), "acknowledged {id} is gone");
    } else {
        let err = String::from_utf8_lossy(&meanwhile.stderr);
        assert!(err.contains("another process"), "a clear refusal: {err}");
    }
}

#[test]
fn an_append_stopped_after_its_read_never_strands_the_append_made_meanwhile() {
    let agent = Agent::new();
    let file = agent.session();
    v2_session(&file);
    assert!(cli(&agent.root)
        .args(["migrate", file.to_str().unwrap()])
        .status()
        .unwrap()
        .success());
    let mut first = cli(&agent.root);
    first.args(["append", file.to_str().unwrap(), "--json", &custom(1)]);
    let stopped = spawn_stopped_after_reading(first, &file);
    let meanwhile = agent.append(&file, 2);
    let first = resume(stopped);
    let branch = branch_ids(&file);
    for id in [acknowledged(&first), acknowledged(&meanwhile)]
        .into_iter()
        .flatten()
    {
        assert!(branch.contains(&id), "{id} is not on the branch {branch:?}");
    }
    assert!(acknowledged(&first).is_some(), "the first writer finishes");
}

#[test]
fn a_move_stopped_after_its_read_loses_no_append_made_meanwhile() {
    let agent = Agent::new();
    let file = agent.session();
    v2_session(&file);
    let mut mv = cli(&agent.root);
    mv.args(["move", file.to_str().unwrap(), "--to-cwd", "/elsewhere"]);
    let stopped = spawn_stopped_after_reading(mv, &file);
    let meanwhile = agent.append(&file, 1);
    let moved = resume(stopped);
    assert!(moved.status.success(), "{moved:?}");
    let new_file: Value = serde_json::from_slice(&moved.stdout).unwrap();
    let new_file = PathBuf::from(new_file["newFile"].as_str().unwrap());
    if let Some(id) = acknowledged(&meanwhile) {
        let found = text(&new_file).contains(&id) || text(&file).contains(&id);
        assert!(found, "acknowledged {id} is in neither file");
    }
}

#[test]
fn ten_processes_creating_one_new_file_lose_no_acknowledged_entry() {
    let agent = Agent::new();
    let mut acked_total = 0;
    for round in 0..20 {
        let file = agent
            .root
            .join(format!("sessions/--work--/new-{round}.jsonl"));
        let children: Vec<Child> = (0..10)
            .map(|n| {
                cli(&agent.root)
                    .args(["append", file.to_str().unwrap(), "--json", &custom(n)])
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outs: Vec<Output> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let content = text(&file);
        let mut acked = 0;
        for out in &outs {
            match acknowledged(out) {
                Some(id) => {
                    acked += 1;
                    assert!(content.contains(&id), "round {round}: {id} lost");
                }
                None => {
                    let err = String::from_utf8_lossy(&out.stderr);
                    assert!(
                        err.contains("another process") || err.contains("someone else"),
                        "round {round}: an unclear refusal: {err}"
                    );
                }
            }
        }
        assert!(acked >= 1, "round {round}: nobody wrote");
        acked_total += acked;
    }
    assert!(acked_total >= 20);
}
