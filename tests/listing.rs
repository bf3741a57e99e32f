//! Discovery: the recent list (4096-byte prefix reads), findMostRecentSession, list and
//! listAll over generated session directories.

mod common;
use common::*;
use std::rc::Rc;
use xcsh_session::listing::{self, recent_sessions, ListText, SessionInfo};
use xcsh_session::storage::{MemoryStorage, Storage};

/// A file's SessionInfo with its text, through its index (cached in `/agent`) and read
/// whole: the same.
fn info(storage: &Rc<MemoryStorage>, path: &str) -> Option<SessionInfo> {
    let through = listing::session_info(storage.clone(), path, "/agent", ListText::Include);
    assert_eq!(through, listing::session_info_whole(storage.clone(), path));
    through
}

fn header(id: &str, cwd: &str, title: Option<&str>) -> String {
    let t = title
        .map(|t| format!(",\"title\":{}", serde_json::to_string(t).unwrap()))
        .unwrap_or_default();
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-02-16T10:20:30.123Z","cwd":"{cwd}"{t}}}"#
    )
}

fn msg(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let p = parent.map(|p| format!("\"{p}\"")).unwrap_or("null".into());
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"2026-02-16T10:21:00.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":{}}}],"provider":"p","model":"m"}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

/// Three projects with titled, untitled, corrupt, empty and message-less sessions.
fn agent_dir(storage: &MemoryStorage) {
    let dir = "/agent/sessions/--work-a--";
    let big = "padding ".repeat(2000);
    put(
        storage,
        &format!("{dir}/1_a1.jsonl"),
        &format!(
            "{}\n{}\n{}\n",
            header("a1", "/work/a", Some("Fix the\u{1} login bug\nmore")),
            msg("m1", None, "user", "first question"),
            msg("m2", Some("m1"), "assistant", &big)
        ),
    );
    put(
        storage,
        &format!("{dir}/2_a2.jsonl"),
        &format!(
            "{}\n{}\n",
            header("a2", "/work/a", None),
            msg(
                "m1",
                None,
                "user",
                "how do I resume a session that has a very long first prompt?"
            )
        ),
    );
    put(
        storage,
        &format!("{dir}/3_corrupt.jsonl"),
        "this is not json\n{\"type\":\"message\"}\n",
    );
    put(
        storage,
        &format!("{dir}/4_nomsg.jsonl"),
        &format!("{}\n", header("a4", "/work/a", None)),
    );
    put(storage, &format!("{dir}/notes.txt"), "not a session");
    storage.mkdir_all(&format!("{dir}/2_a2")).unwrap();
    storage.set_mtime(&format!("{dir}/1_a1.jsonl"), 1000);
    storage.set_mtime(&format!("{dir}/2_a2.jsonl"), 3000);
    storage.set_mtime(&format!("{dir}/3_corrupt.jsonl"), 5000);
    storage.set_mtime(&format!("{dir}/4_nomsg.jsonl"), 4000);
    let compaction = r#"{"type":"compaction","id":"c","parentId":"m1","timestamp":"2026-02-16T10:22:00.000Z","summary":"s","shortSummary":"Compacted title","firstKeptEntryId":"m1","tokensBefore":1}"#;
    put(
        storage,
        "/agent/sessions/--work-b--/1_b1.jsonl",
        &format!(
            "{}\n{}\n{compaction}\n",
            header("b1", "/work/b", None),
            msg("m1", None, "user", "in b")
        ),
    );
    storage.set_mtime("/agent/sessions/--work-b--/1_b1.jsonl", 2000);
}

#[test]
fn recent_list_is_newest_first_skips_corrupt_files_and_reads_only_prefixes() {
    let storage = CountingReads::new(Rc::new(MemoryStorage::new()));
    agent_dir(&storage.inner);
    let recent = recent_sessions(&storage, "/agent/sessions/--work-a--", 10).unwrap();
    let ids: Vec<&str> = recent.iter().map(|r| r.head.id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["a4", "a2", "a1"],
        "newest mtime first, corrupt file skipped"
    );
    assert_eq!(storage.full_reads.get(), 0, "no whole-file reads");
    assert!(
        storage.bytes.get() <= 4 * 4096,
        "at most 4 KiB per file: {}",
        storage.bytes.get()
    );
    assert_eq!(recent[2].name(), "Fix the login bug", "sanitized title");
    assert_eq!(
        recent[1].name(),
        "how do I resume a session that has a ve…",
        "first user text, 39 chars + …"
    );
    assert_eq!(recent[1].name().chars().count(), 40);
    assert_eq!(recent[0].name(), "a4", "falls back to the header id");
    assert_eq!(
        recent_sessions(
            &storage,
            "/agent/sessions/--work-a--",
            listing::DEFAULT_RECENT_LIMIT
        )
        .unwrap()
        .len(),
        3
    );
    assert!(recent_sessions(&storage, "/agent/sessions/--missing--", 3)
        .unwrap()
        .is_empty());
}

#[test]
fn find_most_recent_session_takes_the_newest_valid_file() {
    let storage = MemoryStorage::new();
    agent_dir(&storage);
    assert_eq!(
        listing::find_most_recent_session(&storage, "/agent/sessions/--work-a--")
            .unwrap()
            .as_deref(),
        Some("/agent/sessions/--work-a--/4_nomsg.jsonl")
    );
    assert_eq!(
        listing::find_most_recent_session(&storage, "/nowhere").unwrap(),
        None
    );
}

#[test]
fn list_lists_a_header_alone_as_a_session_without_messages_and_the_text_when_asked() {
    let storage = Rc::new(MemoryStorage::new());
    agent_dir(&storage);
    let infos = listing::list(
        storage.clone(),
        "/agent",
        "/work/a",
        None,
        ListText::Include,
    )
    .unwrap();
    let ids: Vec<&str> = infos.iter().map(|i| i.head.id.as_str()).collect();
    assert_eq!(ids, vec!["a4", "a2", "a1"]);
    assert_eq!(infos[0].message_count, 0);
    assert_eq!(infos[0].first_message, "(no messages)");
    assert_eq!(infos[0].all_messages_text.as_deref(), Some(""));
    let a1 = &infos[2];
    assert_eq!(
        a1.head.title.as_deref(),
        Some("Fix the\u{1} login bug\nmore")
    );
    assert_eq!(a1.message_count, 2);
    assert_eq!(a1.first_message, "first question");
    let text = a1.all_messages_text.as_deref().unwrap();
    assert!(text.starts_with("first question padding"));
    assert_eq!(a1.created, "2026-02-16T10:20:30.123Z");
    let json: serde_json::Value = serde_json::from_str(&listing::list_json(&infos)).unwrap();
    assert_eq!(json[2]["messageCount"], 2);
    assert_eq!(json[2]["path"], "/agent/sessions/--work-a--/1_a1.jsonl");
    // Without the text (read again, now through the cached indexes): the same otherwise.
    let light = listing::list(storage.clone(), "/agent", "/work/a", None, ListText::Leave).unwrap();
    let without: Vec<_> = infos
        .iter()
        .map(|i| listing::SessionInfo {
            all_messages_text: None,
            ..i.clone()
        })
        .collect();
    assert_eq!(light, without);
    assert_eq!(
        listing::session_text(storage.clone(), &light[2].head.path, "/agent").as_deref(),
        Some(text)
    );
}

#[test]
fn list_all_spans_projects_and_uses_the_compaction_short_summary_as_title() {
    let storage = Rc::new(MemoryStorage::new());
    agent_dir(&storage);
    let infos = listing::list_all(storage.clone(), "/agent", ListText::Leave).unwrap();
    let ids: Vec<&str> = infos.iter().map(|i| i.head.id.as_str()).collect();
    assert_eq!(ids, vec!["a4", "a2", "b1", "a1"]);
    assert_eq!(infos[2].head.title.as_deref(), Some("Compacted title"));
    assert_eq!(infos[2].head.cwd, "/work/b");
    assert!(
        listing::list_all(Rc::new(MemoryStorage::new()), "/agent", ListText::Leave)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn session_without_user_message_says_no_messages() {
    let storage = Rc::new(MemoryStorage::new());
    put(
        &storage,
        "/s/x.jsonl",
        &format!(
            "{}\n{}\n",
            header("x", "/w", None),
            msg("m", None, "assistant", "hi")
        ),
    );
    let info = info(&storage, "/s/x.jsonl").unwrap();
    assert_eq!(info.first_message, "(no messages)");
    assert_eq!(info.message_count, 1);
}

/// A message entry whose `content` is the given JSON.
fn msg_content(id: &str, role: &str, content: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-02-16T10:21:00.000Z","message":{{"role":"{role}","content":{content}}}}}"#
    )
}

#[test]
fn messages_without_text_add_nothing_to_first_message_and_all_messages_text() {
    let storage = Rc::new(MemoryStorage::new());
    let lines = [
        header("x", "/w", None),
        msg_content("e1", "user", r#""""#),
        msg_content("e2", "user", r#"[{"type":"text","text":""}]"#),
        msg_content("e3", "user", r#"[{"type":"image","data":"AA=="}]"#),
        msg_content(
            "u",
            "user",
            r#"[{"type":"text","text":"fix it"},{"type":"text"}]"#,
        ),
        msg_content("a", "assistant", r#""done""#),
    ];
    put(&storage, "/s/x.jsonl", &format!("{}\n", lines.join("\n")));
    let info = info(&storage, "/s/x.jsonl").unwrap();
    assert_eq!(info.message_count, 5);
    // A text block without text is an empty part of the join, as the agent's `join(" ")`.
    assert_eq!(info.first_message, "fix it ");
    assert_eq!(info.all_messages_text.as_deref(), Some("fix it  done"));
}

#[test]
fn the_recent_list_names_a_session_by_the_first_text_block_of_its_first_prompt() {
    let storage = MemoryStorage::new();
    let dir = "/agent/sessions/--w--";
    put(
        &storage,
        &format!("{dir}/1_p.jsonl"),
        &format!(
            "{}\n{}\n",
            header("p", "/w", None),
            msg_content(
                "u",
                "user",
                r#"[{"type":"image","data":"AA=="},{"type":"text","text":"first block"},{"type":"text","text":"second"}]"#
            )
        ),
    );
    // A title that sanitizes to nothing still keeps the prompt out: the id names it.
    put(
        &storage,
        &format!("{dir}/2_t.jsonl"),
        &format!(
            "{}\n{}\n",
            header("t", "/w", Some("\nsecond line")),
            msg("u", None, "user", "a prompt")
        ),
    );
    storage.set_mtime(&format!("{dir}/1_p.jsonl"), 2000);
    storage.set_mtime(&format!("{dir}/2_t.jsonl"), 1000);
    let recent = recent_sessions(&storage, dir, 10).unwrap();
    assert_eq!(recent[0].full_name(), "first block");
    assert_eq!(recent[1].full_name(), "t");
}

#[test]
fn a_header_with_an_empty_id_is_no_listed_session() {
    let storage = Rc::new(MemoryStorage::new());
    put(
        &storage,
        "/s/x.jsonl",
        &format!("{}\n", header("", "/w", None)),
    );
    assert_eq!(info(&storage, "/s/x.jsonl"), None);
    assert_eq!(listing::session_text(storage, "/s/x.jsonl", "/agent"), None);
}

#[test]
fn sessions_in_the_newer_home_relative_directory_are_listed_too() {
    let storage = Rc::new(MemoryStorage::new());
    let agent = "/home/me/.xcsh/agent";
    put(
        &storage,
        &format!("{agent}/sessions/--home-me-work-a--/1_old.jsonl"),
        &format!(
            "{}\n{}\n",
            header("old", "/home/me/work/a", None),
            msg("m1", None, "user", "old form")
        ),
    );
    put(
        &storage,
        &format!("{agent}/sessions/-work-a/2_new.jsonl"),
        &format!(
            "{}\n{}\n",
            header("new", "/home/me/work/a", None),
            msg("m1", None, "user", "home-relative form")
        ),
    );
    storage.set_mtime(
        &format!("{agent}/sessions/--home-me-work-a--/1_old.jsonl"),
        1,
    );
    storage.set_mtime(&format!("{agent}/sessions/-work-a/2_new.jsonl"), 2);
    let ids: Vec<String> = listing::list(
        storage.clone(),
        agent,
        "/home/me/work/a",
        None,
        ListText::Leave,
    )
    .unwrap()
    .into_iter()
    .map(|i| i.head.id)
    .collect();
    assert_eq!(ids, vec!["new", "old"]);
    let dirs = xcsh_session::paths::session_dirs_for_cwd(agent, "/home/me/work/a");
    let recent: Vec<String> = listing::recent_sessions_in(&*storage, &dirs, 5)
        .unwrap()
        .into_iter()
        .map(|r| r.head.id)
        .collect();
    assert_eq!(recent, vec!["new", "old"]);
    assert_eq!(
        xcsh_session::resume::continue_recent(&*storage, agent, "/home/me/work/a", None, None)
            .unwrap(),
        xcsh_session::resume::ContinueTarget::MostRecent(format!(
            "{agent}/sessions/-work-a/2_new.jsonl"
        ))
    );
}

mod through_the_index {
    //! A listing reads each session through its index (header line, counts, first user
    //! message, last compaction's short summary) and gives what reading it whole gives.
    use super::*;
    use common::ops::{op, written, Op, AGENT};
    use proptest::prelude::*;
    use xcsh_session::session::{CompactionInput, OpenOptions, Persistence, Session};

    /// A random session, then compactions (some with a short summary) and a title.
    fn session(
        storage: &Rc<MemoryStorage>,
        ops: &[Op],
        compactions: &[(usize, Option<String>)],
        title: Option<&str>,
    ) -> String {
        let (file, _) = written(storage, ops);
        let options = OpenOptions {
            persistence: Persistence::Persistent,
            agent_dir: AGENT.into(),
            cwd: "/w".into(),
        };
        let mut s = Session::open(storage.clone(), &file, &options).unwrap();
        for (at, short) in compactions {
            let id = pick_id(&s, *at).unwrap();
            s.append_compaction(&CompactionInput {
                summary: "sum".into(),
                short_summary: short.clone(),
                first_kept_entry_id: id,
                tokens_before: 1,
                ..Default::default()
            })
            .unwrap();
        }
        if let Some(t) = title {
            s.set_session_name(t, "user").unwrap();
        }
        s.close().unwrap();
        file
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn a_listed_session_through_its_index_is_the_whole_readers(
            ops in proptest::collection::vec(op(), 0..30),
            compactions in proptest::collection::vec((any::<usize>(), proptest::option::of("[a-z ]{0,6}")), 0..3),
            title in proptest::option::of("[a-z]{1,5}"),
        ) {
            let storage = mem();
            let file = session(&storage, &ops, &compactions, title.as_deref());
            let want = listing::session_info_whole(storage.clone(), &file).unwrap();
            let counting = Rc::new(CountingReads::new(storage.clone()));
            // The first listing scans the file and writes its index; later ones read it.
            for _ in 0..2 {
                for text in [ListText::Include, ListText::Leave] {
                    let got = listing::session_info(counting.clone(), &file, AGENT, text).unwrap();
                    let want = SessionInfo {
                        all_messages_text: want.all_messages_text.clone().filter(|_| text == ListText::Include),
                        ..want.clone()
                    };
                    prop_assert_eq!(got, want);
                }
                prop_assert_eq!(
                    listing::session_text(counting.clone(), &file, AGENT),
                    want.all_messages_text.clone()
                );
            }
            prop_assert_eq!(counting.sessions_read_whole(), 0, "no file read whole: through the index");
        }
    }

    /// Files written by hand: a byte order mark, CRLF lines, ids with escapes (parsed whole
    /// by the scan), a non-string title, a later compaction without a short summary, an
    /// older version (read whole), a message line that is not what the index says.
    #[test]
    fn hand_written_files_list_as_read_whole() {
        let h = |extra: &str| {
            format!(
                r#"{{"type":"session","version":3,"id":"x","timestamp":"2026-02-16T10:20:30.123Z","cwd":"/w"{extra}}}"#
            )
        };
        let c = |id: &str, parent: &str, short: &str| {
            format!(
                r#"{{"type":"compaction","id":"{id}","parentId":"{parent}","timestamp":"t","summary":"s",{short}"firstKeptEntryId":"m1","tokensBefore":1}}"#
            )
        };
        let files = [
            format!(
                "\u{feff}{}\n{}\n",
                h(""),
                msg("m1", None, "user", "with a bom")
            ),
            format!(
                "{}\r\n{}\r\n{}\r\n",
                h(r#","title":5"#),
                msg("m1", None, "assistant", "crlf"),
                msg("m2", Some("m1"), "user", "second")
            ),
            format!(
                "{}\n{}\n{}\n{}\n{}\n",
                h(""),
                msg("m\\u0031", None, "user", "escaped id"),
                c("c1", "m1", r#""shortSummary":"first","#),
                c("c2", "c1", r#""shortSummary":7,"#),
                msg("m2", Some("c2"), "user", "after")
            ),
            format!(
                "{}\n{}\n",
                h("").replace("\"version\":3", "\"version\":2"),
                msg("m1", None, "user", "old")
            ),
            format!(
                "{}\n{}\n{}\n",
                h(""),
                msg("m1", None, "assistant", "a"),
                format!("{} ", msg("m2", Some("m1"), "user", "x")).replace("} ", "}x")
            ),
            format!(
                "{}\n\n{}\n",
                h(""),
                msg("m1", None, "user", "blank line before")
            ),
        ];
        for (i, text) in files.iter().enumerate() {
            let storage = mem();
            let path = format!("/agent/sessions/--w--/{i}.jsonl");
            put(&storage, &path, text);
            let want = listing::session_info_whole(storage.clone(), &path);
            for _ in 0..2 {
                let got = listing::session_info(storage.clone(), &path, AGENT, ListText::Include);
                assert_eq!(got, want, "file {i}");
                assert_eq!(
                    listing::session_text(storage.clone(), &path, AGENT),
                    want.as_ref().and_then(|w| w.all_messages_text.clone()),
                    "file {i}"
                );
            }
        }
    }

    /// Big sessions: the first listing scans each file once (and keeps its index); a
    /// listing after it reads the cached indexes and a few lines of each, far fewer bytes
    /// than the files hold, and no file whole. With the text, every message line is read.
    #[test]
    fn a_listing_with_cached_indexes_reads_far_fewer_bytes_than_the_files() {
        let storage = mem();
        let mut files = 0u64;
        for n in 0..4 {
            let mut s = create(&storage);
            let pad = "x".repeat(4000);
            for i in 0..300 {
                s.append_message(&user(&format!("question {n}.{i} {pad}")))
                    .unwrap();
                s.append_message(&assistant(&format!("answer {i} {pad}")))
                    .unwrap();
            }
            files += storage.stat(s.file().unwrap()).unwrap().size;
            s.close().unwrap();
        }
        let counting = Rc::new(CountingReads::new(storage.clone()));
        let list = |text| listing::list_all(counting.clone(), "/agent", text).unwrap();
        let first = list(ListText::Leave);
        assert_eq!(first.len(), 4);
        assert!(
            counting.bytes.get() >= files,
            "the first listing scans every file"
        );
        counting.bytes.set(0);
        let again = list(ListText::Leave);
        assert_eq!(again, first);
        let read = counting.bytes.get();
        assert!(
            read * 50 < files,
            "{read} bytes read of {files}: more than 2 %"
        );
        assert_eq!(counting.sessions_read_whole(), 0);
        assert_eq!(again[0].message_count, 600);
        assert!(again[0].first_message.starts_with("question "));
        // With the text: the message lines, a piece at a time; the rest as without.
        counting.bytes.set(0);
        let with_text = list(ListText::Include);
        assert!(counting.bytes.get() >= files * 9 / 10);
        assert_eq!(counting.sessions_read_whole(), 0);
        for (w, a) in with_text.iter().zip(&again) {
            assert_eq!(
                w.all_messages_text,
                listing::session_info_whole(storage.clone(), &w.head.path)
                    .unwrap()
                    .all_messages_text
            );
            assert_eq!(
                &SessionInfo {
                    all_messages_text: None,
                    ..w.clone()
                },
                a
            );
        }
    }

    /// A first screen (`list_first`) is the head of the whole listing, of one project or
    /// of all, and reads the heads of those sessions only.
    #[test]
    fn a_first_screen_is_the_head_of_the_listing_and_reads_only_its_sessions() {
        let storage = mem();
        agent_dir(&storage);
        for (i, cwd) in ["/work/a", "/work/b", "/work/a"].iter().enumerate() {
            let mut s = Session::create(
                storage.clone(),
                &xcsh_session::session::CreateOptions {
                    agent_dir: AGENT.into(),
                    cwd: cwd.to_string(),
                    ..Default::default()
                },
            );
            for n in 0..50 {
                s.append_message(&user(&format!("{i}.{n} {}", "y".repeat(2000))))
                    .unwrap();
            }
            s.close().unwrap();
        }
        for cwd in [None, Some("/work/a")] {
            let all = match cwd {
                Some(c) => listing::list(storage.clone(), AGENT, c, None, ListText::Leave),
                None => listing::list_all(storage.clone(), AGENT, ListText::Leave),
            }
            .unwrap();
            assert!(all.len() >= 3, "{cwd:?}: {}", all.len());
            for limit in 0..=all.len() + 1 {
                let first =
                    listing::list_first(storage.clone(), AGENT, cwd, None, limit, ListText::Leave)
                        .unwrap();
                assert_eq!(first, all[..limit.min(all.len())], "{cwd:?} {limit}");
            }
        }
        let counting = Rc::new(CountingReads::new(storage.clone()));
        listing::list_first(counting.clone(), AGENT, None, None, 1, ListText::Leave).unwrap();
        let one = counting.bytes.get();
        counting.bytes.set(0);
        listing::list_all(counting.clone(), AGENT, ListText::Leave).unwrap();
        assert!(
            one * 3 < counting.bytes.get(),
            "{one} against {}",
            counting.bytes.get()
        );
    }
}

fn session_info_entry(id: &str, parent: &str, name: &str) -> String {
    format!(
        r#"{{"type":"session_info","id":"{id}","parentId":"{parent}","timestamp":"2026-02-16T10:22:00.000Z","name":{}}}"#,
        serde_json::to_string(name).unwrap()
    )
}

/// pi names a session with `session_info` entries (the latest wins, an empty name clears
/// it); xcsh with the header's title, which comes first. The list, the whole read and the
/// open session agree.
#[test]
fn a_pi_session_is_named_by_its_latest_session_info_and_a_titled_header_comes_first() {
    let storage = Rc::new(MemoryStorage::new());
    let path = "/agent/sessions/--w--/pi.jsonl";
    let lines = |title: Option<&str>, names: &[&str]| {
        let mut l = vec![
            header("pi1", "/w", title),
            msg("m1", None, "user", "the prompt"),
        ];
        let mut parent = "m1".to_string();
        for (i, n) in names.iter().enumerate() {
            let id = format!("s{i}");
            l.push(session_info_entry(&id, &parent, n));
            l.push(msg(&format!("m{}", i + 2), Some(&id), "assistant", "ok"));
            parent = format!("m{}", i + 2);
        }
        l.join("\n") + "\n"
    };
    let cases: [(Option<&str>, &[&str], Option<&str>); 5] = [
        (None, &["first", "second"], Some("second")),
        (None, &["named", ""], None),
        (None, &[], None),
        (Some("Header title"), &["pi name"], Some("Header title")),
        (None, &["only"], Some("only")),
    ];
    for (title, names, want) in cases {
        let _ = storage.unlink(path);
        put(&storage, path, &lines(title, names));
        let got = info(&storage, path).unwrap();
        assert_eq!(got.head.title.as_deref(), want, "{title:?} {names:?}");
        let session =
            xcsh_session::session::Session::from_text(storage.clone(), &lines(title, names), "");
        assert_eq!(
            session.session_name().as_deref(),
            want,
            "{title:?} {names:?}"
        );
    }
}
