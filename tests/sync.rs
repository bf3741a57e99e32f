//! Sync through an object store: machines appending to the same session and syncing in
//! any order end with the same entries, nothing lost, every file one the agent reads.

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use proptest::prelude::*;
use xcsh_session::session::{CreateOptions, OpenOptions, Persistence, Session};
use xcsh_session::storage::{MemoryStorage, Storage};
use xcsh_session::sync::{sync, MemoryObjectStore, ObjectStore, Scope, SyncOptions, SyncReport};

const AGENT: &str = "/agent";
const CWD: &str = "/home/me/proj";

fn machine(seed: u64) -> Rc<dyn Storage> {
    Rc::new(MemoryStorage::with_seed(
        seed,
        1_760_000_000_000 + seed as i64 * 1000,
    ))
}

fn opts() -> SyncOptions {
    SyncOptions {
        remote: "memory://team".into(),
        prefix: "team".into(),
        scope: Scope::All,
        dry_run: false,
    }
}

fn user(text: &str) -> String {
    format!(
        r#"{{"role":"user","content":{},"timestamp":1}}"#,
        serde_json::to_string(text).unwrap()
    )
}

fn assistant(text: &str) -> String {
    format!(
        r#"{{"role":"assistant","provider":"p","model":"m","content":[{{"type":"text","text":{}}}],"timestamp":2}}"#,
        serde_json::to_string(text).unwrap()
    )
}

/// A new session on `m` with one exchange; its file.
fn start(m: &Rc<dyn Storage>) -> String {
    let mut s = Session::create(
        m.clone(),
        &CreateOptions {
            agent_dir: AGENT.into(),
            cwd: CWD.into(),
            ..Default::default()
        },
    );
    s.append_message(&user("hello")).unwrap();
    s.append_message(&assistant("hi")).unwrap();
    s.flush().unwrap();
    let f = s.file().unwrap().to_string();
    s.close().unwrap();
    f
}

/// The session files of a machine.
fn files(m: &dyn Storage) -> Vec<String> {
    let root = format!("{AGENT}/sessions");
    let mut out = vec![];
    for d in m.list_dir(&root).unwrap_or_default() {
        for f in m.list_dir(&format!("{root}/{}", d.name)).unwrap() {
            if f.name.ends_with(".jsonl") {
                out.push(format!("{root}/{}/{}", d.name, f.name));
            }
        }
    }
    out
}

fn open(m: &Rc<dyn Storage>, file: &str) -> Session {
    let s = Session::open(
        m.clone(),
        file,
        &OpenOptions {
            persistence: Persistence::Persistent,
            agent_dir: AGENT.into(),
            cwd: CWD.into(),
        },
    )
    .unwrap();
    assert!(
        s.report().issues.is_empty() && s.report().header_problem.is_none(),
        "{file}: {:?}",
        s.report().issues
    );
    s
}

/// Two machines that both have one session (started on the first, synced to the second);
/// the session's file (the same name on both).
fn synced_pair() -> (Rc<dyn Storage>, Rc<dyn Storage>, MemoryObjectStore, String) {
    let (a, b, remote) = (machine(1), machine(2), MemoryObjectStore::new());
    let f = start(&a);
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    (a, b, remote, f)
}

/// Appends a user message on `m`'s copy of `file` (opened, appended, closed); its id.
fn say(m: &Rc<dyn Storage>, file: &str, text: &str) -> String {
    let mut s = open(m, file);
    let id = s.append_message(&user(text)).unwrap();
    s.close().unwrap();
    id
}

/// `id → line` of every entry of a file, checking that each parent comes before its
/// children and no id is there twice.
fn entries(m: &dyn Storage, file: &str) -> BTreeMap<String, String> {
    let text = String::from_utf8(m.read(file).unwrap()).unwrap();
    let mut seen = BTreeMap::new();
    for line in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap().to_string();
        if let Some(p) = v["parentId"].as_str() {
            assert!(seen.contains_key(p), "{file}: {id} before its parent {p}");
        }
        assert!(
            seen.insert(id.clone(), line.to_string()).is_none(),
            "{file}: {id} twice"
        );
    }
    seen
}

fn last_id(m: &dyn Storage, file: &str) -> String {
    let text = String::from_utf8(m.read(file).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    v["id"].as_str().unwrap().to_string()
}

#[test]
fn a_session_written_on_one_machine_appears_on_another() {
    let (a, b, remote) = (machine(1), machine(2), MemoryObjectStore::new());
    let fa = start(&a);
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    let r = sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    assert!(r.sessions[0].created);
    assert!(
        r.sessions[0].branches.is_empty(),
        "{:?}",
        r.sessions[0].branches
    );
    let fb = files(&*b).pop().unwrap();
    assert_eq!(
        a.read(&fa).unwrap(),
        b.read(&fb).unwrap(),
        "the same bytes, the same file name"
    );
    assert_eq!(fa, fb);
}

#[test]
fn a_machine_that_continued_the_leaf_is_followed() {
    let (a, b, remote, f) = synced_pair();
    let id = say(&b, &f, "more");
    sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    let r = sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    assert_eq!(r.sessions[0].pulled_entries, 1);
    assert!(!r.sessions[0].rewritten);
    assert_eq!(last_id(&*a, &f), id);
    assert_eq!(open(&a, &f).leaf_id(), Some(id.as_str()));
}

#[test]
fn the_leaf_stays_where_the_user_left_it_and_the_other_branch_is_reported() {
    let (a, b, remote, f) = synced_pair();
    // Both continue the same leaf.
    let on_a = say(&a, &f, "on a");
    let on_b = say(&b, &f, "on b");
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    let r = sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    assert!(r.sessions[0].rewritten);
    assert_eq!(r.sessions[0].branches, vec![on_a.clone()]);
    assert_eq!(
        open(&b, &f).leaf_id(),
        Some(on_b.as_str()),
        "b resumes where b was"
    );
    let r = sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    assert_eq!(r.sessions[0].branches, vec![on_b.clone()]);
    assert_eq!(
        open(&a, &f).leaf_id(),
        Some(on_a.as_str()),
        "a resumes where a was"
    );
    assert_eq!(entries(&*a, &f), entries(&*b, &f));
}

#[test]
fn an_unchanged_store_is_only_listed_and_one_append_moves_one_line() {
    let (a, b, remote, f) = synced_pair();
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    remote.reset_traffic();
    let r = sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    assert!(!r.sessions[0].changed());
    let t = remote.traffic();
    assert_eq!((t.lists, t.gets, t.puts), (1, 0, 0), "{t:?}");

    let mut s = open(&a, &f);
    s.append_message(&user(&"x".repeat(1000))).unwrap();
    s.close().unwrap();
    remote.reset_traffic();
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    let up = remote.traffic();
    assert!(up.bytes_put > 1000 && up.bytes_put <= 8 * 1024, "{up:?}");
    remote.reset_traffic();
    sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    let down = remote.traffic();
    assert!(
        down.bytes_got > 1000 && down.bytes_got <= 8 * 1024,
        "{down:?}"
    );
}

#[test]
fn a_corrupt_or_foreign_segment_is_refused_and_nothing_of_it_merged() {
    let (_a, b, remote, f) = synced_pair();
    let key = remote
        .keys()
        .into_iter()
        .find(|k| k.ends_with("0000000000.jsonl"))
        .unwrap();
    let dir = key
        .rsplit_once('/')
        .unwrap()
        .0
        .rsplit_once('/')
        .unwrap()
        .0
        .to_string();
    let before = b.read(&f).unwrap();
    let good = r#"{"type":"message","id":"feedbeef","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x","timestamp":1}}"#;
    for (machine, data, why) in [
        ("00000000000000aa", format!("{good}\n{{not json\n"), "line 2 is not a session entry"),
        ("00000000000000bb", good.to_string(), "cut short"),
        ("00000000000000cc", r#"{"type":"session","version":3,"id":"other","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}"#.to_string() + "\n" + good + "\n", "belongs to session other"),
    ] {
        remote.overwrite(&format!("{dir}/{machine}/0000000000.jsonl"), data.as_bytes());
        let r = sync(b.clone(), AGENT, &remote, &opts()).unwrap();
        assert!(r.sessions[0].refused.iter().any(|e| e.contains(why)), "{why}: {:?}", r.sessions[0].refused);
        assert_eq!(b.read(&f).unwrap(), before, "{why}: nothing merged");
    }
}

#[test]
fn a_failing_store_changes_nothing_locally() {
    struct Down;
    impl ObjectStore for Down {
        fn put_if_absent(
            &self,
            _: &str,
            _: &[u8],
        ) -> Result<xcsh_session::sync::Put, xcsh_session::sync::ObjectError> {
            Err(xcsh_session::sync::ObjectError::Unreachable("down".into()))
        }
        fn get(&self, _: &str) -> Result<Option<Vec<u8>>, xcsh_session::sync::ObjectError> {
            Err(xcsh_session::sync::ObjectError::Unreachable("down".into()))
        }
        fn get_range(
            &self,
            _: &str,
            _: u64,
            _: u64,
        ) -> Result<Option<Vec<u8>>, xcsh_session::sync::ObjectError> {
            Err(xcsh_session::sync::ObjectError::Unreachable("down".into()))
        }
        fn list(
            &self,
            _: &str,
        ) -> Result<Vec<xcsh_session::sync::ObjectMeta>, xcsh_session::sync::ObjectError> {
            Err(xcsh_session::sync::ObjectError::Unreachable("down".into()))
        }
    }
    let a = machine(1);
    start(&a);
    let before: Vec<_> = xcsh_session::storage::files_under(&*a, AGENT).unwrap();
    let e = sync(a.clone(), AGENT, &Down, &opts()).unwrap_err();
    assert!(e.to_string().contains("cannot be reached"), "{e}");
    assert_eq!(
        xcsh_session::storage::files_under(&*a, AGENT).unwrap(),
        before
    );
}

#[derive(Debug, Clone)]
enum Op {
    /// Append on the machine's leaf.
    Append(usize),
    /// Go back `n` entries on the path and append there (a branch).
    Branch(usize, usize),
    /// Label the leaf's parent.
    Label(usize),
    Sync(usize),
}

fn op(machines: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..machines).prop_map(Op::Append),
        1 => (0..machines, 1..4usize).prop_map(|(m, n)| Op::Branch(m, n)),
        1 => (0..machines).prop_map(Op::Label),
        3 => (0..machines).prop_map(Op::Sync),
    ]
}

fn run_schedule(n: usize, ops: &[Op]) {
    let remote = MemoryObjectStore::new();
    let ms: Vec<Rc<dyn Storage>> = (0..n).map(|i| machine(i as u64 + 1)).collect();
    let file = start(&ms[0]);
    let mut written: HashSet<String> = entries(&*ms[0], &file).into_keys().collect();
    let mut k = 0;
    let sync_on = |m: &Rc<dyn Storage>| -> SyncReport {
        let r = sync(m.clone(), AGENT, &remote, &opts()).unwrap();
        for s in &r.sessions {
            assert!(s.refused.is_empty(), "{:?}", s.refused);
        }
        r
    };
    for o in ops {
        let m = match o {
            Op::Append(m) | Op::Branch(m, _) | Op::Label(m) | Op::Sync(m) => &ms[*m],
        };
        if let Op::Sync(_) = o {
            sync_on(m);
            continue;
        }
        if !m.exists_file(&file) {
            continue; // this machine has not got the session yet
        }
        k += 1;
        let mut s = open(m, &file);
        let path: Vec<String> = s
            .branch_path(None)
            .unwrap()
            .iter()
            .map(|e| e.id.clone())
            .collect();
        let id = match o {
            Op::Append(_) => s.append_message(&user(&format!("m{k}"))).unwrap(),
            Op::Branch(_, back) => {
                let at = path.len().saturating_sub(1 + back);
                s.branch(&path[at]).unwrap();
                s.append_message(&assistant(&format!("b{k}"))).unwrap()
            }
            Op::Label(_) => {
                let target = path[path.len().saturating_sub(2)].clone();
                s.append_label_change(&target, Some(&format!("l{k}")))
                    .unwrap()
            }
            Op::Sync(_) => unreachable!(),
        };
        s.close().unwrap();
        written.insert(id);
    }
    // Everyone syncs twice, in order: then all have everything.
    for _ in 0..2 {
        for m in &ms {
            sync_on(m);
        }
    }
    let first = entries(&*ms[0], &file);
    let ids: HashSet<String> = first.keys().cloned().collect();
    assert_eq!(
        ids, written,
        "every entry written on any machine is on every machine"
    );
    for m in &ms[1..] {
        assert_eq!(
            entries(&**m, &file),
            first,
            "the same entries, byte for byte"
        );
    }
    for m in &ms {
        let s = open(m, &file);
        assert_eq!(s.entries().len(), written.len());
    }
}

trait Exists {
    fn exists_file(&self, path: &str) -> bool;
}
impl Exists for Rc<dyn Storage> {
    fn exists_file(&self, path: &str) -> bool {
        self.stat(path).is_ok()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn two_machines_converge_whatever_the_schedule(ops in prop::collection::vec(op(2), 1..30)) {
        run_schedule(2, &ops);
    }

    #[test]
    fn three_machines_converge_whatever_the_schedule(ops in prop::collection::vec(op(3), 1..40)) {
        run_schedule(3, &ops);
    }
}

#[test]
fn images_travel_with_their_entries() {
    let (a, b, remote) = (machine(1), machine(2), MemoryObjectStore::new());
    let f = start(&a);
    let data = xcsh_session::internals::encode_base64(&[7u8; 3000]);
    let mut s = open(&a, &f);
    s.append_message(&format!(r#"{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":3}}"#)).unwrap();
    s.close().unwrap();
    let blobs = |m: &dyn Storage| {
        m.list_dir(&format!("{AGENT}/blobs"))
            .map(|v| v.len())
            .unwrap_or(0)
    };
    assert_eq!(blobs(&*a), 1, "the image went to the blob store");
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    assert_eq!(blobs(&*b), 1);
    let ctx = open(&b, &f).context().to_json();
    assert!(
        ctx.contains(&data),
        "the image reads back whole on the other machine"
    );
}

#[test]
fn what_one_remote_has_says_nothing_of_another() {
    let (a, b) = (machine(1), machine(2));
    let (first, second) = (MemoryObjectStore::new(), MemoryObjectStore::new());
    start(&a);
    sync(a.clone(), AGENT, &first, &opts()).unwrap();
    let other = SyncOptions {
        remote: "memory://other".into(),
        ..opts()
    };
    let r = sync(a.clone(), AGENT, &second, &other).unwrap();
    assert_eq!(
        r.sessions[0].pushed_entries, 2,
        "the second remote gets everything"
    );
    let r = sync(b.clone(), AGENT, &second, &other).unwrap();
    assert!(r.sessions[0].created);
}

/// A machine's storage that counts the bytes read from it.
struct Counting(MemoryStorage, std::cell::Cell<u64>);

impl xcsh_session::storage::Layer for Counting {
    fn inner(&self) -> &dyn Storage {
        &self.0
    }
    fn read(&self, path: &str) -> xcsh_session::storage::StorageResult<Vec<u8>> {
        let r = self.0.read(path)?;
        self.1.set(self.1.get() + r.len() as u64);
        Ok(r)
    }
    fn read_range(
        &self,
        path: &str,
        offset: u64,
        len: u64,
    ) -> xcsh_session::storage::StorageResult<Vec<u8>> {
        let r = self.0.read_range(path, offset, len)?;
        self.1.set(self.1.get() + r.len() as u64);
        Ok(r)
    }
}

#[test]
fn a_large_session_goes_in_pieces_and_arrives_whole_then_only_what_is_new() {
    let counting = Rc::new(Counting(
        MemoryStorage::with_seed(1, 1_760_000_000_000),
        Default::default(),
    ));
    let a: Rc<dyn Storage> = counting.clone();
    let (b, remote) = (machine(2), MemoryObjectStore::new());
    let f = start(&a);
    let mut s = open(&a, &f);
    // 100 lines of 400 kB (the agent cuts a text over 500,000 characters).
    for i in 0..100 {
        s.append_message(&user(&format!("{i} {}", "y".repeat(400_000))))
            .unwrap();
    }
    s.close().unwrap();
    let r = sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    assert!(
        r.sessions[0].pushed_bytes > 40_000_000,
        "{:?}",
        r.sessions[0]
    );
    let segments = remote
        .keys()
        .iter()
        .filter(|k| k.ends_with(".jsonl"))
        .count();
    assert!(segments >= 2, "{segments} segment(s) for 40 MB");
    sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    assert_eq!(entries(&*b, &f), entries(&*a, &f));
    // One more line: one small segment, the file not read again whole.
    let mut s = open(&a, &f);
    s.append_message(&user("small")).unwrap();
    s.close().unwrap();
    remote.reset_traffic();
    counting.1.set(0);
    let r = sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    assert_eq!(r.sessions[0].pushed_entries, 1);
    assert!(remote.traffic().bytes_put < 1024, "{:?}", remote.traffic());
    assert!(
        counting.1.get() < 64 * 1024,
        "read {} bytes of a 40 MB machine",
        counting.1.get()
    );
}

#[test]
fn a_newer_name_stays_the_name_whichever_machine_set_it_first() {
    // pi's names are `session_info` entries: the latest in the file names the session.
    let (a, b, remote, f) = synced_pair();
    let info = |name: &str, at: &str, parent: &str, id: &str| {
        format!(
            r#"{{"type":"session_info","id":"{id}","parentId":"{parent}","timestamp":"{at}","name":"{name}"}}"#
        )
    };
    let leaf = last_id(&*a, &f);
    // b names it later than a, but a's name reaches b's file after b's own.
    let append = |m: &Rc<dyn Storage>, line: String| {
        let mut text = m.read(&f).unwrap();
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
        m.write(&f, &text).unwrap();
    };
    append(&a, info("older", "2026-01-01T00:00:01.000Z", &leaf, "n-a"));
    append(&b, info("newer", "2026-01-01T00:00:09.000Z", &leaf, "n-b"));
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    for m in [&a, &b] {
        assert_eq!(open(m, &f).session_name().as_deref(), Some("newer"));
    }
}

#[test]
fn a_file_of_an_older_format_is_migrated_and_then_synced_whole() {
    // The agent's first format: entries without ids, which only a migration gives.
    let (a, b, remote) = (machine(1), machine(2), MemoryObjectStore::new());
    let text = include_str!("fixtures/real/historical-session.jsonl");
    let dir = format!("{AGENT}/sessions/-tmp-proj");
    a.mkdir_all(&dir).unwrap();
    let f = format!("{dir}/2025-12-17T19-39-21-535Z_old.jsonl");
    a.write(&f, text.as_bytes()).unwrap();
    let r = sync(a.clone(), AGENT, &remote, &opts()).unwrap();
    assert!(r.sessions[0].migrated);
    let mine = entries(&*a, &f);
    assert!(mine.len() > 100, "{} entries", mine.len());
    assert_eq!(r.sessions[0].pushed_entries, mine.len());
    sync(b.clone(), AGENT, &remote, &opts()).unwrap();
    let theirs = files(&*b).pop().unwrap();
    assert_eq!(entries(&*b, &theirs), mine);
}
