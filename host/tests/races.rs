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
use std::time::{Duration, Instant};

mod common;
use common::{shared_cache, BIN};

fn cli(agent: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("XCSH_SESSION_CACHE_DIR", shared_cache())
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

/// An image message whose bytes are variant `n` of the stress run, and its blob hash.
fn image(n: usize) -> (String, String, Vec<u8>) {
    let bytes = format!("stress image {n} ").repeat(64).into_bytes();
    let b64 = xcsh_session::internals::encode_base64(&bytes);
    let entry = format!(
        r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"image","data":"{b64}","mimeType":"image/png"}}],"timestamp":1}}}}"#
    );
    let hash = xcsh_session::internals::sha256_hex(&bytes);
    (entry, hash, bytes)
}

/// Set a file's mtime two hours back: old enough for `gc --delete`.
fn make_old(path: &Path) {
    let t = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(t))
        .unwrap_or_else(|e| panic!("age {}: {e}", path.display()));
}

/// What the stress run's processes said.
#[derive(Default)]
struct Log {
    /// Appends that exited 0 with an id.
    acknowledged: Vec<String>,
    /// Refusals that name their cause (a writer lock, a changed file, a running GC).
    refused: usize,
    /// Successful `gc --delete` runs and what they deleted.
    collections: usize,
    deleted: Vec<String>,
    /// Anything else a process said on failing.
    unexpected: Vec<String>,
}

const CLEAR_REFUSALS: [&str; 4] = [
    "another process",
    "someone else",
    "another garbage collection",
    // GC that cannot read a recorded session (or its record) refuses whole.
    "nothing was deleted",
];

#[test]
fn writers_a_mover_a_migrator_and_gc_together_lose_no_acknowledged_entry_or_blob() {
    use std::sync::{Arc, Mutex};
    let agent = Arc::new(Agent::new());
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = fs::canonicalize(elsewhere.path())
        .unwrap()
        .join("outside.jsonl");
    let project = agent.root.join("sessions/--work--");
    fs::create_dir_all(&project).unwrap();
    let blobs = agent.root.join("blobs");
    fs::create_dir_all(&blobs).unwrap();
    // Images about to be appended are already in the store, and old (pasted long ago): a
    // paster keeps the next few present, so appends keep reusing old blobs that no
    // session references yet, while GC runs.
    const AHEAD: usize = 40;
    // Orphans: GC must delete these (so it really ran), and nothing else.
    let orphans: Vec<String> = (0..10)
        .map(|n| {
            let bytes = format!("orphan {n}").into_bytes();
            let hash = xcsh_session::internals::sha256_hex(&bytes);
            fs::write(blobs.join(&hash), bytes).unwrap();
            make_old(&blobs.join(&hash));
            hash
        })
        .collect();
    // The files writers append to: their own, an outside one, the migrator's (v2, shared
    // with the migrator) and the mover's (shared with the mover: its path changes).
    let mut targets: Vec<PathBuf> = (0..3)
        .map(|w| project.join(format!("w{w}.jsonl")))
        .collect();
    targets.push(outside.clone());
    let migrating: Vec<PathBuf> = (0..4)
        .map(|m| project.join(format!("v2-{m}.jsonl")))
        .collect();
    for f in &migrating {
        v2_session(f);
    }
    let moving = Arc::new(Mutex::new(project.join("moving.jsonl")));
    v2_session(&moving.lock().unwrap());
    // Recorded sessions outside `sessions/` that an adversary moves away, deletes with
    // their folder, and makes unreadable (a directory swapped in) while GC runs: their
    // images, old, must all survive.
    let tampered: Vec<PathBuf> = ["moved", "deleted/in-folder", "unreadable"]
        .iter()
        .map(|name| {
            let file = fs::canonicalize(elsewhere.path())
                .unwrap()
                .join(format!("{name}.jsonl"));
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            file
        })
        .collect();
    let mut tampered_images = Vec::new();
    for (i, file) in tampered.iter().enumerate() {
        let (entry, hash, _) = image(1_000_000 + i);
        let out = cli(&agent.root)
            .args(["append", file.to_str().unwrap(), "--json", &entry])
            .output()
            .unwrap();
        assert!(acknowledged(&out).is_some(), "{out:?}");
        make_old(&blobs.join(&hash));
        tampered_images.push(hash);
    }
    let archive = tempfile::tempdir().unwrap();
    let targets = Arc::new(targets);
    let migrating = Arc::new(migrating);
    let log = Arc::new(Mutex::new(Log::default()));
    let next_image = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(15);

    let record_failure = |log: &Mutex<Log>, who: &str, out: &Output| {
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let mut log = log.lock().unwrap();
        if CLEAR_REFUSALS.iter().any(|r| err.contains(r)) {
            log.refused += 1;
        } else {
            log.unexpected
                .push(format!("{who}: {:?} {err}", out.status.code()));
        }
    };
    let mut threads = Vec::new();
    for w in 0..3 {
        let (agent, targets, migrating, moving, log, next_image) = (
            agent.clone(),
            targets.clone(),
            migrating.clone(),
            moving.clone(),
            log.clone(),
            next_image.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let mut round = 0usize;
            while Instant::now() < deadline {
                round += 1;
                let file = match round % 4 {
                    0 => moving.lock().unwrap().clone(),
                    1 => migrating[(round / 4 + w) % migrating.len()].clone(),
                    _ => targets[(round + w) % targets.len()].clone(),
                };
                let entry = if round.is_multiple_of(2) {
                    image(next_image.fetch_add(1, std::sync::atomic::Ordering::SeqCst)).0
                } else {
                    custom(w * 100_000 + round)
                };
                let out = cli(&agent.root)
                    .args(["append", file.to_str().unwrap(), "--json", &entry])
                    .output()
                    .unwrap();
                match acknowledged(&out) {
                    Some(id) => log.lock().unwrap().acknowledged.push(id),
                    None => record_failure(&log, "append", &out),
                }
            }
        }));
    }
    {
        let (blobs, next_image) = (blobs.clone(), next_image.clone());
        threads.push(std::thread::spawn(move || {
            while Instant::now() < deadline {
                let first = next_image.load(std::sync::atomic::Ordering::SeqCst);
                for n in first..first + AHEAD {
                    let (_, hash, bytes) = image(n);
                    // Only a blob nobody put yet: an old one never replaces a fresh put.
                    if let Ok(mut f) = fs::File::options()
                        .write(true)
                        .create_new(true)
                        .open(blobs.join(&hash))
                    {
                        use std::io::Write;
                        f.write_all(&bytes).unwrap();
                        let t = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
                        f.set_modified(t).unwrap();
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }));
    }
    {
        let (agent, moving, log) = (agent.clone(), moving.clone(), log.clone());
        threads.push(std::thread::spawn(move || {
            let mut round = 0;
            while Instant::now() < deadline {
                round += 1;
                let from = moving.lock().unwrap().clone();
                let to_cwd = format!("/work/moved-{round}");
                let out = cli(&agent.root)
                    .args(["move", from.to_str().unwrap(), "--to-cwd", &to_cwd])
                    .output()
                    .unwrap();
                if out.status.success() {
                    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                    *moving.lock().unwrap() = PathBuf::from(v["newFile"].as_str().unwrap());
                } else {
                    record_failure(&log, "move", &out);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }));
    }
    {
        let (agent, log) = (agent.clone(), log.clone());
        let project = project.clone();
        threads.push(std::thread::spawn(move || {
            let mut round = 0;
            while Instant::now() < deadline {
                // A fresh v2 file each round, migrated while the others write.
                round += 1;
                let file = project.join(format!("fresh-v2-{round}.jsonl"));
                v2_session(&file);
                let out = cli(&agent.root)
                    .args(["migrate", file.to_str().unwrap()])
                    .output()
                    .unwrap();
                if !out.status.success() {
                    record_failure(&log, "migrate", &out);
                }
            }
        }));
    }
    {
        let (agent, log) = (agent.clone(), log.clone());
        threads.push(std::thread::spawn(move || {
            while Instant::now() < deadline {
                let out = cli(&agent.root).args(["gc", "--delete"]).output().unwrap();
                if out.status.success() {
                    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                    let mut log = log.lock().unwrap();
                    log.collections += 1;
                    for h in v["deleted"].as_array().unwrap() {
                        log.deleted.push(h.as_str().unwrap().to_string());
                    }
                } else {
                    let err = String::from_utf8_lossy(&out.stderr).into_owned();
                    // A session moved away between GC's listing and its read aborts the
                    // collection before it deletes anything: a refusal, not a loss.
                    if err.contains("no such file") {
                        log.lock().unwrap().refused += 1;
                    } else {
                        record_failure(&log, "gc", &out);
                    }
                }
            }
        }));
    }
    {
        let (tampered, archive) = (tampered.clone(), archive.path().to_path_buf());
        threads.push(std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            fs::rename(&tampered[0], archive.join("moved.jsonl")).unwrap();
            fs::remove_dir_all(tampered[1].parent().unwrap()).unwrap();
            let (unreadable, hidden) = (&tampered[2], archive.join("unreadable.jsonl"));
            while Instant::now() < deadline {
                fs::rename(unreadable, &hidden).unwrap();
                fs::create_dir(unreadable).unwrap();
                std::thread::sleep(Duration::from_millis(300));
                fs::remove_dir(unreadable).unwrap();
                fs::rename(&hidden, unreadable).unwrap();
                std::thread::sleep(Duration::from_millis(300));
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    // A line of the record of outside sessions that cannot be read: GC refuses whole.
    let records = agent.root.join("blob-referrers.jsonl");
    let kept = fs::read(&records).unwrap();
    let mut bad = kept.clone();
    bad.extend_from_slice(b"{\"path\":\"/x.jsonl\",\"notedMs\":\"1\"}\n");
    fs::write(&records, &bad).unwrap();
    let store_before: Vec<_> = fs::read_dir(&blobs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let refused = cli(&agent.root).args(["gc", "--delete"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let store_after: Vec<_> = fs::read_dir(&blobs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        store_before.len(),
        store_after.len(),
        "a refused GC deleted blobs"
    );
    fs::write(&records, &kept).unwrap();
    // One last collection with nobody writing.
    let last = cli(&agent.root).args(["gc", "--delete"]).output().unwrap();
    assert!(last.status.success(), "{last:?}");

    let log = log.lock().unwrap();
    assert!(
        log.unexpected.is_empty(),
        "unexplained failures: {:#?}",
        log.unexpected
    );
    assert!(
        log.acknowledged.len() >= 30,
        "too little work: {}",
        log.acknowledged.len()
    );
    assert!(log.collections >= 3, "GC ran {} times", log.collections);

    // Every session file now on disk (not backups, not locks).
    let mut files = vec![outside.clone()];
    let mut dirs = vec![agent.root.join("sessions")];
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    let texts: Vec<(PathBuf, String)> = files.iter().map(|f| (f.clone(), text(f))).collect();
    for id in &log.acknowledged {
        let needle = format!(r#""id":"{id}""#);
        let holder = texts
            .iter()
            .find(|(_, t)| t.contains(&needle))
            .unwrap_or_else(|| panic!("acknowledged {id} is in no session file"));
        assert!(
            branch_ids(&holder.0).contains(id),
            "{id} is off the active branch of {}",
            holder.0.display()
        );
    }
    // Every blob any session references is in the store, whole.
    let mut referenced = 0;
    for (file, t) in &texts {
        let appended = next_image.load(std::sync::atomic::Ordering::SeqCst);
        for hash in (0..appended).map(|n| image(n).1) {
            if t.contains(&format!("blob:sha256:{hash}")) {
                referenced += 1;
                let bytes = fs::read(blobs.join(&hash))
                    .unwrap_or_else(|e| panic!("blob {hash} of {} is gone: {e}", file.display()));
                assert_eq!(xcsh_session::internals::sha256_hex(&bytes), hash);
            }
        }
    }
    assert!(referenced > 0, "no image was appended");
    for o in &orphans {
        assert!(!blobs.join(o).exists(), "orphan {o} was never collected");
    }
    // The images of the outside sessions moved away, deleted or unreadable meanwhile.
    for (file, hash) in tampered.iter().zip(&tampered_images) {
        assert!(
            blobs.join(hash).exists(),
            "the image of {} was deleted",
            file.display()
        );
    }
    let last: Value = serde_json::from_slice(&last.stdout).unwrap();
    assert_eq!(last["missing"].as_array().unwrap().len(), 2, "{last}");
    eprintln!(
        "stress: {} appends acknowledged, {} refused clearly, {} collections ({} blobs deleted), {} image references checked",
        log.acknowledged.len(),
        log.refused,
        log.collections,
        log.deleted.len(),
        referenced
    );
}

/// A legacy `--<cwd>--` folder merged into the newer one over and over (each `session`
/// loop's `session.create` merges it) while writers keep appending to its sessions, at
/// whichever of the two places each is: no session ends up in two files, and every
/// acknowledged entry is in one.
#[test]
fn a_legacy_folder_merged_while_writers_append_splits_no_session_and_loses_no_entry() {
    use std::sync::{Arc, Mutex};
    let home = tempfile::tempdir().unwrap();
    let home = fs::canonicalize(home.path()).unwrap();
    let agent = home.join(".xcsh/agent");
    let cwd = home.join("proj");
    let (agent_s, cwd_s) = (agent.to_str().unwrap(), cwd.to_str().unwrap());
    let legacy = PathBuf::from(xcsh_session::paths::legacy_session_dir(agent_s, cwd_s));
    let newer = PathBuf::from(xcsh_session::paths::session_dir_for_cwd(agent_s, cwd_s));
    assert_ne!(legacy, newer);
    let names: Vec<String> = (0..6)
        .map(|n| format!("2026-01-0{}_s{n}.jsonl", n + 1))
        .collect();
    for (n, name) in names.iter().enumerate() {
        fs::create_dir_all(&legacy).unwrap();
        let header = format!(
            r#"{{"type":"session","version":3,"id":"legacy-{n}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd_s}"}}"#
        );
        fs::write(legacy.join(name), header + "\n").unwrap();
    }
    let names = Arc::new(names);
    let log = Arc::new(Mutex::new((
        Vec::<String>::new(),
        0usize,
        Vec::<String>::new(),
    )));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut threads = Vec::new();
    for w in 0..3 {
        let (agent, legacy, newer, names, log) = (
            agent.clone(),
            legacy.clone(),
            newer.clone(),
            names.clone(),
            log.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let mut round = 0;
            while Instant::now() < deadline {
                round += 1;
                let name = &names[(round + w) % names.len()];
                let file = if newer.join(name).exists() {
                    newer.join(name)
                } else {
                    legacy.join(name)
                };
                let out = cli(&agent)
                    .args([
                        "append",
                        file.to_str().unwrap(),
                        "--json",
                        &custom(w * 1000 + round),
                    ])
                    .output()
                    .unwrap();
                let mut log = log.lock().unwrap();
                match acknowledged(&out) {
                    Some(id) => log.0.push(id),
                    None => {
                        let err = String::from_utf8_lossy(&out.stderr).into_owned();
                        // A new file written into the legacy folder just as the merge
                        // removed that (then empty) folder fails whole and says so: not
                        // acknowledged, nothing lost.
                        let folder_gone =
                            file.starts_with(&legacy) && err.contains("no such file or directory");
                        if folder_gone || CLEAR_REFUSALS.iter().any(|r| err.contains(r)) {
                            log.1 += 1;
                        } else {
                            log.2.push(format!("append: {err}"));
                        }
                    }
                }
            }
        }));
    }
    {
        let (agent, cwd, log) = (agent.clone(), cwd_s.to_string(), log.clone());
        threads.push(std::thread::spawn(move || {
            let request = format!(
                "{{\"id\":1,\"call\":\"session.create\",\"args\":[{},{},null,null]}}\n",
                serde_json::to_string(agent.to_str().unwrap()).unwrap(),
                serde_json::to_string(&cwd).unwrap()
            );
            let mut merges = 0;
            while Instant::now() < deadline {
                let mut child = cli(&agent)
                    .arg("session")
                    .stdin(Stdio::piped())
                    .spawn()
                    .unwrap();
                {
                    use std::io::Write;
                    let mut stdin = child.stdin.take().unwrap();
                    stdin.write_all(request.as_bytes()).unwrap();
                }
                let out = child.wait_with_output().unwrap();
                let answer = String::from_utf8_lossy(&out.stdout).into_owned();
                if !out.status.success() || !answer.contains("\"ok\"") {
                    log.lock().unwrap().2.push(format!(
                        "merge: {answer} {}",
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
                merges += 1;
            }
            assert!(merges >= 3, "merged {merges} times");
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    let (acknowledged, refused, unexpected) = &*log.lock().unwrap();
    assert!(
        unexpected.is_empty(),
        "unexplained failures: {unexpected:#?}"
    );
    assert!(
        acknowledged.len() >= 20,
        "too little work: {}",
        acknowledged.len()
    );
    // Each session (header id) in exactly one file; every acknowledged entry in one.
    let mut by_id: std::collections::HashMap<String, Vec<PathBuf>> = Default::default();
    let mut texts = String::new();
    for dir in [&legacy, &newer] {
        let Ok(list) = fs::read_dir(dir) else {
            continue;
        };
        for e in list {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "jsonl") {
                let t = text(&p);
                let header: Value = serde_json::from_str(t.lines().next().unwrap()).unwrap();
                by_id
                    .entry(header["id"].as_str().unwrap().to_string())
                    .or_default()
                    .push(p.clone());
                texts += &t;
            }
        }
    }
    for (id, files) in &by_id {
        assert_eq!(files.len(), 1, "session {id} is in {files:?}");
    }
    for id in acknowledged {
        assert!(
            texts.contains(&format!(r#""id":"{id}""#)),
            "acknowledged {id} is in no file"
        );
    }
    eprintln!(
        "merge stress: {} appends acknowledged, {refused} refused clearly, {} sessions",
        acknowledged.len(),
        by_id.len()
    );
}
