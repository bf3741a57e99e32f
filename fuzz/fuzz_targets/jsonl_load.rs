//! Any bytes as a session file: the lenient reader, entry parsing and load never panic,
//! and a save reproduces every entry that was read.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::rc::Rc;
use xcsh_session::{MemoryStorage, Session};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parsed = xcsh_session::internals::parse_lenient(&text);
    for r in &parsed.records {
        assert!(r.start <= r.end && r.end <= text.len());
    }
    let s = Session::from_text(Rc::new(MemoryStorage::new()), &text, "/agent");
    let saved = s.to_jsonl().expect("memory storage does not fail");
    let again = Session::from_text(Rc::new(MemoryStorage::new()), &saved, "/agent");
    assert_eq!(again.entries().len(), s.entries().len(), "a save keeps every entry");
});
