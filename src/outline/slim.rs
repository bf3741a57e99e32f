//! An entry's JSON reduced to the fields a preview and a digest read, each string cut to
//! a preview's length: picked out of the text without building the rest (tool arguments,
//! details, whole outputs).

use crate::entry::pick;
use crate::json::push_with_strings_cut;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The entry fields [`super::describe`] and [`super::Digests::push`] read.
const ENTRY: &[&str] = &[
    "type",
    "timestamp",
    "message",
    "model",
    "provider",
    "modelId",
    "role",
    "thinkingLevel",
    "shortSummary",
    "summary",
    "tokensBefore",
    "customType",
    "content",
    "label",
    "targetId",
    "injectedRules",
    "task",
    "systemPrompt",
    "mode",
    "contextName",
    "tenant",
    "namespace",
    "serviceTier",
    "selectedToolNames",
    "name",
];
/// The message fields they read.
const MESSAGE: &[&str] = &[
    "role",
    "content",
    "toolName",
    "isError",
    "command",
    "errorMessage",
    "timestamp",
    "usage",
    "provider",
    "model",
];
/// The content block fields they read.
const BLOCK: &[&str] = &["type", "text", "name"];

/// The object `text` with only the fields of `names` (`message` and `content` reduced the
/// same way); `Null` when it is not an object.
fn slim(text: &str, names: &'static [&'static str]) -> Value {
    let Ok(fields) = pick(text, names) else {
        return Value::Null;
    };
    let mut out = Map::new();
    for (name, raw) in names.iter().zip(fields) {
        let Some(raw) = raw else { continue };
        let value = match *name {
            "message" if names == ENTRY => slim(raw.get(), MESSAGE),
            "content" => content(raw),
            _ => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
        };
        out.insert((*name).to_string(), value);
    }
    Value::Object(out)
}

/// A content string, a block array with each block reduced to its type, text, name.
fn content(raw: &RawValue) -> Value {
    match serde_json::from_str::<Vec<&RawValue>>(raw.get()) {
        Ok(blocks) => Value::Array(blocks.iter().map(|b| slim(b.get(), BLOCK)).collect()),
        Err(_) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
    }
}

/// An entry (its JSON text) reduced to what its outline row reads, strings cut to `max`
/// characters first (a fast pass, so that the fields left out are short to skip); `cut`
/// is a buffer to reuse.
pub(crate) fn entry(text: &str, max: usize, cut: &mut String) -> Value {
    cut.clear();
    push_with_strings_cut(cut, text, max);
    slim(cut, ENTRY)
}
