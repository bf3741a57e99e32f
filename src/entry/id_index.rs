//! Entry ids → positions in a session's entries, without a second copy of any id: a
//! hash table of positions whose keys are read from the entries themselves (a session
//! of 600,000 entries saves ~40 MB against a map of owned id strings).

use super::Entry;
use std::hash::{BuildHasher, RandomState};

/// Where each id is in a slice of entries; an id that repeats maps to its last entry
/// (as `by_id[id] = index` would). Every call passes the entries it indexes.
#[derive(Debug, Clone, Default)]
pub struct IdIndex {
    /// `position + 1` of an entry, 0 for an empty slot; a power of two long, at most
    /// half full (linear probing).
    slots: Vec<u32>,
    len: usize,
    /// Seeded per index (SipHash): a file of crafted ids cannot make lookups linear.
    hasher: RandomState,
}

impl IdIndex {
    pub fn new() -> IdIndex {
        IdIndex::default()
    }

    /// How many distinct ids.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    /// Room for `additional` more ids without growing.
    pub fn reserve(&mut self, entries: &[Entry], additional: usize) {
        let want = ((self.len + additional) * 2).next_power_of_two().max(16);
        if want > self.slots.len() {
            self.rebuild(entries, want);
        }
    }

    /// The position of the (last) entry with this id.
    pub fn get(&self, entries: &[Entry], id: &str) -> Option<usize> {
        match self.find(entries, id) {
            Ok(slot) => Some(self.slots[slot] as usize - 1),
            Err(_) => None,
        }
    }

    pub fn contains(&self, entries: &[Entry], id: &str) -> bool {
        self.find(entries, id).is_ok()
    }

    /// Index `entries[i]` under its id (replacing an earlier entry with that id); whether
    /// an earlier entry had that id.
    pub fn insert(&mut self, entries: &[Entry], i: usize) -> bool {
        let position = u32::try_from(i + 1).expect("at most u32::MAX - 1 entries");
        if (self.len + 1) * 2 > self.slots.len() {
            self.rebuild(entries, (self.slots.len() * 2).max(16));
        }
        match self.find(entries, &entries[i].id) {
            Ok(slot) => {
                self.slots[slot] = position;
                true
            }
            Err(slot) => {
                self.slots[slot] = position;
                self.len += 1;
                false
            }
        }
    }

    /// `Ok(slot)` holding `id`, or `Err(slot)`: the empty slot where it would go.
    fn find(&self, entries: &[Entry], id: &str) -> Result<usize, usize> {
        if self.slots.is_empty() {
            return Err(0);
        }
        let mask = self.slots.len() - 1;
        let mut slot = self.hasher.hash_one(id) as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return Err(slot),
                p if entries[p as usize - 1].id == id => return Ok(slot),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// The same ids in a table of `size` slots.
    fn rebuild(&mut self, entries: &[Entry], size: usize) {
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        let mask = size - 1;
        for p in old.into_iter().filter(|&p| p != 0) {
            let mut slot = self.hasher.hash_one(&entries[p as usize - 1].id) as usize & mask;
            while self.slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Text;
    use std::collections::HashMap;

    fn entry(id: &str) -> Entry {
        Entry::parse(Text::from(format!(
            r#"{{"type":"custom","id":"{id}","parentId":null,"timestamp":"t"}}"#
        )))
        .unwrap()
    }

    /// The index answers as a map of owned ids would, through growth, repeated ids (the
    /// last entry wins) and misses.
    #[test]
    fn answers_like_a_map_of_ids_to_their_last_position() {
        let mut entries = Vec::new();
        let mut index = IdIndex::new();
        let mut map: HashMap<String, usize> = HashMap::new();
        for n in 0..5_000u32 {
            // Every 7th id repeats an earlier one.
            let id = match n % 7 {
                6 => format!("{:08x}", n / 3),
                _ => format!("{n:08x}"),
            };
            entries.push(entry(&id));
            let i = entries.len() - 1;
            assert_eq!(index.insert(&entries, i), map.insert(id, i).is_some());
            if n % 500 == 0 {
                index.reserve(&entries, 1000);
            }
        }
        assert_eq!(index.len(), map.len());
        for (id, &i) in &map {
            assert_eq!(index.get(&entries, id), Some(i), "{id}");
        }
        for miss in ["", "zzzzzzzz", "0000000", "000000000"] {
            assert_eq!(index.get(&entries, miss), None);
            assert!(!index.contains(&entries, miss));
        }
        assert_eq!(IdIndex::new().get(&entries, "00000001"), None);
    }
}
