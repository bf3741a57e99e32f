//! The real filesystem behind the port (`FsStorage`), against what an adversary can put
//! on it: special files that block whoever opens them (a FIFO named `*.jsonl`), and a
//! directory swapped for a symlink after the path policy checked the path.
#![cfg(all(unix, feature = "native-fs"))]

use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use std::sync::Arc;
use xcsh_session::fs::{open_dir, Access, Beneath, FsStorage, PathPolicy};
use xcsh_session::listing::ListText;
use xcsh_session::storage::{files_under, Storage, StorageExt, StorageResult};

/// A fresh canonical temp directory, removed on drop.
struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let base = fs::canonicalize(std::env::temp_dir()).expect("temp dir");
        let dir = base.join(format!("xcsh-fs-storage-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("mkdir");
        Tmp(dir)
    }

    fn join(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    fn s(&self, rel: &str) -> String {
        s(&self.join(rel))
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// `f()` on another thread; a test failure when it has not returned within 10 s (a call
/// blocked opening a FIFO never returns).
fn within_10s<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still blocked after 10 s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// Paths confined beneath a directory handle (of `/`), as the CLI's confinement places
/// them: the storage then opens them through cap-std.
struct Canonical;

impl PathPolicy for Canonical {
    fn resolve(&self, path: &str, _access: Access) -> StorageResult<PathBuf> {
        Ok(PathBuf::from(path))
    }
    fn beneath(&self, path: &str, _access: Access) -> Option<StorageResult<Beneath>> {
        Some(Ok(Beneath {
            dir: Arc::new(open_dir(Path::new("/")).expect("open /")),
            rel: PathBuf::from(path.trim_start_matches('/')),
        }))
    }
    /// An absolute symlink: placed again by its target, as the CLI does.
    fn beneath_resolved(&self, path: &str, access: Access) -> Option<StorageResult<Beneath>> {
        let target = fs::canonicalize(path).ok()?;
        self.beneath(target.to_str()?, access)
    }
}

fn storage(canonical: bool) -> Rc<dyn Storage> {
    if canonical {
        Rc::new(FsStorage::with_policy(Canonical))
    } else {
        Rc::new(FsStorage::new())
    }
}

#[test]
fn a_fifo_is_refused_as_not_a_regular_file_instead_of_blocking() {
    for canonical in [false, true] {
        let tmp = Tmp::new(&format!("fifo-{canonical}"));
        let fifo = tmp.join("s.jsonl");
        mkfifo(&fifo);
        let path = s(&fifo);
        type Op = fn(&dyn Storage, &str) -> Result<(), String>;
        let ops: [(&str, Op); 7] = [
            ("read", |st, p| {
                st.read(p).map(drop).map_err(|e| e.to_string())
            }),
            ("read_prefix", |st, p| {
                st.read_prefix(p, 4096).map(drop).map_err(|e| e.to_string())
            }),
            ("read_range", |st, p| {
                st.read_range(p, 10, 4096)
                    .map(drop)
                    .map_err(|e| e.to_string())
            }),
            ("append", |st, p| {
                st.append(p, b"{}\n").map_err(|e| e.to_string())
            }),
            ("write", |st, p| {
                st.write(p, b"{}\n").map_err(|e| e.to_string())
            }),
            ("fsync", |st, p| st.fsync(p).map_err(|e| e.to_string())),
            ("blob_get", |st, p| {
                let (dir, name) = p.rsplit_once('/').expect("a path");
                st.blob_get(dir, name).map(drop).map_err(|e| e.to_string())
            }),
        ];
        for (name, op) in ops {
            let p = path.clone();
            let result = within_10s(&format!("{name} (canonical: {canonical})"), move || {
                op(&*storage(canonical), &p)
            });
            if name == "fsync" {
                continue; // nothing read or written: only must not block
            }
            let err = result.expect_err(name);
            assert_eq!(err, format!("{path} is not a regular file"), "{name}");
        }
        if !canonical {
            let p = path.clone();
            let err =
                within_10s("open", move || FsStorage::new().open(&p).map(drop)).expect_err("open");
            assert_eq!(err.to_string(), format!("{path} is not a regular file"));
        }
        // The API on such a file: a clear error, not a hang.
        let p = path.clone();
        let agent = tmp.s("agent");
        let err = within_10s("show", move || {
            xcsh_session::api::show_file(storage(canonical), &p, &agent).map_err(|e| e.to_string())
        })
        .expect_err("show");
        assert!(err.contains("is not a regular file"), "{err}");
        let (p, agent) = (path.clone(), tmp.s("agent"));
        let err = within_10s("append", move || {
            xcsh_session::api::append_file(
                storage(canonical),
                &p,
                &agent,
                "/w",
                r#"{"type":"custom","customType":"x","data":{}}"#,
            )
            .map_err(|e| e.to_string())
        })
        .expect_err("append");
        assert!(err.contains("is not a regular file"), "{err}");
    }
}

/// A small v3 session file with one user message.
fn session_text(id: &str, cwd: &str, text: &str) -> String {
    let header = serde_json::json!({
        "type": "session", "version": 3, "id": id,
        "timestamp": "2026-01-05T10:00:00.000Z", "cwd": cwd,
    });
    let user = serde_json::json!({
        "type": "message", "id": format!("{id}-u"), "parentId": null,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1767607201000i64},
    });
    format!("{header}\n{user}\n")
}

#[test]
fn special_files_in_a_sessions_dir_are_skipped_by_listings_and_gc() {
    for canonical in [false, true] {
        let tmp = Tmp::new(&format!("scan-{canonical}"));
        let agent = tmp.s("agent");
        let dir = PathBuf::from(xcsh_session::paths::session_dir_for_cwd(&agent, "/w"));
        fs::create_dir_all(&dir).expect("mkdir");
        let hash = "ab".repeat(32);
        let unused = "cd".repeat(32);
        let mut text = session_text("s0000001", "/w", "hello");
        text.push_str(&format!(
            "{{\"type\":\"custom\",\"customType\":\"img\",\"id\":\"c1\",\"parentId\":\"s0000001-u\",\"timestamp\":\"2026-01-05T10:00:02.000Z\",\"data\":{{\"ref\":\"blob:sha256:{hash}\"}}}}\n"
        ));
        fs::write(dir.join("2026-01-05T10-00-00-000Z_s0000001.jsonl"), text).expect("write");
        mkfifo(&dir.join("2026-01-05T11-00-00-000Z_fifo.jsonl"));
        mkfifo(&dir.join("plain-fifo"));
        // A symlink to a FIFO is skipped too.
        mkfifo(&tmp.join("elsewhere.jsonl"));
        std::os::unix::fs::symlink(tmp.join("elsewhere.jsonl"), dir.join("link.jsonl"))
            .expect("symlink");
        let blobs = tmp.join("agent/blobs");
        fs::create_dir_all(&blobs).expect("mkdir");
        for h in [&hash, &unused] {
            let f = blobs.join(h);
            fs::write(&f, h).expect("blob");
            fs::File::options()
                .write(true)
                .open(&f)
                .and_then(|f| f.set_modified(std::time::SystemTime::UNIX_EPOCH))
                .expect("age");
        }

        let d = s(&dir);
        let names = within_10s("list_dir", move || {
            storage(canonical)
                .list_dir(&d)
                .expect("list_dir")
                .into_iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
        });
        assert_eq!(names, ["2026-01-05T10-00-00-000Z_s0000001.jsonl"]);
        let root = xcsh_session::paths::sessions_root(&agent);
        let files = within_10s("files_under", move || {
            files_under(&*storage(canonical), &root).expect("files_under")
        });
        assert_eq!(files.len(), 1, "{files:?}");

        for (name, op) in [
            ("recent", 0),
            ("list", 1),
            ("list --all", 2),
            ("search", 3),
            ("gc", 4),
        ] {
            let a = agent.clone();
            let out = within_10s(name, move || {
                let st = storage(canonical);
                match op {
                    0 => xcsh_session::api::recent(st, &a, "/w", 10),
                    1 => xcsh_session::api::list(st, &a, Some("/w"), ListText::Leave),
                    2 => xcsh_session::api::list(st, &a, None, ListText::Include),
                    3 => xcsh_session::api::search(st, &a, None, "hello"),
                    _ => xcsh_session::api::gc(st, &a, false, false),
                }
                .map_err(|e| e.to_string())
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            if op < 4 {
                assert!(out.contains("s0000001"), "{name}: {out}");
                assert!(!out.contains("fifo"), "{name}: {out}");
            } else {
                let report: serde_json::Value = serde_json::from_str(&out).expect("json");
                assert_eq!(report["scannedFiles"], 1, "{out}");
                assert_eq!(report["deleted"], serde_json::json!([unused]), "{out}");
            }
        }
        assert!(blobs.join(&hash).exists(), "gc deleted a referenced blob");
        assert!(!blobs.join(&unused).exists());
    }
}

/// Plants, after the check and before the call, a symlink to `outside` in place of the
/// directory `victim` (the race an adversary wins between a check and the open); paths
/// are confined beneath the victim's parent directory, as the CLI confines them to a root.
struct SwapAfterCheck {
    victim: PathBuf,
    outside: PathBuf,
    armed: std::cell::Cell<bool>,
}

impl PathPolicy for SwapAfterCheck {
    fn resolve(&self, path: &str, _access: Access) -> StorageResult<PathBuf> {
        Ok(PathBuf::from(path))
    }
    fn beneath(&self, path: &str, _access: Access) -> Option<StorageResult<Beneath>> {
        let root = self.victim.parent().expect("victim has a parent");
        let dir = Arc::new(open_dir(root).expect("open the root"));
        if self.armed.replace(false) {
            let aside = self.victim.with_extension("aside");
            fs::rename(&self.victim, &aside).expect("move the directory aside");
            std::os::unix::fs::symlink(&self.outside, &self.victim).expect("plant symlink");
        }
        let rel = Path::new(path).strip_prefix(root).expect("under the root");
        Some(Ok(Beneath {
            dir,
            rel: rel.to_path_buf(),
        }))
    }
}

/// Every file and directory under `dir` with its content ("/" for a directory).
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("ls") {
            let p = e.expect("entry").path();
            let rel = s(p.strip_prefix(dir).expect("under dir"));
            if p.is_dir() {
                stack.push(p);
                out.push((rel, "/".into()));
            } else {
                out.push((rel, fs::read_to_string(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_directory_swapped_for_a_symlink_after_the_check_redirects_nothing() {
    let tmp = Tmp::new("swap");
    let (root, outside) = (tmp.join("root"), tmp.join("outside"));
    let victim = root.join("d");
    let reset = || {
        let _ = fs::remove_file(&victim);
        let _ = fs::remove_dir_all(&victim);
        let _ = fs::remove_dir_all(victim.with_extension("aside"));
        let _ = fs::remove_dir_all(&outside);
        for base in [&victim, &outside] {
            fs::create_dir_all(base.join("sub")).expect("mkdir");
            fs::write(base.join("f"), "secret").expect("write");
        }
    };
    let st = FsStorage::with_policy(SwapAfterCheck {
        victim: victim.clone(),
        outside: outside.clone(),
        armed: false.into(),
    });
    let p = |rel: &str| s(&victim.join(rel));
    type Op<'a> = Box<dyn Fn(&FsStorage<SwapAfterCheck>) -> Result<String, String> + 'a>;
    let ok = |r: StorageResult<()>| r.map(|()| String::new()).map_err(|e| e.to_string());
    let got = |r: StorageResult<Vec<u8>>| {
        r.map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| e.to_string())
    };
    let ops: Vec<(&str, Op)> = vec![
        ("write", Box::new(|st| ok(st.write(&p("new"), b"x")))),
        ("append", Box::new(|st| ok(st.append(&p("f"), b"x")))),
        (
            "create_new",
            Box::new(|st| ok(st.create_new(&p("lock"), b"x"))),
        ),
        ("mkdir_all", Box::new(|st| ok(st.mkdir_all(&p("n/m"))))),
        ("rename", Box::new(|st| ok(st.rename(&p("f"), &p("g"))))),
        ("unlink", Box::new(|st| ok(st.unlink(&p("f"))))),
        ("rmdir", Box::new(|st| ok(st.rmdir(&p("sub"))))),
        (
            "atomic_write",
            Box::new(|st| ok(st.atomic_write(&p("f"), b"x"))),
        ),
        (
            "blob_put",
            Box::new(|st| ok(st.blob_put(&s(&victim), "h", b"x"))),
        ),
        ("read", Box::new(|st| got(st.read(&p("f"))))),
        (
            "read_prefix",
            Box::new(|st| got(st.read_prefix(&p("f"), 10))),
        ),
        (
            "open",
            Box::new(|st| {
                st.open(&p("f"))
                    .map(|_| String::new())
                    .map_err(|e| e.to_string())
            }),
        ),
        (
            "list_dir",
            Box::new(|st| {
                st.list_dir(&s(&victim))
                    .map(|l| format!("{l:?}"))
                    .map_err(|e| e.to_string())
            }),
        ),
        (
            "stat",
            Box::new(|st| {
                st.stat(&p("f"))
                    .map(|m| format!("{m:?}"))
                    .map_err(|e| e.to_string())
            }),
        ),
    ];
    for (name, op) in &ops {
        // Without the swap, every call works on these paths.
        reset();
        op(&st).unwrap_or_else(|e| panic!("{name} without a swap: {e}"));
        // With it, the call fails and nothing outside is read or changed.
        reset();
        let before = snapshot(&outside);
        st.policy().armed.set(true);
        let result = op(&st);
        assert!(
            fs::symlink_metadata(&victim)
                .expect("victim")
                .file_type()
                .is_symlink(),
            "{name}: the swap did not happen"
        );
        assert_eq!(snapshot(&outside), before, "{name} changed the outside dir");
        let err = result.expect_err(&format!("{name} followed the planted symlink"));
        assert!(err.contains("symlink"), "{name}: {err}");
    }
    reset();
}

#[test]
fn a_file_swapped_for_a_symlink_after_the_check_is_not_followed() {
    let tmp = Tmp::new("swap-file");
    let (root, outside) = (tmp.join("root"), tmp.join("outside"));
    fs::create_dir_all(&root).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    let victim = root.join("s.jsonl");
    let target = outside.join("s.jsonl");
    let st = FsStorage::with_policy(SwapAfterCheck {
        victim: victim.clone(),
        outside: target.clone(),
        armed: false.into(),
    });
    type Op = fn(&FsStorage<SwapAfterCheck>, &str) -> Result<(), String>;
    let ops: [(&str, Op); 5] = [
        ("read", |st, p| {
            st.read(p).map(drop).map_err(|e| e.to_string())
        }),
        ("write", |st, p| {
            st.write(p, b"x").map_err(|e| e.to_string())
        }),
        ("append", |st, p| {
            st.append(p, b"x").map_err(|e| e.to_string())
        }),
        ("stat", |st, p| {
            st.stat(p).map(drop).map_err(|e| e.to_string())
        }),
        ("fsync", |st, p| st.fsync(p).map_err(|e| e.to_string())),
    ];
    for (name, op) in ops {
        let _ = fs::remove_file(&victim);
        let _ = fs::remove_file(victim.with_extension("aside"));
        fs::write(&victim, "inside").expect("write");
        fs::write(&target, "secret").expect("write");
        st.policy().armed.set(true);
        let result = op(&st, &s(&victim));
        assert_eq!(
            fs::read_to_string(&target).expect("read"),
            "secret",
            "{name}"
        );
        if name != "stat" {
            result.expect_err(&format!("{name} followed the planted symlink"));
        }
    }
}

#[test]
fn gc_still_aborts_on_a_real_read_error_and_deletes_nothing() {
    use xcsh_session::storage::{Layer, StorageError};
    /// The real filesystem, with reads of the session file failing (an I/O error).
    struct FailingRead(FsStorage);
    impl Layer for FailingRead {
        fn inner(&self) -> &dyn Storage {
            &self.0
        }
        fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
            if path.ends_with("_s0000001.jsonl") {
                return Err(StorageError::Other(format!("EIO: injected: {path}")));
            }
            self.0.read(path)
        }
    }
    let tmp = Tmp::new("gc-abort");
    let agent = tmp.s("agent");
    let dir = PathBuf::from(xcsh_session::paths::session_dir_for_cwd(&agent, "/w"));
    fs::create_dir_all(&dir).expect("mkdir");
    fs::write(
        dir.join("2026-01-05T10-00-00-000Z_s0000001.jsonl"),
        session_text("s0000001", "/w", "hello"),
    )
    .expect("write");
    mkfifo(&dir.join("2026-01-05T09-00-00-000Z_fifo.jsonl"));
    let blob = tmp.join("agent/blobs").join("ab".repeat(32));
    fs::create_dir_all(blob.parent().expect("dir")).expect("mkdir");
    fs::write(&blob, "x").expect("blob");
    fs::File::options()
        .write(true)
        .open(&blob)
        .and_then(|f| f.set_modified(std::time::SystemTime::UNIX_EPOCH))
        .expect("age");
    let err = within_10s("gc", move || {
        xcsh_session::api::gc(Rc::new(FailingRead(FsStorage::new())), &agent, false, false)
            .map_err(|e| e.to_string())
    })
    .expect_err("gc went on after a read error");
    assert!(err.contains("EIO: injected"), "{err}");
    assert!(blob.exists(), "gc deleted a blob after a read error");
}
