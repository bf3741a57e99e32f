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

/// A JSON number read as JavaScript's `JSON.parse` reads it: the double nearest the text
/// (std's parse; serde_json's own f64 parse, without its `float_roundtrip` feature, can
/// be one ulp off: it reads 0.20000010000000001 as 0.2000001).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Double(pub f64);

impl<'de> serde::Deserialize<'de> for Double {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // With `arbitrary_precision` a Number keeps the text as written.
        let n = serde_json::Number::deserialize(d)?;
        n.as_str()
            .parse::<f64>()
            .map(Double)
            .map_err(serde::de::Error::custom)
    }
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
/// characters as lowercase `\u00xx`, everything else as is, DEL and U+2028 included),
/// writes integers as `format!` does, so the bytes are the ones the shells always
/// printed, and floats as JavaScript does. JSON values inside keep their numbers as
/// written.
pub fn record<T: serde::Serialize + ?Sized>(value: &T) -> String {
    // Records have string keys and no failing `Serialize` impls: this cannot fail.
    write_with(value, JsNumbers { as_written: true }).expect("a record serializes")
}

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

/// Compact JSON text of a value in its own key order, as `JSON.stringify` writes the
/// object `JSON.parse` makes of it: every number as ECMAScript's `Number::toString`
/// writes the double it reads as (`4.1e-05` → `0.000041`, `1E2` → `100`, `-0` → `0`,
/// integers past 2^53 rounded). What the core writes whole again (a migrated record, a
/// record it edits) is what the agent writes after parsing it.
pub fn to_text(value: &serde_json::Value) -> String {
    write_with(value, JsNumbers { as_written: false }).unwrap_or_else(|_| "null".to_string())
}

fn write_with<T: serde::Serialize + ?Sized>(
    value: &T,
    formatter: JsNumbers,
) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out, formatter,
    ))?;
    // serde_json writes only UTF-8.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// serde_json's compact output with floats, and with `as_written: false` the numbers of
/// JSON values too, written as JavaScript writes them.
struct JsNumbers {
    as_written: bool,
}

impl serde_json::ser::Formatter for JsNumbers {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        w.write_all(JsFloat::new(v).as_str().as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        self.write_f64(w, f64::from(v))
    }

    fn write_number_str<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        number: &str,
    ) -> std::io::Result<()> {
        match self.as_written {
            true => w.write_all(number.as_bytes()),
            false => w.write_all(js_number(number).as_bytes()),
        }
    }
}

/// JSON number text as `JSON.stringify(JSON.parse(text))` writes it.
pub fn js_number(text: &str) -> Cow<'_, str> {
    // Integers of up to 15 digits are exact doubles, written as they are (JSON has no
    // leading zeros); only `-0` is not.
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.len() <= 15 && digits.bytes().all(|b| b.is_ascii_digit()) && text != "-0" {
        return Cow::Borrowed(text);
    }
    match text.parse::<f64>() {
        Ok(v) => Cow::Owned(JsFloat::new(v).as_str().to_string()),
        Err(_) => Cow::Borrowed(text),
    }
}

/// A double written as ECMAScript's `Number::toString` writes it (`String(x)`): the
/// shortest digits that read back as the same double (zmij's, the formatter serde_json
/// already links), placed by the standard's rules: integers below 1e21 written out,
/// decimal notation for exponents from -7 to 20, else `d.ddde+N` / `d.ddde-N`; `-0` is
/// `0`. NaN and infinities (never in JSON) are `NaN`, `Infinity`, `-Infinity`.
struct JsFloat {
    buf: [u8; 32],
    len: usize,
}

impl JsFloat {
    fn new(v: f64) -> Self {
        let mut out = JsFloat {
            buf: [0; 32],
            len: 0,
        };
        if !v.is_finite() || v == 0.0 {
            let text = match v {
                _ if v.is_nan() => "NaN",
                f64::INFINITY => "Infinity",
                f64::NEG_INFINITY => "-Infinity",
                _ => "0",
            };
            out.push(text.as_bytes());
            return out;
        }
        if v < 0.0 {
            out.push(b"-");
        }
        let mut zmij = zmij::Buffer::new();
        let text = zmij.format_finite(v.abs()).as_bytes();
        // zmij writes `I.F` or `I.Fe±X`: its digits (at most 24) without the point, and
        // `n`, the position of the point in them, once the exponent is added.
        let (mantissa, exp) = match text.iter().position(|&b| b == b'e') {
            Some(e) => (&text[..e], parse_exp(&text[e + 1..])),
            None => (text, 0),
        };
        let point = mantissa.iter().position(|&b| b == b'.');
        let mut n = point.unwrap_or(mantissa.len()) as i32 + exp;
        let mut digits = [0u8; 24];
        let mut k = 0;
        for &b in mantissa {
            match b {
                b'.' => {}
                b'0' if k == 0 => n -= 1, // a leading zero (`0.00123`)
                _ => {
                    digits[k] = b;
                    k += 1;
                }
            }
        }
        // The value is now 0.d₁d₂…d_k × 10^n, as the standard writes it.
        while k > 1 && digits[k - 1] == b'0' {
            k -= 1;
        }
        let digits = &digits[..k];
        let k = k as i32;
        if k <= n && n <= 21 {
            out.push(digits);
            for _ in k..n {
                out.push(b"0");
            }
        } else if 0 < n && n <= 21 {
            out.push(&digits[..n as usize]);
            out.push(b".");
            out.push(&digits[n as usize..]);
        } else if -6 < n && n <= 0 {
            out.push(b"0.");
            for _ in n..0 {
                out.push(b"0");
            }
            out.push(digits);
        } else {
            out.push(&digits[..1]);
            if k > 1 {
                out.push(b".");
                out.push(&digits[1..]);
            }
            out.push(if n > 0 { b"e+" } else { b"e-" });
            let mut e = (n - 1).unsigned_abs();
            let mut exp_digits = [0u8; 3];
            let mut i = 3;
            loop {
                i -= 1;
                exp_digits[i] = b'0' + (e % 10) as u8;
                e /= 10;
                if e == 0 {
                    break;
                }
            }
            out.push(&exp_digits[i..]);
        }
        out
    }

    fn push(&mut self, bytes: &[u8]) {
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    fn as_str(&self) -> &str {
        // Only ASCII digits, signs, points and letters were pushed.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

/// zmij's exponent (`21`, `+21`, `-7`).
fn parse_exp(text: &[u8]) -> i32 {
    let (sign, digits) = match text.first() {
        Some(b'-') => (-1, &text[1..]),
        Some(b'+') => (1, &text[1..]),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |e, &d| e * 10 + i32::from(d.wrapping_sub(b'0')))
}

/// Append `json` (valid JSON text) to `out` with every string value (keys stay whole)
/// longer than `max_chars` characters cut to its first `max_chars` (an escape counts as one character; a cut
/// never splits a character, an escape or a surrogate pair). For outlines of huge
/// sessions: a preview needs the start of a tool's output, not all of it.
pub fn push_with_strings_cut(out: &mut String, json: &str, max_chars: usize) {
    let b = json.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    // Outside strings there are no quotes: each quote found from here opens a string.
    while let Some(q) = memchr::memchr(b'"', &b[i..]) {
        let (cut, end) = string_cut(b, i + q, max_chars);
        let is_key = b.get(skip_ws(b, end)) == Some(&b':');
        if let Some(cut) = cut.filter(|_| !is_key) {
            out.push_str(&json[copied..cut]);
            copied = end - 1; // the closing quote
        }
        i = end;
    }
    out.push_str(&json[copied..]);
}

/// For the string whose opening quote is at `open`: where to cut it to `max_chars`
/// characters (`None`: it is not longer), and its end (exclusive).
fn string_cut(b: &[u8], open: usize, max_chars: usize) -> (Option<usize>, usize) {
    let mut chars = 0;
    let mut cut = None;
    let mut i = open + 1;
    loop {
        let Some(k) = memchr::memchr2(b'"', b'\\', &b[i..]).map(|k| i + k) else {
            return (cut, b.len()); // not valid JSON: the rest is left as it is
        };
        if cut.is_none() {
            // Characters of the plain run: every byte that does not continue one.
            let run = &b[i..k];
            let n = run.iter().filter(|&&c| (c as i8) >= -0x40).count();
            if chars + n > max_chars {
                // The start of the first character past the ones kept.
                let at = run
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| (c as i8) >= -0x40)
                    .nth(max_chars - chars)
                    .map(|(j, _)| j);
                cut = Some(i + at.unwrap_or(run.len()));
            } else {
                chars += n;
            }
        }
        if b[k] == b'"' {
            return (cut, k + 1);
        }
        let len = if b.get(k + 1) == Some(&b'u') { 6 } else { 2 };
        if cut.is_none() {
            if chars == max_chars {
                cut = Some(k);
            } else if chars + 1 == max_chars && len == 6 && is_high_surrogate(&b[k..]) {
                // Keep a surrogate pair whole: cut before its first half.
                cut = Some(k);
            } else {
                chars += 1;
            }
        }
        i = (k + len).min(b.len());
    }
}

/// Is this `\uXXXX` escape the first half of a surrogate pair (D800–DBFF)?
fn is_high_surrogate(escape: &[u8]) -> bool {
    escape.len() >= 6
        && matches!(escape[2], b'd' | b'D')
        && matches!(escape[3], b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
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

    fn cut(json: &str, max: usize) -> String {
        let mut out = String::new();
        push_with_strings_cut(&mut out, json, max);
        out
    }

    /// Every string value of `got` is a prefix of the same string in `want` with at most
    /// `max` characters (with `exact`: `want`'s first `max`, or all of it); keys and
    /// everything else are equal.
    fn same_but_cut(want: &serde_json::Value, got: &serde_json::Value, max: usize, exact: bool) {
        use serde_json::Value;
        match (want, got) {
            (Value::String(w), Value::String(g)) => {
                assert!(w.starts_with(g.as_str()), "{g:?} is not a prefix of {w:?}");
                let (wn, gn) = (w.chars().count(), g.chars().count());
                assert!(gn <= max, "{gn} > {max}");
                if exact {
                    assert_eq!(gn, wn.min(max), "{w:?} → {g:?}");
                }
            }
            (Value::Array(w), Value::Array(g)) => {
                assert_eq!(w.len(), g.len());
                w.iter()
                    .zip(g)
                    .for_each(|(w, g)| same_but_cut(w, g, max, exact));
            }
            (Value::Object(w), Value::Object(g)) => {
                assert_eq!(w.keys().collect::<Vec<_>>(), g.keys().collect::<Vec<_>>());
                w.values()
                    .zip(g.values())
                    .for_each(|(w, g)| same_but_cut(w, g, max, exact));
            }
            (w, g) => assert_eq!(w, g),
        }
    }

    #[test]
    fn long_strings_are_cut_to_their_first_characters_and_nothing_else_changes() {
        let pieces = [
            "a", " ", "é", "日本", "🎉", "\"", "\\", "\n", "\u{1}", "\u{2028}", "{}[],:",
        ];
        let mut seed = 7u64;
        let mut next = move |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..2_000 {
            let mut text = || {
                (0..next(40))
                    .map(|_| pieces[next(pieces.len())])
                    .collect::<String>()
            };
            let value = serde_json::json!({
                "type": "message", "id": text(), "n": 12.5e3,
                "message": {"role": "assistant", "content": [{"type": "text", "text": text()}, text(), [text(), null, true, -1]]},
                "k": text(),
            });
            let json = serde_json::to_string(&value).unwrap();
            for max in [0, 1, 2, 5, 17, 40, 1000] {
                let out = cut(&json, max);
                let got: serde_json::Value =
                    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
                // serde_json writes control characters as escapes (one character each).
                same_but_cut(&value, &got, max, true);
            }
        }
    }

    #[test]
    fn cuts_keep_escapes_and_surrogate_pairs_whole() {
        // 🎉 written as a surrogate pair: two escapes, counted as two characters.
        let json = r#"{"s":"ab\ud83c\udf89cd\u00e9\n","t":"x"}"#;
        for max in 0..12 {
            let out = cut(json, max);
            let got: serde_json::Value =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{max}: {e}: {out}"));
            let want: serde_json::Value = serde_json::from_str(json).unwrap();
            same_but_cut(&want, &got, max, false);
        }
        assert_eq!(cut(json, 3), r#"{"s":"ab","t":"x"}"#);
        assert_eq!(cut(json, 4), r#"{"s":"ab\ud83c\udf89","t":"x"}"#);
        assert_eq!(cut(json, 7), r#"{"s":"ab\ud83c\udf89cd\u00e9","t":"x"}"#);
        assert_eq!(cut(json, 100), json);
        assert_eq!(cut("[1,2,null]", 0), "[1,2,null]");
    }

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
    fn rewritten_numbers_are_written_as_javascript_writes_them() {
        // JSON.stringify(JSON.parse(written)) in Node.
        for (written, js) in [
            ("4.1e-05", "0.000041"),
            ("1E2", "100"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("1.50", "1.5"),
            ("12345678901234567890", "12345678901234567000"),
            ("123456789012345678", "123456789012345680"),
            ("9007199254740993", "9007199254740992"),
            ("1e21", "1e+21"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("123e-20", "1.23e-18"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("0.1", "0.1"),
            ("-5", "-5"),
            ("100", "100"),
        ] {
            let v: serde_json::Value =
                serde_json::from_str(&format!("{{\"n\":[{written}]}}")).unwrap();
            assert_eq!(to_text(&v), format!("{{\"n\":[{js}]}}"), "{written}");
        }
    }

    #[test]
    fn record_floats_are_written_as_javascript_writes_them() {
        assert_eq!(
            record(&[4.1e-5_f64, -0.0, 1e21, 0.5]),
            "[0.000041,0,1e+21,0.5]"
        );
    }

    #[test]
    fn doubles_are_written_as_javascript_writes_them() {
        // String(x) in Node.
        for (x, js) in [
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (123e-20, "1.23e-18"),
            (0.000001, "0.000001"),
            (5e-324, "5e-324"),
            (1.5e-323, "1.5e-323"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (1.7976931348623157e307, "1.7976931348623158e+307"),
            (9007199254740993.0, "9007199254740992"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-0.0, "0"),
            (0.0, "0"),
            (100.0, "100"),
            (1.5e300, "1.5e+300"),
            (999999999999999900000.0, "999999999999999900000"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (18446744073709551616.0, "18446744073709552000"),
            (1180591620717411303424.0, "1.1805916207174113e+21"),
            (1e16, "10000000000000000"),
            (1e23, "1e+23"),
            (0.0000012345, "0.0000012345"),
            (1.2345e-7, "1.2345e-7"),
            (-1.5e-10, "-1.5e-10"),
            (9.5e-7, "9.5e-7"),
            (5e-7, "5e-7"),
            (0.5, "0.5"),
            (-123.456, "-123.456"),
            (1.0 / 3.0, "0.3333333333333333"),
            (12345678.9, "12345678.9"),
            (4.35, "4.35"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(JsFloat::new(x).as_str(), js, "{x:e}");
        }
    }

    #[test]
    fn doubles_are_written_as_ryu_js_writes_them() {
        let check = |x: f64| {
            assert_eq!(
                JsFloat::new(x).as_str(),
                ryu_js::Buffer::new().format(x),
                "{:#x}",
                x.to_bits()
            );
        };
        let mut seed = 11u64;
        for _ in 0..200_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Every bit pattern (all exponents), then short decimals near the limits of
            // the notations.
            check(f64::from_bits(seed));
            let digits = (seed >> 40) % 100_000;
            let exp = (seed >> 20) % 60;
            check(format!("{digits}e{}", exp as i32 - 30).parse().unwrap());
        }
        for e in -330..=310 {
            for m in [1.0, 1.5, 9.999999999999999, 123456789.0] {
                check(format!("{m}e{e}").parse().unwrap());
            }
        }
    }

    #[test]
    fn numbers_round_trip_as_written() {
        let v: serde_json::Value =
            serde_json::from_str("{\"c\":0.000003,\"d\":1e+21,\"e\":100}").unwrap();
        assert_eq!(to_text(&v), "{\"c\":0.000003,\"d\":1e+21,\"e\":100}");
    }
}
