//! Long strings, 64 bytes at a time without a branch per escape: the escaped characters
//! of a block are found with carry arithmetic on its backslash mask (the simdjson
//! method), the closing quote is the first quote not escaped, and only the escape
//! characters themselves are looked up (they must be one of `"\\/bfnrtu`).

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
