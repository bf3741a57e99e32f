//! Single-thread timings of the per-line work of opening a session (development aid):
//! serde_json validation, the scanner, and Entry::parse.
//!
//! `cargo run --release --example profile_parse -- FILE`
use std::sync::Arc;
use std::time::Instant;
use xcsh_session::internals::{is_valid_json, scan_object};
use xcsh_session::{internals::Text, Entry};

fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let text = Arc::new(std::fs::read_to_string(&path).unwrap());
    let lines: Vec<(usize, usize)> = {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                if i > start {
                    out.push((start, i));
                }
                start = i + 1;
            }
        }
        out
    };
    let mb = text.len() as f64 / 1e6;
    let report = |name: &str, t: Instant, n: usize| {
        let s = t.elapsed().as_secs_f64();
        println!(
            "{name:<28} {:>8.1} ms {:>7.0} MB/s ({n} lines)",
            s * 1e3,
            mb / s
        );
    };
    let t = Instant::now();
    let n = lines
        .iter()
        .filter(|(a, z)| serde_json::from_str::<serde::de::IgnoredAny>(&text[*a..*z]).is_ok())
        .count();
    report("serde validate (IgnoredAny)", t, n);
    let t = Instant::now();
    let n = lines
        .iter()
        .filter(|(a, z)| is_valid_json(&text[*a..*z]) == Some(true))
        .count();
    report("scan validate", t, n);
    let t = Instant::now();
    let n = lines
        .iter()
        .filter(|(a, z)| {
            scan_object(
                &text[*a..*z],
                &["type", "id", "parentId", "timestamp", "message"],
                Some((4, &["role", "provider", "model"])),
            )
            .is_some()
        })
        .count();
    report("scan_object with fields", t, n);
    let t = Instant::now();
    let entries: Vec<Entry> = lines
        .iter()
        .filter_map(|(a, z)| {
            Entry::parse(Text::Shared {
                buf: text.clone(),
                start: *a,
                end: *z,
            })
            .ok()
        })
        .collect();
    report("Entry::parse", t, entries.len());
}
