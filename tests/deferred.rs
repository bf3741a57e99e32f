//! A session opened lazily (`Session::open_deferred`, the drop-in's `SessionManager.open`)
//! behaves as one read whole: the same context, the same appends with the same ids, the
//! same entries, tree, report and file once its entries are read; and it reads only the
//! index, the header, the last line and the leaf's path until something needs more.

mod common;
use common::ops::*;
use common::*;
use proptest::prelude::*;
use std::rc::Rc;
use xcsh_session::api::open_for_context;
use xcsh_session::session::{OpenOptions, Persistence, Session};
use xcsh_session::storage::Storage;
use xcsh_session::{IndexCache, MemoryStorage, SessionError};

fn writer() -> OpenOptions {
    OpenOptions {
        persistence: Persistence::Persistent,
        agent_dir: AGENT.into(),
        cwd: "/w".into(),
    }
}

/// Does applying `op` look entries up (so a lazy session reads them first, as its shells do)?
fn names_an_entry(op: &Op) -> bool {
    matches!(
        op,
        Op::Label(_) | Op::Branch(_) | Op::Compact(..) | Op::Summary(_)
    )
}

/// What a session holds once read: entries, leaf, tree, labels, report, context.
fn state(s: &Session) -> String {
    let entries: Vec<String> = s
        .entries()
        .iter()
        .map(|e| s.entry_json(e).into_owned())
        .collect();
    let labels: Vec<Option<&str>> = s.entries().iter().map(|e| s.label(&e.id)).collect();
    format!(
        "{entries:?}\n{:?}\n{}\n{labels:?}\n{}\n{}\n{:?}",
        s.leaf_id(),
        s.tree().to_json(s),
        xcsh_session::api::report_json(s.report()),
        s.context().to_json(),
        s.warnings(),
    )
}

/// Two identical storages holding the session `ops` write (the same ids and clock), the
/// index cached in both when `cache`.
fn twins(ops: &[Op], cache: bool) -> (Rc<MemoryStorage>, Rc<MemoryStorage>, String) {
    let (a, b) = (mem(), mem());
    let (file, _) = written(&a, ops);
    written(&b, ops);
    if cache {
        for s in [&a, &b] {
            open_for_context(s.clone(), &file, AGENT, None, IndexCache::Use).unwrap();
        }
    }
    (a, b, file)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Opened lazily (its index cached or not, the cache stale or not), resumed (the
    /// context, then appends of every kind, reading the entries only where an operation
    /// names one, or at a random point), then read: everything is as for a session read
    /// whole, and so is the file.
    #[test]
    fn a_lazy_session_is_a_whole_one(ops in proptest::collection::vec(op(), 0..25), since in proptest::collection::vec(op(), 0..4), more in proptest::collection::vec(op(), 0..12), cache in any::<bool>(), read_at in any::<usize>()) {
        let (a, b, file) = twins(&ops, cache);
        // Entries appended after the index was cached: a lazy open reads the cache and
        // scans what was appended since.
        for storage in [&a, &b] {
            let mut s = Session::open(storage.clone(), &file, &writer()).unwrap();
            for op in &since {
                apply(&mut s, op);
            }
        }
        if cache && !since.is_empty() {
            // The lazy open brings the stale cache up to date (a write, a tick of the
            // memory clock): so does the whole one's twin, so that both draw the same ids.
            open_for_context(a.clone(), &file, AGENT, None, IndexCache::Use).unwrap();
        }
        let mut whole = Session::open(a.clone(), &file, &writer()).unwrap();
        let use_cache = if cache { IndexCache::Use } else { IndexCache::Off };
        let mut lazy = Session::open_deferred(b.clone(), &file, &writer(), use_cache).unwrap();
        prop_assert!(lazy.is_deferred());
        prop_assert_eq!(lazy.header().to_json(), whole.header().to_json());
        prop_assert_eq!(lazy.leaf_id(), whole.leaf_id());
        let opened = lazy.deferred_context().expect("an unchanged lazy session answers through the index");
        prop_assert!(opened.through_index());
        prop_assert_eq!(opened.context().unwrap().to_json(), whole.context().to_json());
        // The title a viewer shows, through the index too.
        prop_assert_eq!(lazy.deferred_title(8), Some(xcsh_session::listing::session_title(&whole, 8)));
        prop_assert!(lazy.is_deferred());
        let read_at = read_at % (more.len() + 1);
        for (k, op) in more.iter().enumerate() {
            if names_an_entry(op) || k == read_at {
                lazy.materialize().unwrap();
            }
            apply(&mut whole, op);
            apply(&mut lazy, op);
            prop_assert_eq!(lazy.leaf_id(), whole.leaf_id());
        }
        // Appended to, it no longer answers from the index: its shells read it.
        prop_assert!(lazy.deferred_context().is_none() || lazy.is_deferred() && more.is_empty());
        lazy.materialize().unwrap();
        prop_assert!(!lazy.is_deferred());
        prop_assert_eq!(state(&lazy), state(&whole));
        prop_assert_eq!(read(&b, &file), read(&a, &file));
        // What it writes next is what the whole one writes.
        apply(&mut whole, &Op::User("after".into()));
        apply(&mut lazy, &Op::User("after".into()));
        lazy.rewrite_entries().unwrap();
        whole.rewrite_entries().unwrap();
        prop_assert_eq!(read(&b, &file), read(&a, &file));
    }
}

/// A session of `n` exchanges (user, assistant) with long text, and its file.
fn long_session(storage: &Rc<MemoryStorage>, n: usize) -> String {
    let mut s = create(storage);
    for i in 0..n {
        s.append_message(&user(&format!("question {i} {}", "x".repeat(2000))))
            .unwrap();
        s.append_message(&assistant(&format!("answer {i} {}", "y".repeat(2000))))
            .unwrap();
    }
    s.compact_for_test();
    s.file().unwrap().to_string()
}

trait CompactForTest {
    fn compact_for_test(&mut self);
}

impl CompactForTest for Session {
    /// A compaction keeping the last exchange: the context is small.
    fn compact_for_test(&mut self) {
        let kept = self.entries()[self.entries().len() - 2].id.clone();
        let c = xcsh_session::session::CompactionInput {
            summary: "earlier work".into(),
            first_kept_entry_id: kept,
            tokens_before: 1000,
            ..Default::default()
        };
        self.append_compaction(&c).unwrap();
        self.append_message(&user("go on")).unwrap();
    }
}

#[test]
fn resuming_lazily_reads_the_index_and_the_path_not_the_file() {
    let storage = mem();
    let file = long_session(&storage, 200);
    let size = storage.stat(&file).unwrap().size;
    // The first open scans (and caches the index); the reopen reads the cache.
    for (round, most) in [(0, size + size / 8), (1, size / 20)] {
        let counting = Rc::new(CountingReads::new(storage.clone()));
        let mut s =
            Session::open_deferred(counting.clone(), &file, &writer(), IndexCache::Use).unwrap();
        let context = s.deferred_context().unwrap().context().unwrap().to_json();
        assert!(context.contains("earlier work") && context.contains("go on"));
        s.append_message(&assistant("resumed")).unwrap();
        s.append_message(&user("and then")).unwrap();
        s.flush().unwrap();
        assert!(
            s.is_deferred(),
            "round {round}: appends leave the entries in the file"
        );
        let read = counting.bytes.get();
        assert!(
            read <= most,
            "round {round}: read {read} bytes of a {size}-byte file (at most {most})"
        );
        // The entries, when asked for, are the file's: the appends included.
        s.materialize().unwrap();
        let texts: Vec<String> = s.entries().iter().map(|e| e.json().to_string()).collect();
        assert!(texts.last().unwrap().contains("and then"));
        assert_eq!(texts.len(), 400 + 2 + 2 + 2 * round);
    }
}

#[test]
fn a_file_the_index_cannot_describe_is_read_whole_at_the_open() {
    let storage = mem();
    let file = long_session(&storage, 3);
    let text = read(&storage, &file);
    let cases = [
        // The last line's leading keys are fine, the rest is not JSON: the leaf must be
        // the one the whole read keeps.
        format!(
            "{}{{\"type\":\"message\",\"id\":\"ffff0001\",\"parentId\":null,broken\n",
            text
        ),
        // No final newline.
        text.trim_end().to_string(),
        // An older version.
        text.replacen("\"version\":3", "\"version\":2", 1),
    ];
    for damaged in cases {
        put(&storage, &file, &damaged);
        for cache in [IndexCache::Use, IndexCache::Off] {
            let lazy = Session::open_deferred(storage.clone(), &file, &writer(), cache).unwrap();
            assert!(!lazy.is_deferred());
            let lazy_state = state(&lazy);
            drop(lazy);
            let whole_state = state(&Session::open(storage.clone(), &file, &writer()).unwrap());
            assert_eq!(lazy_state, whole_state);
        }
    }
}

#[test]
fn a_line_appended_by_another_program_makes_the_next_write_a_conflict_and_is_kept() {
    let storage = mem();
    let file = long_session(&storage, 3);
    let mut lazy =
        Session::open_deferred(storage.clone(), &file, &writer(), IndexCache::Use).unwrap();
    // The agent takes no lock: it appends while this session is open.
    let theirs = r#"{"type":"custom","customType":"theirs","id":"0000beef","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#;
    storage
        .append(&file, format!("{theirs}\n").as_bytes())
        .unwrap();
    let refused = lazy.append_message(&user("mine")).unwrap_err();
    assert!(
        matches!(refused, SessionError::ExternallyModified { .. }),
        "{refused:?}"
    );
    assert!(read(&storage, &file).ends_with(&format!("{theirs}\n")));
    // Reading the entries reads those it indexed: the session is the one it opened.
    lazy.materialize().unwrap();
    assert!(lazy.entries().iter().all(|e| e.id != "0000beef"));
    // A fresh open sees both.
    drop(lazy);
    let again = Session::open_deferred(storage.clone(), &file, &writer(), IndexCache::Use).unwrap();
    assert_eq!(again.leaf_id(), Some("0000beef"));
}

#[test]
fn a_file_cut_short_since_the_open_is_refused_when_the_entries_are_read() {
    let storage = mem();
    let file = long_session(&storage, 3);
    let mut lazy =
        Session::open_deferred(storage.clone(), &file, &writer(), IndexCache::Use).unwrap();
    let text = read(&storage, &file);
    put(&storage, &file, &text[..text.len() / 2]);
    let e = lazy.materialize().unwrap_err();
    assert!(matches!(e, SessionError::ChangedWhileRead { .. }), "{e:?}");
    assert!(
        lazy.is_deferred(),
        "a refused read leaves the session as it was"
    );
    put(&storage, &file, &text);
    lazy.materialize().unwrap();
    assert_eq!(
        state(&lazy),
        state(
            &Session::open(
                storage.clone(),
                &file,
                &OpenOptions {
                    persistence: Persistence::ReadOnly,
                    ..writer()
                }
            )
            .unwrap()
        )
    );
}

#[test]
fn the_first_append_to_a_file_outside_the_sessions_folder_reads_the_entries_to_pin_their_blobs() {
    let storage = mem();
    let file = long_session(&storage, 2);
    let elsewhere = "/projects/kept.jsonl";
    storage.mkdir_all("/projects").unwrap();
    put(&storage, elsewhere, &read(&storage, &file));
    let mut lazy =
        Session::open_deferred(storage.clone(), elsewhere, &writer(), IndexCache::Use).unwrap();
    assert!(lazy.is_deferred());
    lazy.append_message(&user("more")).unwrap();
    assert!(!lazy.is_deferred());
    drop(lazy);
    let whole = Session::open(storage.clone(), elsewhere, &writer()).unwrap();
    assert_eq!(
        whole
            .entries()
            .last()
            .unwrap()
            .message_json()
            .map(|m| m.contains("more")),
        Some(true)
    );
}

#[test]
fn a_one_shot_append_to_a_long_session_reads_its_index_not_the_file() {
    let storage = mem();
    let file = long_session(&storage, 200);
    let size = storage.stat(&file).unwrap().size;
    let entry = r#"{"type":"custom","customType":"note","data":{"n":1}}"#;
    // The first append scans the file once (and caches the index); each one after reads
    // the cache, the bytes appended since, the header and the last line.
    xcsh_session::api::append_entry(storage.clone(), &file, AGENT, "/w", entry).unwrap();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let counting = Rc::new(CountingReads::new(storage.clone()));
        ids.push(
            xcsh_session::api::append_entry(counting.clone(), &file, AGENT, "/w", entry).unwrap(),
        );
        let read = counting.bytes.get();
        assert!(read < size / 20, "read {read} bytes of a {size}-byte file");
    }
    // Each appended to the one before, as a whole read would have.
    let s = Session::open(
        storage.clone(),
        &file,
        &OpenOptions {
            persistence: Persistence::ReadOnly,
            ..writer()
        },
    )
    .unwrap();
    let last: Vec<&xcsh_session::Entry> = s.entries().iter().rev().take(3).collect();
    assert_eq!(last[0].parent_id.as_deref(), Some(ids[1].as_str()));
    assert_eq!(last[1].parent_id.as_deref(), Some(ids[0].as_str()));
    assert_eq!(s.leaf_id(), Some(ids[2].as_str()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// A line the agent (which takes no lock) appends while a lazy open reads the file,
    /// whole or half: the racer's bytes stay; this session's own append goes after a
    /// whole line or is refused (`ExternallyModified`); once the racer's line is whole the
    /// file holds both, read by the full reader without a damaged line. The exception is
    /// the one a whole read has too: an open that met half a line takes it for a torn
    /// tail and ends it with a newline before its own line (both halves stay).
    #[test]
    fn appends_racing_a_lazy_open_lose_nothing(ops in proptest::collection::vec(op(), 0..15), at in 0usize..6, half in any::<bool>(), cache in any::<bool>()) {
        let storage = mem();
        let (file, ids) = written(&storage, &ops);
        let cache = if cache { IndexCache::Use } else { IndexCache::Off };
        if cache == IndexCache::Use {
            open_for_context(storage.clone(), &file, AGENT, None, cache).unwrap();
        }
        let (now, later) = racer_line(ids.last().unwrap(), half);
        let (now, later) = (now.as_str(), later.as_str());
        let racing = Rc::new(AppendsDuring { inner: storage.clone(), file: file.clone(), at, text: now.to_string(), calls: std::cell::Cell::new(0) });
        let mut lazy = Session::open_deferred(racing.clone(), &file, &writer(), cache).unwrap();
        if racing.calls.get() <= at {
            storage.append(&file, now.as_bytes()).unwrap(); // the open read less: after it
        }
        let mine = lazy.append_message(&user("mine"));
        if let Err(e) = &mine {
            prop_assert!(matches!(e, SessionError::ExternallyModified { .. }), "{:?}", e);
        }
        drop(lazy);
        prop_assert!(read(&storage, &file).contains(now), "the racer's bytes are there");
        storage.append(&file, later.as_bytes()).unwrap();
        let whole = Session::open(storage.clone(), &file, &OpenOptions { persistence: Persistence::ReadOnly, ..writer() }).unwrap();
        if half && mine.is_ok() {
            // The open met the torn tail (the racer's first half): as after a crash, a
            // newline ends it before this session's line; both halves stay in the file.
            prop_assert!(read(&storage, &file).contains(&format!("{now}\n")), "never glued to the half line");
            prop_assert!(read(&storage, &file).ends_with(later));
        } else {
            prop_assert!(!whole.report().lossy(), "{:?}", whole.report());
            prop_assert!(whole.index_of("racer01").is_some());
        }
        prop_assert_eq!(whole.entries().iter().any(|e| e.message_json().is_some_and(|m| m.contains("mine"))), mine.is_ok());
    }
}
