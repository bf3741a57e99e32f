//! Phase timings of entry parsing (development aid).
use std::time::Instant;
use xcsh_session::entry::pick;

fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let t = Instant::now();
    let mut n = 0;
    for l in &lines {
        if serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok() {
            n += 1;
        }
    }
    println!("validate (IgnoredAny)   {:?} {n}", t.elapsed());
    let t = Instant::now();
    let mut msgs = Vec::new();
    for l in &lines {
        if let Ok(f) = pick(l, &["type", "id", "parentId", "timestamp", "message"]) {
            if let Some(m) = f[4] {
                msgs.push(m.get());
            }
        }
    }
    println!("pick top-level          {:?} {}", t.elapsed(), msgs.len());
    let t = Instant::now();
    for m in &msgs {
        let _ = pick(m, &["role", "provider", "model"]);
    }
    println!("pick message            {:?}", t.elapsed());
    let t = Instant::now();
    let mut c = 0usize;
    for l in &lines {
        c += memchr_count(l.as_bytes());
    }
    println!("byte scan for quotes    {:?} {c}", t.elapsed());
}

fn memchr_count(b: &[u8]) -> usize {
    b.iter().filter(|&&x| x == b'"').count()
}
