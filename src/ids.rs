//! Entry ids (8 lowercase hex, unique within a session) and session ids (xcsh's: 16
//! lowercase hex, time-sortable: `((unix_ms - 1420070400000) << 22) | seq22`; pi's: a
//! UUID v7).

const EPOCH_2015_MS: i64 = 1_420_070_400_000;

/// A fresh entry id for which `taken` is false (retries on collision).
pub fn entry_id(taken: impl Fn(&str) -> bool, mut random: impl FnMut() -> u64) -> String {
    loop {
        let id = format!("{:08x}", random() as u32);
        if !taken(&id) {
            return id;
        }
    }
}

/// Session ids: the time in the high bits, a 22-bit sequence that starts random and
/// increments in the low bits, so ids made in the same millisecond still sort.
#[derive(Debug, Clone)]
pub struct SessionIdGen {
    seq: u64,
}

impl SessionIdGen {
    pub fn new(random_start: u64) -> Self {
        SessionIdGen {
            seq: random_start & 0x3F_FFFF,
        }
    }

    pub fn next(&mut self, unix_ms: i64) -> String {
        self.seq = (self.seq + 1) & 0x3F_FFFF;
        let t = (unix_ms - EPOCH_2015_MS).max(0) as u64;
        format!("{:016x}", (t << 22) | self.seq)
    }
}

/// A UUID v7 (RFC 9562): 48 bits of `unix_ms`, version 7, 12 random bits, variant `10`,
/// 62 random bits; lowercase, hyphenated.
pub fn uuid_v7(unix_ms: i64, mut random: impl FnMut() -> u64) -> String {
    let ms = (unix_ms.max(0) as u64) & 0xFFFF_FFFF_FFFF;
    let (a, b) = (random(), random());
    let hi = (ms << 16) | 0x7000 | (a & 0x0FFF);
    let lo = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

/// Deterministic ids for migrating v1 files: the same file always gets the same ids, so a
/// read-only view of an old file is stable across hosts and runs.
#[derive(Debug, Clone)]
pub struct SeededIds {
    state: u64,
}

impl SeededIds {
    pub fn new(seed_text: &str) -> Self {
        // FNV-1a of the seed text.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed_text.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        SeededIds { state: h | 1 }
    }

    pub fn next_u64(&mut self) -> u64 {
        // splitmix64
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn entry_ids_are_8_lowercase_hex_and_avoid_collisions() {
        let mut taken = HashMap::new();
        taken.insert("00000001".to_string(), ());
        let mut n = 0u64;
        let id = entry_id(
            |id| taken.contains_key(id),
            || {
                n += 1;
                n
            },
        );
        assert_eq!(id, "00000002");
    }

    #[test]
    fn session_ids_sort_by_time() {
        let mut g = SessionIdGen::new(0x3F_FFFF);
        let a = g.next(1_771_237_230_123);
        let b = g.next(1_771_237_230_123);
        let c = g.next(1_771_237_230_124);
        assert_eq!(a.len(), 16);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert!(a < b || b < c, "{a} {b} {c}");
        assert!(b < c);
    }

    #[test]
    fn uuid_v7_has_the_time_version_and_variant() {
        let id = uuid_v7(0x0193_0000_0001, || u64::MAX);
        assert_eq!(id, "01930000-0001-7fff-bfff-ffffffffffff");
        let id = uuid_v7(1_764_900_000_000, || 0);
        assert_eq!(id.len(), 36);
        assert!(id.starts_with("019aec3c-d100-7"), "{id}");
        assert_eq!(&id[14..15], "7");
        assert_eq!(&id[19..20], "8");
    }

    #[test]
    fn seeded_ids_repeat_for_the_same_seed() {
        assert_eq!(
            SeededIds::new("x").next_u64(),
            SeededIds::new("x").next_u64()
        );
        assert_ne!(
            SeededIds::new("x").next_u64(),
            SeededIds::new("y").next_u64()
        );
    }
}
