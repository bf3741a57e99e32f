//! The storage port: every byte the core reads or writes goes through [`Storage`].
//!
//! Three parts, each written once:
//!
//! - **[`Storage`], the file primitives** a host must supply: read, read-prefix,
//!   read-range, write, append, rename, unlink, list, stat, mkdir, fsync, rmdir and an
//!   exclusive create. No method has a default body, so nothing a host leaves out silently
//!   falls back to a slower or weaker version.
//! - **[`Environment`], what is not a file**: the clock, entropy (`wasm32-unknown-unknown`
//!   has neither) and the process identity recorded in writer locks. A storage gives
//!   access to the environment it runs in ([`Storage::env`]) instead of the two being
//!   passed side by side, because they belong together: a host's files and clock come from
//!   the same place (the CLI's filesystem and system clock, a JS object's `nowMs`, the
//!   memory storage whose clock also stamps its files' mtimes), and every session, API call
//!   and wrapper keeps holding one `Rc<dyn Storage>`.
//! - **The composites** ([`StorageExt`]: `exists`, blob put/get, directory copy, atomic
//!   write): rules over the primitives, implemented once for every storage and not
//!   overridable, so every host gets the same temp-file names, fsyncs and renames.
//!
//! A wrapper that changes a few calls of another storage (fault injection, counting,
//! a jail in tests) implements [`Layer`]: it names the storage it wraps and overrides
//! only what it changes. Hosts plug in their own storage: [`MemoryStorage`] here,
//! `FsStorage` for native builds (the CLI host confines its paths), the WIT imports in
//! the component, a JS object in the npm package. Paths are `/`-separated strings; the
//! port decides what they mean.

mod memory;

pub use memory::MemoryStorage;

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

    /// A FIFO, socket, device or directory where a file was expected. Every storage that
    /// meets one says so in these words, without blocking on it: the native filesystem,
    /// the WASI command's, and a JS storage that throws `code: 'EXCSH_NOT_REGULAR'` (the
    /// npm package's Node storages).
    pub fn not_regular(path: &str) -> StorageError {
        StorageError::Other(format!("{path} is not a regular file"))
    }
}

pub type StorageResult<T> = Result<T, StorageError>;

/// A confined storage (the CLI's roots, the WASI command's preopens) reads and writes
/// only files with one name: another hard link to the same file may be outside, and
/// would read or receive what the session file does. `links` is the open file's count.
pub fn single_link(path: &str, links: u64) -> StorageResult<()> {
    if links > 1 {
        return Err(StorageError::PermissionDenied(format!(
            "{path} (a hard link: the file has {links} names, one may be outside the allowed \
             directories; not read or written)"
        )));
    }
    Ok(())
}

/// What `stat` tells about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    pub size: u64,
    /// Modification time, epoch milliseconds.
    pub mtime_ms: i64,
    pub is_dir: bool,
    /// The file's identity where the host can tell one (device and inode): a file written
    /// in place keeps it, one put in its place (renamed over it, or deleted and created
    /// again) has another while the first is still there. `None` where a host cannot tell
    /// (the WIT storage, a JS storage that gives no `dev` and `ino`): nothing relies on it
    /// then, it only saves reads (a session's lock check, [`crate::lock::SessionLock::check`]).
    pub id: Option<(u64, u64)>,
}

/// A writer's identity, as recorded in a session lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    pub pid: u32,
    pub host: String,
}

impl ProcessIdentity {
    /// What a host that cannot tell reports: pid 0 on host `unknown`.
    pub fn unknown() -> ProcessIdentity {
        ProcessIdentity {
            pid: 0,
            host: "unknown".into(),
        }
    }
}

/// One directory entry (name only, not a path).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    pub name: String,
    pub is_dir: bool,
}

/// The file primitives, and the environment they run in.
pub trait Storage {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>>;
    /// At most `max_bytes` from the start of the file (listing reads only 4096 bytes).
    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>>;
    /// At most `len` bytes starting at byte `offset`: fewer at the end of the file, none
    /// past it (not an error). An open reads the lines it needs with it instead of the
    /// whole file (a session's index tells where they are).
    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>>;
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
    /// Create a file that must not exist yet (`AlreadyExists` otherwise, also for a
    /// directory): session locks are taken with it. Shared stores make it atomic
    /// (`O_EXCL`); a store only one process sees may use [`create_new_checked`].
    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()>;

    /// The clock, entropy and process identity of the host these files live on.
    fn env(&self) -> &dyn Environment;

    /// A blob store of the host's own that replaces the blob files (the npm package's
    /// optional `blobPut`/`blobGet`); `None`, the usual answer, keeps blobs as files under
    /// the blobs directory ([`StorageExt::blob_put`]).
    fn blob_hooks(&self) -> Option<&dyn BlobHooks> {
        None
    }
}

/// What the core needs of its host besides files.
pub trait Environment {
    /// Wall clock, epoch milliseconds.
    fn now_ms(&self) -> i64;
    /// Entropy for ids (need not be cryptographic).
    fn random_u64(&self) -> u64;
    /// Who is writing: process id and host name, recorded in session locks.
    fn process_identity(&self) -> ProcessIdentity {
        ProcessIdentity::unknown()
    }
    /// Is process `pid` on this host still running? `None` when the host cannot tell
    /// (then a lock is only recovered by an explicit takeover).
    fn process_alive(&self, _pid: u32) -> Option<bool> {
        None
    }
}

/// A content-addressed blob store kept elsewhere than in files ([`Storage::blob_hooks`]).
pub trait BlobHooks {
    /// Store the blob; a no-op when it is already there.
    fn put(&self, blobs_dir: &str, hash: &str, data: &[u8]) -> StorageResult<()>;
    /// The blob's bytes, or `None` when it does not exist.
    fn get(&self, blobs_dir: &str, hash: &str) -> StorageResult<Option<Vec<u8>>>;
}

/// A storage over another one ([`Layer::inner`]) that changes some of its calls: every
/// method it does not define passes on unchanged. Every `Layer` is a [`Storage`].
///
/// ```
/// use xcsh_session::storage::{Layer, MemoryStorage, Storage, StorageResult};
///
/// /// Counts writes, passes everything on.
/// struct Counting(MemoryStorage, std::cell::Cell<u32>);
///
/// impl Layer for Counting {
///     fn inner(&self) -> &dyn Storage {
///         &self.0
///     }
///     fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
///         self.1.set(self.1.get() + 1);
///         self.0.write(path, data)
///     }
/// }
///
/// let counting = Counting(MemoryStorage::new(), Default::default());
/// // Used as sessions use it, a `dyn Storage` (with both traits in scope, a method
/// // called on the wrapper itself would be ambiguous).
/// let s: &dyn Storage = &counting;
/// s.mkdir_all("/d").unwrap();
/// s.write("/d/f", b"x").unwrap();
/// assert_eq!(s.read("/d/f").unwrap(), b"x");
/// assert_eq!(counting.1.get(), 1);
/// ```
pub trait Layer {
    /// The storage this one passes calls to.
    fn inner(&self) -> &dyn Storage;

    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        self.inner().read(path)
    }
    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        self.inner().read_prefix(path, max_bytes)
    }
    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        self.inner().read_range(path, offset, len)
    }
    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.inner().write(path, data)
    }
    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.inner().append(path, data)
    }
    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        self.inner().rename(from, to)
    }
    fn unlink(&self, path: &str) -> StorageResult<()> {
        self.inner().unlink(path)
    }
    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        self.inner().list_dir(path)
    }
    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        self.inner().stat(path)
    }
    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        self.inner().mkdir_all(path)
    }
    fn fsync(&self, path: &str) -> StorageResult<()> {
        self.inner().fsync(path)
    }
    fn rmdir(&self, path: &str) -> StorageResult<()> {
        self.inner().rmdir(path)
    }
    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.inner().create_new(path, data)
    }
    fn env(&self) -> &dyn Environment {
        self.inner().env()
    }
    fn blob_hooks(&self) -> Option<&dyn BlobHooks> {
        self.inner().blob_hooks()
    }
}

impl<L: Layer> Storage for L {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        Layer::read(self, path)
    }
    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        Layer::read_prefix(self, path, max_bytes)
    }
    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        Layer::read_range(self, path, offset, len)
    }
    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        Layer::write(self, path, data)
    }
    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        Layer::append(self, path, data)
    }
    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        Layer::rename(self, from, to)
    }
    fn unlink(&self, path: &str) -> StorageResult<()> {
        Layer::unlink(self, path)
    }
    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        Layer::list_dir(self, path)
    }
    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        Layer::stat(self, path)
    }
    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        Layer::mkdir_all(self, path)
    }
    fn fsync(&self, path: &str) -> StorageResult<()> {
        Layer::fsync(self, path)
    }
    fn rmdir(&self, path: &str) -> StorageResult<()> {
        Layer::rmdir(self, path)
    }
    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        Layer::create_new(self, path, data)
    }
    fn env(&self) -> &dyn Environment {
        Layer::env(self)
    }
    fn blob_hooks(&self) -> Option<&dyn BlobHooks> {
        Layer::blob_hooks(self)
    }
}

/// The composites: rules over the primitives, the same for every storage.
pub trait StorageExt: Storage {
    /// Whether `path` exists (file or directory).
    fn exists(&self, path: &str) -> bool {
        self.stat(path).is_ok()
    }

    /// Store a content-addressed blob at `<blobs_dir>/<hash>`. Written beside it as
    /// `.<hash>.<random>.tmp`, fsynced and renamed into place, so a blob is never seen half
    /// written; also when it is already there, so that a put repairs a blob file whose
    /// bytes went bad and refreshes its mtime (garbage collection keeps a blob put less
    /// than its grace period ago: the entry that references it is about to be written).
    fn blob_put(&self, blobs_dir: &str, hash: &str, data: &[u8]) -> StorageResult<()> {
        check_blob_name(hash)?;
        if let Some(hooks) = self.blob_hooks() {
            return hooks.put(blobs_dir, hash, data);
        }
        put_blob_file(self, blobs_dir, hash, data)
    }

    /// The blob's bytes, or `None` when it does not exist.
    fn blob_get(&self, blobs_dir: &str, hash: &str) -> StorageResult<Option<Vec<u8>>> {
        check_blob_name(hash)?;
        if let Some(hooks) = self.blob_hooks() {
            return hooks.get(blobs_dir, hash);
        }
        get_blob_file(self, blobs_dir, hash)
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

    /// Replace `path` atomically: write `<dir>/.<basename>.<random>.tmp`, fsync, rename
    /// over the target, fsync. On failure the temp file is removed and the error returned;
    /// the target is then untouched.
    fn atomic_write(&self, path: &str, bytes: &[u8]) -> StorageResult<()> {
        replace(self, path, &mut |tmp| self.write(tmp, bytes), true)
    }

    /// Replace `path` at once for its readers (a temp file renamed over it, as
    /// [`Self::atomic_write`]) without waiting for the disk: no fsync, so a power cut may
    /// leave it empty or cut short. Only for caches, whose readers check what they read
    /// (an open that writes a session's index then does not wait for the disk to write
    /// the session it just read, which a first open after a copy paid for). `write_temp`
    /// writes the new content to the temp file it is given (in pieces if it likes).
    fn replace_unsynced_with(
        &self,
        path: &str,
        write_temp: &mut dyn FnMut(&str) -> StorageResult<()>,
    ) -> StorageResult<()> {
        replace(self, path, write_temp, false)
    }
}

impl<S: Storage + ?Sized> StorageExt for S {}

/// A temp file beside `path`, written by `write_temp`, renamed over it; fsynced before
/// and after when `durable`. On failure the temp file is removed and the target left
/// untouched.
fn replace<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    write_temp: &mut dyn FnMut(&str) -> StorageResult<()>,
    durable: bool,
) -> StorageResult<()> {
    let dir = parent(path);
    if !dir.is_empty() {
        storage.mkdir_all(dir)?;
    }
    let tmp = join(dir, &temp_name(storage.env(), basename(path)));
    let sync = |p: &str| if durable { storage.fsync(p) } else { Ok(()) };
    let result = write_temp(&tmp)
        .and_then(|_| sync(&tmp))
        .and_then(|_| storage.rename(&tmp, path))
        .and_then(|_| sync(path));
    if result.is_err() {
        let _ = storage.unlink(&tmp);
    }
    result
}

/// `.<name>.<8 hex digits>.tmp`: a temp file beside `name`.
fn temp_name(env: &dyn Environment, name: &str) -> String {
    format!(".{name}.{:08x}.tmp", env.random_u64() as u32)
}

/// A blob name must be one plain path component (the core only ever passes 64 hex
/// digits; this keeps a blob put or get from being aimed elsewhere).
fn check_blob_name(hash: &str) -> StorageResult<()> {
    if hash.is_empty() || hash == "." || hash == ".." || hash.contains(['/', '\\', '\0']) {
        return Err(StorageError::Other(format!("invalid blob name: {hash:?}")));
    }
    Ok(())
}

/// [`StorageExt::blob_put`] as a file under `blobs_dir`, whatever the blob hooks (for a
/// host whose hooks store only some blobs).
pub fn put_blob_file<S: Storage + ?Sized>(
    storage: &S,
    blobs_dir: &str,
    hash: &str,
    data: &[u8],
) -> StorageResult<()> {
    let path = join(blobs_dir, hash);
    storage.mkdir_all(blobs_dir)?;
    let tmp = join(blobs_dir, &temp_name(storage.env(), hash));
    storage.write(&tmp, data)?;
    storage.fsync(&tmp)?;
    storage.rename(&tmp, &path).inspect_err(|_| {
        let _ = storage.unlink(&tmp);
    })
}

/// [`StorageExt::blob_get`] from the file under `blobs_dir`, whatever the blob hooks.
pub fn get_blob_file<S: Storage + ?Sized>(
    storage: &S,
    blobs_dir: &str,
    hash: &str,
) -> StorageResult<Option<Vec<u8>>> {
    match storage.read(&join(blobs_dir, hash)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`Storage::create_new`] for a store that only this process sees (memory, a JS object
/// without `createNew`): `AlreadyExists` when the path exists, else a plain write.
pub fn create_new_checked<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    data: &[u8],
) -> StorageResult<()> {
    if storage.exists(path) {
        return Err(StorageError::AlreadyExists(path.to_string()));
    }
    storage.write(path, data)
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
    crate::sort::sort_by(&mut out, Ord::cmp);
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

/// The bytes `read_range(offset, len)` returns from a whole file's `data`: short at its
/// end, empty past it. Storages that hold (or fall back to reading) the whole file slice
/// with it, so every storage answers a range alike.
pub fn range_of(data: &[u8], offset: u64, len: u64) -> &[u8] {
    let start = usize::try_from(offset).map_or(data.len(), |o| o.min(data.len()));
    let end = usize::try_from(offset.saturating_add(len)).map_or(data.len(), |e| e.min(data.len()));
    &data[start..end.max(start)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_helpers() {
        assert_eq!(join("/a/", "b"), "/a/b");
        assert_eq!(parent("/a/b/c.jsonl"), "/a/b");
        assert_eq!(parent("/c"), "/");
        assert_eq!(basename("/a/b/c.jsonl"), "c.jsonl");
    }

    #[test]
    fn blob_names_are_one_plain_component() {
        let s = MemoryStorage::new();
        for bad in ["", ".", "..", "a/b", "..\\x", "a\0"] {
            assert!(s.blob_put("/b", bad, b"x").is_err(), "{bad:?}");
            assert!(s.blob_get("/b", bad).is_err(), "{bad:?}");
        }
        assert!(!s.exists("/b"));
        s.blob_put("/b", "ab", b"x").unwrap();
        assert_eq!(s.blob_get("/b", "ab").unwrap(), Some(b"x".to_vec()));
        assert_eq!(s.blob_get("/b", "cd").unwrap(), None);
    }
}
