//! The storage port: every byte the core reads or writes goes through [`Storage`].
//!
//! The trait mirrors the seed's `SessionStorage` (plus blobs, artifact directories, a clock
//! and entropy, because `wasm32-unknown-unknown` has neither). Hosts plug in their own:
//! [`MemoryStorage`] here, `FsStorage` for native builds, the WIT imports in the component,
//! a JS object in the npm package. Paths are `/`-separated strings; the port decides what
//! they mean (the CLI host confines them to one root directory).

use std::cell::RefCell;
use std::collections::BTreeMap;

/// A failed storage call. "Not found" is its own variant so callers can tell a missing
/// file (often fine) from a real failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    #[error("ENOENT: no such file or directory: {0}")]
    NotFound(String),
    #[error("EEXIST: already exists: {0}")]
    AlreadyExists(String),
    #[error("EACCES: permission denied: {0}")]
    PermissionDenied(String),
    #[error("{0}")]
    Other(String),
}

impl StorageError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, StorageError::NotFound(_))
    }
}

pub type StorageResult<T> = Result<T, StorageError>;

/// Implement the named [`Storage`] methods by forwarding each to `self.<field>` (a field
/// name or a tuple index): for wrappers that change a few calls and pass the rest on.
///
/// ```
/// use xcsh_session::storage::{MemoryStorage, Storage, StorageResult};
///
/// /// Counts writes, forwards everything else.
/// struct Counting(MemoryStorage, std::cell::Cell<u32>);
///
/// impl Storage for Counting {
///     fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
///         self.1.set(self.1.get() + 1);
///         self.0.write(path, data)
///     }
///     xcsh_session::forward_storage!(0: read, read_prefix, append, rename, unlink, list_dir,
///         stat, mkdir_all, fsync, rmdir, now_ms, random_u64);
/// }
/// ```
#[macro_export]
macro_rules! forward_storage {
    ($f:tt: $($method:ident),+ $(,)?) => { $($crate::forward_storage!(@ $f $method);)+ };
    (@ $f:tt read) => {
        fn read(&self, path: &str) -> $crate::storage::StorageResult<Vec<u8>> {
            self.$f.read(path)
        }
    };
    (@ $f:tt read_prefix) => {
        fn read_prefix(&self, path: &str, max_bytes: u64) -> $crate::storage::StorageResult<Vec<u8>> {
            self.$f.read_prefix(path, max_bytes)
        }
    };
    (@ $f:tt write) => {
        fn write(&self, path: &str, data: &[u8]) -> $crate::storage::StorageResult<()> {
            self.$f.write(path, data)
        }
    };
    (@ $f:tt append) => {
        fn append(&self, path: &str, data: &[u8]) -> $crate::storage::StorageResult<()> {
            self.$f.append(path, data)
        }
    };
    (@ $f:tt rename) => {
        fn rename(&self, from: &str, to: &str) -> $crate::storage::StorageResult<()> {
            self.$f.rename(from, to)
        }
    };
    (@ $f:tt unlink) => {
        fn unlink(&self, path: &str) -> $crate::storage::StorageResult<()> {
            self.$f.unlink(path)
        }
    };
    (@ $f:tt list_dir) => {
        fn list_dir(&self, path: &str) -> $crate::storage::StorageResult<Vec<$crate::storage::DirEntry>> {
            self.$f.list_dir(path)
        }
    };
    (@ $f:tt stat) => {
        fn stat(&self, path: &str) -> $crate::storage::StorageResult<$crate::storage::FileStat> {
            self.$f.stat(path)
        }
    };
    (@ $f:tt mkdir_all) => {
        fn mkdir_all(&self, path: &str) -> $crate::storage::StorageResult<()> {
            self.$f.mkdir_all(path)
        }
    };
    (@ $f:tt fsync) => {
        fn fsync(&self, path: &str) -> $crate::storage::StorageResult<()> {
            self.$f.fsync(path)
        }
    };
    (@ $f:tt rmdir) => {
        fn rmdir(&self, path: &str) -> $crate::storage::StorageResult<()> {
            self.$f.rmdir(path)
        }
    };
    (@ $f:tt now_ms) => {
        fn now_ms(&self) -> i64 {
            self.$f.now_ms()
        }
    };
    (@ $f:tt random_u64) => {
        fn random_u64(&self) -> u64 {
            self.$f.random_u64()
        }
    };
    (@ $f:tt create_new) => {
        fn create_new(&self, path: &str, data: &[u8]) -> $crate::storage::StorageResult<()> {
            self.$f.create_new(path, data)
        }
    };
    (@ $f:tt process_identity) => {
        fn process_identity(&self) -> $crate::storage::ProcessIdentity {
            self.$f.process_identity()
        }
    };
    (@ $f:tt process_alive) => {
        fn process_alive(&self, pid: u32) -> Option<bool> {
            self.$f.process_alive(pid)
        }
    };
}

/// What `stat` tells about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    pub size: u64,
    /// Modification time, epoch milliseconds.
    pub mtime_ms: i64,
    pub is_dir: bool,
}

/// A writer's identity, as recorded in a session lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    pub pid: u32,
    pub host: String,
}

/// One directory entry (name only, not a path).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    pub name: String,
    pub is_dir: bool,
}

/// The storage port. Required methods are the file primitives; blob and directory helpers
/// have default implementations on top of them that hosts may replace with native ones.
pub trait Storage {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>>;
    /// At most `max_bytes` from the start of the file (listing reads only 4096 bytes).
    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>>;
    /// Create or truncate, then write.
    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()>;
    /// Append to the end, creating the file when missing.
    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()>;
    /// Atomic replace of `to` by `from`.
    fn rename(&self, from: &str, to: &str) -> StorageResult<()>;
    fn unlink(&self, path: &str) -> StorageResult<()>;
    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>>;
    fn stat(&self, path: &str) -> StorageResult<FileStat>;
    fn mkdir_all(&self, path: &str) -> StorageResult<()>;
    /// Flush the file's data to stable storage.
    fn fsync(&self, path: &str) -> StorageResult<()>;
    /// Remove an empty directory.
    fn rmdir(&self, path: &str) -> StorageResult<()>;
    /// Wall clock, epoch milliseconds.
    fn now_ms(&self) -> i64;
    /// Entropy for ids (need not be cryptographic).
    fn random_u64(&self) -> u64;

    fn exists(&self, path: &str) -> bool {
        self.stat(path).is_ok()
    }

    /// Create a file that must not exist yet (`AlreadyExists` otherwise). Hosts should make
    /// this atomic (`O_EXCL`); the default checks then writes.
    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        if self.exists(path) {
            return Err(StorageError::AlreadyExists(path.to_string()));
        }
        self.write(path, data)
    }

    /// Who is writing: process id and host name, recorded in session locks.
    fn process_identity(&self) -> ProcessIdentity {
        ProcessIdentity {
            pid: 0,
            host: "unknown".into(),
        }
    }

    /// Is process `pid` on this host still running? `None` when the host cannot tell
    /// (then a lock is only recovered by an explicit takeover).
    fn process_alive(&self, _pid: u32) -> Option<bool> {
        None
    }

    /// Store a content-addressed blob; a no-op when it is already there.
    fn blob_put(&self, blobs_dir: &str, hash: &str, data: &[u8]) -> StorageResult<()> {
        let path = join(blobs_dir, hash);
        if self.exists(&path) {
            return Ok(());
        }
        self.mkdir_all(blobs_dir)?;
        let tmp = join(
            blobs_dir,
            &format!(".{hash}.{:08x}.tmp", self.random_u64() as u32),
        );
        self.write(&tmp, data)?;
        self.fsync(&tmp)?;
        self.rename(&tmp, &path).inspect_err(|_| {
            let _ = self.unlink(&tmp);
        })
    }

    /// The blob's bytes, or `None` when it does not exist.
    fn blob_get(&self, blobs_dir: &str, hash: &str) -> StorageResult<Option<Vec<u8>>> {
        match self.read(&join(blobs_dir, hash)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Recursive copy of a directory tree (artifact directories on fork).
    fn copy_dir(&self, from: &str, to: &str) -> StorageResult<()> {
        self.mkdir_all(to)?;
        for entry in self.list_dir(from)? {
            let src = join(from, &entry.name);
            let dst = join(to, &entry.name);
            if entry.is_dir {
                self.copy_dir(&src, &dst)?;
            } else {
                let bytes = self.read(&src)?;
                self.write(&dst, &bytes)?;
            }
        }
        Ok(())
    }
}

/// Every file under `dir`, recursively, as full paths in byte order (`[]` when `dir` does
/// not exist).
pub fn files_under(storage: &dyn Storage, dir: &str) -> StorageResult<Vec<String>> {
    fn walk(storage: &dyn Storage, dir: &str, out: &mut Vec<String>) -> StorageResult<()> {
        let entries = match storage.list_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let path = join(dir, &entry.name);
            if entry.is_dir {
                walk(storage, &path, out)?;
            } else {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(storage, dir, &mut out)?;
    out.sort();
    Ok(out)
}

/// Remove a directory and everything in it.
pub fn remove_tree(storage: &dyn Storage, dir: &str) -> StorageResult<()> {
    for entry in storage.list_dir(dir)? {
        let path = join(dir, &entry.name);
        if entry.is_dir {
            remove_tree(storage, &path)?;
        } else {
            storage.unlink(&path)?;
        }
    }
    storage.rmdir(dir)
}

/// Join two `/`-separated path parts.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// The parent directory of a `/`-separated path ("" when there is none).
pub fn parent(path: &str) -> &str {
    match path.trim_end_matches('/').rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => "",
    }
}

/// The last component of a `/`-separated path.
pub fn basename(path: &str) -> &str {
    let p = path.trim_end_matches('/');
    match p.rfind('/') {
        Some(i) => &p[i + 1..],
        None => p,
    }
}

#[derive(Debug, Clone)]
enum Node {
    File { data: Vec<u8>, mtime_ms: i64 },
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

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.ensure_parent(path)?;
        let mtime_ms = self.tick();
        self.nodes.borrow_mut().insert(
            Self::norm(path),
            Node::File {
                data: data.to_vec(),
                mtime_ms,
            },
        );
        Ok(())
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.ensure_parent(path)?;
        let mtime_ms = self.tick();
        let mut nodes = self.nodes.borrow_mut();
        match nodes.entry(Self::norm(path)).or_insert(Node::File {
            data: Vec::new(),
            mtime_ms,
        }) {
            Node::File {
                data: existing,
                mtime_ms: m,
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
            Some(Node::File { data, mtime_ms }) => Ok(FileStat {
                size: data.len() as u64,
                mtime_ms: *mtime_ms,
                is_dir: false,
            }),
            Some(Node::Dir) => Ok(FileStat {
                size: 0,
                mtime_ms: 0,
                is_dir: true,
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

/// Replace `path` atomically: write `<dir>/.<basename>.<random>.tmp`, fsync, rename over
/// the target, fsync. On failure the temp file is removed and the error returned; the
/// target is then untouched.
pub fn atomic_write(storage: &dyn Storage, path: &str, bytes: &[u8]) -> StorageResult<()> {
    let dir = parent(path);
    if !dir.is_empty() {
        storage.mkdir_all(dir)?;
    }
    let tmp = join(
        dir,
        &format!(
            ".{}.{:08x}.tmp",
            basename(path),
            storage.random_u64() as u32
        ),
    );
    let result = storage
        .write(&tmp, bytes)
        .and_then(|_| storage.fsync(&tmp))
        .and_then(|_| storage.rename(&tmp, path))
        .and_then(|_| storage.fsync(path));
    if result.is_err() {
        let _ = storage.unlink(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn path_helpers() {
        assert_eq!(join("/a/", "b"), "/a/b");
        assert_eq!(parent("/a/b/c.jsonl"), "/a/b");
        assert_eq!(parent("/c"), "/");
        assert_eq!(basename("/a/b/c.jsonl"), "c.jsonl");
    }
}
