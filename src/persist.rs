//! Persistence transforms, applied to each entry before it is written:
//! 1. images externalized to the blob store (content image blocks with base64 `data` of at
//!    least 1024 characters, and any `image_url` data URL whatever its length);
//! 2. strings over 500,000 UTF-16 code units truncated with a notice (signatures blanked);
//! 3. transient `partialJson` / `jsonlEvents` keys removed at any depth;
//! 4. `lineCount` recomputed where a string `content` was truncated.
//!
//! Images are externalized before truncation so that a large image is never cut.
//! Content already on disk goes through [`Transforms::Lossless`] only: nothing is cut.

use crate::blob::{decode_base64, BLOB_REF_PREFIX};
use serde_json::{Map, Value};
use std::borrow::Cow;

pub const MAX_PERSIST_CHARS: usize = 500_000;
pub const TRUNCATION_NOTICE: &str = "\n\n[Session persistence truncated large content]";
pub const BLOB_EXTERNALIZE_THRESHOLD: usize = 1024;
const SIGNATURE_KEYS: [&str; 3] = ["thinkingSignature", "thoughtSignature", "textSignature"];
const TRANSIENT_KEYS: [&str; 2] = ["partialJson", "jsonlEvents"];

/// What a write may do to an entry's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transforms {
    /// Everything the agent does to what it persists now (1–4 above).
    All,
    /// For content already on disk that a rewrite writes again: only what loses nothing
    /// (1 and 3: images move to the blob store, transient streaming keys go). Strings are
    /// never cut: the 500,000 limit is for what is being persisted now.
    Lossless,
}

/// Stores bytes as a blob and returns its `blob:sha256:` reference.
pub type Externalize<'a> = dyn FnMut(&[u8]) -> Result<String, crate::storage::StorageError> + 'a;

/// Cheap test: can the transforms change this text at all?
pub fn needs_transform(text: &str) -> bool {
    text.len() > MAX_PERSIST_CHARS
        || TRANSIENT_KEYS.iter().any(|k| text.contains(k))
        || text.contains("\"image\"")
        || text.contains("image_url")
}

/// Length in UTF-16 code units (JavaScript's `string.length`).
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

/// Cut to `MAX_PERSIST_CHARS` units as the agent does; `None` when short enough.
pub fn truncate_text(s: &str) -> Option<String> {
    if s.len() <= MAX_PERSIST_CHARS || utf16_len(s) <= MAX_PERSIST_CHARS {
        return None;
    }
    let keep_units = MAX_PERSIST_CHARS - utf16_len(TRUNCATION_NOTICE);
    let mut units = 0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        // A pair that would straddle the cut is dropped whole (a lone high surrogate).
        if units + c.len_utf16() > keep_units {
            break;
        }
        units += c.len_utf16();
        end = i + c.len_utf8();
    }
    Some(format!("{}{TRUNCATION_NOTICE}", &s[..end]))
}

/// Apply all transforms to one entry's JSON text.
pub fn prepare_for_persistence<'t>(
    text: &'t str,
    externalize: &mut Externalize,
    transforms: Transforms,
) -> Result<Cow<'t, str>, crate::storage::StorageError> {
    if !needs_transform(text) {
        return Ok(Cow::Borrowed(text));
    }
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return Ok(Cow::Borrowed(text));
    };
    let mut changed = false;
    externalize_images(&mut value, false, externalize, &mut changed)?;
    let cut = transforms == Transforms::All;
    truncate_value(&mut value, None, cut, &mut changed);
    Ok(if changed {
        Cow::Owned(crate::json::to_text(&value))
    } else {
        Cow::Borrowed(text)
    })
}

fn externalize_images(
    value: &mut Value,
    in_content: bool,
    externalize: &mut Externalize,
    changed: &mut bool,
) -> Result<(), crate::storage::StorageError> {
    match value {
        Value::Object(obj) => {
            if in_content && obj.get("type").and_then(Value::as_str) == Some("image") {
                if let Some(Value::String(data)) = obj.get("data") {
                    if data.len() >= BLOB_EXTERNALIZE_THRESHOLD
                        && !data.starts_with(BLOB_REF_PREFIX)
                    {
                        if let Some(bytes) = decode_base64(data) {
                            let reference = externalize(&bytes)?;
                            obj.insert("data".into(), Value::String(reference));
                            *changed = true;
                        }
                    }
                }
            }
            for (key, child) in obj.iter_mut() {
                if key == "image_url" {
                    if let Value::String(url) = child {
                        if url.starts_with("data:image/") && url.contains(";base64,") {
                            *child = Value::String(externalize(url.as_bytes())?);
                            *changed = true;
                            continue;
                        }
                    }
                }
                let child_in_content = key == "content" && child.is_array();
                externalize_images(child, child_in_content, externalize, changed)?;
            }
        }
        Value::Array(items) => {
            for item in items {
                externalize_images(item, in_content, externalize, changed)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Cut long strings (when `cut`) and drop transient keys; true when this string was cut.
fn truncate_value(value: &mut Value, key: Option<&str>, cut: bool, changed: &mut bool) -> bool {
    match value {
        Value::String(s) => {
            if cut && s.len() > MAX_PERSIST_CHARS && utf16_len(s) > MAX_PERSIST_CHARS {
                *s = if key.is_some_and(|k| SIGNATURE_KEYS.contains(&k)) {
                    String::new()
                } else {
                    truncate_text(s).unwrap_or_default()
                };
                *changed = true;
                return true;
            }
            false
        }
        Value::Array(items) => {
            for item in items {
                truncate_value(item, None, cut, changed);
            }
            false
        }
        Value::Object(obj) => {
            truncate_object(obj, cut, changed);
            false
        }
        _ => false,
    }
}

fn truncate_object(obj: &mut Map<String, Value>, cut: bool, changed: &mut bool) {
    let before = obj.len();
    obj.retain(|k, _| !TRANSIENT_KEYS.contains(&k.as_str()));
    if obj.len() != before {
        *changed = true;
    }
    let mut content_truncated = false;
    for (k, child) in obj.iter_mut() {
        let was_cut = truncate_value(child, Some(k), cut, changed);
        if was_cut && k == "content" {
            content_truncated = true;
        }
    }
    if content_truncated && obj.contains_key("lineCount") {
        if let Some(Value::String(content)) = obj.get("content") {
            let lines = content.split('\n').count();
            obj.insert("lineCount".into(), Value::from(lines));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_blobs() -> impl FnMut(&[u8]) -> Result<String, crate::storage::StorageError> {
        |_| panic!("no blob expected")
    }

    fn run(text: &str) -> String {
        prepare_for_persistence(text, &mut no_blobs(), Transforms::All)
            .unwrap()
            .into_owned()
    }

    #[test]
    fn exactly_500000_units_is_left_alone() {
        assert!(truncate_text(&"x".repeat(500_000)).is_none());
    }

    #[test]
    fn longer_strings_become_499953_units_plus_notice() {
        let out = truncate_text(&"x".repeat(500_001)).unwrap();
        assert_eq!(utf16_len(&out), 500_000);
        assert!(out.ends_with("[Session persistence truncated large content]"));
        assert_eq!(utf16_len(TRUNCATION_NOTICE), 47);
    }

    #[test]
    fn truncation_counts_utf16_units_and_never_splits_a_pair() {
        // 499952 ASCII units then an emoji (2 units) that would straddle the cut at 499953.
        let s = format!("{}😀{}", "x".repeat(499_952), "y".repeat(100));
        let out = truncate_text(&s).unwrap();
        assert!(out.starts_with(&"x".repeat(499_952)));
        assert!(!out.contains('😀'));
        assert_eq!(utf16_len(&out), 499_952 + 47);
    }

    #[test]
    fn signatures_over_the_limit_become_empty() {
        let text = format!(r#"{{"thinkingSignature":"{}","b":1}}"#, "s".repeat(500_001));
        assert_eq!(run(&text), r#"{"thinkingSignature":"","b":1}"#);
    }

    #[test]
    fn transient_fields_are_removed_at_any_depth() {
        assert_eq!(
            run(r#"{"a":{"partialJson":"x","b":[{"jsonlEvents":[],"c":1}]}}"#),
            r#"{"a":{"b":[{"c":1}]}}"#
        );
    }

    #[test]
    fn line_count_is_recomputed_only_when_content_was_truncated() {
        let text = format!(
            r#"{{"content":"{}","lineCount":99}}"#,
            "a\\n".repeat(250_001)
        );
        let v: Value = serde_json::from_str(&run(&text)).unwrap();
        let content = v["content"].as_str().unwrap();
        assert_eq!(v["lineCount"], content.split('\n').count());
        assert_eq!(
            run(r#"{"content":"a\nb","lineCount":99}"#),
            r#"{"content":"a\nb","lineCount":99}"#
        );
    }

    #[test]
    fn large_content_images_are_externalized_small_ones_kept() {
        let big = "A".repeat(1024);
        let small = "A".repeat(1020);
        let text = format!(
            r#"{{"message":{{"content":[{{"type":"image","data":"{big}","mimeType":"image/png"}},{{"type":"image","data":"{small}"}}]}},"other":{{"type":"image","data":"{big}"}}}}"#
        );
        let mut seen = Vec::new();
        let out = prepare_for_persistence(
            &text,
            &mut |b: &[u8]| {
                seen.push(b.len());
                Ok(format!("blob:sha256:{}", crate::blob::sha256_hex(b)))
            },
            Transforms::All,
        )
        .unwrap();
        assert_eq!(seen, vec![768]);
        assert!(out.contains(
            "blob:sha256:ef115a0e0c15cdc41958ca46b5b14b456115f4baec5e3ca68599d2a8f435e3b8"
        ));
        assert!(out.contains(&small));
        assert!(
            out.contains(&format!(r#""other":{{"type":"image","data":"{big}"}}"#)),
            "not under content: kept"
        );
    }

    #[test]
    fn image_url_data_urls_are_externalized_whatever_their_length() {
        let text = r#"{"image_url":"data:image/png;base64,AAAA","x":"data:image/png;base64,AAAA"}"#;
        let mut stored = Vec::new();
        let out = prepare_for_persistence(
            text,
            &mut |b: &[u8]| {
                stored.push(b.to_vec());
                Ok("blob:sha256:ref".to_string())
            },
            Transforms::All,
        )
        .unwrap();
        assert_eq!(
            out,
            r#"{"image_url":"blob:sha256:ref","x":"data:image/png;base64,AAAA"}"#
        );
        assert_eq!(stored, vec![b"data:image/png;base64,AAAA".to_vec()]);
    }

    #[test]
    fn already_externalized_images_stay_as_refs() {
        let text = format!(
            r#"{{"content":[{{"type":"image","data":"blob:sha256:{}"}}]}}"#,
            "a".repeat(64 * 20)
        );
        assert_eq!(run(&text), text);
    }
}
