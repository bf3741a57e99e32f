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

/// Is `bytes` valid UTF-8? Agent files are mostly ASCII: 64-byte runs of it are crossed
/// with a vector test, and only the stretches between them go to `std::str::from_utf8`
/// (an ASCII byte never continues a multi-byte character, so the cuts are safe).
pub fn is_utf8(bytes: &[u8]) -> bool {
    const RUN: usize = 64;
    let mut i = 0;
    let mut pending = 0;
    while i + RUN <= bytes.len() {
        if simd::all_ascii(&bytes[i..i + RUN]) {
            if pending < i && std::str::from_utf8(&bytes[pending..i]).is_err() {
                return false;
            }
            pending = i + RUN;
        }
        i += RUN;
    }
    std::str::from_utf8(&bytes[pending..]).is_ok()
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

/// Long strings, 64 bytes at a time without a branch per escape: the escaped characters
/// of a block are found with carry arithmetic on its backslash mask (the simdjson
/// method), the closing quote is the first quote not escaped, and only the escape
/// characters themselves are looked up (they must be one of `"\\/bfnrtu`).
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod long {
    use super::{simd, string_blocks, ESCAPE_LEN};

    /// Is the escape whose character is at `b[k]` (its backslash just before) valid?
    #[inline]
    fn escape_char_ok(b: &[u8], k: usize) -> bool {
        match ESCAPE_LEN[b[k] as usize] {
            2 => true,
            6 => b
                .get(k + 1..k + 5)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)),
            _ => false,
        }
    }

    pub fn string(b: &[u8], mut i: usize) -> Option<usize> {
        // 1 when b[i] is escaped by an odd run of backslashes ending the previous block.
        let mut carry = 0u64;
        while i + 64 <= b.len() {
            let m = simd::masks64(b, i);
            let escaped = escaped(m.backslash, &mut carry);
            let quote = m.quote & !escaped;
            // The bits before the closing quote (all of them if it is not in this block).
            let inside = quote.wrapping_sub(1) & !quote;
            if m.control & inside != 0 {
                return None;
            }
            // `\"`, `\\` and `\n` are most escapes; the others are looked up.
            let mut codes = escaped & inside & !(m.quote | m.backslash | m.letter_n);
            while codes != 0 {
                let k = i + codes.trailing_zeros() as usize;
                if !escape_char_ok(b, k) {
                    return None;
                }
                codes &= codes - 1;
            }
            if quote != 0 {
                return Some(i + quote.trailing_zeros() as usize + 1);
            }
            i += 64;
        }
        // The rest: from the escaping backslash when the last block ended inside an escape.
        string_blocks(b, i - carry as usize)
    }

    const ODD_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;

    /// The characters escaped by a backslash (a backslash that is itself escaped escapes
    /// nothing); `carry` says whether bit 0 is escaped, and is set for the next block.
    #[inline]
    pub(super) fn escaped(backslash: u64, carry: &mut u64) -> u64 {
        let potential = backslash & !*carry;
        let maybe_escaped = potential << 1;
        let codes_and_odd = (maybe_escaped | ODD_BITS).wrapping_sub(potential);
        let escape_and_code = codes_and_odd ^ ODD_BITS;
        let escaped = escape_and_code ^ (backslash | *carry);
        let escape = escape_and_code & backslash;
        *carry = escape >> 63;
        escaped
    }
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
mod long {
    pub fn string(b: &[u8], i: usize) -> Option<usize> {
        super::string_blocks(b, i)
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

/// One bit per byte of a 64-byte block.
#[derive(Default)]
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )),
    allow(dead_code)
)]
struct Masks64 {
    quote: u64,
    backslash: u64,
    control: u64,
    /// `n`: with the quote and the backslash, the escape characters that need no lookup.
    letter_n: u64,
}

/// The 16-byte vector operations the scanner needs, per instruction set.
#[cfg(target_arch = "x86_64")]
mod vector {
    use core::arch::x86_64::*;

    #[derive(Clone, Copy)]
    pub struct V(__m128i);

    /// # Safety
    /// `b[i..i + 16]` must be in bounds.
    #[inline]
    pub unsafe fn load(b: &[u8], i: usize) -> V {
        // SAFETY: in bounds by the caller's contract; SSE2 is baseline on x86_64 and the
        // load may be unaligned.
        unsafe { V(_mm_loadu_si128(b.as_ptr().add(i) as *const __m128i)) }
    }

    /// Lanes equal to `c`.
    #[inline]
    pub fn eq(v: V, c: u8) -> V {
        // SAFETY: SSE2 is baseline on x86_64.
        unsafe { V(_mm_cmpeq_epi8(v.0, _mm_set1_epi8(c as i8))) }
    }

    /// Lanes below `c` (unsigned).
    #[inline]
    pub fn below(v: V, c: u8) -> V {
        // SAFETY: SSE2 is baseline on x86_64.
        unsafe {
            V(_mm_cmpeq_epi8(
                _mm_min_epu8(v.0, _mm_set1_epi8((c - 1) as i8)),
                v.0,
            ))
        }
    }

    #[inline]
    pub fn or(a: V, b: V) -> V {
        // SAFETY: SSE2 is baseline on x86_64.
        unsafe { V(_mm_or_si128(a.0, b.0)) }
    }

    /// The top bit of each lane, lane k to bit k.
    #[inline]
    pub fn bits(v: V) -> u64 {
        // SAFETY: SSE2 is baseline on x86_64.
        unsafe { _mm_movemask_epi8(v.0) as u16 as u64 }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod vector {
    use core::arch::wasm32::*;

    #[derive(Clone, Copy)]
    pub struct V(v128);

    /// # Safety
    /// `b[i..i + 16]` must be in bounds.
    #[inline]
    pub unsafe fn load(b: &[u8], i: usize) -> V {
        // SAFETY: in bounds by the caller's contract; v128_load may be unaligned.
        unsafe { V(v128_load(b.as_ptr().add(i) as *const v128)) }
    }

    #[inline]
    pub fn eq(v: V, c: u8) -> V {
        V(u8x16_eq(v.0, u8x16_splat(c)))
    }

    #[inline]
    pub fn below(v: V, c: u8) -> V {
        V(u8x16_lt(v.0, u8x16_splat(c)))
    }

    #[inline]
    pub fn or(a: V, b: V) -> V {
        V(v128_or(a.0, b.0))
    }

    #[inline]
    pub fn bits(v: V) -> u64 {
        u8x16_bitmask(v.0) as u64
    }
}

/// The scanner's block operations on 16-byte vectors (x86_64, wasm with SIMD128).
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod simd {
    use super::vector::{below, bits, eq, load, or, V};

    pub const BLOCK: usize = 16;

    #[inline]
    fn special(v: V) -> V {
        or(or(eq(v, b'"'), eq(v, b'\\')), below(v, 0x20))
    }

    /// One bit per byte of `b[i..i + 16]` that is `"`, `\` or a control character;
    /// `None` when fewer than 16 bytes are left.
    #[inline]
    pub fn special_mask(b: &[u8], i: usize) -> Option<u32> {
        if i + BLOCK > b.len() {
            return None;
        }
        // SAFETY: the 16 bytes are in bounds (checked above).
        Some(bits(special(unsafe { load(b, i) })) as u32)
    }

    /// Quote, backslash, control-character and `n` masks of `b[i..i + 64]`.
    #[inline]
    pub fn masks64(b: &[u8], i: usize) -> super::Masks64 {
        assert!(i + 64 <= b.len());
        let mut m = super::Masks64::default();
        for k in 0..4 {
            // SAFETY: 16 bytes inside the 64 asserted above.
            let v = unsafe { load(b, i + 16 * k) };
            let shift = 16 * k as u32;
            m.quote |= bits(eq(v, b'"')) << shift;
            m.backslash |= bits(eq(v, b'\\')) << shift;
            m.control |= bits(below(v, 0x20)) << shift;
            m.letter_n |= bits(eq(v, b'n')) << shift;
        }
        m
    }

    /// Are all bytes of a 64-byte run below 0x80?
    #[inline]
    pub fn all_ascii(run: &[u8]) -> bool {
        assert_eq!(run.len(), 64);
        // SAFETY: four 16-byte loads inside the 64 bytes asserted above.
        let any = unsafe {
            or(
                or(load(run, 0), load(run, 16)),
                or(load(run, 32), load(run, 48)),
            )
        };
        bits(any) == 0
    }
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
use swar as simd;

/// The portable path, 8 bytes at a time (also compiled, and tested, where a vector path
/// exists).
#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ),
    allow(dead_code)
)]
mod swar {
    pub const BLOCK: usize = 8;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;

    /// 0x80 in every byte of `v` that is zero, exactly (no carries between bytes).
    #[inline]
    fn zero_bytes(v: u64) -> u64 {
        !(((v & LOW7) + LOW7) | v | LOW7)
    }

    #[inline]
    pub fn special_mask(b: &[u8], i: usize) -> Option<u32> {
        let word: [u8; 8] = b.get(i..i + BLOCK)?.try_into().ok()?;
        let v = u64::from_le_bytes(word);
        let hit = zero_bytes(v ^ (ONES * b'"' as u64))
            | zero_bytes(v ^ (ONES * b'\\' as u64))
            | zero_bytes(v & (ONES * 0xe0));
        // Gather the eight 0x80 flags into the low byte, byte k to bit k.
        Some(((hit >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32)
    }

    /// Are all bytes of a run below 0x80?
    #[inline]
    pub fn all_ascii(run: &[u8]) -> bool {
        run.chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0x80; 8])))
            .fold(0, |acc, w| acc | w)
            & (ONES * 0x80)
            == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::IgnoredAny;

    /// Deterministic pseudo-random numbers for the randomized tests (an LCG).
    fn rng64(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed
        }
    }

    fn rng(seed: u64) -> impl FnMut() -> usize {
        let mut next = rng64(seed);
        move || (next() >> 33) as usize
    }

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
    fn the_vector_and_word_masks_flag_exactly_the_special_bytes() {
        let specials = [b'"', b'\\', 0u8, b'\n', 0x1f];
        let plain = [
            b'a', b' ', 0x20, 0x7f, 0x80, 0xff, b'!', b'#', b']', b'^', 0xe0,
        ];
        let mut next = rng(7);
        for _ in 0..20_000 {
            let len = next() % 40;
            let mut b: Vec<u8> = (0..len).map(|_| plain[next() % plain.len()]).collect();
            for _ in 0..next() % 6 {
                if len > 0 {
                    let at = next() % len;
                    b[at] = specials[next() % specials.len()];
                }
            }
            let expected = |block: usize, i: usize| -> Option<u32> {
                let bytes = b.get(i..i + block)?;
                Some(
                    bytes
                        .iter()
                        .enumerate()
                        .filter(|(_, &c)| is_special(c))
                        .map(|(k, _)| 1u32 << k)
                        .sum(),
                )
            };
            for i in 0..=len {
                assert_eq!(
                    simd::special_mask(&b, i),
                    expected(simd::BLOCK, i),
                    "{b:?} at {i}"
                );
                assert_eq!(
                    swar::special_mask(&b, i),
                    expected(swar::BLOCK, i),
                    "{b:?} at {i}"
                );
            }
        }
    }

    #[test]
    fn utf8_verdicts_match_std() {
        let pieces: [&[u8]; 9] = [
            b"plain ascii text ",
            "é".as_bytes(),
            "日本".as_bytes(),
            "🎉".as_bytes(),
            &[0xff],
            &[0xe6, 0x97],
            &[0x80],
            &[0xed, 0xa0, 0x80],
            &[0xf4, 0x90, 0x80, 0x80],
        ];
        let mut next = rng(11);
        for _ in 0..5_000 {
            let mut b = Vec::new();
            let ascii_run = next() % 200;
            for _ in 0..next() % 12 {
                b.extend(std::iter::repeat_n(b'a', next() % (ascii_run + 1)));
                let piece = pieces[next() % pieces.len()];
                // Mostly valid pieces, sometimes broken ones.
                if !next().is_multiple_of(4)
                    || piece.is_ascii()
                    || std::str::from_utf8(piece).is_ok()
                {
                    b.extend_from_slice(piece);
                }
            }
            assert_eq!(is_utf8(&b), std::str::from_utf8(&b).is_ok(), "{b:?}");
            for cut in [b.len() / 3, b.len() / 2] {
                assert_eq!(is_utf8(&b[cut..]), std::str::from_utf8(&b[cut..]).is_ok());
            }
        }
        for bytes in [
            vec![b'a'; 64],
            vec![b'a'; 63],
            vec![0x80; 64],
            [vec![b'a'; 63], vec![0xc3]].concat(),
        ] {
            assert_eq!(is_utf8(&bytes), std::str::from_utf8(&bytes).is_ok());
            assert_eq!(
                swar::all_ascii(&bytes[..bytes.len() / 8 * 8]),
                bytes[..bytes.len() / 8 * 8].is_ascii()
            );
        }
    }

    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    #[test]
    fn escaped_characters_by_carry_arithmetic_match_the_definition() {
        let mut next = rng64(5);
        for round in 0..200_000 {
            // Dense and sparse backslash masks, long runs included.
            let backslash = match round % 4 {
                0 => next(),
                1 => next() & next(),
                2 => next() | next(),
                _ => (next() >> (next() % 64)) << (next() % 64),
            };
            let carry_in = next() & 1;
            let (mut expected, mut escaping) = (0u64, carry_in == 1);
            for k in 0..64 {
                if escaping {
                    expected |= 1 << k;
                    escaping = false;
                } else if backslash >> k & 1 == 1 {
                    escaping = true;
                }
            }
            let mut carry = carry_in;
            assert_eq!(
                long::escaped(backslash, &mut carry),
                expected,
                "{backslash:064b} carry {carry_in}"
            );
            assert_eq!(carry, escaping as u64, "carry out of {backslash:064b}");
        }
    }

    #[test]
    fn long_strings_get_the_verdict_of_the_block_scan() {
        let pieces: [&str; 14] = [
            "a",
            "bcdefgh",
            "\\\"",
            "\\\\",
            "\\n",
            "\\u00e9",
            "\\uD83D\\uDE00",
            "é",
            "🎉",
            "\"",
            "\\",
            "\\x",
            "\\u12G4",
            "\n",
        ];
        let mut next = rng(9);
        for _ in 0..30_000 {
            let mut t = String::new();
            let target = next() % 400;
            let bad = next().is_multiple_of(3);
            while t.len() < target {
                let p = pieces[next() % if bad { 14 } else { 9 }];
                t.push_str(p);
            }
            t.push_str("\"tail");
            let b = t.as_bytes();
            assert_eq!(long::string(b, 0), string_blocks(b, 0), "{t:?}");
            let start = next() % (b.len() + 1);
            assert_eq!(
                long::string(b, start),
                string_blocks(b, start),
                "{t:?} from {start}"
            );
        }
    }

    #[test]
    fn escapes_across_and_inside_blocks() {
        for pad in 0..40 {
            for esc in [r#"\""#, r"\\", r"\n", r"\u00e9", r"\uD83D\uDE00", r"\/"] {
                let text = format!(
                    "\"{}{esc}{}{esc}{esc}\"",
                    "a".repeat(pad),
                    "b".repeat(pad % 7)
                );
                assert_eq!(is_valid_json(&text), Some(true), "{text}");
                assert!(serde_ok(&text));
                let bad = format!("\"{}{esc}\\x\"", "a".repeat(pad));
                assert_eq!(is_valid_json(&bad), Some(false), "{bad}");
                let torn = format!("\"{}{}", "a".repeat(pad), &esc[..esc.len() - 1]);
                assert_eq!(is_valid_json(&torn), Some(false), "{torn}");
            }
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
