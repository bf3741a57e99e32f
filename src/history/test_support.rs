//! Helpers shared by the history unit tests.

use super::{add, HistoryEntry, LastPromptCache, MemoryHistory};

pub fn prompts(rows: &[HistoryEntry]) -> Vec<&str> {
    rows.iter().map(|r| r.prompt.as_str()).collect()
}

/// A store with prompts added at t = 1000, 1001, ... seconds.
pub fn store_with(items: &[(&str, Option<&str>)]) -> MemoryHistory {
    let store = MemoryHistory::new();
    let mut cache = LastPromptCache::new();
    for (i, (p, cwd)) in items.iter().enumerate() {
        add(&store, &mut cache, p, *cwd, 1000 + i as i64).expect("add");
    }
    store
}
