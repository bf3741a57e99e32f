//! The scanner's block operations: masks of special bytes over 16-byte vectors (SSE2 on
//! x86_64, SIMD128 on wasm) or 8-byte words (the portable path, also tested where a
//! vector path exists).

/// One bit per byte of a 64-byte block.
#[derive(Default)]
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )),
    allow(dead_code)
)]
pub struct Masks64 {
    pub quote: u64,
    pub backslash: u64,
    pub control: u64,
    /// `n`: with the quote and the backslash, the escape characters that need no lookup.
    pub letter_n: u64,
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
pub mod simd {
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
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
pub use swar as simd;

/// The portable path, 8 bytes at a time (also compiled, and tested, where a vector path
/// exists).
#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ),
    allow(dead_code)
)]
pub mod swar {
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
}
