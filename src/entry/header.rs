//! The session header (the file's first line).

use super::CURRENT_SESSION_VERSION;
use serde_json::{Map, Value};

/// How much of a file [`Header::from_file_start`] reads.
pub const HEADER_PREFIX_BYTES: usize = 65_536;

/// The session header (first line). Kept as an ordered JSON object so v1 extras
/// (`provider`, `modelId`, `thinkingLevel`, `branchedFrom`) and unknown fields survive.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    fields: Map<String, Value>,
    /// The name's place is right after the id even while the header has none (a fork's
    /// header, as the agent builds it: `title` and `titleSource` written after `id`, kept
    /// there by a later rename).
    name_after_id: bool,
}

impl Header {
    /// A valid header is an object with `type: "session"` and a string `id`.
    pub fn from_json(text: &str) -> Option<Header> {
        match serde_json::from_str::<Value>(text).ok()? {
            Value::Object(fields)
                if fields.get("type").and_then(Value::as_str) == Some("session")
                    && fields.get("id").is_some_and(Value::is_string) =>
            {
                Some(Header {
                    fields,
                    name_after_id: false,
                })
            }
            _ => None,
        }
    }

    /// The header of a session file from its first bytes (at most the first 64 KiB are
    /// looked at): the first non-blank line, after a UTF-8 byte order mark, when it is a
    /// valid header. Callers pass a prefix, never the whole file.
    pub fn from_file_start(bytes: &[u8]) -> Option<Header> {
        let bytes = &bytes[..bytes.len().min(HEADER_PREFIX_BYTES)];
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let line = text.split('\n').find(|l| !l.trim().is_empty())?;
        Header::from_json(line.trim_end_matches('\r'))
    }

    /// A new v3 header in the agent's key order.
    pub fn new(id: &str, timestamp: &str, cwd: &str, parent_session: Option<&str>) -> Header {
        let mut fields = Map::new();
        fields.insert("type".into(), "session".into());
        fields.insert("version".into(), CURRENT_SESSION_VERSION.into());
        fields.insert("id".into(), id.into());
        fields.insert("timestamp".into(), timestamp.into());
        fields.insert("cwd".into(), cwd.into());
        if let Some(p) = parent_session {
            fields.insert("parentSession".into(), p.into());
        }
        Header {
            fields,
            name_after_id: false,
        }
    }

    pub fn id(&self) -> &str {
        self.str_field("id").unwrap_or_default()
    }

    /// The format version, compared as the agent compares it (`header.version ?? 1`
    /// against integers, in JavaScript): absent or `null` means v1; any number counts by
    /// its value (`3.0` and `3e0` are v3; `2.5` is between v2 and v3, so it takes the
    /// v2 → v3 step, as `floor` says); a string holding a number counts as that number,
    /// `true` as 1, `false` as 0. Anything else (JavaScript's NaN, which no migration
    /// step matches) counts as current: nothing is migrated.
    pub fn version(&self) -> u64 {
        let number = match self.fields.get("version") {
            None | Some(Value::Null) => Some(1.0),
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => match s.trim() {
                "" => Some(0.0),
                t => t.parse::<f64>().ok().filter(|v| v.is_finite()),
            },
            Some(Value::Bool(b)) => Some(f64::from(u8::from(*b))),
            Some(_) => None,
        };
        match number {
            Some(v) if v.is_finite() => v.floor().clamp(0.0, u64::MAX as f64) as u64,
            _ => crate::entry::CURRENT_SESSION_VERSION,
        }
    }

    pub fn set_version(&mut self, v: u64) {
        self.fields.insert("version".into(), v.into());
    }

    pub fn cwd(&self) -> Option<&str> {
        self.str_field("cwd")
    }

    pub fn timestamp(&self) -> Option<&str> {
        self.str_field("timestamp")
    }

    pub fn title(&self) -> Option<&str> {
        self.str_field("title")
    }

    pub fn parent_session(&self) -> Option<&str> {
        self.str_field("parentSession")
    }

    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }

    pub fn set(&mut self, key: &str, value: Value) {
        let name_key = key == "title" || key == "titleSource";
        if !(name_key && self.name_after_id) || self.fields.contains_key(key) {
            self.fields.insert(key.to_string(), value);
            return;
        }
        // A new name goes in its place, after the id (`titleSource` after `title`).
        let mut name = Map::new();
        for k in ["title", "titleSource"] {
            if let Some(v) = self.fields.shift_remove(k) {
                name.insert(k.to_string(), v);
            }
        }
        name.insert(key.to_string(), value);
        let name = Header {
            fields: name,
            name_after_id: false,
        };
        *self = std::mem::replace(self, name.clone()).named_after(&name);
    }

    pub fn remove(&mut self, key: &str) {
        self.fields.shift_remove(key);
    }

    /// This header with `from`'s name (`title`, `titleSource`, those it has) right after
    /// the id, where the agent's `fork` writes them.
    pub fn named_after(self, from: &Header) -> Header {
        let mut fields = Map::new();
        for (key, value) in self.fields {
            let after_id = key == "id";
            fields.insert(key, value);
            if after_id {
                for name_key in ["title", "titleSource"] {
                    if let Some(v) = from.fields.get(name_key) {
                        fields.insert(name_key.into(), v.clone());
                    }
                }
            }
        }
        Header {
            fields,
            name_after_id: true,
        }
    }

    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    pub fn to_json(&self) -> String {
        // Numbers as written: a header is written again with every rewrite of its file.
        crate::json::record(&Value::Object(self.fields.clone()))
    }
}
