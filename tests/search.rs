//! The picker's search over a store, streamed (`SessionSearch`): the same hits, in the
//! same order, with the same scores, as the picker's ranking over a listing that holds
//! every session's text; read a file at a time, a piece at a time, with progress, and
//! stopped whenever the caller stops asking.

mod common;
use common::*;
use proptest::prelude::*;
use std::rc::Rc;
use xcsh_session::internals::rank_listed;
use xcsh_session::listing::{self, ListText, SessionInfo};
use xcsh_session::session::{CreateOptions, Session};
use xcsh_session::storage::{MemoryStorage, Storage};
use xcsh_session::{SearchProgress, SessionSearch};

/// One generated session: its project, title and messages (`true`: the user's).
#[derive(Debug, Clone)]
struct Spec {
    project: bool,
    title: Option<String>,
    messages: Vec<(bool, String)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<bool>(),
        proptest::option::of("[abΣ]{1,4}"),
        proptest::collection::vec((any::<bool>(), "[abcΣσ -]{0,12}"), 0..8),
    )
        .prop_map(|(project, title, messages)| Spec {
            project,
            title,
            messages,
        })
}

fn write(storage: &Rc<MemoryStorage>, spec: &Spec) -> String {
    let mut s = Session::create(
        storage.clone(),
        &CreateOptions {
            agent_dir: "/agent".into(),
            cwd: if spec.project { "/work/a" } else { "/work/b" }.into(),
            ..Default::default()
        },
    );
    for (mine, text) in &spec.messages {
        let m = if *mine { user(text) } else { assistant(text) };
        s.append_message(&m).unwrap();
    }
    if let Some(t) = &spec.title {
        s.set_session_name(t, "user").unwrap();
    }
    s.flush().unwrap();
    s.file().unwrap().to_string()
}

/// The reference: the picker's ranking over the listing with every text, texts dropped.
fn reference(
    storage: &Rc<MemoryStorage>,
    cwd: Option<&str>,
    query: &str,
) -> Vec<(SessionInfo, u32)> {
    let listed = match cwd {
        Some(cwd) => listing::list(storage.clone(), "/agent", cwd, None, ListText::Include),
        None => listing::list_all(storage.clone(), "/agent", ListText::Include),
    }
    .unwrap();
    rank_listed(&listed, query)
        .into_iter()
        .map(|(s, sc)| {
            let s = SessionInfo {
                all_messages_text: None,
                ..s.clone()
            };
            (s, sc)
        })
        .collect()
}

/// Run a search to its end in steps of `budget` bytes, checking its progress on the way.
fn searched(search: &mut SessionSearch, budget: u64) -> Vec<SearchProgress> {
    let mut seen = vec![search.progress()];
    search.run(budget, &mut |p| {
        seen.push(*p);
        true
    });
    for w in seen.windows(2) {
        assert!(w[0].files_done <= w[1].files_done && w[0].bytes_done <= w[1].bytes_done);
        assert!(w[0].hits <= w[1].hits);
    }
    let last = seen.last().unwrap();
    assert_eq!((last.files_done, last.bytes_done), (last.files, last.bytes));
    assert!(search.is_done());
    seen
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_streamed_search_finds_what_the_ranking_of_the_whole_listing_finds(
        specs in proptest::collection::vec(spec(), 0..6),
        query in "[abcΣσ]{1,3}( [abc]{1,2})?",
        listed_first in any::<bool>(),
        budget in 1u64..2000,
        project in any::<bool>(),
    ) {
        let storage = mem();
        for s in &specs {
            write(&storage, s);
        }
        // With the indexes cached (a listing wrote them) or not yet.
        if listed_first {
            listing::list_all(storage.clone(), "/agent", ListText::Leave).unwrap();
        }
        let cwd = project.then_some("/work/a");
        let want = reference(&storage, cwd, &query);
        let mut search = SessionSearch::new(storage.clone(), "/agent", cwd, &query).unwrap();
        searched(&mut search, budget);
        prop_assert_eq!(search.into_hits(), want);
    }
}

/// Big sessions, each of 400 messages of 4 kB: a word in every title, or early in every
/// text, reads none or a little of each file; a word in the last message reads every
/// message line once, a piece at a time (never a file whole), as does a word a file
/// does not hold. A search stopped part-way holds
/// the hits found so far.
#[test]
fn a_search_reads_only_what_its_scores_need_and_stops_when_asked() {
    let storage = mem();
    let pad = "x".repeat(4000);
    let mut files = 0;
    for n in 0..4 {
        let mut messages = vec![
            (true, "question".into()),
            (false, format!("early{n} reply")),
        ];
        for i in 0..400 {
            messages.push((i % 2 == 0, format!("{pad} {i}")));
        }
        messages.push((false, format!("the last word: closing{n}")));
        let spec = Spec {
            project: true,
            title: Some(format!("titled{n}")),
            messages,
        };
        let file = write(&storage, &spec);
        files += storage.stat(&file).unwrap().size;
    }
    listing::list_all(storage.clone(), "/agent", ListText::Leave).unwrap();
    let counting = Rc::new(CountingReads::new(storage.clone()));
    let run = |query: &str| {
        counting.bytes.set(0);
        let mut search = SessionSearch::new(counting.clone(), "/agent", None, query).unwrap();
        searched(&mut search, 1 << 20);
        let ids: Vec<String> = search
            .hits()
            .iter()
            .map(|(s, _)| s.head.id.clone())
            .collect();
        (ids, counting.bytes.get())
    };

    let (hits, read) = run("titled");
    assert_eq!(hits.len(), 4);
    assert!(read * 50 < files, "a title's word: {read} of {files} bytes");
    let (hits, read) = run("early");
    assert_eq!(hits.len(), 4);
    assert!(
        read * 50 < files,
        "an early message's word: {read} of {files}"
    );
    let (hits, read) = run("titled1");
    assert_eq!(hits.len(), 1);
    assert!(
        read >= files * 9 / 10 * 3 / 4,
        "three texts without it: {read} of {files}"
    );
    let (hits, read) = run("closing3");
    assert_eq!(hits.len(), 1);
    assert!(
        read >= files * 9 / 10,
        "the last message's word: {read} of {files}"
    );
    assert_eq!(counting.sessions_read_whole(), 0);
    assert_eq!(run("closing").0.len(), 4);

    // Stopped after its first progress: some files searched, not all, their hits kept.
    let mut search = SessionSearch::new(storage.clone(), "/agent", None, "closing").unwrap();
    let mut calls = 0;
    search.run(1 << 20, &mut |p| {
        calls += 1;
        assert!(p.files_done < p.files);
        false
    });
    assert_eq!(calls, 1);
    let p = search.progress();
    assert!(!search.is_done() && p.bytes_done < p.bytes);
    assert_eq!(search.hits().len(), p.hits);
    assert!(p.hits < 4);
}

/// A file changed after its index was cached (a message's text rewritten in place) is
/// read whole and ranked as the listing ranks it.
#[test]
fn a_file_changed_under_its_index_is_searched_as_read_whole() {
    let storage = mem();
    let spec = Spec {
        project: true,
        title: None,
        messages: vec![(true, "alpha".into()), (false, "beta".into())],
    };
    let file = write(&storage, &spec);
    listing::list_all(storage.clone(), "/agent", ListText::Leave).unwrap();
    let text = read(&storage, &file).replace("\"beta\"", "\"gamma-ray\"");
    storage.write(&file, text.as_bytes()).unwrap();
    let want = reference(&storage, None, "gamma");
    assert_eq!(want.len(), 1);
    let mut search = SessionSearch::new(storage.clone(), "/agent", None, "gamma").unwrap();
    searched(&mut search, 1);
    assert_eq!(search.into_hits(), want);
}
