//! ISO-8601 timestamps as the agent writes them (`2026-02-16T10:20:30.123Z`) and the
//! epoch milliseconds that message factories derive from them (`new Date(ts).getTime()`).

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Epoch milliseconds of a time given as whole seconds and nanoseconds (a WASI
/// `datetime`), saturating instead of overflowing.
pub fn ms_from_secs_nanos(seconds: u64, nanoseconds: u32) -> i64 {
    i64::try_from(seconds)
        .unwrap_or(i64::MAX / 1000)
        .saturating_mul(1000)
        .saturating_add(i64::from(nanoseconds / 1_000_000))
}

/// `new Date(ms).toISOString()`.
pub fn iso_from_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, mo, d) = civil_from_days(days);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// `new Date(iso).getTime()` for the ISO forms sessions contain; `None` for NaN.
pub fn ms_from_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        if part.is_empty() || !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    if b.len() == 10 {
        return Some(ms);
    }
    if b.len() < 16 || (b[10] != b'T' && b[10] != b' ') || b[13] != b':' {
        return None;
    }
    let (h, mi) = (num(11..13)?, num(14..16)?);
    let mut i = 16;
    let mut sec = 0;
    let mut frac = 0;
    if b.get(i) == Some(&b':') {
        sec = num(17..19)?;
        i = 19;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            let digits = s.get(start..end)?;
            if digits.is_empty() {
                return None;
            }
            let padded: String = digits.chars().chain("000".chars()).take(3).collect();
            frac = padded.parse().ok()?;
            i = end;
        }
    }
    if h > 24 || mi > 59 || sec > 59 {
        return None;
    }
    ms += h * 3_600_000 + mi * 60_000 + sec * 1000 + frac;
    match &s[i..] {
        "Z" | "z" => Some(ms),
        rest if rest.len() == 6
            && (rest.starts_with('+') || rest.starts_with('-'))
            && &rest[3..4] == ":" =>
        {
            let oh: i64 = rest[1..3].parse().ok()?;
            let om: i64 = rest[4..6].parse().ok()?;
            let off = (oh * 60 + om) * 60_000;
            Some(if rest.starts_with('+') {
                ms - off
            } else {
                ms + off
            })
        }
        // No zone on a date-time means local time in JS; sessions always carry Z.
        "" => Some(ms),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ms_from_secs_nanos_rounds_down_and_saturates() {
        assert_eq!(
            ms_from_secs_nanos(1_700_000_000, 999_999_999),
            1_700_000_000_999
        );
        assert_eq!(ms_from_secs_nanos(0, 0), 0);
        assert_eq!(ms_from_secs_nanos(u64::MAX, 999_000_000), i64::MAX);
    }

    #[test]
    fn iso_round_trip() {
        let ms = ms_from_iso("2026-02-16T10:20:30.123Z").unwrap();
        assert_eq!(ms, 1_771_237_230_123);
        assert_eq!(iso_from_ms(ms), "2026-02-16T10:20:30.123Z");
    }

    #[test]
    fn invalid_dates_are_nan() {
        assert_eq!(ms_from_iso("yesterday"), None);
        assert_eq!(ms_from_iso("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn offsets_and_short_fractions() {
        assert_eq!(
            ms_from_iso("2026-02-16T10:20:30.1Z"),
            Some(1_771_237_230_100)
        );
        assert_eq!(
            ms_from_iso("2026-02-16T11:20:30.123+01:00"),
            Some(1_771_237_230_123)
        );
    }
}
