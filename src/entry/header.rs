//! The session header (the file's first line).

use super::CURRENT_SESSION_VERSION;
use serde_json::{Map, Value};

/// The session header (first line). Kept as an ordered JSON object so v1 extras
/// (`provider`, `modelId`, `thinkingLevel`, `branchedFrom`) and unknown fields survive.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    fields: Map<String, Value>,
}

impl Header {
    /// A valid header is an object with `type: "session"` and a string `id`.
    pub fn from_json(text: &str) -> Option<Header> {
        match serde_json::from_str::<Value>(text).ok()? {
            Value::Object(fields)
                if fields.get("type").and_then(Value::as_str) == Some("session")
                    && fields.get("id").is_some_and(Value::is_string) =>
            {
                Some(Header { fields })
            }
            _ => None,
        }
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
        Header { fields }
    }

    pub fn id(&self) -> &str {
        self.str_field("id").unwrap_or_default()
    }

    /// Absent `version` means v1.
    pub fn version(&self) -> u64 {
        self.fields
            .get("version")
            .and_then(Value::as_u64)
            .unwrap_or(1)
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
        self.fields.insert(key.to_string(), value);
    }

    pub fn remove(&mut self, key: &str) {
        self.fields.shift_remove(key);
    }

    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    pub fn to_json(&self) -> String {
        crate::json::to_text(&Value::Object(self.fields.clone()))
    }
}
