//! The entry model: the session header and the fourteen entry types.
//!
//! An [`Entry`] keeps its JSON text exactly as read (or as the agent would write it, for
//! new entries), so unknown fields and unknown types survive a load/save round trip byte
//! for byte. The few fields the core needs (ids, and what context building reads) are
//! extracted once into a typed [`Payload`]; large payloads stay raw text.

use crate::json::{push_quoted, truthy};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

/// Version written by this library (and by the agent).
pub const CURRENT_SESSION_VERSION: u64 = 3;

/// The entry types the agent writes. Anything else is [`EntryType::Unknown`] and kept as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryType {
    Message,
    ThinkingLevelChange,
    ModelChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    TtsrInjection,
    SessionInit,
    ModeChange,
    ContextChange,
    ServiceTierChange,
    McpToolSelection,
    /// pi's name for a session (its latest one names it; an empty one clears it).
    SessionInfo,
    Unknown,
}

impl EntryType {
    pub const ALL: [EntryType; 15] = [
        EntryType::Message,
        EntryType::ThinkingLevelChange,
        EntryType::ModelChange,
        EntryType::Compaction,
        EntryType::BranchSummary,
        EntryType::Custom,
        EntryType::CustomMessage,
        EntryType::Label,
        EntryType::TtsrInjection,
        EntryType::SessionInit,
        EntryType::ModeChange,
        EntryType::ContextChange,
        EntryType::ServiceTierChange,
        EntryType::McpToolSelection,
        EntryType::SessionInfo,
    ];

    pub fn parse(name: &str) -> EntryType {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == name)
            .unwrap_or(EntryType::Unknown)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EntryType::Message => "message",
            EntryType::ThinkingLevelChange => "thinking_level_change",
            EntryType::ModelChange => "model_change",
            EntryType::Compaction => "compaction",
            EntryType::BranchSummary => "branch_summary",
            EntryType::Custom => "custom",
            EntryType::CustomMessage => "custom_message",
            EntryType::Label => "label",
            EntryType::TtsrInjection => "ttsr_injection",
            EntryType::SessionInit => "session_init",
            EntryType::ModeChange => "mode_change",
            EntryType::ContextChange => "context_change",
            EntryType::ServiceTierChange => "service_tier_change",
            EntryType::McpToolSelection => "mcp_tool_selection",
            EntryType::SessionInfo => "session_info",
            EntryType::Unknown => "unknown",
        }
    }

    /// `custom` and `custom_message` put `id, parentId, timestamp` last.
    pub fn ids_last(self) -> bool {
        matches!(self, EntryType::Custom | EntryType::CustomMessage)
    }
}

/// An owned raw JSON value (`null` is represented by `None` where that matters).
pub type Json = Box<RawValue>;

/// The fields of an entry the core reads. Everything else stays in the entry's text.
#[derive(Debug, Clone)]
pub enum Payload {
    Message {
        /// The message role (the common ones are not copied per entry).
        role: Option<Cow<'static, str>>,
        /// `provider + "/" + model` of an assistant message (JS string coercion).
        model_key: Option<String>,
        /// Byte range of the `message` value inside the entry text.
        message: Range<usize>,
        /// The message contains `blob:sha256:` references to rehydrate on output.
        has_blob_refs: bool,
    },
    ThinkingLevelChange {
        level: Option<Json>,
    },
    ModelChange {
        model: Option<Json>,
        role: String,
    },
    Compaction {
        first_kept_entry_id: Option<String>,
    },
    BranchSummary {
        has_summary: bool,
    },
    Custom,
    CustomMessage {
        has_blob_refs: bool,
    },
    Label {
        target_id: Option<String>,
        label: Option<String>,
    },
    TtsrInjection {
        rules: Vec<String>,
    },
    SessionInit,
    ModeChange {
        mode: Option<Json>,
        data: Option<Json>,
    },
    ContextChange {
        name: Option<Json>,
        tenant: Option<Json>,
    },
    ServiceTierChange {
        tier: Option<Json>,
    },
    McpToolSelection {
        names: Vec<String>,
    },
    SessionInfo,
    Unknown {
        type_name: String,
    },
}

/// Where an entry's text lives: a slice of the loaded file (no copy) or its own string.
#[derive(Debug, Clone)]
pub enum Text {
    Shared {
        buf: Arc<String>,
        start: usize,
        end: usize,
    },
    Owned(Box<str>),
}

impl Text {
    pub fn as_str(&self) -> &str {
        match self {
            Text::Shared { buf, start, end } => &buf[*start..*end],
            Text::Owned(s) => s,
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text::Owned(s.into_boxed_str())
    }
}

/// One session entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: String,
    pub parent_id: Option<String>,
    /// Where the `timestamp` string is (see [`Entry::timestamp`]): no copy per entry.
    timestamp: Slice,
    pub entry_type: EntryType,
    pub payload: Payload,
    text: Text,
}

/// Why a JSON record is not an entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("not a JSON object: {0}")]
    NotAnObject(String),
    #[error("entry has no string \"type\"")]
    MissingType,
    #[error("entry has no string \"id\"")]
    MissingId,
    #[error("a session header (type \"session\"), not an entry")]
    Header,
}

/// A record of a session file after its first line: an entry, or another header line
/// (type `"session"`, with or without an id), which the agent keeps in its place in the
/// file but never counts as an entry.
#[derive(Debug, Clone)]
pub enum Record {
    Entry(Entry),
    Header(Text),
}

impl Entry {
    /// Read an entry from its JSON text.
    pub fn parse(text: Text) -> Result<Entry, EntryError> {
        match Self::parse_record(text)? {
            Record::Entry(entry) => Ok(entry),
            Record::Header(_) => Err(EntryError::Header),
        }
    }

    /// Read a record of a session file: an entry, or a header line.
    pub fn parse_record(text: Text) -> Result<Record, EntryError> {
        let s = text.as_str();
        let EntryFields {
            entry: f,
            message: m,
        } = entry_fields(s).map_err(|e| EntryError::NotAnObject(e.to_string()))?;
        let type_name = string(f[0]).ok_or(EntryError::MissingType)?;
        if type_name == "session" {
            return Ok(Record::Header(text));
        }
        let id = string(f[1]).ok_or(EntryError::MissingId)?;
        let parent_id = string(f[2]);
        let timestamp = Slice::of_string(s, f[3]);
        let entry_type = EntryType::parse(&type_name);
        let payload = match entry_type {
            EntryType::Message => {
                let (role, model_key, message) = match f[4] {
                    Some(raw) => {
                        let start = raw.as_ptr() as usize - s.as_ptr() as usize;
                        let role = role(m[0]);
                        let model_key = (role.as_deref() == Some("assistant"))
                            .then(|| format!("{}/{}", js_string(m[1]), js_string(m[2])));
                        (role, model_key, start..start + raw.len())
                    }
                    None => (None, None, 0..0),
                };
                let has_blob_refs = has_blob_mark(&s[message.clone()]);
                Payload::Message {
                    role,
                    model_key,
                    message,
                    has_blob_refs,
                }
            }
            EntryType::ThinkingLevelChange => Payload::ThinkingLevelChange {
                level: non_null(f[5]),
            },
            EntryType::ModelChange => Payload::ModelChange {
                model: f[6].filter(|r| truthy(r)).and_then(owned),
                role: match f[7].filter(|r| *r != "null") {
                    None => "default".to_string(),
                    Some(r) => js_string(Some(r)),
                },
            },
            EntryType::Compaction => Payload::Compaction {
                first_kept_entry_id: string(f[8]),
            },
            EntryType::BranchSummary => Payload::BranchSummary {
                has_summary: f[9].is_some_and(truthy),
            },
            EntryType::Custom => Payload::Custom,
            EntryType::CustomMessage => Payload::CustomMessage {
                has_blob_refs: has_blob_mark(s),
            },
            EntryType::Label => Payload::Label {
                target_id: string(f[10]),
                label: string(f[11]),
            },
            EntryType::TtsrInjection => Payload::TtsrInjection {
                rules: string_list(f[12]),
            },
            EntryType::SessionInit => Payload::SessionInit,
            EntryType::ModeChange => Payload::ModeChange {
                mode: f[13].and_then(owned),
                data: f[14].and_then(owned),
            },
            EntryType::ContextChange => Payload::ContextChange {
                name: non_null(f[15]),
                tenant: non_null(f[16]),
            },
            EntryType::ServiceTierChange => Payload::ServiceTierChange {
                tier: non_null(f[17]),
            },
            EntryType::McpToolSelection => Payload::McpToolSelection {
                names: string_list(f[18]),
            },
            EntryType::SessionInfo => Payload::SessionInfo,
            EntryType::Unknown => Payload::Unknown { type_name },
        };
        Ok(Record::Entry(Entry {
            id,
            parent_id,
            timestamp,
            entry_type,
            payload,
            text,
        }))
    }

    /// The `timestamp` string as written (empty when absent or not a string).
    pub fn timestamp(&self) -> &str {
        self.timestamp.get(self.text.as_str())
    }

    /// The entry's JSON text (one line, as stored).
    pub fn json(&self) -> &str {
        self.text.as_str()
    }

    /// The `type` string as written (also for unknown types).
    pub fn type_name(&self) -> &str {
        match &self.payload {
            Payload::Unknown { type_name } => type_name,
            _ => self.entry_type.as_str(),
        }
    }

    /// A `session_info` entry's name as pi reads it (trimmed; `Some(None)`: an empty or
    /// missing one, which clears the name); `None` for any other entry.
    pub fn session_info_name(&self) -> Option<Option<String>> {
        if !matches!(self.payload, Payload::SessionInfo) {
            return None;
        }
        let name = fields::pick(self.json(), &["name"]).ok()?[0]
            .and_then(|r| serde_json::from_str::<String>(r.get()).ok());
        Some(name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty()))
    }

    /// The raw `message` value of a message entry.
    pub fn message_json(&self) -> Option<&str> {
        match &self.payload {
            Payload::Message { message, .. } if !message.is_empty() => {
                Some(&self.json()[message.clone()])
            }
            _ => None,
        }
    }

    pub fn is_assistant_message(&self) -> bool {
        matches!(&self.payload, Payload::Message { role: Some(r), .. } if r == "assistant")
    }

    pub fn has_blob_refs(&self) -> bool {
        matches!(
            self.payload,
            Payload::Message {
                has_blob_refs: true,
                ..
            } | Payload::CustomMessage {
                has_blob_refs: true
            }
        )
    }

    /// The entry as a JSON object tree (for the rare paths that edit an entry).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.json()).unwrap_or(Value::Null)
    }
}

/// Compose an entry line in the agent's key order: `type, id, parentId, timestamp,
/// <fields>`, or `type, <fields>, id, parentId, timestamp` for `custom` and
/// `custom_message`. `fields` are (key, JSON text) pairs; absent optional fields are
/// simply not passed.
pub fn compose_line(
    type_name: &str,
    id: &str,
    parent_id: Option<&str>,
    timestamp: &str,
    fields: &[(&str, &str)],
) -> String {
    let mut out = String::with_capacity(
        128 + fields
            .iter()
            .map(|(k, v)| k.len() + v.len() + 4)
            .sum::<usize>(),
    );
    out.push_str("{\"type\":");
    push_quoted(&mut out, type_name);
    let ids = |out: &mut String| {
        out.push_str(",\"id\":");
        push_quoted(out, id);
        out.push_str(",\"parentId\":");
        match parent_id {
            Some(p) => push_quoted(out, p),
            None => out.push_str("null"),
        }
        out.push_str(",\"timestamp\":");
        push_quoted(out, timestamp);
    };
    let last = EntryType::parse(type_name).ids_last();
    if !last {
        ids(&mut out);
    }
    for (k, v) in fields {
        out.push(',');
        push_quoted(&mut out, k);
        out.push(':');
        out.push_str(v);
    }
    if last {
        ids(&mut out);
    }
    out.push('}');
    out
}

pub(crate) mod fields;
mod header;
mod id_index;

pub use fields::pick;
use fields::{
    entry_fields, has_blob_mark, js_string, non_null, owned, role, string, string_list,
    EntryFields, Slice,
};
pub use header::{Header, HEADER_PREFIX_BYTES};
pub use id_index::IdIndex;

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(s: &str) -> Entry {
        Entry::parse(Text::from(s.to_string())).unwrap()
    }

    #[test]
    fn the_header_is_the_first_non_blank_line_of_a_file() {
        let h = Header::from_file_start(
            "\u{feff}\n\r\n{\"type\":\"session\",\"id\":\"s1\",\"cwd\":\"/w\"}\r\n{\"type\":\"message\"}\n"
                .as_bytes(),
        )
        .unwrap();
        assert_eq!((h.id(), h.cwd()), ("s1", Some("/w")));
        // Not a header: another entry first, not JSON, no type "session", no lines at all.
        for text in [
            "{\"type\":\"message\",\"id\":\"a\"}\n",
            "{\"type\":\"session\",\"id\":",
            "{\"id\":\"s1\",\"cwd\":\"/w\"}",
            "\n\n",
        ] {
            assert_eq!(Header::from_file_start(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn unknown_entry_types_keep_their_text() {
        let line = r#"{"type":"future_thing","id":"a1","parentId":null,"timestamp":"t","x":{"y":[1,2.50]}}"#;
        let e = entry(line);
        assert_eq!(e.entry_type, EntryType::Unknown);
        assert_eq!(e.type_name(), "future_thing");
        assert_eq!(e.json(), line);
    }

    #[test]
    fn assistant_message_yields_model_key() {
        let e = entry(
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","provider":"anthropic","model":"claude"}}"#,
        );
        assert!(e.is_assistant_message());
        let Payload::Message { model_key, .. } = &e.payload else {
            panic!()
        };
        assert_eq!(model_key.as_deref(), Some("anthropic/claude"));
        assert_eq!(
            e.message_json().unwrap(),
            r#"{"role":"assistant","provider":"anthropic","model":"claude"}"#
        );
    }

    #[test]
    fn wrong_json_types_for_known_fields_do_not_fail_the_entry() {
        let e = entry(
            r#"{"type":"label","id":"a","parentId":5,"timestamp":[],"targetId":{},"label":7}"#,
        );
        assert_eq!(e.parent_id, None);
        assert!(matches!(
            e.payload,
            Payload::Label {
                target_id: None,
                label: None
            }
        ));
    }

    #[test]
    fn duplicate_keys_last_one_wins() {
        let e = entry(r#"{"type":"label","id":"a","id":"b","parentId":null,"timestamp":"t"}"#);
        assert_eq!(e.id, "b");
    }

    #[test]
    fn compose_line_puts_ids_last_for_custom_types() {
        assert_eq!(
            compose_line("custom", "ab", Some("cd"), "t", &[("customType", "\"x\"")]),
            r#"{"type":"custom","customType":"x","id":"ab","parentId":"cd","timestamp":"t"}"#
        );
        assert_eq!(
            compose_line("label", "ab", None, "t", &[("targetId", "\"x\"")]),
            r#"{"type":"label","id":"ab","parentId":null,"timestamp":"t","targetId":"x"}"#
        );
    }

    #[test]
    fn header_without_version_is_v1_and_keeps_extra_fields() {
        let text = r#"{"type":"session","id":"x","timestamp":"t","cwd":"/w","provider":"anthropic","modelId":"m"}"#;
        let h = Header::from_json(text).unwrap();
        assert_eq!(h.version(), 1);
        assert_eq!(h.to_json(), text);
        assert!(Header::from_json(r#"{"type":"message","id":"x"}"#).is_none());
        assert!(Header::from_json(r#"{"type":"session","id":5}"#).is_none());
    }
}
