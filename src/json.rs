//! Small JSON helpers shared by the modules: reading scalar fields out of raw values
//! without building trees, and writing strings exactly as `JSON.stringify` does.

use serde_json::value::RawValue;
use std::borrow::Cow;

/// The string inside a raw JSON value, or `None` when it is not a string.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    str_of_json(raw.get())
}

/// The string inside JSON text (a complete string literal), or `None`.
pub fn str_of_json(s: &str) -> Option<Cow<'_, str>> {
    if !s.starts_with('"') || s.len() < 2 {
        return None;
    }
    let inner = &s[1..s.len() - 1];
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(s).ok().map(Cow::Owned)
}

/// JavaScript truthiness of JSON text.
pub fn truthy(json: &str) -> bool {
    match json {
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

/// Compact JSON text of a typed record (`#[derive(Serialize)]`): serde_json escapes
/// strings exactly as `push_quoted` does (`\"`, `\\`, `\b\f\n\r\t`, other control
/// characters as lowercase `\u00xx`, everything else as is, DEL and U+2028 included) and
/// writes integers as `format!` does, so the bytes are the ones the shells always printed.
pub fn record<T: serde::Serialize + ?Sized>(value: &T) -> String {
    // Records have string keys and no failing `Serialize` impls: this cannot fail.
    serde_json::to_string(value).expect("a record serializes")
}

/// Compact JSON text of a value in its own key order (numbers kept as written).
/// A JSON array of JSON texts, written as they are.
pub fn array<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item.as_ref());
    }
    out.push(']');
    out
}

pub fn to_text(value: &serde_json::Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// The end (exclusive) of the string whose opening quote is at `i`.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        let j = i + memchr::memchr2(b'"', b'\\', &b[i..])?;
        if b[j] == b'"' {
            return Some(j + 1);
        }
        i = j + 2; // an escape: skip the escaped byte
    }
}

/// The end (exclusive) of the JSON value starting at `i` (which must be valid JSON).
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// The named top-level fields of a JSON object that is already known to be valid, as
/// raw text, found without validating again (strings are skipped with memchr). `None`
/// if the text is not an object. Keys are compared as written (the agent never escapes
/// key characters); the last duplicate wins.
pub fn object_fields<'a>(obj: &'a str, names: &[&str]) -> Option<Vec<Option<&'a str>>> {
    let b = obj.as_bytes();
    let mut out = vec![None; names.len()];
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(out);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(b, i)?;
        let key = &obj[i + 1..key_end - 1];
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = skip_value(b, i)?;
        if let Some(k) = names.iter().position(|n| *n == key) {
            out[k] = Some(&obj[i..end]);
        }
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(out),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_matches_json_stringify() {
        assert_eq!(quote("a\"b\\c\n\u{1}é/"), "\"a\\\"b\\\\c\\n\\u0001é/\"");
    }

    #[test]
    fn records_escape_as_quote_does() {
        let all: String = (0u32..0x80)
            .chain([0xe9, 0x2028, 0x2029, 0xfeff, 0x1f389])
            .filter_map(char::from_u32)
            .collect();
        assert_eq!(record(&all), quote(&all));
        assert_eq!(record(&[u64::MAX]), format!("[{}]", u64::MAX));
        assert_eq!(record(&[i64::MIN]), format!("[{}]", i64::MIN));
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
            assert_eq!(crate::json::truthy(raw.get()), truthy, "{text}");
        }
    }

    #[test]
    fn object_fields_finds_top_level_keys_only() {
        let obj = r#"{"content":[{"role":"x","model":"inner"},"a\\\"b{"],"role":"assistant","n":-1.5e3,"model":"m","provider":"p"}"#;
        let f = object_fields(obj, &["role", "provider", "model", "n", "missing"]).unwrap();
        assert_eq!(
            f,
            vec![
                Some("\"assistant\""),
                Some("\"p\""),
                Some("\"m\""),
                Some("-1.5e3"),
                None
            ]
        );
        assert_eq!(object_fields("{}", &["a"]).unwrap(), vec![None]);
        assert_eq!(
            object_fields(" { \"a\" : true } ", &["a"]).unwrap(),
            vec![Some("true")]
        );
        assert!(object_fields("[1]", &["a"]).is_none());
    }

    #[test]
    fn numbers_round_trip_as_written() {
        let v: serde_json::Value =
            serde_json::from_str("{\"c\":0.000003,\"d\":1e+21,\"e\":100}").unwrap();
        assert_eq!(to_text(&v), "{\"c\":0.000003,\"d\":1e+21,\"e\":100}");
    }
}
