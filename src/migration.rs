//! Migrations v1 → v2 → v3, applied on load.
//!
//! - v1 → v2: every entry gets an `id` and a `parentId` that chains them in file order;
//!   a compaction's `firstKeptEntryIndex` (the header counts as index 0) becomes
//!   `firstKeptEntryId`, read when the compaction gets its id, as the agent reads it (an
//!   index past the compaction names an entry with no new id yet), and the index is
//!   removed even when it cannot be mapped.
//! - v2 → v3: a message with `role: "hookMessage"` becomes `role: "custom"`.
//! - Header lines after the first (type `"session"`) stay among the records at their
//!   places: no id, not in the parent chain, a position that `firstKeptEntryIndex` counts
//!   (and cannot keep), and the new `version` at each step, as the agent's migration sets
//!   it on every header of its list.
//!
//! New keys are appended after the existing ones, as the agent's in-place mutation does.

use crate::entry::{Header, Text, CURRENT_SESSION_VERSION};
use crate::ids::{entry_id, SeededIds};
use serde_json::Value;
use std::collections::HashMap;

/// What a migration did (JSON: `{"fromVersion", "toVersion", "entriesChanged"}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Migration {
    pub from_version: u64,
    pub to_version: u64,
    pub entries_changed: usize,
}

/// Migrate `header` and the entry records (JSON objects, file order) in place. `None` when
/// the file is already current.
pub fn migrate(header: &mut Header, records: &mut [Text]) -> Option<Migration> {
    let from_version = header.version();
    if from_version >= CURRENT_SESSION_VERSION {
        return None;
    }
    let mut changed = 0;
    if from_version < 2 {
        changed += v1_to_v2(header, records);
        header.set_version(2);
    }
    if from_version < 3 {
        changed += v2_to_v3(records);
        header.set_version(3);
    }
    Some(Migration {
        from_version,
        to_version: CURRENT_SESSION_VERSION,
        entries_changed: changed,
    })
}

fn v1_to_v2(header: &Header, records: &mut [Text]) -> usize {
    let mut ids = SeededIds::new(&header.to_json());
    let mut values: Vec<Value> = records
        .iter()
        .map(|t| serde_json::from_str(t.as_str()).unwrap_or(Value::Null))
        .collect();
    let mut taken: HashMap<String, ()> = HashMap::new();
    // The id each record got (none for a header line).
    let mut assigned: Vec<Option<String>> = Vec::with_capacity(values.len());
    let mut prev: Option<String> = None;
    for i in 0..values.len() {
        if is_header(&values[i]) {
            assigned.push(None);
            values[i]["version"] = Value::from(2);
            continue;
        }
        let id = entry_id(|id| taken.contains_key(id), || ids.next_u64());
        taken.insert(id.clone(), ());
        assigned.push(Some(id.clone()));
        let kept = first_kept_entry_id(&values, &assigned, i);
        let Value::Object(obj) = &mut values[i] else {
            continue;
        };
        obj.insert("id".into(), Value::String(id.clone()));
        obj.insert(
            "parentId".into(),
            prev.replace(id).map(Value::String).unwrap_or(Value::Null),
        );
        if let Some(kept) = kept {
            if let Some(target) = kept {
                obj.insert("firstKeptEntryId".into(), target);
            }
            obj.shift_remove("firstKeptEntryIndex");
        }
    }
    let mut changed = 0;
    for (text, value) in records.iter_mut().zip(values) {
        // A record that could not be parsed into a tree (e.g. nested deeper than the
        // parser allows) keeps its text: it then fails to load as an entry and is
        // reported, and the file's bytes are kept aside before any rewrite.
        if value.is_object() {
            changed += usize::from(!is_header(&value));
            *text = Text::from(crate::json::to_text(&value));
        }
    }
    changed
}

/// A header line after the first (type `"session"`): kept among the records, it gets no
/// id but the new version, and counts in `firstKeptEntryIndex`, as in the agent's list.
fn is_header(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("session")
}

/// For record `i` (its id just given) when it is a compaction with a numeric
/// `firstKeptEntryIndex`: the `firstKeptEntryId` it gets, if any. Records get their ids in
/// file order and the index is read when its compaction is reached, as the agent does:
/// the target's new id when it comes before the compaction (or is the compaction), and
/// the `id` it was written with (usually none) when it comes after. Index 0 is the header,
/// which cannot be kept; entries (and later header lines, which cannot be kept either)
/// start at 1.
fn first_kept_entry_id(
    values: &[Value],
    assigned: &[Option<String>],
    i: usize,
) -> Option<Option<Value>> {
    let obj = values[i].as_object()?;
    if obj.get("type").and_then(Value::as_str) != Some("compaction") {
        return None;
    }
    let index = obj.get("firstKeptEntryIndex").and_then(Value::as_f64)?;
    if index < 1.0 || index.fract() != 0.0 {
        return Some(None);
    }
    let k = index as usize - 1;
    Some(match values.get(k) {
        Some(target) if !target.is_object() || is_header(target) => None,
        Some(_) if k <= i => assigned[k].clone().map(Value::String),
        Some(target) => target.get("id").cloned(),
        None => None,
    })
}

fn v2_to_v3(records: &mut [Text]) -> usize {
    let mut changed = 0;
    for text in records.iter_mut() {
        if !text.as_str().contains("hookMessage") && !text.as_str().contains("\"session\"") {
            continue;
        }
        let Ok(mut value) = serde_json::from_str::<Value>(text.as_str()) else {
            continue;
        };
        if is_header(&value) {
            value["version"] = Value::from(3);
            *text = Text::from(crate::json::to_text(&value));
            continue;
        }
        if value.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let Some(role) = value.get_mut("message").and_then(|m| m.get_mut("role")) else {
            continue;
        };
        if role.as_str() == Some("hookMessage") {
            *role = Value::String("custom".into());
            *text = Text::from(crate::json::to_text(&value));
            changed += 1;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[&str]) -> Vec<Text> {
        lines.iter().map(|l| Text::from(l.to_string())).collect()
    }

    #[test]
    fn v1_entries_get_a_linear_parent_chain() {
        let mut h =
            Header::from_json(r#"{"type":"session","id":"s","timestamp":"t","cwd":"/w"}"#).unwrap();
        let mut r = texts(&[
            r#"{"type":"message","timestamp":"a","message":{"role":"user"}}"#,
            r#"{"type":"message","timestamp":"b","message":{"role":"assistant"}}"#,
        ]);
        let m = migrate(&mut h, &mut r).unwrap();
        assert_eq!((m.from_version, m.to_version), (1, 3));
        assert_eq!(h.version(), 3);
        assert!(h.to_json().ends_with(r#""cwd":"/w","version":3}"#));
        let a: Value = serde_json::from_str(r[0].as_str()).unwrap();
        let b: Value = serde_json::from_str(r[1].as_str()).unwrap();
        assert_eq!(a["parentId"], Value::Null);
        assert_eq!(b["parentId"], a["id"]);
        assert!(r[0].as_str().ends_with(&format!(
            r#""id":"{}","parentId":null}}"#,
            a["id"].as_str().unwrap()
        )));
    }

    #[test]
    fn v1_compaction_index_maps_to_entry_id() {
        let mut h = Header::from_json(r#"{"type":"session","id":"s"}"#).unwrap();
        let mut r = texts(&[
            r#"{"type":"message","message":{"role":"user"}}"#,
            r#"{"type":"message","message":{"role":"user"}}"#,
            r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}"#,
            r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":0,"tokensBefore":1}"#,
        ]);
        migrate(&mut h, &mut r).unwrap();
        let second: Value = serde_json::from_str(r[1].as_str()).unwrap();
        let c: Value = serde_json::from_str(r[2].as_str()).unwrap();
        assert_eq!(c["firstKeptEntryId"], second["id"]);
        assert!(c.get("firstKeptEntryIndex").is_none());
        let header_target: Value = serde_json::from_str(r[3].as_str()).unwrap();
        assert!(header_target.get("firstKeptEntryIndex").is_none());
        assert!(header_target.get("firstKeptEntryId").is_none());
    }

    #[test]
    fn v1_compaction_index_after_the_compaction_gets_the_id_its_target_had_then() {
        let mut h = Header::from_json(r#"{"type":"session","id":"s"}"#).unwrap();
        let mut r = texts(&[
            r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}"#,
            r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":3,"tokensBefore":1}"#,
            r#"{"type":"message","id":"written","message":{"role":"user"}}"#,
            r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":4,"tokensBefore":1}"#,
        ]);
        migrate(&mut h, &mut r).unwrap();
        let v: Vec<Value> = r
            .iter()
            .map(|t| serde_json::from_str(t.as_str()).unwrap())
            .collect();
        // The second record has no id yet when the first compaction is reached.
        assert!(v[0].get("firstKeptEntryId").is_none());
        assert!(v[0].get("firstKeptEntryIndex").is_none());
        assert_eq!(v[1]["firstKeptEntryId"], "written");
        assert_ne!(v[2]["id"], "written");
        // A compaction keeping itself gets its own new id.
        assert_eq!(v[3]["firstKeptEntryId"], v[3]["id"]);
    }

    #[test]
    fn migrated_records_write_numbers_as_javascript_does() {
        let mut h = Header::from_json(r#"{"type":"session","id":"s"}"#).unwrap();
        let mut r = texts(&[
            r#"{"type":"message","message":{"role":"assistant","usage":{"cost":{"total":4.1e-05}},"n":1E2}}"#,
        ]);
        migrate(&mut h, &mut r).unwrap();
        assert!(r[0]
            .as_str()
            .contains(r#""usage":{"cost":{"total":0.000041}},"n":100}"#));
    }

    #[test]
    fn v2_hook_messages_become_custom() {
        let mut h = Header::from_json(r#"{"type":"session","version":2,"id":"s"}"#).unwrap();
        let mut r = texts(&[
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"hookMessage","x":1}}"#,
        ]);
        let m = migrate(&mut h, &mut r).unwrap();
        assert_eq!(m.entries_changed, 1);
        assert_eq!(
            r[0].as_str(),
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"custom","x":1}}"#
        );
    }

    #[test]
    fn current_files_are_not_migrated() {
        let mut h = Header::from_json(r#"{"type":"session","version":3,"id":"s"}"#).unwrap();
        assert!(migrate(&mut h, &mut []).is_none());
    }

    #[test]
    fn migration_ids_are_deterministic() {
        let run = || {
            let mut h = Header::from_json(r#"{"type":"session","id":"s"}"#).unwrap();
            let mut r = texts(&[r#"{"type":"message","message":{}}"#]);
            migrate(&mut h, &mut r);
            r[0].as_str().to_string()
        };
        assert_eq!(run(), run());
    }
}
