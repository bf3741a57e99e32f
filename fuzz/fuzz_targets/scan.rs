//! The validating line scanner against serde_json: whenever the scanner gives a verdict
//! it is serde's, and the fields it picks are the ones serde's pick finds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use xcsh_session::internals::pick;
use xcsh_session::internals::{is_valid_json, scan_object};

const NAMES: &[&str] = &["type", "id", "parentId", "message"];
const INNER: &[&str] = &["role", "provider", "model"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let serde_ok = serde_json::from_str::<IgnoredAny>(text).is_ok();
    if let Some(ok) = is_valid_json(text) {
        assert_eq!(ok, serde_ok, "verdict on {text:?}");
    }
    if let Some(scan) = scan_object(text, NAMES, Some((3, INNER))) {
        let picked = pick(text, NAMES).expect("scanner accepted what serde rejects");
        let picked: Vec<Option<&str>> = picked.iter().map(|r| r.map(|r| r.get())).collect();
        assert_eq!(scan.fields, picked, "fields of {text:?}");
        let inner = scan.fields[3]
            .and_then(|m| xcsh_session::internals::object_fields(m, INNER))
            .unwrap_or_else(|| vec![None; INNER.len()]);
        assert_eq!(scan.nested, inner, "message fields of {text:?}");
    }
});
