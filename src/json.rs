//! Small JSON helpers shared by the modules: reading scalar fields out of raw values
//! without building trees, and writing strings exactly as `JSON.stringify` does.

use serde_json::value::RawValue;
use std::borrow::Cow;

/// The string inside a raw JSON value, or `None` when it is not a string.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let s = raw.get();
    if !s.starts_with('"') {
        return None;
    }
    let inner = &s[1..s.len() - 1];
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(s).ok().map(Cow::Owned)
}

/// JavaScript truthiness of a JSON value (`if (entry.model)`).
pub fn raw_truthy(raw: &RawValue) -> bool {
    match raw.get() {
        "null" | "false" | "\"\"" => false,
        s if s.starts_with('"') || s.starts_with('{') || s.starts_with('[') || s == "true" => true,
        s => s
            .parse::<f64>()
            .map(|n| n != 0.0 && !n.is_nan())
            .unwrap_or(true),
    }
}

/// `JSON.stringify` of a string.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_quoted(&mut out, s);
    out
}

/// Append `JSON.stringify(s)` to `out`.
pub fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[last..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => out.push_str(&format!("\\u{b:04x}")),
        }
        last = i + 1;
    }
    out.push_str(&s[last..]);
    out.push('"');
}

/// Compact JSON text of a value in its own key order (numbers kept as written).
pub fn to_text(value: &serde_json::Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_matches_json_stringify() {
        assert_eq!(quote("a\"b\\c\n\u{1}é/"), "\"a\\\"b\\\\c\\n\\u0001é/\"");
    }

    #[test]
    fn raw_str_unescapes() {
        let raw: Box<RawValue> = serde_json::from_str("\"a\\nb\"").unwrap();
        assert_eq!(raw_str(&raw).unwrap(), "a\nb");
        let raw: Box<RawValue> = serde_json::from_str("5").unwrap();
        assert!(raw_str(&raw).is_none());
    }

    #[test]
    fn truthiness_follows_javascript() {
        for (text, truthy) in [
            ("null", false),
            ("\"\"", false),
            ("0", false),
            ("\"x\"", true),
            ("1", true),
            ("{}", true),
        ] {
            let raw: Box<RawValue> = serde_json::from_str(text).unwrap();
            assert_eq!(raw_truthy(&raw), truthy, "{text}");
        }
    }

    #[test]
    fn numbers_round_trip_as_written() {
        let v: serde_json::Value =
            serde_json::from_str("{\"c\":0.000003,\"d\":1e+21,\"e\":100}").unwrap();
        assert_eq!(to_text(&v), "{\"c\":0.000003,\"d\":1e+21,\"e\":100}");
    }
}
