//! One validating pass over an entry line that also picks out the fields the core needs.
//!
//! Opening a session is mostly this: every line must be checked to be JSON (a line that
//! is not is skipped and reported, as the agent's `JSON.parse` would), and a few fields of
//! each entry (`type`, `id`, `parentId`, the message's `role`, …) are needed to index it.
//! [`scan_object`] does both at once, without building a tree and without copying: long
//! strings, most of a session's bytes, are crossed 16 bytes at a time (SSE2 on x86_64,
//! SIMD128 on wasm builds that enable it, 8-byte words elsewhere).
//!
//! It accepts exactly what `serde_json` accepts (a unit test and a fuzz target compare
//! the two), and it is allowed to give up: `None` means "not shown valid here", and the
//! caller then asks `serde_json`, which decides and explains. It gives up on invalid
//! input, on nesting deeper than 128, and on top-level keys written with escapes (serde
//! decodes those before comparing them).

/// The fields found by [`scan_object`], as raw JSON text (borrowed from the input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectScan<'a> {
    /// One slot per requested name; the last duplicate wins, as in `JSON.parse`.
    pub fields: Vec<Option<&'a str>>,
    /// The fields of the object value of `nested.0`, keys compared as written; all
    /// `None` when that value is missing or not an object.
    pub nested: Vec<Option<&'a str>>,
}

/// Validate `text` as one JSON object and pick its top-level `names` (and the `nested`
/// names inside the object value of one of them). `None` when the text is not valid
/// JSON or when this pass cannot tell (see the module docs): the caller falls back to
/// `serde_json`.
pub fn scan_object<'a>(
    text: &'a str,
    names: &[&str],
    nested: Option<(usize, &[&str])>,
) -> Option<ObjectScan<'a>> {
    let b = text.as_bytes();
    let i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut out = ObjectScan {
        fields: vec![None; names.len()],
        nested: vec![None; nested.map_or(0, |n| n.1.len())],
    };
    let ObjectScan {
        fields,
        nested: inner,
    } = &mut out;
    let end = walk_object(
        text,
        i,
        names,
        fields,
        nested.map(|(k, n)| (k, n, inner)),
        true,
    )?;
    (ws(b, end) == b.len()).then_some(out)
}

/// Is `text` exactly one JSON value (with optional surrounding whitespace)? `None` when
/// this pass cannot tell (nesting deeper than 128).
pub fn is_valid_json(text: &str) -> Option<bool> {
    let b = text.as_bytes();
    let i = ws(b, 0);
    match value(b, i) {
        Some(end) => Some(ws(b, end) == b.len()),
        None if depth_exceeded(b) => None,
        None => Some(false),
    }
}

/// Conservative: could the input nest deeper than [`MAX_DEPTH`]?
fn depth_exceeded(b: &[u8]) -> bool {
    b.iter().filter(|&&c| c == b'{' || c == b'[').count() > MAX_DEPTH as usize
}

const MAX_DEPTH: u32 = 128;

type Nested<'n, 'a> = (usize, &'n [&'n str], &'n mut Vec<Option<&'a str>>);

/// The object starting at `b[i] == '{'`: validated, its `names` picked. Returns the index
/// just past its closing brace.
fn walk_object<'a>(
    text: &'a str,
    mut i: usize,
    names: &[&str],
    out: &mut [Option<&'a str>],
    mut nested: Option<Nested<'_, 'a>>,
    strict_keys: bool,
) -> Option<usize> {
    let b = text.as_bytes();
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string(b, i + 1)?;
        let key = &b[i + 1..key_end - 1];
        if strict_keys && memchr::memchr(b'\\', key).is_some() {
            return None;
        }
        i = ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        let slot = names.iter().position(|n| n.as_bytes() == key);
        let start = i;
        i = match (slot, nested.as_mut()) {
            (Some(k), Some((nk, inner_names, inner))) if k == *nk => {
                inner.iter_mut().for_each(|f| *f = None);
                if b.get(i) == Some(&b'{') {
                    walk_object(text, i, inner_names, inner, None, false)?
                } else {
                    value(b, i)?
                }
            }
            _ => value(b, i)?,
        };
        if let Some(k) = slot {
            out[k] = Some(&text[start..i]);
        }
        i = ws(b, i);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

#[inline]
fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\t' | b'\r') {
        i += 1;
    }
    i
}

/// One JSON value starting at `b[i]` (no leading whitespace); the index just past it.
fn value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'{' | b'[' => container(b, i),
        _ => scalar(b, i),
    }
}

#[inline]
fn scalar(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string(b, i + 1),
        b't' => literal(b, i, b"true"),
        b'f' => literal(b, i, b"false"),
        b'n' => literal(b, i, b"null"),
        b'-' | b'0'..=b'9' => number(b, i),
        _ => None,
    }
}

fn literal(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    b[i..].starts_with(word).then_some(i + word.len())
}

fn digits(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b'0'..=b'9')) {
        i += 1;
    }
    i
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
fn number(b: &[u8], mut i: usize) -> Option<usize> {
    if b[i] == b'-' {
        i += 1;
    }
    match *b.get(i)? {
        b'0' => {
            i += 1;
            if matches!(b.get(i), Some(b'0'..=b'9')) {
                return None;
            }
        }
        b'1'..=b'9' => i = digits(b, i + 1),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = digits(b, start);
        if i == start {
            return None;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        i = digits(b, start);
        if i == start {
            return None;
        }
    }
    Some(i)
}

/// An array or object starting at `b[start]`, iteratively (a bit per level says which),
/// up to [`MAX_DEPTH`] levels.
fn container(b: &[u8], start: usize) -> Option<usize> {
    let mut stack: u128 = 0;
    let mut depth = 0u32;
    let mut i = start;
    loop {
        // A value begins at b[i].
        match *b.get(i)? {
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                depth += 1;
                let is_object = open == b'{';
                stack = (stack << 1) | is_object as u128;
                i = ws(b, i + 1);
                let close = if is_object { b'}' } else { b']' };
                if b.get(i) != Some(&close) {
                    if is_object {
                        i = key(b, i)?;
                    }
                    continue;
                }
                i += 1;
                depth -= 1;
                stack >>= 1;
            }
            _ => i = scalar(b, i)?,
        }
        // After a value: commas and closing brackets.
        loop {
            if depth == 0 {
                return Some(i);
            }
            i = ws(b, i);
            let is_object = stack & 1 == 1;
            match *b.get(i)? {
                b',' => {
                    i = ws(b, i + 1);
                    if is_object {
                        i = key(b, i)?;
                    }
                    break;
                }
                b'}' if is_object => {}
                b']' if !is_object => {}
                _ => return None,
            }
            i += 1;
            depth -= 1;
            stack >>= 1;
        }
    }
}

/// `"key"` `:` at `b[i]`; the index of the value after it.
#[inline]
fn key(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let j = ws(b, string(b, i + 1)?);
    if b.get(j) != Some(&b':') {
        return None;
    }
    Some(ws(b, j + 1))
}

/// The rest of a string whose opening quote is just before `b[i]`; the index just past
/// its closing quote. Control characters and unknown escapes make it invalid; `\u` takes
/// any four hex digits (lone surrogates are accepted, as by `JSON.parse`).
#[inline]
fn string(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i += find_special(&b[i..])?;
        match b[i] {
            b'"' => return Some(i + 1),
            b'\\' => {
                i = match *b.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i + 2,
                    b'u' => {
                        let hex = b.get(i + 2..i + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i + 6
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

#[inline]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

/// The index of the first `"`, `\` or control character.
#[inline]
fn find_special(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    simd::skip_plain(b, &mut i)?;
    b[i..].iter().position(|&c| is_special(c)).map(|p| i + p)
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use core::arch::x86_64::*;

    /// Advance `*i` in 16-byte steps while no byte is special; `Some` with the index of
    /// a special byte when one is found, or after stopping short of the last 16 bytes.
    #[inline]
    pub fn skip_plain(b: &[u8], i: &mut usize) -> Option<()> {
        // SAFETY: SSE2 is part of the x86_64 baseline; every load reads 16 bytes inside
        // `b` (checked by the loop condition) and may be unaligned.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let control = _mm_set1_epi8(0x1f);
            while *i + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(*i) as *const __m128i);
                let hit = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                    _mm_cmpeq_epi8(_mm_min_epu8(v, control), v),
                );
                let mask = _mm_movemask_epi8(hit);
                if mask != 0 {
                    *i += mask.trailing_zeros() as usize;
                    return Some(());
                }
                *i += 16;
            }
        }
        Some(())
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;

    #[inline]
    pub fn skip_plain(b: &[u8], i: &mut usize) -> Option<()> {
        let quote = u8x16_splat(b'"');
        let backslash = u8x16_splat(b'\\');
        let space = u8x16_splat(0x20);
        while *i + 16 <= b.len() {
            // SAFETY: the 16 bytes read lie inside `b`; v128_load allows unaligned loads.
            let v = unsafe { v128_load(b.as_ptr().add(*i) as *const v128) };
            let hit = v128_or(
                v128_or(u8x16_eq(v, quote), u8x16_eq(v, backslash)),
                u8x16_lt(v, space),
            );
            let mask = u8x16_bitmask(hit);
            if mask != 0 {
                *i += mask.trailing_zeros() as usize;
                return Some(());
            }
            *i += 16;
        }
        Some(())
    }
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
use swar as simd;

/// The portable path (also compiled, and tested, where a vector path exists).
#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ),
    allow(dead_code)
)]
mod swar {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;

    #[inline]
    fn zero_byte(v: u64) -> u64 {
        v.wrapping_sub(ONES) & !v & HIGH
    }

    /// Eight bytes at a time: the lowest flagged byte of each test is exact, so the
    /// lowest of all of them is the first special byte.
    #[inline]
    pub fn skip_plain(b: &[u8], i: &mut usize) -> Option<()> {
        while *i + 8 <= b.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&b[*i..*i + 8]);
            let v = u64::from_le_bytes(word);
            let hit = zero_byte(v ^ (ONES * b'"' as u64))
                | zero_byte(v ^ (ONES * b'\\' as u64))
                | (v.wrapping_sub(ONES * 0x20) & !v & HIGH);
            if hit != 0 {
                *i += (hit.trailing_zeros() / 8) as usize;
                return Some(());
            }
            *i += 8;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::IgnoredAny;

    fn serde_ok(s: &str) -> bool {
        serde_json::from_str::<IgnoredAny>(s).is_ok()
    }

    fn agrees(s: &str) {
        if let Some(ok) = is_valid_json(s) {
            assert_eq!(ok, serde_ok(s), "validity of {s:?}");
        }
    }

    #[test]
    fn accepts_what_serde_accepts() {
        for s in [
            r#"{}"#,
            r#" { "a" : [ 1 , -0.5e+3 , true , false , null , "x\"\\\/\b\f\n\r\t\u00e9\uD800" ] } "#,
            r#"[[[[{"a":{}}]]]]"#,
            r#""just a string""#,
            "0",
            "-0",
            "1E5",
            "123.456e-7",
            r#"{"k":"é ü 日本 🎉"}"#,
        ] {
            assert_eq!(is_valid_json(s), Some(true), "{s}");
            assert!(serde_ok(s), "{s}");
        }
    }

    #[test]
    fn rejects_what_serde_rejects() {
        for s in [
            "",
            " ",
            "{",
            "}",
            "[1,]",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "tru",
            "nulll",
            "[1 2]",
            r#""\x""#,
            r#""\u12G4""#,
            r#""\u12""#,
            "\"tab\there\"",
            "\"nl\nx\"",
            r#""open"#,
            "{} {}",
            "[}",
            "{]",
            "NaN",
            r#"{"a":1}x"#,
            r#"{"a":[1,2}"#,
        ] {
            assert_eq!(is_valid_json(s), Some(false), "{s:?}");
            assert!(!serde_ok(s), "{s:?}");
        }
        // DEL (0x7f) is not a control character for JSON.
        assert_eq!(is_valid_json("\"\u{7f}\""), Some(true));
        assert!(serde_ok("\"\u{7f}\""));
    }

    #[test]
    fn strings_longer_than_a_vector_are_checked_everywhere() {
        for len in 0..70 {
            for pos in 0..len {
                for bad in [b'\n', 0x01u8, 0x1f] {
                    let mut s = vec![b'a'; len];
                    s[pos] = bad;
                    let text = format!("\"{}\"", String::from_utf8(s).unwrap());
                    assert_eq!(is_valid_json(&text), Some(false), "len {len} pos {pos}");
                }
                let mut s = vec![b'a'; len];
                s[pos] = b'"';
                let text = format!("\"{}\"", String::from_utf8(s).unwrap());
                agrees(&text);
            }
        }
    }

    #[test]
    fn the_vector_and_word_paths_find_the_same_byte() {
        let specials = [b'"', b'\\', 0u8, b'\n', 0x1f];
        let plain = [b'a', b' ', 0x20, 0x7f, 0x80, 0xff, b'!', b'#', b']', b'^'];
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..20_000 {
            let len = next() % 80;
            let mut b: Vec<u8> = (0..len).map(|_| plain[next() % plain.len()]).collect();
            for _ in 0..next() % 3 {
                if len > 0 {
                    let at = next() % len;
                    b[at] = specials[next() % specials.len()];
                }
            }
            let expected = b.iter().position(|&c| is_special(c));
            let by = |skip: fn(&[u8], &mut usize) -> Option<()>| {
                let mut i = 0;
                skip(&b, &mut i)?;
                b[i..].iter().position(|&c| is_special(c)).map(|p| i + p)
            };
            assert_eq!(by(simd::skip_plain), expected, "{b:?}");
            assert_eq!(by(swar::skip_plain), expected, "{b:?}");
        }
    }

    #[test]
    fn deep_nesting_is_left_to_serde() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(is_valid_json(&deep), None);
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert_eq!(is_valid_json(&ok), Some(true));
    }

    #[test]
    fn picks_fields_and_nested_fields() {
        let line = r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m"},"id":"a2"}"#;
        let s = scan_object(
            line,
            &["type", "id", "parentId", "message", "absent"],
            Some((3, &["role", "provider", "model"])),
        )
        .unwrap();
        assert_eq!(
            s.fields,
            vec![
                Some(r#""message""#),
                Some(r#""a2""#),
                Some("null"),
                Some(
                    r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m"}"#
                ),
                None
            ]
        );
        assert_eq!(
            s.nested,
            vec![Some(r#""assistant""#), Some(r#""p""#), Some(r#""m""#)]
        );
    }

    #[test]
    fn a_later_non_object_message_clears_the_nested_fields() {
        let s = scan_object(r#"{"m":{"role":"x"},"m":3}"#, &["m"], Some((0, &["role"]))).unwrap();
        assert_eq!(s.fields, vec![Some("3")]);
        assert_eq!(s.nested, vec![None]);
    }

    #[test]
    fn escaped_top_level_keys_and_invalid_lines_are_left_to_serde() {
        assert_eq!(scan_object(r#"{"t\u0079pe":"x"}"#, &["type"], None), None);
        assert_eq!(scan_object(r#"{"type":"x",}"#, &["type"], None), None);
        assert_eq!(scan_object(r#"[1]"#, &["type"], None), None);
        // Inside values, escaped keys are fine.
        assert!(scan_object(r#"{"type":{"t\u0079pe":1}}"#, &["type"], None).is_some());
    }

    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| f.to_string()),
            "[ -~é\u{1F389}\\\\\"\n\t\u{1}]{0,40}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-z\\\\\"]{0,6}", inner), 0..6).prop_map(|kv| {
                    let body: Vec<String> = kv
                        .into_iter()
                        .map(|(k, v)| format!("{}:{v}", serde_json::to_string(&k).unwrap()))
                        .collect();
                    format!("{{{}}}", body.join(" , "))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn valid_json_is_accepted(s in json_text()) {
            prop_assert_eq!(is_valid_json(&s), Some(true));
        }

        #[test]
        fn mutated_json_gets_the_same_verdict_as_serde(
            s in json_text(),
            edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(
                vec!["", "\"", "\\", ",", ":", "{", "}", "[", "]", "0", "-", ".", "e", "\n", "\u{1}", "x", " ", "u", "\\u00"])), 1..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut t = s.clone();
            for (at, what) in edits {
                let mut p = at.index(t.len() + 1);
                while !t.is_char_boundary(p) { p -= 1; }
                t.insert_str(p, what);
            }
            agrees(&t);
            let mut c = cut.index(t.len() + 1);
            while !t.is_char_boundary(c) { c -= 1; }
            agrees(&t[..c]);
        }
    }
}
