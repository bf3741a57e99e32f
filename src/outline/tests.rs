use super::*;
use crate::storage::MemoryStorage;
use serde_json::json;
use std::rc::Rc;

/// A session of these entries (each `[id, parent, type, fields]`, timestamps in order).
fn session(entries: &[(&str, Option<&str>, serde_json::Value)]) -> Session {
    let mut lines = vec![json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}).to_string()];
    for (n, (id, parent, fields)) in entries.iter().enumerate() {
        let mut e = fields.as_object().cloned().unwrap_or_default();
        e.insert("id".into(), json!(id));
        e.insert("parentId".into(), json!(parent));
        e.insert(
            "timestamp".into(),
            json!(format!("2026-01-01T00:00:{:02}.000Z", n + 1)),
        );
        lines.push(serde_json::Value::Object(e).to_string());
    }
    Session::from_string(Rc::new(MemoryStorage::new()), lines.join("\n") + "\n", "/a")
}

fn user(text: &str) -> serde_json::Value {
    json!({"type": "message", "message": {"role": "user", "content": text}})
}

#[test]
fn a_side_branch_is_listed_right_under_its_branch_point_and_the_longest_line_below_it() {
    // a ─┬─ b ── c ── d   (the long line, first in time)
    //    └─ x             (the side branch)
    let s = session(&[
        ("a", None, user("start")),
        ("b", Some("a"), user("long 1")),
        ("x", Some("a"), user("side")),
        ("c", Some("b"), user("long 2")),
        ("d", Some("c"), user("long 3")),
    ]);
    let o = Outline::of(&s, PREVIEW_CHARS);
    assert_eq!(o.ids, ["a", "x", "b", "c", "d"]);
    assert_eq!(o.parent, [-1, 0, 0, 2, 3]);
    assert_eq!(o.depth, [0, 1, 1, 1, 1]);
    assert_eq!(
        o.flags,
        [FORK | LAST, BRANCH_START, BRANCH_START | LAST, LAST, LAST]
    );
    assert_eq!(o.kids, [2, 0, 1, 1, 0]);
    assert_eq!(
        o.end,
        [5, 2, 5, 5, 5],
        "each row knows the row after its subtree"
    );
}

#[test]
fn previews_say_what_each_entry_is_in_one_line() {
    let s = session(&[
        ("u", None, user("  fix\n\tthe   build  ")),
        (
            "a",
            Some("u"),
            json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "Running"}, {"type": "toolCall", "name": "bash"}, {"type": "toolCall", "name": "read"}]}}),
        ),
        (
            "t",
            Some("a"),
            json!({"type": "message", "message": {"role": "toolResult", "toolName": "bash", "isError": true, "content": [{"type": "text", "text": "exit 1"}]}}),
        ),
        (
            "k",
            Some("t"),
            json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}]}}),
        ),
        (
            "c",
            Some("k"),
            json!({"type": "compaction", "summary": "Done so far\nmore", "tokensBefore": 123456, "firstKeptEntryId": "u"}),
        ),
        (
            "l",
            Some("c"),
            json!({"type": "label", "targetId": "u", "label": "start"}),
        ),
        (
            "m",
            Some("l"),
            json!({"type": "model_change", "provider": "anthropic", "modelId": "claude"}),
        ),
        (
            "n",
            Some("m"),
            json!({"type": "session_info", "name": "  Listing files "}),
        ),
        ("o", Some("n"), json!({"type": "session_info", "name": ""})),
        ("z", Some("o"), json!({"type": "something_new_here"})),
    ]);
    let o = Outline::of(&s, PREVIEW_CHARS);
    let shown: Vec<(&str, &str, &str)> = o
        .kind
        .iter()
        .zip(&o.texts)
        .map(|(&k, t)| {
            (
                o.kinds[k as usize].0.as_str(),
                o.kinds[k as usize].1,
                t.as_str(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("user", "user", "fix the build"),
            ("asst", "assistant", "Running → bash, read"),
            ("tool", "tool", "bash ✗: exit 1"),
            ("asst", "assistant", "(thinking)"),
            ("compact", "compaction", "Done so far · 123,456 tok"),
            ("label", "meta", "“start” → u"),
            ("model", "meta", "anthropic/claude"),
            ("name", "meta", "named “Listing files”"),
            ("name", "meta", "name cleared"),
            ("somethi", "other", "something_new_here"),
        ]
    );
    assert_eq!(o.kinds.len(), 8, "a kind of row is listed once");
}

#[test]
fn a_long_text_is_cut_to_140_characters_and_labels_are_listed_by_row() {
    let long = "word ".repeat(400);
    let s = session(&[
        ("u", None, user(&long)),
        (
            "l",
            Some("u"),
            json!({"type": "label", "targetId": "u", "label": "first"}),
        ),
    ]);
    let o = Outline::of(&s, PREVIEW_CHARS);
    assert_eq!(o.texts[0].chars().count(), 140);
    assert!(o.texts[0].ends_with('…'));
    assert_eq!(o.labels, [(0, "first".to_string())]);
}

#[test]
fn digests_hold_what_the_totals_need_of_each_message() {
    let s = session(&[
        (
            "u",
            None,
            json!({"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1000}}),
        ),
        (
            "a",
            Some("u"),
            json!({"type": "message", "message": {"role": "assistant", "content": [], "provider": "p", "model": "m", "usage": {"input": 10, "output": 5, "cacheRead": -3, "cacheWrite": "7", "cost": {"total": 0.5}}}}),
        ),
        (
            "t",
            Some("a"),
            json!({"type": "thinking_level_change", "thinkingLevel": "high"}),
        ),
    ]);
    let d = Outline::of(&s, PREVIEW_CHARS).digests;
    assert_eq!(d.message, [MESSAGE, ASSISTANT, NOT_MESSAGE]);
    assert_eq!(d.time[0], 1000.0, "the message's own time first");
    assert_eq!(
        d.time[1],
        crate::time::ms_from_iso("2026-01-01T00:00:02.000Z").unwrap() as f64,
        "else the entry's"
    );
    assert!(d.time[2].is_nan());
    assert_eq!(
        (d.input[1], d.output[1], d.cache_read[1], d.cache_write[1]),
        (10.0, 5.0, 0.0, 0.0),
        "bad numbers count 0"
    );
    assert_eq!(d.cost[1], 0.5);
    assert!(d.cost[0].is_nan());
    assert_eq!((d.model[0], d.model[1]), (-1, 0));
    assert_eq!(d.models, ["p/m"]);
}

#[test]
fn an_outline_made_a_few_rows_at_a_time_equals_the_whole_and_a_changed_session_stops_it() {
    let mut entries = vec![("r".to_string(), None, user("start"))];
    for i in 0..23 {
        let parent = if i % 5 == 4 {
            "r".to_string()
        } else {
            entries.last().unwrap().0.clone()
        };
        entries.push((format!("e{i}"), Some(parent), user(&format!("message {i}"))));
    }
    let borrowed: Vec<(&str, Option<&str>, serde_json::Value)> = entries
        .iter()
        .map(|(id, p, v)| (id.as_str(), p.as_deref(), v.clone()))
        .collect();
    let s = session(&borrowed);
    let whole = Outline::of(&s, PREVIEW_CHARS);
    for piece in [1, 2, 7, 24, 100] {
        let mut b = OutlineBuilder::new(&s, PREVIEW_CHARS);
        assert_eq!((b.rows(), b.done()), (24, 0));
        let mut steps = 1;
        while !b.step(&s, piece) {
            assert_eq!(b.done(), piece * steps, "each step describes its rows");
            steps += 1;
        }
        assert_eq!(steps, 24usize.div_ceil(piece));
        // Compared as text: a cost not known is NaN, which equals nothing.
        assert_eq!(
            format!("{:?}", b.finish()),
            format!("{whole:?}"),
            "{piece} rows at a time"
        );
    }
    // The session laid out is not the one stepped: nothing described, never done.
    let mut b = OutlineBuilder::new(&s, PREVIEW_CHARS);
    let other = session(&borrowed[..3]);
    assert!(!b.step(&other, 100));
    assert_eq!(b.done(), 0);
}
