//! The persistence transforms (truncation, transient fields, blob externalization) on any
//! JSON: never panic, are idempotent, and externalized images come back on rehydration.
#![no_main]
use libfuzzer_sys::fuzz_target;
use xcsh_session::{internals::rehydrate, BlobStore};
use xcsh_session::internals::{prepare_for_persistence, Transforms};
use xcsh_session::MemoryStorage;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let storage = MemoryStorage::new();
    let store = BlobStore::new(&storage, "/agent/blobs");
    let mut put = |bytes: &[u8]| store.put(bytes).map(|p| p.reference).map_err(|e| xcsh_session::StorageError::Other(e.to_string()));
    let once = prepare_for_persistence(&text, &mut put, Transforms::All).expect("memory storage").into_owned();
    let twice = prepare_for_persistence(&once, &mut put, Transforms::All).expect("memory storage").into_owned();
    assert_eq!(once, twice, "the transforms are idempotent");
    let back = rehydrate(&once, &store);
    // Rehydrating and persisting again gives the same file text.
    let again = prepare_for_persistence(&back, &mut put, Transforms::All).expect("memory storage").into_owned();
    if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
        assert_eq!(again, once, "persist(rehydrate(persist(x))) == persist(x)");
    }
});
