//! The few JavaScript string rules an outline's previews are written in (they are shown in
//! a browser, next to text the page cuts the same way): whitespace as `\s`, lengths in
//! UTF-16 units, `String(value)` of a JSON value, truthiness, and `en-US` number grouping.

use serde_json::Value;

/// `\s` of a JavaScript regular expression (Unicode White_Space without U+0085, and U+FEFF).
pub(crate) fn is_js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// The longest start of `s` of at most `units` UTF-16 units (a character is never split).
pub(crate) fn prefix16(s: &str, units: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.len_utf16();
        if used > units {
            return &s[..i];
        }
    }
    s
}

/// The length of `s` in UTF-16 units (`String.prototype.length`).
pub(crate) fn len16(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `String(v)`: a string as is, `null`, booleans and numbers as JavaScript prints them,
/// arrays joined by commas, objects as `[object Object]`.
pub(crate) fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), js_number),
        Value::Array(items) => join(items, ","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// `${v}` of a field: `undefined` when absent.
pub(crate) fn template(v: Option<&Value>) -> String {
    v.map_or_else(|| "undefined".into(), js_string)
}

/// `v ?? fallback` printed: the fallback when absent or null.
pub(crate) fn or(v: Option<&Value>, fallback: &str) -> String {
    match v {
        None | Some(Value::Null) => fallback.into(),
        Some(v) => js_string(v),
    }
}

/// `Array.prototype.join`: null items print as nothing.
pub(crate) fn join(items: &[Value], sep: &str) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|v| {
            if v.is_null() {
                String::new()
            } else {
                js_string(v)
            }
        })
        .collect();
    parts.join(sep)
}

/// JavaScript truthiness of a field (absent is `undefined`: false).
pub(crate) fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// A number as JavaScript prints it (integers without a fraction).
fn js_number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i128)
    } else {
        f.to_string()
    }
}

/// `new Intl.NumberFormat('en-US').format(v)`: digits grouped by three, at most three
/// decimals; a value that is no number is `NaN`.
pub(crate) fn en_us(v: &Value) -> String {
    let f = match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Null => 0.0,
        _ => f64::NAN,
    };
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-∞" } else { "∞" }.into();
    }
    let fixed = format!("{:.3}", f.abs());
    let (int, frac) = fixed.split_once('.').unwrap_or((&fixed, ""));
    let frac = frac.trim_end_matches('0');
    let mut out = String::new();
    if f < 0.0 && (int != "0" || !frac.is_empty()) {
        out.push('-');
    }
    for (i, d) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_grouped_as_en_us_formats_them() {
        assert_eq!(en_us(&json!(1234567)), "1,234,567");
        assert_eq!(en_us(&json!(999)), "999");
        assert_eq!(en_us(&json!(-1234.5678)), "-1,234.568");
        assert_eq!(en_us(&json!("12000")), "12,000");
        assert_eq!(en_us(&json!("x")), "NaN");
    }

    #[test]
    fn strings_print_as_javascript_prints_them() {
        assert_eq!(js_string(&json!([1, null, "a"])), "1,,a");
        assert_eq!(js_string(&json!(2.5)), "2.5");
        assert_eq!(js_string(&json!({})), "[object Object]");
        assert_eq!(template(None), "undefined");
        assert_eq!(prefix16("a😀b", 2), "a");
        assert_eq!(len16("a😀b"), 4);
        assert!(is_js_space('\u{feff}') && !is_js_space('\u{85}'));
    }
}
