//! Any records behind a v1 header: migration never panics, every entry gets an id and a
//! parent chain, and the result reloads as a current file.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::rc::Rc;
use xcsh_session::{MemoryStorage, Session};

fuzz_target!(|data: &[u8]| {
    let body = String::from_utf8_lossy(data);
    let text = format!("{{\"type\":\"session\",\"id\":\"fuzz\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}}\n{body}");
    let s = Session::from_text(Rc::new(MemoryStorage::new()), &text, "/agent");
    assert!(s.entries().iter().all(|e| !e.id.is_empty()));
    let saved = s.to_jsonl().expect("memory storage does not fail");
    let again = Session::from_text(Rc::new(MemoryStorage::new()), &saved, "/agent");
    assert!(again.report().migration.is_none(), "migrated output is current");
    assert_eq!(again.entries().len(), s.entries().len());
});
