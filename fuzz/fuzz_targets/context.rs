//! Context building from every leaf of any session (cycles, orphans, wrong types):
//! never panics, never hangs, always valid JSON.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::rc::Rc;
use xcsh_session::{Leaf, MemoryStorage, Session};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let s = Session::from_text(Rc::new(MemoryStorage::new()), &text, "/agent");
    let mut leaves = vec![Leaf::Last, Leaf::Null, Leaf::Id("missing")];
    leaves.extend(s.entries().iter().take(64).map(|e| Leaf::Id(e.id.as_str())));
    for leaf in leaves {
        let json = s.context_at(leaf).to_json();
        // Raw message payloads are copied as read; they were valid JSON values.
        if let Err(e) = serde_json::from_str::<Box<serde_json::value::RawValue>>(&json) {
            panic!("context is not JSON: {e}");
        }
    }
    let tree = s.tree().to_json(&s);
    assert!(tree.starts_with('[') && tree.ends_with(']'));
});
