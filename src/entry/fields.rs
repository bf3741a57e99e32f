//! Picking the fields the core needs out of an entry's JSON text without building a tree:
//! the scanner's fast pass, serde's fallback, and the small coercions of raw values.

use super::Json;
use crate::json::str_of_json;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

// ---- picking fields out of a JSON object without building a tree ----

struct KeySeed<'n>(&'n [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Option<usize>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|n| *n == v))
    }
}

struct Pick<'n>(&'n [&'static str]);

impl<'de> DeserializeSeed<'de> for Pick<'_> {
    type Value = Vec<Option<&'de RawValue>>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Pick<'_> {
    type Value = Vec<Option<&'de RawValue>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = vec![None; self.0.len()];
        while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
            match key {
                // Duplicate keys: the last one wins, as in JSON.parse.
                Some(i) => out[i] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// The named fields of a JSON object, as raw values; an error when it is not an object.
pub fn pick<'a>(
    text: &'a str,
    names: &[&'static str],
) -> Result<Vec<Option<&'a RawValue>>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let out = Pick(names).deserialize(&mut de)?;
    de.end()?;
    Ok(out)
}

/// A string field of an entry: where it sits in the entry's text, or (when it was written
/// with escapes) its decoded copy.
#[derive(Debug, Clone)]
pub(super) enum Slice {
    At(Range<usize>),
    Owned(Box<str>),
}

impl Slice {
    /// The string inside the raw JSON value `raw` (a slice of `text`); empty when absent
    /// or not a string.
    pub(super) fn of_string(text: &str, raw: Option<&str>) -> Slice {
        match raw {
            Some(r) if r.len() >= 2 && r.starts_with('"') && !r[1..r.len() - 1].contains('\\') => {
                let start = r.as_ptr() as usize - text.as_ptr() as usize + 1;
                Slice::At(start..start + r.len() - 2)
            }
            r => Slice::Owned(string(r).unwrap_or_default().into_boxed_str()),
        }
    }

    pub(super) fn get<'t>(&'t self, text: &'t str) -> &'t str {
        match self {
            Slice::At(range) => &text[range.clone()],
            Slice::Owned(s) => s,
        }
    }
}

/// A message role; the agent's roles are shared constants, others are copied.
pub(super) fn role(raw: Option<&str>) -> Option<Cow<'static, str>> {
    const KNOWN: &[&str] = &[
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "hookMessage",
        "branchSummary",
        "compactionSummary",
        "fileMention",
    ];
    let value = str_of_json(raw?)?;
    Some(match KNOWN.iter().find(|k| **k == value) {
        Some(k) => Cow::Borrowed(*k),
        None => Cow::Owned(value.into_owned()),
    })
}

/// Raw JSON text already validated by the reader, as an owned raw value.
pub(super) fn owned(raw: &str) -> Option<Json> {
    RawValue::from_string(raw.to_owned()).ok()
}

pub(super) fn non_null(raw: Option<&str>) -> Option<Json> {
    raw.filter(|r| *r != "null").and_then(owned)
}

pub(super) fn string(raw: Option<&str>) -> Option<String> {
    raw.and_then(str_of_json).map(|s| s.into_owned())
}

pub(super) fn string_list(raw: Option<&str>) -> Vec<String> {
    raw.and_then(|r| serde_json::from_str::<Vec<Value>>(r).ok())
        .map(|items| {
            items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// JS template-literal coercion of a field (`${entry.message.provider}`).
pub(super) fn js_string(json: Option<&str>) -> String {
    match json {
        None => "undefined".to_string(),
        Some(t) => crate::json::str_of_json(t)
            .map(|s| s.into_owned())
            .unwrap_or_else(|| t.to_string()),
    }
}

pub const ENTRY_FIELDS: &[&str] = &[
    "type",
    "id",
    "parentId",
    "timestamp",
    "message",
    "thinkingLevel",
    "model",
    "role",
    "firstKeptEntryId",
    "summary",
    "targetId",
    "label",
    "injectedRules",
    "mode",
    "data",
    "contextName",
    "tenant",
    "serviceTier",
    "selectedToolNames",
];

pub const MESSAGE_FIELDS: &[&str] = &["role", "provider", "model"];

/// The fields of an entry line the core reads, as raw JSON text borrowed from the line:
/// `ENTRY_FIELDS` of the entry and `MESSAGE_FIELDS` of its `message` object.
pub struct EntryFields<'a> {
    pub entry: Vec<Option<&'a str>>,
    pub message: Vec<Option<&'a str>>,
}

/// The fields of an entry line, validating it: the scanner's one pass, and serde_json
/// whenever that pass cannot vouch for the line (it then decides and explains).
pub fn entry_fields(line: &str) -> Result<EntryFields<'_>, serde_json::Error> {
    match scan_entry_fields(line) {
        Some(fields) => Ok(fields),
        None => serde_entry_fields(line),
    }
}

/// The scanner's pass (`crate::scan`): `None` when it cannot vouch for the line.
pub fn scan_entry_fields(line: &str) -> Option<EntryFields<'_>> {
    let scan = crate::scan::scan_object(line, ENTRY_FIELDS, Some((4, MESSAGE_FIELDS)))?;
    Some(EntryFields {
        entry: scan.fields,
        message: scan.nested,
    })
}

/// serde_json's pass (the library alternative to the scanner, and its fallback).
pub fn serde_entry_fields(line: &str) -> Result<EntryFields<'_>, serde_json::Error> {
    let entry: Vec<Option<&str>> = pick(line, ENTRY_FIELDS)?
        .into_iter()
        .map(|r| r.map(RawValue::get))
        .collect();
    // The message was validated by the pick above: find its keys without a second
    // validating pass.
    let message = entry[4]
        .and_then(|raw| crate::json::object_fields(raw, MESSAGE_FIELDS))
        .unwrap_or_else(|| vec![None; MESSAGE_FIELDS.len()]);
    Ok(EntryFields { entry, message })
}

const BLOB_MARK: &str = "blob:sha256:";

/// Does the text hold a blob reference? (SIMD substring search: it runs over every
/// message when a session is opened.)
pub(super) fn has_blob_mark(text: &str) -> bool {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    FINDER
        .get_or_init(|| memchr::memmem::Finder::new(BLOB_MARK))
        .find(text.as_bytes())
        .is_some()
}
