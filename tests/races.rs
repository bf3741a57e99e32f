//! The window between reading a session file and writing it: another process that
//! writes in between must either be refused or have its entries kept. Each test stops
//! the first writer right after its read (a storage layer runs the second writer there,
//! as a process stopped with SIGSTOP at that point and resumed later would) and then
//! checks that every entry the second writer was told is written is in the file, on the
//! active branch. The same for a program that takes no lock (the agent) appending
//! between a read or write and its stat, and for sessions opened while the legacy-folder
//! merge moves them.

mod common;
use common::*;
use std::cell::RefCell;
use std::rc::Rc;
use xcsh_session::session::{OpenOptions, Persistence, Session};
use xcsh_session::storage::{Layer, MemoryStorage, Storage, StorageExt, StorageResult};
use xcsh_session::SessionError;

const FILE: &str = "/agent/sessions/--work--/f.jsonl";

/// Passes everything to the shared storage, and runs `after_read` once, right after the
/// first read of [`FILE`]: the moment between "read" and "lock" in the old protocol.
struct StopAfterRead {
    inner: Rc<MemoryStorage>,
    after_read: RefCell<Option<Box<dyn FnOnce()>>>,
}

impl Layer for StopAfterRead {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        let bytes = self.inner.read(path);
        if path == FILE {
            if let Some(other_process) = self.after_read.borrow_mut().take() {
                other_process();
            }
        }
        bytes
    }
}

fn options() -> OpenOptions {
    OpenOptions {
        persistence: Persistence::Persistent,
        agent_dir: "/agent".into(),
        cwd: "/work".into(),
    }
}

/// A session file: the header (`version`), a user message and an assistant reply.
fn session_file(version: u32) -> String {
    format!(
        concat!(
            r#"{{"type":"session","version":{},"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}}"#,
            "\n",
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"root","timestamp":1}}}}"#,
            "\n",
            r#"{{"type":"message","id":"b1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2}}}}"#,
            "\n"
        ),
        version
    )
}

/// The other process: opens the file for writing and appends one message. Returns the
/// id it was given, if it was told the append succeeded (the CLI prints that id).
fn other_process_appends(storage: &Rc<MemoryStorage>, file: &str, text: &str) -> Option<String> {
    let mut s = Session::open(storage.clone(), file, &options()).ok()?;
    let id = s.append_message(&user(text)).ok()?;
    s.flush().ok()?;
    Some(id)
}

/// The ids on the active branch of `file` as it is on disk now (root first).
fn branch_ids(storage: &Rc<MemoryStorage>, file: &str) -> Vec<String> {
    let s = open(storage, file, Persistence::ReadOnly);
    s.branch_path(None)
        .unwrap()
        .iter()
        .map(|e| e.id.clone())
        .collect()
}

/// Runs `first_writer` on a storage that stops it right after it reads [`FILE`], where
/// another process appends; returns the id that process was acknowledged, if any.
fn race(storage: &Rc<MemoryStorage>, first_writer: impl FnOnce(Rc<dyn Storage>)) -> Option<String> {
    let acked = Rc::new(RefCell::new(None));
    let (shared, slot) = (storage.clone(), acked.clone());
    let layer = StopAfterRead {
        inner: storage.clone(),
        after_read: RefCell::new(Some(Box::new(move || {
            *slot.borrow_mut() = other_process_appends(&shared, FILE, "written meanwhile");
        }))),
    };
    first_writer(Rc::new(layer));
    let id = acked.borrow().clone();
    id
}

#[test]
fn a_migration_never_rewrites_a_copy_older_than_the_file() {
    let storage = mem();
    put(&storage, FILE, &session_file(2));
    let acked = race(&storage, |s| {
        let opened = Session::open(s, FILE, &options());
        assert!(opened.unwrap().report().migration.is_some(), "v2 → v3");
    });
    if let Some(id) = acked {
        assert!(
            read(&storage, FILE).contains(&id),
            "the entry acknowledged while the migrator was stopped is gone"
        );
    }
}

#[test]
fn an_append_hangs_off_the_leaf_on_disk_never_a_stale_one() {
    let storage = mem();
    put(&storage, FILE, &session_file(3));
    let mut mine = None;
    let acked = race(&storage, |s| {
        if let Ok(mut session) = Session::open(s, FILE, &options()) {
            mine = Some(session.append_message(&user("mine")).unwrap());
        }
    });
    let branch = branch_ids(&storage, FILE);
    for id in acked.iter().chain(mine.iter()) {
        assert!(
            branch.contains(id),
            "acknowledged entry {id} is not on the active branch {branch:?}"
        );
    }
    assert!(mine.is_some() || acked.is_some(), "one of the two wrote");
}

#[test]
fn a_move_never_drops_an_append_made_while_it_was_stopped() {
    let storage = mem();
    put(&storage, FILE, &session_file(3));
    let mut moved_to = None;
    let acked = race(&storage, |s| {
        let mut session = Session::open(s, FILE, &options()).unwrap();
        moved_to = Some(session.move_to("/agent", "/elsewhere").unwrap());
    });
    let moved_to = moved_to.expect("the move went through");
    assert!(!storage.exists(FILE), "the old file is gone");
    if let Some(id) = acked {
        assert!(
            read(&storage, &moved_to).contains(&id),
            "the entry acknowledged while the mover was stopped is gone"
        );
    }
}

#[test]
fn the_second_process_is_refused_while_the_first_holds_what_it_read() {
    // The protocol that makes the tests above pass: the lock is taken before the read.
    let storage = mem();
    put(&storage, FILE, &session_file(3));
    let refused = Rc::new(RefCell::new(None));
    let (shared, slot) = (storage.clone(), refused.clone());
    let layer = StopAfterRead {
        inner: storage.clone(),
        after_read: RefCell::new(Some(Box::new(move || {
            *slot.borrow_mut() = Session::open(shared.clone(), FILE, &options()).err();
        }))),
    };
    let _first = Session::open(Rc::new(layer), FILE, &options()).unwrap();
    let err = refused
        .borrow()
        .clone()
        .expect("the second writer is refused");
    assert!(
        matches!(err, SessionError::Locked { .. }),
        "{err}: a conflict, with the lock owner named"
    );
}

#[test]
fn two_writers_creating_one_new_file_never_replace_each_other() {
    // Two processes open the same missing path; the first writes and exits. The second
    // must not write its own header over the first's file.
    let storage = mem();
    let mut first = open(&storage, FILE, Persistence::Persistent);
    let mut second = open(&storage, FILE, Persistence::Persistent);
    first.append_message(&user("first")).unwrap();
    let a = first.append_message(&assistant("first reply")).unwrap();
    drop(first);
    second.append_message(&user("second")).unwrap();
    let err = second
        .append_message(&assistant("second reply"))
        .expect_err("the file was created by the other process since this one looked");
    assert!(
        matches!(err, SessionError::ExternallyModified { .. }),
        "{err}"
    );
    assert!(
        read(&storage, FILE).contains(&a),
        "the first's entries stay"
    );
    // Reopened, the second process appends after the first's entries.
    drop(second);
    let mut again = open(&storage, FILE, Persistence::Persistent);
    let b = again.append_message(&user("second, again")).unwrap();
    assert_eq!(branch_ids(&storage, FILE).last(), Some(&b));
    assert!(branch_ids(&storage, FILE).contains(&a));
}

// ---- a program that takes no lock (the agent takes none) appends meanwhile ----

/// The line such a program appends: a child of the file's last entry.
const LOCKLESS_LINE: &str = concat!(
    r#"{"type":"message","id":"c1","parentId":"b1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"appended without a lock","timestamp":3}}"#,
    "\n"
);

fn lockless_append(storage: &MemoryStorage) {
    storage.append(FILE, LOCKLESS_LINE.as_bytes()).unwrap();
}

#[test]
fn a_line_appended_between_the_read_and_the_stat_is_never_overwritten() {
    let storage = mem();
    let original = session_file(2);
    put(&storage, FILE, &original);
    let shared = storage.clone();
    let layer = StopAfterRead {
        inner: storage.clone(),
        after_read: RefCell::new(Some(Box::new(move || lockless_append(&shared)))),
    };
    let mut s = Session::open(Rc::new(layer), FILE, &options()).unwrap();
    assert!(s.report().migration.is_some(), "v2 → v3");
    s.rewrite_entries()
        .expect("the file read again holds the line");
    assert!(
        read(&storage, FILE).contains(r#""id":"c1""#),
        "the line appended between the read and the stat survives the migration's rewrite"
    );
    let backup = s.report().backup_path.clone().expect("a backup");
    assert_eq!(
        read(&storage, &backup),
        format!("{original}{LOCKLESS_LINE}"),
        "the backup holds the file as it was before the rewrite"
    );
}

/// Passes everything on, and appends [`LOCKLESS_LINE`] right after every read of
/// [`FILE`]: a file that never holds still while it is read.
struct AppendAfterEveryRead(Rc<MemoryStorage>);

impl Layer for AppendAfterEveryRead {
    fn inner(&self) -> &dyn Storage {
        &*self.0
    }
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        let bytes = self.0.read(path);
        if path == FILE {
            lockless_append(&self.0);
        }
        bytes
    }
}

#[test]
fn a_file_that_changes_at_every_read_is_refused_at_the_first_write_never_overwritten() {
    let storage = mem();
    put(&storage, FILE, &session_file(2));
    let mut s = Session::open(
        Rc::new(AppendAfterEveryRead(storage.clone())),
        FILE,
        &options(),
    )
    .expect("reading a busy file harms nothing");
    let err = s.rewrite_entries().unwrap_err();
    assert!(
        matches!(err, SessionError::ExternallyModified { .. }),
        "{err}"
    );
    let on_disk = read(&storage, FILE);
    assert!(on_disk.starts_with(&session_file(2)), "nothing rewritten");
    assert!(on_disk.ends_with(LOCKLESS_LINE));
}

/// Passes everything on, and runs `then` once, right after the first `op` (`append`,
/// or `rename`, the last step of an atomic rewrite) that ends at [`FILE`]: the moment
/// between a write and the stat that records it.
struct StopAfterWrite {
    inner: Rc<MemoryStorage>,
    op: &'static str,
    then: RefCell<Option<Box<dyn FnOnce()>>>,
}

impl StopAfterWrite {
    fn after(&self, op: &str, path: &str) {
        if op == self.op && path == FILE {
            if let Some(other_process) = self.then.borrow_mut().take() {
                other_process();
            }
        }
    }
}

impl Layer for StopAfterWrite {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let r = self.inner.append(path, data);
        self.after("append", path);
        r
    }
    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        let r = self.inner.rename(from, to);
        self.after("rename", to);
        r
    }
}

#[test]
fn a_line_appended_between_a_write_and_its_stat_is_never_overwritten() {
    for op in ["append", "rename"] {
        let storage = mem();
        put(&storage, FILE, &session_file(3));
        let shared = storage.clone();
        let layer = StopAfterWrite {
            inner: storage.clone(),
            op,
            then: RefCell::new(Some(Box::new(move || lockless_append(&shared)))),
        };
        let mut s = Session::open(Rc::new(layer), FILE, &options()).unwrap();
        match op {
            "append" => {
                s.append_message(&user("mine")).unwrap();
            }
            _ => s.rewrite_entries().unwrap(),
        }
        // A rewrite now would drop the line: it is refused.
        let err = s.set_session_name("renamed", "user").unwrap_err();
        assert!(
            matches!(err, SessionError::ExternallyModified { .. }),
            "{op}: {err}"
        );
        assert!(read(&storage, FILE).ends_with(LOCKLESS_LINE), "{op}");
    }
}

// ---- the legacy-folder merge and the sessions opened while it runs ----

const LEGACY: &str = "/agent/sessions/--work-m--";
const NEWER: &str = "/agent/sessions/-work-m";

/// The session files of both folders, by the id in their header.
fn files_by_session_id(storage: &MemoryStorage) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut by_id = std::collections::BTreeMap::<String, Vec<String>>::new();
    for dir in [LEGACY, NEWER] {
        for entry in storage.list_dir(dir).unwrap_or_default() {
            if !entry.name.ends_with(".jsonl") {
                continue;
            }
            let path = format!("{dir}/{}", entry.name);
            let text = read(storage, &path);
            let header: serde_json::Value =
                serde_json::from_str(text.lines().next().unwrap_or_default()).unwrap();
            let id = header["id"].as_str().unwrap_or_default().to_string();
            by_id.entry(id).or_default().push(path);
        }
    }
    by_id
}

/// A legacy session file of id `id`: a user message and an assistant reply.
fn legacy_session(id: &str) -> String {
    session_file(3).replace(r#""id":"s1""#, &format!(r#""id":"{id}""#))
}

/// Passes everything on, and runs `then` once, right after the first listing of
/// [`LEGACY`]: between the merge's listing and its moves.
struct StopAfterListing {
    inner: Rc<MemoryStorage>,
    then: RefCell<Option<Box<dyn FnOnce()>>>,
}

impl Layer for StopAfterListing {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn list_dir(&self, path: &str) -> StorageResult<Vec<xcsh_session::storage::DirEntry>> {
        let listed = self.inner.list_dir(path);
        if path == LEGACY {
            if let Some(other_process) = self.then.borrow_mut().take() {
                other_process();
            }
        }
        listed
    }
}

#[test]
fn a_session_opened_between_the_listing_and_the_move_stays_with_its_writer() {
    let storage = mem();
    let file = format!("{LEGACY}/s.jsonl");
    put(&storage, &file, &legacy_session("s1"));
    let writer: Rc<RefCell<Option<Session>>> = Rc::default();
    let (shared, slot, path) = (storage.clone(), writer.clone(), file.clone());
    let layer = StopAfterListing {
        inner: storage.clone(),
        then: RefCell::new(Some(Box::new(move || {
            *slot.borrow_mut() = Some(Session::open(shared, &path, &options()).unwrap());
        }))),
    };
    let merge = xcsh_session::merge_legacy_dir(&layer, LEGACY, NEWER).unwrap();
    let mut s = writer.borrow_mut().take().expect("opened during the merge");
    let acked = [
        s.append_message(&user("after the merge")).unwrap(),
        s.append_message(&assistant("reply")).unwrap(),
    ];
    drop(s);
    let files = files_by_session_id(&storage);
    assert_eq!(
        files["s1"],
        std::slice::from_ref(&file),
        "one session, one file"
    );
    for id in &acked {
        assert!(read(&storage, &file).contains(id.as_str()));
    }
    // Reported as kept while its writer had it open.
    assert_eq!(
        merge.kept,
        [("s.jsonl".to_string(), xcsh_session::KeptBecause::Locked)]
    );
    // Closed, it is merged by the next run.
    let merge = xcsh_session::merge_legacy_dir(&*storage, LEGACY, NEWER).unwrap();
    assert_eq!(
        (merge.moved, merge.removed),
        (vec!["s.jsonl".to_string()], true)
    );
    assert_eq!(
        files_by_session_id(&storage)["s1"],
        [format!("{NEWER}/s.jsonl")]
    );
}

/// Passes everything on, and at its `at`-th call runs `then` first: another process
/// acting at that point of the merge. Counts the calls.
struct OpenAtStep {
    inner: Rc<MemoryStorage>,
    at: usize,
    calls: std::cell::Cell<usize>,
    then: RefCell<Option<Box<dyn FnOnce()>>>,
}

impl OpenAtStep {
    fn step(&self) {
        self.calls.set(self.calls.get() + 1);
        if self.calls.get() == self.at {
            if let Some(other_process) = self.then.borrow_mut().take() {
                other_process();
            }
        }
    }
}

impl Layer for OpenAtStep {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        self.step();
        self.inner.read(path)
    }
    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.step();
        self.inner.write(path, data)
    }
    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        self.step();
        self.inner.rename(from, to)
    }
    fn unlink(&self, path: &str) -> StorageResult<()> {
        self.step();
        self.inner.unlink(path)
    }
    fn list_dir(&self, path: &str) -> StorageResult<Vec<xcsh_session::storage::DirEntry>> {
        self.step();
        self.inner.list_dir(path)
    }
    fn stat(&self, path: &str) -> StorageResult<xcsh_session::storage::FileStat> {
        self.step();
        self.inner.stat(path)
    }
    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        self.step();
        self.inner.mkdir_all(path)
    }
    fn rmdir(&self, path: &str) -> StorageResult<()> {
        self.step();
        self.inner.rmdir(path)
    }
    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.step();
        self.inner.create_new(path, data)
    }
}

/// Log `(session id, entry id)` of an append that succeeded and is on disk (flushed).
fn acknowledge(
    s: &mut Session,
    appended: Result<String, SessionError>,
    log: &RefCell<Vec<(String, String)>>,
) {
    if let Ok(id) = appended {
        if s.flush().is_ok() && s.is_on_disk() {
            log.borrow_mut().push((s.session_id().to_string(), id));
        }
    }
}

#[test]
fn merges_and_opens_racing_leave_each_session_in_one_file_with_every_acknowledged_entry() {
    const SESSIONS: [&str; 3] = ["a", "b", "c"];
    let setup = || {
        let storage = mem();
        for name in SESSIONS {
            put(
                &storage,
                &format!("{LEGACY}/{name}.jsonl"),
                &legacy_session(&format!("s-{name}")),
            );
        }
        put(&storage, &format!("{LEGACY}/b/1.bash.log"), "artifact");
        storage
    };
    // A run without an open counts the merge's storage calls.
    let clean = OpenAtStep {
        inner: setup(),
        at: 0,
        calls: Default::default(),
        then: RefCell::new(None),
    };
    xcsh_session::merge_legacy_dir(&clean, LEGACY, NEWER).unwrap();
    let steps = clean.calls.get();
    assert!(steps > 10, "{steps} calls");
    // Each round, another process opens one of the sessions by its legacy path (as a
    // resume that listed it before the merge would) at one step of the merge, appends,
    // and appends again once the merge is done.
    let mut acknowledged = 0;
    for at in 1..=steps {
        let storage = setup();
        let name = SESSIONS[at % SESSIONS.len()];
        let path = format!("{LEGACY}/{name}.jsonl");
        let writer: Rc<RefCell<Option<Session>>> = Rc::default();
        // (session id, entry id) of every append acknowledged.
        let acked: Rc<RefCell<Vec<(String, String)>>> = Rc::default();
        let (shared, slot, log, opened) = (storage.clone(), writer.clone(), acked.clone(), path);
        let layer = OpenAtStep {
            inner: storage.clone(),
            at,
            calls: Default::default(),
            then: RefCell::new(Some(Box::new(move || {
                // Refused while the merge holds the session: nothing acknowledged.
                if let Ok(mut s) = Session::open(shared, &opened, &options()) {
                    let appended = s.append_message(&assistant("during the merge"));
                    acknowledge(&mut s, appended, &log);
                    *slot.borrow_mut() = Some(s);
                }
            }))),
        };
        xcsh_session::merge_legacy_dir(&layer, LEGACY, NEWER).unwrap();
        if let Some(mut s) = writer.borrow_mut().take() {
            let appended = s.append_message(&user("after the merge"));
            acknowledge(&mut s, appended, &acked);
        }
        // Closed now: a later merge moves what this one left.
        xcsh_session::merge_legacy_dir(&*storage, LEGACY, NEWER).unwrap();
        let files = files_by_session_id(&storage);
        for (id, paths) in &files {
            assert_eq!(paths.len(), 1, "step {at}: session {id} is in {paths:?}");
        }
        for name in SESSIONS {
            assert!(
                files.contains_key(&format!("s-{name}")),
                "step {at}: {name}"
            );
        }
        for (session, entry) in acked.borrow().iter() {
            let text = read(&storage, &files[session][0]);
            assert!(text.contains(entry.as_str()), "step {at}: {entry} lost");
            acknowledged += 1;
        }
    }
    assert!(acknowledged >= steps, "{acknowledged} appends acknowledged");
}
