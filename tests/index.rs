//! An open through the session index reads only the lines its context needs, and gives
//! the context the full reader gives: for every file the index describes, for every file
//! it refuses (those are read whole), and whatever the cache holds (missing, stale,
//! corrupt, truncated, another file's, deleted or replaced between opens).

mod common;
use common::ops::*;
use common::*;
use proptest::prelude::*;
use std::cell::Cell;
use std::rc::Rc;
use xcsh_session::api::open_for_context;
use xcsh_session::session::{Persistence, Session};
use xcsh_session::storage::Storage;
use xcsh_session::{IndexCache, Leaf, MemoryStorage, OpenedContext};

/// The context the full reader builds, as JSON (`Err`: its error).
fn whole(storage: &Rc<MemoryStorage>, file: &str, leaf: Option<&str>) -> Result<String, String> {
    // A file of which nothing reads as a session is refused by every reader.
    xcsh_session::api::show_session(storage.clone(), file, AGENT).map_err(|e| e.message)?;
    let s = Session::open(
        storage.clone(),
        file,
        &xcsh_session::OpenOptions {
            persistence: Persistence::ReadOnly,
            agent_dir: AGENT.into(),
            cwd: "/w".into(),
        },
    )
    .map_err(|e| e.to_string())?;
    if let Some(id) = leaf {
        s.entry(id).map_err(|e| e.to_string())?;
    }
    let at = || leaf.map_or(Leaf::Last, Leaf::Id);
    let ctx = s.context_at(at());
    // Any window of its messages is that slice, each made alone.
    let n = ctx.messages.len();
    assert_eq!(s.context_message_count(at()), n);
    for (a, b) in [(0, n), (1, 2), (n / 2, n + 3), (n + 1, n + 2), (2, 1)] {
        let w = s.context_window(at(), a, b);
        let (a, b) = (a.min(b.min(n)), b.min(n));
        assert_is_slice(&w, &ctx, a, b);
    }
    // Its state alone (no message made) is the context without its messages.
    let mut bare = s.context_at(at());
    bare.messages.clear();
    bare.entry_ids.clear();
    assert_eq!(s.context_state(at()).to_json(), bare.to_json());
    Ok(ctx.to_json())
}

/// `w` is messages `a..b` of `ctx`, with their entries' ids.
fn assert_is_slice(
    w: &xcsh_session::ContextWindow,
    ctx: &xcsh_session::context::SessionContext,
    a: usize,
    b: usize,
) {
    assert_eq!(w.start, a);
    let strings = |v: &[std::borrow::Cow<str>]| v.iter().map(|m| m.to_string()).collect::<Vec<_>>();
    assert_eq!(w.messages, strings(&ctx.messages[a..b]));
    assert_eq!(
        w.ids,
        ctx.entry_ids[a..b]
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
    );
}

/// The context through `open_for_context`, and whether the index was used.
fn indexed(
    storage: Rc<dyn Storage>,
    file: &str,
    leaf: Option<&str>,
    cache: IndexCache,
) -> Result<(String, bool), String> {
    checked(storage, file, leaf, cache).map(|(c, t, _)| (c, t))
}

/// [`indexed`], and where the lines it checked start; streamed from the file or built in
/// memory, the same.
fn checked(
    storage: Rc<dyn Storage>,
    file: &str,
    leaf: Option<&str>,
    cache: IndexCache,
) -> Result<(String, bool, Vec<u64>), String> {
    let streamed = checked_once(storage.clone(), file, leaf, cache, true);
    let built = checked_once(storage, file, leaf, cache, false);
    assert_eq!(
        streamed.as_ref().map(|s| (&s.0, s.1)),
        built.as_ref().map(|b| (&b.0, b.1))
    );
    built
}

fn checked_once(
    storage: Rc<dyn Storage>,
    file: &str,
    leaf: Option<&str>,
    cache: IndexCache,
    stream: bool,
) -> Result<(String, bool, Vec<u64>), String> {
    xcsh_session::internals::set_stream_above(if stream { 0 } else { 64 << 20 });
    let o = open_for_context(storage, file, AGENT, leaf, cache).map_err(|e| e.message.clone())?;
    let lines = match &o {
        OpenedContext::Path(p) => p.checked_lines(),
        OpenedContext::Whole(..) => Vec::new(),
    };
    if let OpenedContext::Path(p) = &o {
        // At 0, every context that shows more than a summary is streamed.
        let ctx: serde_json::Value = serde_json::from_str(&o.context().unwrap().to_json()).unwrap();
        let messages = ctx["messages"].as_array().unwrap().len();
        assert!(!p.streamed() || stream);
        assert!(
            p.streamed() || !stream || messages <= 1,
            "{messages} messages, not streamed"
        );
    }

    let json = o.context().map_err(|e| e.to_string())?.to_json();
    // Any window of the messages is that slice of the context's, with its entries' ids.
    let ctx = o.context().map_err(|e| e.to_string())?;
    let n = ctx.messages.len();
    assert_eq!(o.message_count(), n);
    for (a, b) in [
        (0, n),
        (0, 1),
        (n / 2, n / 2 + 3),
        (n.saturating_sub(2), n + 5),
        (n + 1, n + 2),
        (3, 1),
    ] {
        let w = o.window(a, b).map_err(|e| e.to_string())?;
        let (a, b) = (a.min(b.min(n)), b.min(n));
        assert_is_slice(&w, &ctx, a, b);
        let parsed: serde_json::Value = serde_json::from_str(&w.to_json()).unwrap();
        assert_eq!(parsed["messages"].as_array().unwrap().len(), b - a);
    }
    let mut bare = o.context().map_err(|e| e.to_string())?;
    bare.messages.clear();
    bare.entry_ids.clear();
    assert_eq!(o.state().unwrap().to_json(), bare.to_json());
    // Streamed or built, the reader hands out the same bytes, and says how many first.
    let mut reader = o.json_reader();
    let total = reader.total_bytes().unwrap();
    let mut read = Vec::new();
    while reader
        .read_into(&mut read, 777)
        .map_err(|e| e.to_string())?
        > 0
    {}
    assert_eq!(String::from_utf8(read).unwrap(), json);
    assert_eq!(total, json.len());
    Ok((json, o.through_index(), lines))
}

/// One open (built in memory) through the cached index: its context, and whether the
/// index was used.
fn once(storage: Rc<dyn Storage>, file: &str, leaf: Option<&str>) -> (String, bool) {
    let (c, t, _) = checked_once(storage, file, leaf, IndexCache::Use, false).unwrap();
    (c, t)
}

fn same(storage: &Rc<MemoryStorage>, file: &str, leaf: Option<&str>, cache: IndexCache) -> bool {
    let want = whole(storage, file, leaf);
    let got = indexed(storage.clone(), file, leaf, cache);
    match (&want, &got) {
        (Ok(w), Ok((g, _))) => w == g,
        (Err(_), Err(_)) => true,
        _ => false,
    }
}

fn cache_files(storage: &MemoryStorage) -> Vec<String> {
    xcsh_session::storage::files_under(storage, "/agent/cache").unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// Every leaf of a clean file: the same context, read through the index.
    #[test]
    fn a_context_through_the_index_is_the_full_readers(ops in proptest::collection::vec(op(), 0..40), pick in any::<usize>()) {
        let storage = mem();
        let (file, ids) = written(&storage, &ops);
        for leaf in [None, Some(ids[pick % ids.len()].as_str()), Some(ids[0].as_str())] {
            let want = whole(&storage, &file, leaf).unwrap();
            for cache in [IndexCache::Off, IndexCache::Use, IndexCache::Use] {
                let (got, through) = indexed(storage.clone(), &file, leaf, cache).unwrap();
                prop_assert!(through, "a clean file is read through its index");
                prop_assert_eq!(&got, &want);
            }
        }
        prop_assert_eq!(cache_files(&storage).len(), 1);
    }

    /// Damage of every kind (torn, glued, duplicated, blanked, flipped bytes, a BOM, CRLF,
    /// an older version): the same context (or the same error) as the full reader, except
    /// where a line the open did not need is unreadable. The index reads only the leading
    /// keys of a line it does not need (lazy validation): such a line still links its
    /// children as its keys say, where the full reader drops it.
    #[test]
    fn a_damaged_file_gives_the_full_readers_context(ops in proptest::collection::vec(op(), 0..25), damage in proptest::collection::vec((0u8..8, any::<usize>(), any::<u8>()), 1..4), pick in any::<usize>()) {
        let storage = mem();
        let (file, ids) = written(&storage, &ops);
        // Indexed (and cached) before the damage too: a stale cache must not count.
        let _ = indexed(storage.clone(), &file, None, IndexCache::Use);
        let mut bytes = storage.read(&file).unwrap();
        for (kind, at, byte) in damage {
            let n = bytes.len().max(1);
            let at = at % n;
            let line_start = bytes[..at].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
            match kind {
                0 => bytes.truncate(at),
                1 => if let Some(i) = bytes[at..].iter().position(|&c| c == b'\n') { bytes.remove(at + i); },
                2 => { let end = bytes[at..].iter().position(|&c| c == b'\n').map_or(bytes.len(), |i| at + i + 1); let line = bytes[line_start..end].to_vec(); bytes.splice(end..end, line); }
                3 => if at < bytes.len() { bytes[at] = byte },
                4 => bytes.splice(line_start..line_start, b"not json\n".iter().copied()).for_each(drop),
                5 => bytes.splice(0..0, "\u{feff}".bytes()).for_each(drop),
                6 => { let crlf: Vec<u8> = bytes.iter().flat_map(|&c| if c == b'\n' { vec![b'\r', b'\n'] } else { vec![c] }).collect(); bytes = crlf; }
                _ => { let s = String::from_utf8_lossy(&bytes).replacen("\"version\":3", "\"version\":2", 1); bytes = s.into_bytes(); }
            }
        }
        storage.write(&file, &bytes).unwrap();
        let full = Session::open(
            storage.clone(),
            &file,
            &xcsh_session::OpenOptions { persistence: Persistence::ReadOnly, agent_dir: AGENT.into(), cwd: "/w".into() },
        );
        // Where the full reader found something it could not read.
        let unreadable: Vec<u64> = full.as_ref().map(|s| {
            let r = s.report();
            r.non_entries.iter().map(|n| n.offset as u64).chain(r.issues.iter().map(|i| i.offset as u64)).collect()
        }).unwrap_or_default();
        // Anything the full reader skipped or repaired (a glued record too).
        let lossy = full.as_ref().map(|s| s.report().lossy() || !s.report().issues.is_empty()).unwrap_or(false);
        for leaf in [None, Some(ids[pick % ids.len()].as_str())] {
            for cache in [IndexCache::Use, IndexCache::Off, IndexCache::Use] {
                let want = whole(&storage, &file, leaf);
                let got = checked(storage.clone(), &file, leaf, cache);
                let agree = match (&want, &got) {
                    (Ok(w), Ok((g, _, _))) => w == g,
                    (Err(_), Err(_)) => true,
                    _ => false,
                };
                if agree {
                    continue;
                }
                // Only ever a line the full reader could not read, and the open did not.
                let read = got.as_ref().map(|g| g.2.clone()).unwrap_or_default();
                let unread = unreadable.iter().any(|at| !read.contains(at));
                prop_assert!(lossy && unread && got.as_ref().is_ok_and(|g| g.1), "leaf {:?}, cache {:?} lossy {} unread {} {:?} {:?} {:?}\n{}", leaf, cache, lossy, unread, unreadable, read, got.as_ref().map(|g| g.1), String::from_utf8_lossy(&bytes));
            }
        }
    }

    /// Whatever the cache file holds, the result is the full reader's.
    #[test]
    fn a_bad_cache_never_changes_a_context(ops in proptest::collection::vec(op(), 0..25), harm in 0u8..6, at in any::<usize>(), byte in any::<u8>(), extra in proptest::collection::vec(op(), 0..5)) {
        let storage = mem();
        let (file, _) = written(&storage, &ops);
        let _ = indexed(storage.clone(), &file, None, IndexCache::Use).unwrap();
        let cache = cache_files(&storage).pop().unwrap();
        let mut c = storage.read(&cache).unwrap();
        match harm {
            0 => { let i = at % c.len(); c[i] ^= byte | 1; }
            1 => c.truncate(at % c.len()),
            2 => c.clear(),
            3 => {
                // Another session's cache, under this file's name.
                let other = mem();
                let (f2, _) = written(&other, &extra);
                let _ = indexed(other.clone(), &f2, None, IndexCache::Use).unwrap();
                c = other.read(&cache_files(&other).pop().unwrap()).unwrap();
            }
            4 => { storage.unlink(&cache).unwrap(); c = Vec::new(); }
            _ => {}
        }
        if harm != 4 {
            storage.write(&cache, &c).unwrap();
        }
        // And the file itself rewritten (another session at the same path) or appended to.
        if harm == 5 {
            let other = mem();
            let (f2, _) = written(&other, &extra);
            storage.write(&file, &other.read(&f2).unwrap()).unwrap();
        } else if !extra.is_empty() {
            let mut s = open(&storage, &file, Persistence::Persistent);
            for op in &extra { apply(&mut s, op); }
        }
        prop_assert!(same(&storage, &file, None, IndexCache::Use));
        prop_assert!(same(&storage, &file, None, IndexCache::Use));
    }
}

#[test]
fn a_reopen_reads_the_cache_and_the_path_not_the_file() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&assistant("first")).unwrap();
    let mut branch_point = String::new();
    for i in 0..400 {
        let id = s
            .append_message(&user(&format!("a long question {i} {}", "x".repeat(400))))
            .unwrap();
        s.append_message(&assistant(&format!("answer {i}")))
            .unwrap();
        if i == 200 {
            branch_point = id;
        }
    }
    let file = s.file().unwrap().to_string();
    let size = storage.read(&file).unwrap().len() as u64;
    let counting = Rc::new(CountingReads::new(storage.clone()));
    // A leaf far from the end: its path is half the file.
    let short = s
        .entries()
        .iter()
        .position(|e| e.id == branch_point)
        .unwrap()
        + 1;
    let leaf = s.entries()[short].id.clone();
    drop(s);

    let first = once(counting.clone(), &file, Some(&leaf));
    assert!(first.1);
    let scanned = counting.bytes.replace(0);
    assert!(
        scanned >= size,
        "the first open scans the file: {scanned} of {size}"
    );

    let again = once(counting.clone(), &file, Some(&leaf));
    assert_eq!(again, first);
    let reread = counting.bytes.replace(0);
    assert!(
        reread < size * 6 / 10,
        "a reopen reads the cache and the path: {reread} of {size}"
    );
    assert_eq!(again.0, whole(&storage, &file, Some(&leaf)).unwrap());

    // Appended to: only the new bytes are scanned (and the path read).
    let mut s = open(&storage, &file, Persistence::Persistent);
    s.append_message(&user("one more")).unwrap();
    drop(s);
    let grown = storage.read(&file).unwrap().len() as u64;
    let after = once(counting.clone(), &file, None);
    assert!(after.1);
    assert_eq!(after.0, whole(&storage, &file, None).unwrap());
    let appended_scan = counting.bytes.replace(0);
    assert!(appended_scan < grown + grown / 10 + 4096, "{appended_scan}");
    let cached = once(counting.clone(), &file, Some(&leaf));
    assert_eq!(cached, first);
    assert!(counting.bytes.get() < size * 6 / 10);
}

#[test]
fn with_the_cache_off_nothing_is_written() {
    let storage = mem();
    let (file, _) = written(&storage, &[Op::User("x".into())]);
    let (ctx, through) = indexed(storage.clone(), &file, None, IndexCache::Off).unwrap();
    assert!(through);
    assert_eq!(ctx, whole(&storage, &file, None).unwrap());
    assert!(cache_files(&storage).is_empty());
    // And the cache is under the agent dir, never beside the sessions.
    let _ = indexed(storage.clone(), &file, None, IndexCache::Use).unwrap();
    let cached = cache_files(&storage);
    assert_eq!(cached.len(), 1);
    assert!(cached[0].starts_with("/agent/cache/index/"), "{cached:?}");
}

#[test]
fn an_unknown_leaf_and_a_missing_file_are_the_errors_of_the_full_reader() {
    let storage = mem();
    let (file, _) = written(&storage, &[]);
    let err = open_for_context(storage.clone(), &file, AGENT, Some("nope"), IndexCache::Use)
        .err()
        .unwrap();
    assert_eq!(err.kind, xcsh_session::api::ErrorKind::EntryNotFound);
    let err = open_for_context(
        storage.clone(),
        "/nowhere.jsonl",
        AGENT,
        None,
        IndexCache::Use,
    )
    .err()
    .unwrap();
    assert_eq!(err.kind, xcsh_session::api::ErrorKind::NotFound);
}

#[test]
fn a_streamed_context_is_read_from_the_file_and_refuses_one_rewritten_since() {
    xcsh_session::internals::set_stream_above(0);
    let storage = mem();
    let ops: Vec<Op> = (0..30).map(|i| Op::User(format!("q{i}"))).collect();
    let (file, _) = written(&storage, &ops);
    let want = whole(&storage, &file, None).unwrap();
    let opened = open_for_context(storage.clone(), &file, AGENT, None, IndexCache::Off).unwrap();
    let OpenedContext::Path(p) = &opened else {
        panic!("read through the index")
    };
    assert!(p.streamed());
    // Appended to after the open: what it shows is where it was.
    let mut s = open(&storage, &file, Persistence::Persistent);
    s.append_message(&user("later")).unwrap();
    drop(s);
    let mut out = Vec::new();
    opened
        .json_reader()
        .read_into(&mut out, usize::MAX)
        .unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), want);
    // Rewritten: a line is no longer where it was, and reading says so.
    let text = read(&storage, &file).replacen("\"q1", "\"Q11", 1);
    storage.write(&file, text.as_bytes()).unwrap();
    let err = opened
        .json_reader()
        .read_into(&mut Vec::new(), usize::MAX)
        .unwrap_err();
    assert!(
        err.to_string().contains("changed while it was being read"),
        "{err}"
    );
    let err = opened.context().err().unwrap();
    assert!(
        matches!(err, xcsh_session::SessionError::ChangedWhileRead { .. }),
        "{err}"
    );
    xcsh_session::internals::set_stream_above(64 << 20);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]

    /// A line appended while an open reads the file (by the agent, which takes no lock):
    /// the open gives the context of the file as it was, or as it became; the appended
    /// bytes stay (an open never writes the session); the next opens see them, and a
    /// half-written line only once it is whole.
    #[test]
    fn appends_racing_an_open_lose_nothing(ops in proptest::collection::vec(op(), 0..20), at in 0usize..6, half in any::<bool>(), cache in any::<bool>()) {
        let storage = mem();
        let (file, ids) = written(&storage, &ops);
        let cache = if cache { IndexCache::Use } else { IndexCache::Off };
        if cache == IndexCache::Use {
            let _ = indexed(storage.clone(), &file, None, cache);
        }
        let before = whole(&storage, &file, None).unwrap();
        let (now, later) = racer_line(ids.last().unwrap(), half);
        let (now, later) = (now.as_str(), later.as_str());
        let racing = Rc::new(AppendsDuring { inner: storage.clone(), file: file.clone(), at, text: now.to_string(), calls: Cell::new(0) });
        let got = checked_once(racing.clone(), &file, None, cache, at % 2 == 0).unwrap().0;
        if racing.calls.get() <= at {
            storage.append(&file, now.as_bytes()).unwrap(); // the open read less: after it
        }
        let after = whole(&storage, &file, None).unwrap();
        prop_assert!(got == before || got == after, "neither the file before nor after the append");
        prop_assert!(read(&storage, &file).ends_with(now), "the appended bytes are there");
        prop_assert_eq!(indexed(storage.clone(), &file, None, cache).unwrap().0, after);
        storage.append(&file, later.as_bytes()).unwrap();
        let (ctx, through) = indexed(storage.clone(), &file, None, cache).unwrap();
        prop_assert_eq!(&ctx, &whole(&storage, &file, None).unwrap());
        prop_assert!(through, "the whole line is indexed");
        prop_assert!(ctx.contains("\"late\""));
    }
}

#[test]
fn gc_removes_the_cached_index_of_a_session_that_is_gone_and_keeps_the_others() {
    let storage = mem();
    let (kept, _) = written(&storage, &[Op::User("a".into())]);
    let (gone, _) = written(&storage, &[Op::User("b".into())]);
    for file in [&kept, &gone] {
        assert!(
            indexed(storage.clone(), file, None, IndexCache::Use)
                .unwrap()
                .1
        );
    }
    let caches = cache_files(&storage);
    assert_eq!(caches.len(), 2);
    storage.unlink(&gone).unwrap();
    storage
        .write("/agent/cache/index/0000.idx", b"not an index")
        .unwrap();
    let name = |p: &str| p.rsplit('/').next().unwrap().to_string();
    let gone_cache = caches
        .iter()
        .find(|c| String::from_utf8_lossy(&storage.read(c).unwrap()).contains(gone.as_str()))
        .map(|c| name(c))
        .unwrap();
    let mut want = vec!["0000.idx".to_string(), gone_cache];
    want.sort();
    let options = |dry_run| xcsh_session::GcOptions {
        dry_run,
        ..Default::default()
    };
    let dry = xcsh_session::collect_garbage(&*storage, AGENT, options(true)).unwrap();
    assert_eq!(dry.stale_indexes, want);
    assert_eq!(cache_files(&storage).len(), 3, "a dry run removes nothing");
    let done = xcsh_session::collect_garbage(&*storage, AGENT, options(false)).unwrap();
    assert_eq!(done.stale_indexes, want);
    let left = cache_files(&storage);
    assert_eq!(left.len(), 1);
    assert!(String::from_utf8_lossy(&storage.read(&left[0]).unwrap()).contains(kept.as_str()));
    // The kept session's index still serves it.
    assert_eq!(
        indexed(storage.clone(), &kept, None, IndexCache::Use)
            .unwrap()
            .0,
        whole(&storage, &kept, None).unwrap()
    );
}

/// Counts the fsyncs asked of the storage under it.
struct CountingSyncs {
    inner: Rc<MemoryStorage>,
    syncs: Cell<usize>,
}

impl xcsh_session::storage::Layer for CountingSyncs {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn fsync(&self, path: &str) -> xcsh_session::storage::StorageResult<()> {
        self.syncs.set(self.syncs.get() + 1);
        self.inner.fsync(path)
    }
}

/// The cache is written without waiting for the disk (a first open after a copy would
/// wait for the copy's bytes too): a power cut may leave it empty or cut short, and such
/// a cache is read as none and written again.
#[test]
fn the_cache_is_written_without_an_fsync_and_a_cache_cut_short_is_written_again() {
    let storage = mem();
    let (file, _) = written(
        &storage,
        &[Op::User("x".into()), Op::Assistant("y".into(), 0)],
    );
    let expected = whole(&storage, &file, None).unwrap();
    let counting = Rc::new(CountingSyncs {
        inner: storage.clone(),
        syncs: Cell::new(0),
    });
    let (ctx, through) = indexed(counting.clone(), &file, None, IndexCache::Use).unwrap();
    assert!(through);
    assert_eq!(ctx, expected);
    assert_eq!(cache_files(&storage).len(), 1, "the cache is written");
    assert_eq!(counting.syncs.get(), 0, "and not fsynced");

    let cache = cache_files(&storage).remove(0);
    let full = storage.read(&cache).unwrap();
    for cut in [0, 7, full.len() / 2, full.len() - 1] {
        storage.write(&cache, &full[..cut]).unwrap();
        assert_eq!(
            indexed(storage.clone(), &file, None, IndexCache::Use)
                .unwrap()
                .0,
            expected
        );
        assert_eq!(
            storage.read(&cache).unwrap(),
            full,
            "written again whole after a cut at {cut}"
        );
    }
}

/// Records the largest write or append under the cache directory, and how many there were.
struct CacheWrites {
    inner: Rc<MemoryStorage>,
    largest: Cell<usize>,
    calls: Cell<usize>,
}

impl CacheWrites {
    fn note(&self, path: &str, n: usize) {
        if path.starts_with("/agent/cache/") {
            self.largest.set(self.largest.get().max(n));
            self.calls.set(self.calls.get() + 1);
        }
    }
}

impl xcsh_session::storage::Layer for CacheWrites {
    fn inner(&self) -> &dyn Storage {
        &*self.inner
    }
    fn write(&self, path: &str, data: &[u8]) -> xcsh_session::storage::StorageResult<()> {
        self.note(path, data.len());
        self.inner.write(path, data)
    }
    fn append(&self, path: &str, data: &[u8]) -> xcsh_session::storage::StorageResult<()> {
        self.note(path, data.len());
        self.inner.append(path, data)
    }
}

/// A large index is written a piece at a time as it is encoded, never held whole (a 1 GB
/// session's is tens of megabytes, and a host copies what it is handed), and reads back
/// as the index it was.
#[test]
fn a_large_cache_is_written_in_pieces_and_reads_back_whole() {
    let storage = mem();
    let file = "/agent/sessions/--w--/big.jsonl";
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"big\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    );
    let mut parent = String::from("null");
    for i in 0..45_000 {
        let id = format!("{i:08x}");
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":[{{\"type\":\"text\",\"text\":\"m{i}\"}}],\"timestamp\":1}}}}\n"
        ));
        parent = format!("\"{id}\"");
    }
    put(&storage, file, &text);
    let expected = whole(&storage, file, Some("000057e3")).unwrap();
    let writes = Rc::new(CacheWrites {
        inner: storage.clone(),
        largest: Cell::new(0),
        calls: Cell::new(0),
    });
    assert_eq!(
        indexed(writes.clone(), file, Some("000057e3"), IndexCache::Use).unwrap(),
        (expected.clone(), true)
    );
    let cache = cache_files(&storage).remove(0);
    let size = storage.read(&cache).unwrap().len();
    assert!(size > 1 << 20, "a cache of {size} bytes");
    assert!(writes.calls.get() >= 2, "{} writes", writes.calls.get());
    assert!(
        writes.largest.get() <= 3 << 19,
        "the largest write {} of {size} bytes",
        writes.largest.get()
    );
    // It reads back: a reopen reads the cache, not the file again.
    let counting = Rc::new(CountingReads::new(storage.clone()));
    assert_eq!(
        once(counting.clone(), file, Some("000057e3")),
        (expected, true)
    );
    assert!(
        counting.bytes.get() < size as u64 + text.len() as u64 * 6 / 10,
        "{} bytes read",
        counting.bytes.get()
    );
}

/// A session of `n` long user messages (each with its answer): long enough that the
/// cache's check (the header and the last 4 KiB) does not cover its first lines. Its
/// file, and its context opened twice (streamed, the cache on): the first open notes the
/// messages it may copy, the second copies them.
fn noted(n: usize) -> (Rc<MemoryStorage>, String) {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&assistant("first")).unwrap();
    for i in 0..n {
        s.append_message(&user(&format!("q{i} {}", "x".repeat(150))))
            .unwrap();
        s.append_message(&assistant(&format!("a{i}"))).unwrap();
    }
    let file = s.file().unwrap().to_string();
    drop(s);
    xcsh_session::internals::set_stream_above(0);
    for _ in 0..2 {
        let _ = checked_once(storage.clone(), &file, None, IndexCache::Use, true).unwrap();
    }
    (storage, file)
}

/// `bytes` written as the file, its mtime set back: a change the cache's own check
/// (length, mtime, header, last bytes) cannot see.
fn write_unseen(storage: &MemoryStorage, file: &str, bytes: &[u8]) {
    let mtime = storage.stat(file).unwrap().mtime_ms;
    storage.write(file, bytes).unwrap();
    storage.set_mtime(file, mtime);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// A message the index noted as copyable (its line's checksum), whose line was then
    /// changed in place (same length, same mtime, the header and the tail as they were):
    /// its line is parsed and checked again, and the context is the full reader's.
    #[test]
    fn a_noted_line_changed_in_place_gives_the_full_readers_context(n in 30usize..50, line in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let (storage, file) = noted(n);
        let mut bytes = storage.read(&file).unwrap();
        let starts: Vec<usize> = std::iter::once(0)
            .chain(bytes.iter().enumerate().filter(|(_, &c)| c == b'\n').map(|(i, _)| i + 1))
            .collect();
        // A line after the header and the first entry, well before the last 4 KiB.
        let k = 2 + line.index(n);
        let (start, end) = (starts[k], starts[k + 1] - 1);
        let pos = start + at.index(end - start);
        prop_assume!(bytes[pos] != byte);
        bytes[pos] = byte;
        write_unseen(&storage, &file, &bytes);
        let ok = same(&storage, &file, None, IndexCache::Use);
        xcsh_session::internals::set_stream_above(64 << 20);
        prop_assert!(ok);
    }
}

/// The same change, one that keeps the line a valid entry: a space before the message
/// and one character fewer in it. Its message is no longer where the note says.
#[test]
fn a_noted_message_moved_within_its_line_is_read_where_it_is_now() {
    let (storage, file) = noted(40);
    let text = read(&storage, &file);
    let moved = text.replacen(
        r#""message":{"role":"user","content":[{"type":"text","text":"q3 x"#,
        r#""message": {"role":"user","content":[{"type":"text","text":"q3 "#,
        1,
    );
    assert_ne!(moved, text);
    assert_eq!(moved.len(), text.len());
    write_unseen(&storage, &file, moved.as_bytes());
    let want = whole(&storage, &file, None).unwrap();
    let (got, through, _) =
        checked_once(storage.clone(), &file, None, IndexCache::Use, true).unwrap();
    xcsh_session::internals::set_stream_above(64 << 20);
    assert!(through);
    assert_eq!(got, want);
}

/// A reopen parses none of the message lines the first open noted: it copies their
/// messages (the same bytes), and reads as few other lines as the first open did.
#[test]
fn a_reopen_copies_the_messages_it_noted_without_parsing_their_lines() {
    let storage = mem();
    let mut s = create(&storage);
    s.append_message(&assistant("first")).unwrap();
    for i in 0..40 {
        s.append_message(&user(&format!("q{i} {}", "x".repeat(150))))
            .unwrap();
        s.append_message(&assistant(&format!("a{i}"))).unwrap();
    }
    let file = s.file().unwrap().to_string();
    drop(s);
    let want = whole(&storage, &file, None).unwrap();
    xcsh_session::internals::set_stream_above(0);
    let open = || {
        let before = xcsh_session::internals::lines_parsed();
        let o = open_for_context(storage.clone(), &file, AGENT, None, IndexCache::Use).unwrap();
        let mut json = Vec::new();
        o.json_reader().read_into(&mut json, usize::MAX).unwrap();
        let total = o.json_reader().total_bytes().unwrap();
        let parsed = xcsh_session::internals::lines_parsed() - before;
        (String::from_utf8(json).unwrap(), total, parsed)
    };
    let first = open();
    let again = open();
    xcsh_session::internals::set_stream_above(64 << 20);
    assert_eq!(first.0, want);
    assert_eq!(again.0, want);
    assert_eq!((first.1, again.1), (want.len(), want.len()));
    // The first open parses its 81 message lines (at open, and again as its JSON is
    // read); the reopen only the few it reads for the state (the assistant messages that
    // set the model: the first and the last).
    assert!(first.2 >= 81, "{}", first.2);
    assert!(again.2 <= 4, "the reopen parsed {} lines", again.2);
}
