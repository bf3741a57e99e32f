//! The failure modes users of the reference agent lost work to, each shown impossible.

mod common;
use common::*;
use xcsh_session::session::Persistence;
use xcsh_session::storage::{Storage, StorageExt};
use xcsh_session::SessionError;

fn written_session() -> (
    std::rc::Rc<xcsh_session::MemoryStorage>,
    xcsh_session::Session,
) {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("hello")).unwrap();
    s.append_message(&assistant("hi")).unwrap();
    (storage, s)
}

#[test]
fn two_writers_on_one_file_are_refused_not_interleaved() {
    let (storage, mut first) = written_session();
    let file = first.file().unwrap().to_string();
    let opts = xcsh_session::OpenOptions {
        persistence: Persistence::Persistent,
        agent_dir: "/agent".into(),
        cwd: "/w".into(),
    };
    let err = xcsh_session::Session::open(storage.clone(), &file, &opts)
        .err()
        .expect("second writer refused");
    assert!(matches!(err, SessionError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("being written by another process"));
    // A viewer can still read it.
    let viewer = open(&storage, &file, Persistence::ReadOnly);
    assert_eq!(viewer.entries().len(), 2);
    // The first writer keeps working; after it closes, a new writer may open.
    first.append_message(&user("still mine")).unwrap();
    first.close().unwrap();
    let mut second = open(&storage, &file, Persistence::Persistent);
    second.append_message(&user("now mine")).unwrap();
    assert_eq!(
        open(&storage, &file, Persistence::ReadOnly).entries().len(),
        4
    );
}

#[test]
fn dropping_a_session_releases_its_lock() {
    let (storage, s) = written_session();
    let file = s.file().unwrap().to_string();
    assert!(storage.exists(&format!("{file}.lock")));
    drop(s);
    assert!(!storage.exists(&format!("{file}.lock")));
}

#[test]
fn an_external_edit_is_never_overwritten_by_a_rewrite_or_an_append() {
    let (storage, mut s) = written_session();
    let file = s.file().unwrap().to_string();
    let edited = format!(
        "{}{}\n",
        read(&storage, &file),
        r#"{"type":"label","id":"ext00001","parentId":null,"timestamp":"2026-02-16T10:30:00.000Z","targetId":"x","label":"by hand"}"#
    );
    storage.write(&file, edited.as_bytes()).unwrap();
    let err = s.set_session_name("rename", "user").unwrap_err();
    assert!(
        matches!(err, SessionError::ExternallyModified { .. }),
        "{err}"
    );
    let err = s.append_message(&user("more")).unwrap_err();
    assert!(
        matches!(err, SessionError::ExternallyModified { .. }),
        "{err}"
    );
    assert_eq!(
        read(&storage, &file),
        edited,
        "the external change survives"
    );
    // Reloading picks it up and writing works again.
    s.close().unwrap();
    let mut again = open(&storage, &file, Persistence::Persistent);
    again.append_message(&user("after reload")).unwrap();
    let text = read(&storage, &file);
    assert!(text.contains("by hand") && text.contains("after reload"));
}

#[test]
fn a_new_session_can_be_made_durable_before_the_first_reply() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&user("important first prompt")).unwrap();
    s.ensure_on_disk().unwrap();
    let file = s.file().unwrap().to_string();
    drop(s); // the process is interrupted here
    assert!(read(&storage, &file).contains("important first prompt"));
}

// ---- crash consistency: a storage that fails or stops at every write step in turn ----

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use xcsh_session::storage::{Layer, MemoryStorage, StorageError, StorageResult};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// The step returns an error; the process goes on.
    Fail,
    /// The process dies during the step: a write or append lands half-way, a rename
    /// does not happen; nothing afterwards reaches the disk.
    Stop,
}

struct FaultStorage {
    disk: Rc<MemoryStorage>,
    step: Cell<usize>,
    at: usize,
    fault: Fault,
    dead: Cell<bool>,
    log: RefCell<Vec<String>>,
}

impl FaultStorage {
    /// Count a write-like step; `Ok(true)` when this is the faulty one.
    fn enter(&self, what: &str, path: &str) -> StorageResult<bool> {
        if self.dead.get() {
            return Err(StorageError::Other(format!(
                "process is gone ({what} {path})"
            )));
        }
        let n = self.step.get() + 1;
        self.step.set(n);
        self.log.borrow_mut().push(format!("{n} {what} {path}"));
        if n != self.at {
            return Ok(false);
        }
        if self.fault == Fault::Stop {
            self.dead.set(true);
        }
        Ok(true)
    }

    fn fault_error(&self, what: &str, path: &str) -> StorageError {
        StorageError::Other(format!(
            "injected {:?} at step {} ({what} {path})",
            self.fault, self.at
        ))
    }
}

impl Layer for FaultStorage {
    fn inner(&self) -> &dyn Storage {
        &*self.disk
    }
    fn write(&self, p: &str, d: &[u8]) -> StorageResult<()> {
        if self.enter("write", p)? {
            if self.fault == Fault::Stop {
                self.disk.write(p, &d[..d.len() / 2])?;
            }
            return Err(self.fault_error("write", p));
        }
        self.disk.write(p, d)
    }
    fn append(&self, p: &str, d: &[u8]) -> StorageResult<()> {
        if self.enter("append", p)? {
            if self.fault == Fault::Stop {
                self.disk.append(p, &d[..d.len() / 2])?;
            }
            return Err(self.fault_error("append", p));
        }
        self.disk.append(p, d)
    }
    fn rename(&self, a: &str, b: &str) -> StorageResult<()> {
        if self.enter("rename", a)? {
            return Err(self.fault_error("rename", a));
        }
        self.disk.rename(a, b)
    }
    fn unlink(&self, p: &str) -> StorageResult<()> {
        if self.enter("unlink", p)? {
            return Err(self.fault_error("unlink", p));
        }
        self.disk.unlink(p)
    }
    fn create_new(&self, p: &str, d: &[u8]) -> StorageResult<()> {
        if self.enter("create_new", p)? {
            return Err(self.fault_error("create_new", p));
        }
        self.disk.create_new(p, d)
    }
    fn fsync(&self, p: &str) -> StorageResult<()> {
        if self.enter("fsync", p)? {
            return Err(self.fault_error("fsync", p));
        }
        self.disk.fsync(p)
    }
}

/// A workload touching every write path: deferred first write, appends, a rename-based
/// rewrite, a label, a branch. Returns the ids acknowledged by a successful `flush()`.
fn workload(storage: Rc<FaultStorage>) -> (Option<String>, Vec<String>) {
    let mut acked = Vec::new();
    let mut pending = Vec::new();
    let mut s = xcsh_session::Session::create(
        storage,
        &xcsh_session::session::CreateOptions {
            agent_dir: "/agent".into(),
            cwd: "/w".into(),
            ..Default::default()
        },
    );
    let file = s.file().map(str::to_string);
    let mut step = |s: &mut xcsh_session::Session,
                    r: Result<String, SessionError>,
                    acked: &mut Vec<String>| {
        if let Ok(id) = r {
            pending.push(id);
        }
        // Acknowledged: flushed while the session is on disk (before the first assistant
        // message nothing is written, by design; `ensure_on_disk` is the way to force it).
        if s.flush().is_ok() && s.is_on_disk() {
            acked.append(&mut pending);
        }
    };
    let r = s.append_message(&user("first prompt"));
    step(&mut s, r, &mut acked);
    let r = s.append_message(&assistant("first answer"));
    step(&mut s, r, &mut acked);
    for i in 0..3 {
        let r = s.append_message(&user(&format!("prompt {i}")));
        step(&mut s, r, &mut acked);
    }
    let named = s.set_session_name("renamed", "user").map(|_| String::new());
    if named.is_ok() && s.flush().is_ok() {
        // a rewrite acknowledges everything already in memory
    }
    let first = acked.first().cloned();
    if let Some(id) = first {
        let r = s.append_label_change(&id, Some("checkpoint"));
        step(&mut s, r, &mut acked);
        let _ = s.branch(&id);
    }
    let r = s.append_message(&user("on a branch"));
    step(&mut s, r, &mut acked);
    acked.retain(|id| !id.is_empty());
    (file, acked)
}

#[test]
fn after_a_fault_at_any_write_step_the_file_loads_with_every_flushed_entry() {
    // A fault-free run counts the steps.
    let clean = Rc::new(FaultStorage {
        disk: mem(),
        step: Cell::new(0),
        at: usize::MAX,
        fault: Fault::Fail,
        dead: Cell::new(false),
        log: RefCell::new(vec![]),
    });
    let (_, all) = workload(clean.clone());
    let steps = clean.step.get();
    assert!(
        steps >= 20,
        "the workload exercises many write steps ({steps})"
    );
    assert_eq!(all.len(), 7);
    let mut faults = 0;
    for fault in [Fault::Fail, Fault::Stop] {
        for at in 1..=steps {
            let disk = mem();
            let storage = Rc::new(FaultStorage {
                disk: disk.clone(),
                step: Cell::new(0),
                at,
                fault,
                dead: Cell::new(false),
                log: RefCell::new(vec![]),
            });
            let (file, acked) = workload(storage.clone());
            faults += 1;
            let file = file.unwrap();
            if !disk.exists(&file) {
                assert!(
                    acked.is_empty(),
                    "{fault:?}@{at}: acknowledged entries but no file\n{:?}",
                    storage.log.borrow()
                );
                continue;
            }
            let reloaded = open(&disk, &file, xcsh_session::Persistence::ReadOnly);
            let ids: Vec<&str> = reloaded.entries().iter().map(|e| e.id.as_str()).collect();
            for id in &acked {
                assert!(
                    ids.contains(&id.as_str()),
                    "{fault:?}@{at}: flushed entry {id} lost\n{:?}",
                    storage.log.borrow()
                );
            }
            let issues: Vec<_> = reloaded
                .report()
                .issues
                .iter()
                .filter(|i| i.kind != xcsh_session::IssueKind::GluedRecord)
                .collect();
            assert!(
                issues.len() <= 1,
                "{fault:?}@{at}: at most the torn last line is damaged: {issues:?}"
            );
            assert!(
                reloaded.report().header_problem.is_none(),
                "{fault:?}@{at}: header intact"
            );
        }
    }
    assert_eq!(faults, 2 * steps);
    println!("crash consistency: {faults} faults injected over {steps} write steps");
}

// ---- a real process killed at random points ----

#[test]
fn a_writer_killed_at_random_points_loses_nothing_it_acknowledged() {
    use std::io::{BufRead, BufReader};
    let exe = std::env::current_exe().unwrap();
    let writer = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(format!("writer{}", std::env::consts::EXE_SUFFIX));
    if !writer.exists() {
        // `cargo test` builds examples, but not when it runs one test target alone.
        // In the profile this test was built with, so it lands beside it.
        let mut build = std::process::Command::new(env!("CARGO"));
        build.args(["build", "-q", "-p", "xcsh-session", "--example", "writer"]);
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        let status = build.status().unwrap();
        assert!(status.success());
    }
    assert!(writer.exists(), "examples/writer: {}", writer.display());
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut kills = 0;
    for round in 0..12 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let stop_after = (seed % 60) as usize + 1;
        let dir = std::env::temp_dir().join(format!("xcsh-crash-{}-{round}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut child = std::process::Command::new(&writer)
            .arg(&dir)
            .arg("100000")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let file = lines.next().unwrap().unwrap();
        let mut acked = Vec::new();
        for line in lines.by_ref() {
            acked.push(line.unwrap());
            if acked.len() >= stop_after {
                break;
            }
        }
        child.kill().unwrap(); // SIGKILL, mid-write more often than not
        child.wait().unwrap();
        kills += 1;
        let text = std::fs::read_to_string(&file).unwrap();
        let s = xcsh_session::Session::from_text(mem(), &text, "/agent");
        let ids: Vec<&str> = s.entries().iter().map(|e| e.id.as_str()).collect();
        for id in &acked {
            assert!(
                ids.contains(&id.as_str()),
                "round {round}: acknowledged {id} lost"
            );
        }
        assert!(ids.len() >= acked.len());
        let damaged = s.report().issues.len();
        assert!(
            damaged <= 1,
            "round {round}: only a torn last line may be missing: {:?}",
            s.report().issues
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!("crash consistency: {kills} writer processes killed");
}

// ---- a refused write leaves no trace ----

use xcsh_session::session::CompactionInput;
use xcsh_session::storage::{Environment, ProcessIdentity};
use xcsh_session::Session;

/// A storage whose process is pid 42 on host `h`, where every process runs: a second open
/// in this process takes the lock over and fences the first.
struct Pid42(Rc<MemoryStorage>);

impl Layer for Pid42 {
    fn inner(&self) -> &dyn Storage {
        &*self.0
    }
    fn env(&self) -> &dyn Environment {
        self
    }
}

impl Environment for Pid42 {
    fn now_ms(&self) -> i64 {
        self.0.env().now_ms()
    }
    fn random_u64(&self) -> u64 {
        self.0.env().random_u64()
    }
    fn process_identity(&self) -> ProcessIdentity {
        ProcessIdentity {
            pid: 42,
            host: "h".into(),
        }
    }
    fn process_alive(&self, _pid: u32) -> Option<bool> {
        Some(true)
    }
}

const REFUSED_FILE: &str = "/agent/sessions/--work--/r.jsonl";

fn open_42(storage: &Rc<MemoryStorage>) -> Session {
    Session::open(
        Rc::new(Pid42(storage.clone())),
        REFUSED_FILE,
        &xcsh_session::OpenOptions {
            persistence: Persistence::Persistent,
            agent_dir: "/agent".into(),
            cwd: "/work".into(),
        },
    )
    .unwrap()
}

/// Everything a session shows of itself: the file it would write (header and entries),
/// the leaf, the tree, every label and the context.
fn state(s: &Session) -> (String, Option<String>, String, Vec<Option<String>>, String) {
    (
        s.to_jsonl().unwrap(),
        s.leaf_id().map(str::to_string),
        s.tree().to_json(s),
        s.entries()
            .iter()
            .map(|e| s.label(&e.id).map(str::to_string))
            .collect(),
        s.context().to_json(),
    )
}

type Call = fn(&mut Session) -> Result<String, SessionError>;

/// Every method that records something, each called once (`a1` is the first entry, the
/// leaf is `b1`).
const RECORDING_CALLS: &[(&str, Call)] = &[
    ("append_message", |s| s.append_message(&user("refused"))),
    ("append_entry_json", |s| {
        s.append_entry_json(r#"{"type":"custom","customType":"x"}"#)
    }),
    ("append_fields", |s| {
        s.append_fields("custom", &[("customType", "\"x\"".into())])
    }),
    ("append_thinking_level_change", |s| {
        s.append_thinking_level_change(Some("high"))
    }),
    ("append_model_change", |s| {
        s.append_model_change("p/m", None)
    }),
    ("append_compaction", |s| {
        s.append_compaction(&CompactionInput {
            summary: "sum".into(),
            first_kept_entry_id: "a1".into(),
            tokens_before: 10,
            ..Default::default()
        })
    }),
    ("append_custom_entry", |s| s.append_custom_entry("x", None)),
    ("append_custom_message_entry", |s| {
        s.append_custom_message_entry("x", "\"hi\"", true, None, None)
    }),
    ("append_label_change", |s| {
        s.append_label_change("a1", Some("bookmark"))
    }),
    ("append_label_change (clear)", |s| {
        s.append_label_change("a1", None)
    }),
    ("append_ttsr_injection", |s| {
        s.append_ttsr_injection(&["r".into()])
    }),
    ("append_session_init", |s| {
        s.append_session_init("sys", "task", &[], None)
    }),
    ("append_mode_change", |s| s.append_mode_change("plan", None)),
    ("append_context_change", |s| {
        s.append_context_change("c", "t", "n")
    }),
    ("append_service_tier_change", |s| {
        s.append_service_tier_change(Some("flex"))
    }),
    ("append_mcp_tool_selection", |s| {
        s.append_mcp_tool_selection(&["t".into()])
    }),
    ("branch_with_summary", |s| {
        s.branch_with_summary(Some("a1"), "abandoned", None, None)
    }),
    ("branch_with_summary (root)", |s| {
        s.branch_with_summary(None, "abandoned", None, None)
    }),
    ("set_session_name", |s| {
        s.set_session_name("a new name", "user")
            .map(|_| String::new())
    }),
];

#[test]
fn a_refused_write_leaves_no_trace_in_the_session() {
    let file = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work","title":"old name","titleSource":"user"}"#,
        "\n",
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"root","timestamp":1}}"#,
        "\n",
        r#"{"type":"label","id":"l1","parentId":"a1","timestamp":"2026-01-01T00:00:01.500Z","targetId":"a1","label":"first"}"#,
        "\n",
        r#"{"type":"message","id":"b1","parentId":"l1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2}}"#,
        "\n"
    );
    // Every call and refusal that left a trace (all are checked before the test fails).
    let mut traces = Vec::new();
    for (name, call) in RECORDING_CALLS {
        for refusal in ["fenced", "externally modified"] {
            let storage = mem();
            put(&storage, REFUSED_FILE, file);
            let mut s = open_42(&storage);
            let _newer = match refusal {
                // A newer open of the file in this process holds the lock now.
                "fenced" => Some(open_42(&storage)),
                // Someone appended without the lock.
                _ => {
                    storage
                        .append(REFUSED_FILE, b"{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"e1\",\"parentId\":\"b1\",\"timestamp\":\"2026-01-01T00:00:03.000Z\"}\n")
                        .unwrap();
                    None
                }
            };
            let on_disk = read(&storage, REFUSED_FILE);
            let before = state(&s);
            let err = call(&mut s).expect_err("refused");
            match refusal {
                "fenced" => assert!(
                    matches!(err, SessionError::Superseded { .. }),
                    "{name}, {refusal}: {err}"
                ),
                _ => assert!(
                    matches!(err, SessionError::ExternallyModified { .. }),
                    "{name}, {refusal}: {err}"
                ),
            }
            let after = state(&s);
            if after != before {
                let what = [
                    (after.0 != before.0, "entries or header"),
                    (after.1 != before.1, "leaf"),
                    (after.2 != before.2, "tree"),
                    (after.3 != before.3, "labels"),
                    (after.4 != before.4, "context"),
                ]
                .iter()
                .filter(|(changed, _)| *changed)
                .map(|(_, what)| *what)
                .collect::<Vec<_>>()
                .join(", ");
                traces.push(format!("{name}, {refusal}: {what}"));
            }
            assert_eq!(read(&storage, REFUSED_FILE), on_disk, "{name}, {refusal}");
        }
    }
    assert!(
        traces.is_empty(),
        "refused, and yet changed:\n{}",
        traces.join("\n")
    );
}
