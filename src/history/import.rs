//! Importing prompts from sessions: the prompts a session holds are the first texts of its
//! user messages, on every branch; several sessions' prompts go into the history oldest
//! first (the message's time, else the entry's), each with its session's cwd.

use crate::entry::{pick, Payload};
use crate::json::raw_str;
use crate::session::{utf8, Session};
use crate::storage::{basename, MemoryStorage, Storage};
use crate::time::ms_from_iso;
use serde_json::value::RawValue;
use std::rc::Rc;

/// One prompt found in a session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPrompt {
    pub text: String,
    pub cwd: Option<String>,
    /// The message's `timestamp` (epoch ms), else its entry's ISO time, else 0.
    pub time_ms: f64,
}

/// The prompts of several sessions, and the sessions that could not be read
/// (`<file name>: <error>`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SessionPrompts {
    pub prompts: Vec<SessionPrompt>,
    pub unreadable: Vec<String>,
}

/// The first text of a user message's JSON: its `content` string, or the `text` of the
/// first block of type `text` (`None` for anything else).
pub fn user_text(message_json: &str) -> Option<String> {
    let content = pick(message_json, &["content"]).ok()?[0]?;
    if let Some(s) = raw_str(content) {
        return Some(s.into_owned());
    }
    let blocks: Vec<&RawValue> = serde_json::from_str(content.get()).ok()?;
    blocks.iter().find_map(|b| {
        let f = pick(b.get(), &["type", "text"]).ok()?;
        if f[0].and_then(raw_str).as_deref() != Some("text") {
            return None;
        }
        f[1].and_then(raw_str).map(|s| s.into_owned())
    })
}

/// The prompts of one session in file order: every user message with a non-blank first
/// text, with the header's cwd (`fallback_cwd` when it has none).
pub fn session_prompts(session: &Session, fallback_cwd: Option<&str>) -> Vec<SessionPrompt> {
    let cwd = session
        .header()
        .cwd()
        .filter(|c| !c.is_empty())
        .or(fallback_cwd.filter(|c| !c.is_empty()))
        .map(str::to_string);
    let mut out = Vec::new();
    for entry in session.entries() {
        let Payload::Message {
            role: Some(role), ..
        } = &entry.payload
        else {
            continue;
        };
        let Some(message) = entry.message_json().filter(|_| role == "user") else {
            continue;
        };
        let Some(text) = user_text(message).filter(|t| !t.trim().is_empty()) else {
            continue;
        };
        let stamp = pick(message, &["timestamp"]).ok().and_then(|f| f[0]);
        let time_ms = stamp
            .and_then(|t| serde_json::from_str::<f64>(t.get()).ok())
            .or_else(|| ms_from_iso(entry.timestamp()).map(|ms| ms as f64))
            .unwrap_or(0.0);
        out.push(SessionPrompt {
            text,
            cwd: cwd.clone(),
            time_ms,
        });
    }
    out
}

/// The prompts of the session files `sessions` (path, cwd to use when the header names
/// none), oldest first (equal times in the order found), reporting `(done, total)`
/// before each file.
pub fn prompts_of_sessions(
    storage: &dyn Storage,
    sessions: &[(String, Option<String>)],
    progress: &mut dyn FnMut(usize, usize),
) -> SessionPrompts {
    let mut found = SessionPrompts::default();
    for (i, (path, cwd)) in sessions.iter().enumerate() {
        progress(i, sessions.len());
        let text = match storage.read(path) {
            Ok(bytes) => {
                utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            }
            Err(e) => {
                found.unreadable.push(format!("{}: {e}", basename(path)));
                continue;
            }
        };
        let session = Session::from_string(Rc::new(MemoryStorage::new()), text, "");
        found
            .prompts
            .extend(session_prompts(&session, cwd.as_deref()));
    }
    crate::sort::sort_by(&mut found.prompts, |a, b| a.time_ms.total_cmp(&b.time_ms));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_messages_prompt_is_its_first_text() {
        assert_eq!(
            user_text(r#"{"role":"user","content":"hi"}"#).as_deref(),
            Some("hi")
        );
        let blocks = r#"{"content":[{"type":"image","data":"x"},{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#;
        assert_eq!(user_text(blocks).as_deref(), Some("a"));
        assert_eq!(user_text(r#"{"content":[{"type":"image"}]}"#), None);
        assert_eq!(user_text(r#"{"content":3}"#), None);
        assert_eq!(user_text(r#"{"role":"user"}"#), None);
    }

    const A: &str = r#"{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/a"}
{"type":"message","id":"1","parentId":null,"timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"third","timestamp":3000}}
{"type":"message","id":"2","parentId":"1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"no"}]}}
{"type":"message","id":"3","parentId":null,"timestamp":"1970-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"first, on another branch"}]}}
{"type":"message","id":"4","parentId":"3","timestamp":"t","message":{"role":"user","content":"   "}}
"#;
    const B: &str = r#"{"type":"session","version":3,"id":"b","timestamp":"2026-01-01T00:00:00.000Z"}
{"type":"message","id":"1","parentId":null,"timestamp":"x","message":{"role":"user","content":"second","timestamp":2000}}
"#;

    #[test]
    fn sessions_give_their_user_prompts_oldest_first_with_their_cwd() {
        let st = MemoryStorage::new();
        st.write("/a.jsonl", A.as_bytes()).unwrap();
        st.write("/b.jsonl", B.as_bytes()).unwrap();
        let sessions = [
            ("/a.jsonl".to_string(), Some("/ignored".to_string())),
            ("/b.jsonl".to_string(), Some("/listed".to_string())),
            ("/gone.jsonl".to_string(), None),
        ];
        let mut steps = vec![];
        let found = prompts_of_sessions(&st, &sessions, &mut |d, t| steps.push((d, t)));
        let got: Vec<(&str, Option<&str>, f64)> = found
            .prompts
            .iter()
            .map(|p| (p.text.as_str(), p.cwd.as_deref(), p.time_ms))
            .collect();
        assert_eq!(
            got,
            [
                ("first, on another branch", Some("/a"), 1000.0),
                ("second", Some("/listed"), 2000.0),
                ("third", Some("/a"), 3000.0),
            ]
        );
        assert_eq!(found.unreadable.len(), 1);
        assert!(found.unreadable[0].starts_with("gone.jsonl: "));
        assert_eq!(steps, [(0, 3), (1, 3), (2, 3)]);
    }
}
