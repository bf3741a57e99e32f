//! [`MemoryStorage`]: the storage port over a map, for tests and non-persistent sessions.

use super::{
    create_new_checked, parent, range_of, DirEntry, Environment, FileStat, Storage, StorageError,
    StorageResult,
};
use std::cell::RefCell;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Node {
    /// `id`: the file's identity ([`FileStat::id`], as an inode number): kept by writes
    /// and appends, moved by a rename, new for a file created.
    File {
        data: Vec<u8>,
        mtime_ms: i64,
        id: u64,
    },
    Dir,
}

/// Map-backed storage for tests and non-persistent sessions. Its clock is a counter that
/// advances one millisecond per call, and its entropy a seeded xorshift, so tests are
/// deterministic.
#[derive(Debug)]
pub struct MemoryStorage {
    nodes: RefCell<BTreeMap<String, Node>>,
    clock: RefCell<i64>,
    rng: RefCell<u64>,
    /// The last file identity given out.
    ids: RefCell<u64>,
}

impl Default for MemoryStorage {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStorage {
    pub fn new() -> Self {
        Self::with_seed(0x9E37_79B9_7F4A_7C15, 1_771_237_230_123)
    }

    /// A storage whose ids and clock start from the given values.
    pub fn with_seed(seed: u64, start_ms: i64) -> Self {
        MemoryStorage {
            nodes: RefCell::new(BTreeMap::new()),
            clock: RefCell::new(start_ms),
            rng: RefCell::new(seed.max(1)),
            ids: RefCell::new(0),
        }
    }

    fn norm(path: &str) -> String {
        let trimmed = path.trim_end_matches('/');
        if trimmed.is_empty() {
            "/".to_string()
        } else {
            trimmed.to_string()
        }
    }

    fn ensure_parent(&self, path: &str) -> StorageResult<()> {
        let dir = parent(path);
        if dir.is_empty() || dir == "/" {
            return Ok(());
        }
        match self.nodes.borrow().get(&Self::norm(dir)) {
            Some(Node::Dir) => Ok(()),
            Some(Node::File { .. }) => Err(StorageError::Other(format!("ENOTDIR: {dir}"))),
            None => Err(StorageError::NotFound(dir.to_string())),
        }
    }

    /// Set a file's modification time (tests of "newest first").
    pub fn set_mtime(&self, path: &str, mtime_ms: i64) {
        if let Some(Node::File { mtime_ms: m, .. }) =
            self.nodes.borrow_mut().get_mut(&Self::norm(path))
        {
            *m = mtime_ms;
        }
    }

    fn tick(&self) -> i64 {
        let mut c = self.clock.borrow_mut();
        *c += 1;
        *c
    }

    /// A new file's identity.
    fn new_id(&self) -> u64 {
        let mut ids = self.ids.borrow_mut();
        *ids += 1;
        *ids
    }
}

impl Storage for MemoryStorage {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        match self.nodes.borrow().get(&Self::norm(path)) {
            Some(Node::File { data, .. }) => Ok(data.clone()),
            Some(Node::Dir) => Err(StorageError::Other(format!("EISDIR: {path}"))),
            None => Err(StorageError::NotFound(path.to_string())),
        }
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        let mut data = self.read(path)?;
        data.truncate(max_bytes as usize);
        Ok(data)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        match self.nodes.borrow().get(&Self::norm(path)) {
            Some(Node::File { data, .. }) => Ok(range_of(data, offset, len).to_vec()),
            Some(Node::Dir) => Err(StorageError::Other(format!("EISDIR: {path}"))),
            None => Err(StorageError::NotFound(path.to_string())),
        }
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.ensure_parent(path)?;
        let mtime_ms = self.tick();
        let path = Self::norm(path);
        // Written in place: the same file (a directory there is replaced, as before).
        let id = match self.nodes.borrow().get(&path) {
            Some(Node::File { id, .. }) => *id,
            _ => self.new_id(),
        };
        self.nodes.borrow_mut().insert(
            path,
            Node::File {
                data: data.to_vec(),
                mtime_ms,
                id,
            },
        );
        Ok(())
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.ensure_parent(path)?;
        let mtime_ms = self.tick();
        let mut nodes = self.nodes.borrow_mut();
        match nodes.entry(Self::norm(path)).or_insert_with(|| Node::File {
            data: Vec::new(),
            mtime_ms,
            id: self.new_id(),
        }) {
            Node::File {
                data: existing,
                mtime_ms: m,
                ..
            } => {
                existing.extend_from_slice(data);
                *m = mtime_ms;
                Ok(())
            }
            Node::Dir => Err(StorageError::Other(format!("EISDIR: {path}"))),
        }
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        self.ensure_parent(to)?;
        let (from, to) = (Self::norm(from), Self::norm(to));
        let mut nodes = self.nodes.borrow_mut();
        let moved: Vec<String> = nodes
            .keys()
            .filter(|k| **k == from || k.starts_with(&format!("{from}/")))
            .cloned()
            .collect();
        if moved.is_empty() {
            return Err(StorageError::NotFound(from));
        }
        for key in moved {
            let node = nodes.remove(&key).expect("listed above");
            nodes.insert(format!("{to}{}", &key[from.len()..]), node);
        }
        Ok(())
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        let mut nodes = self.nodes.borrow_mut();
        match nodes.get(&Self::norm(path)) {
            Some(Node::File { .. }) => {
                nodes.remove(&Self::norm(path));
                Ok(())
            }
            Some(Node::Dir) => Err(StorageError::Other(format!("EISDIR: {path}"))),
            None => Err(StorageError::NotFound(path.to_string())),
        }
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        let dir = Self::norm(path);
        let nodes = self.nodes.borrow();
        match nodes.get(&dir) {
            Some(Node::Dir) => {}
            Some(Node::File { .. }) => return Err(StorageError::Other(format!("ENOTDIR: {path}"))),
            None => return Err(StorageError::NotFound(path.to_string())),
        }
        let prefix = if dir == "/" {
            "/".to_string()
        } else {
            format!("{dir}/")
        };
        Ok(nodes
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains('/') && k.len() > prefix.len())
            .map(|(k, n)| DirEntry {
                name: k[prefix.len()..].to_string(),
                is_dir: matches!(n, Node::Dir),
            })
            .collect())
    }

    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        match self.nodes.borrow().get(&Self::norm(path)) {
            Some(Node::File { data, mtime_ms, id }) => Ok(FileStat {
                size: data.len() as u64,
                mtime_ms: *mtime_ms,
                is_dir: false,
                id: Some((0, *id)),
            }),
            Some(Node::Dir) => Ok(FileStat {
                size: 0,
                mtime_ms: 0,
                is_dir: true,
                id: None,
            }),
            None => Err(StorageError::NotFound(path.to_string())),
        }
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        let norm = Self::norm(path);
        let mut nodes = self.nodes.borrow_mut();
        let mut acc = String::new();
        for part in norm.split('/') {
            if part.is_empty() {
                acc.push('/');
                continue;
            }
            if !acc.is_empty() && !acc.ends_with('/') {
                acc.push('/');
            }
            acc.push_str(part);
            match nodes.get(&acc) {
                Some(Node::Dir) => {}
                Some(Node::File { .. }) => {
                    return Err(StorageError::Other(format!("ENOTDIR: {acc}")))
                }
                None => {
                    nodes.insert(acc.clone(), Node::Dir);
                }
            }
        }
        Ok(())
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        self.stat(path).map(|_| ())
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        if !self.list_dir(path)?.is_empty() {
            return Err(StorageError::Other(format!("ENOTEMPTY: {path}")));
        }
        self.nodes.borrow_mut().remove(&Self::norm(path));
        Ok(())
    }

    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        create_new_checked(self, path, data)
    }

    fn env(&self) -> &dyn Environment {
        self
    }
}

/// The memory clock and entropy: deterministic, see [`MemoryStorage`].
impl Environment for MemoryStorage {
    fn now_ms(&self) -> i64 {
        self.tick()
    }

    fn random_u64(&self) -> u64 {
        let mut x = *self.rng.borrow();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *self.rng.borrow_mut() = x;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::StorageExt;

    #[test]
    fn memory_storage_lists_only_direct_children() {
        let s = MemoryStorage::new();
        s.mkdir_all("/a/b/c").unwrap();
        s.write("/a/x.jsonl", b"1").unwrap();
        s.write("/a/b/y", b"2").unwrap();
        let names: Vec<_> = s
            .list_dir("/a")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, vec!["b", "x.jsonl"]);
    }

    #[test]
    fn memory_storage_reports_not_found_distinctly() {
        let s = MemoryStorage::new();
        assert!(s.read("/nope").unwrap_err().is_not_found());
        s.mkdir_all("/d").unwrap();
        s.write("/d/f", b"x").unwrap();
        assert!(!s.list_dir("/d/f").unwrap_err().is_not_found());
    }

    #[test]
    fn rename_moves_directory_trees() {
        let s = MemoryStorage::new();
        s.mkdir_all("/a/art").unwrap();
        s.write("/a/art/0.bash.log", b"out").unwrap();
        s.mkdir_all("/b").unwrap();
        s.rename("/a/art", "/b/art").unwrap();
        assert_eq!(s.read("/b/art/0.bash.log").unwrap(), b"out");
        assert!(!s.exists("/a/art"));
    }
}
