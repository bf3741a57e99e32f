//! One validating pass over an entry line that also picks out the fields the core needs.
//!
//! Opening a session is mostly this: every line must be checked to be JSON (a line that
//! is not is skipped and reported, as the agent's `JSON.parse` would), and a few fields of
//! each entry (`type`, `id`, `parentId`, the message's `role`, …) are needed to index it.
//! [`scan_object`] does both at once, without building a tree and without copying.
//! Strings, most of a session's bytes, are crossed with vector compares (SSE2 on x86_64,
//! SIMD128 on wasm builds that enable it, 8-byte words elsewhere): short ones 16 bytes
//! at a time, long ones 64 bytes at a time with the escaped characters found by carry
//! arithmetic on the backslash mask (the simdjson method), since agent text has a quote
//! or backslash every ~14 bytes and a branch per escape would dominate.
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
///
/// Agent text is dense with escapes (`\n`, `\"`: one special byte every ~14 bytes), so
/// each block's mask of special bytes is walked bit by bit rather than reloaded after
/// every escape.
#[inline]
fn string(b: &[u8], i: usize) -> Option<usize> {
    // Short strings (keys, ids, types) end within the first block.
    if let Some(mask) = simd::special_mask(b, i) {
        if mask != 0 {
            let j = i + mask.trailing_zeros() as usize;
            if b[j] == b'"' {
                return Some(j + 1);
            }
        }
    }
    long::string(b, i)
}

/// The block-at-a-time string scan (also the tail of the 64-byte one).
fn string_blocks(b: &[u8], mut i: usize) -> Option<usize> {
    'blocks: while let Some(mut mask) = simd::special_mask(b, i) {
        while mask != 0 {
            let j = i + mask.trailing_zeros() as usize;
            match b[j] {
                b'"' => return Some(j + 1),
                b'\\' => {
                    let next = escape(b, j)?;
                    let skip = next - i;
                    if skip >= simd::BLOCK {
                        i = next;
                        continue 'blocks;
                    }
                    mask &= u32::MAX << skip;
                }
                _ => return None,
            }
        }
        i += simd::BLOCK;
    }
    // Fewer than a block's bytes left.
    loop {
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i = escape(b, i)?,
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
}

/// The length of the escape `\\c` by its character `c`: 2 for the simple ones, 6 for
/// `\\u` (four hex digits follow), 0 for an invalid escape. A table, because the escape
/// characters of real text follow no pattern a branch predictor could learn.
const ESCAPE_LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let simple = *b"\"\\/bfnrt";
    let mut k = 0;
    while k < simple.len() {
        t[simple[k] as usize] = 2;
        k += 1;
    }
    t[b'u' as usize] = 6;
    t
};

/// The escape whose backslash is at `b[i]`; the index just past it.
#[inline]
fn escape(b: &[u8], i: usize) -> Option<usize> {
    match ESCAPE_LEN[*b.get(i + 1)? as usize] {
        2 => Some(i + 2),
        6 => {
            let hex = b.get(i + 2..i + 6)?;
            hex.iter().all(u8::is_ascii_hexdigit).then_some(i + 6)
        }
        _ => None,
    }
}

#[cfg(test)]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

mod blocks;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod long;
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
mod long {
    pub fn string(b: &[u8], i: usize) -> Option<usize> {
        super::string_blocks(b, i)
    }
}

use blocks::simd;
#[cfg(test)]
use blocks::swar;

#[cfg(test)]
mod tests;
