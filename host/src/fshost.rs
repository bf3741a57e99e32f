//! The `xcsh:session/storage` imports: the core's `FsStorage` (file operations, error
//! mapping, large reads, the system clock and processes), confined to the roots by
//! [`Confinement`]. What is left here is the confinement itself, the read-only check,
//! the mapping to and from the WIT types, and the `reader` resource.

use crate::bindings::wasi::clocks::wall_clock::Datetime;
use crate::bindings::xcsh::session::storage::{self as wit, Host, HostReader};
use crate::confine::{plain, Denied, Roots};
use crate::history::HistoryDbs;
use crate::progress::Reads;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::{Resource, ResourceTable};
use xcsh_session::fs::{io_error, open_dir, Access, Beneath, FsStorage, PathPolicy};
use xcsh_session::storage::{Storage, StorageError, StorageResult};

/// The session index cache of the agent directory (`<agent-dir>/cache`), and what a
/// command may do there.
#[derive(Debug, Clone)]
pub enum IndexCacheDir {
    /// Read, and written by any command: an open that had to scan a session keeps its
    /// index, read-only commands included (the cache is no session data: "read-only"
    /// promises that session files, blobs, artifacts and locks are untouched).
    Open(PathBuf),
    /// `--no-index-cache`: nothing there is found, nothing written (every open scans).
    Off(PathBuf),
}

impl IndexCacheDir {
    fn dir(&self) -> &Path {
        match self {
            IndexCacheDir::Open(d) | IndexCacheDir::Off(d) => d,
        }
    }
}

/// Where the component may go: every storage call is resolved beneath a root's handle
/// ([`Roots::handle`]; paths SQLite opens must resolve inside the roots, [`Roots::check`]),
/// and a read-only command may change nothing but the index cache.
pub struct Confinement {
    roots: Roots,
    writable: bool,
    cache: Option<IndexCacheDir>,
}

/// A refusal of the confinement as the storage's error.
fn denied(guest: &str, e: Denied) -> StorageError {
    match e {
        Denied::Io(io) => io_error(guest, io),
        other => StorageError::PermissionDenied(format!("{guest} ({other})")),
    }
}

impl Confinement {
    /// The index cache `guest` is in, if any, and whether this access may go there:
    /// refused when the cache is off, or for a write of a read-only command elsewhere.
    fn cache_rule(&self, guest: &str, access: Access) -> StorageResult<Option<&IndexCacheDir>> {
        let cache = self
            .cache
            .as_ref()
            .filter(|c| Path::new(guest).starts_with(c.dir()));
        let to_cache = match cache {
            Some(IndexCacheDir::Off(_)) => {
                return Err(match access {
                    Access::Read => StorageError::NotFound(guest.to_string()),
                    Access::Write => StorageError::PermissionDenied(format!(
                        "{guest} (the index cache is off: --no-index-cache)"
                    )),
                })
            }
            Some(IndexCacheDir::Open(_)) => true,
            None => false,
        };
        if access == Access::Write && !self.writable && !to_cache {
            return Err(StorageError::PermissionDenied(format!(
                "{guest} (this command is read-only)"
            )));
        }
        Ok(cache)
    }

    /// Where a storage call on `guest` goes: beneath the innermost root it is written
    /// under, or (`resolved`, or written under none) beneath the root its resolved form
    /// (symlinks resolved) lies in, or beneath the directory of a readable file.
    fn place(&self, guest: &str, access: Access, resolved: bool) -> StorageResult<Beneath> {
        if let Some(cache) = self.cache_rule(guest, access)? {
            if access == Access::Write && !self.writable {
                return self.in_cache(guest, cache.dir());
            }
        }
        let path = if resolved {
            match access {
                Access::Read => self.roots.check_read(guest),
                Access::Write => self.roots.check(guest),
            }
        } else {
            plain(guest)
        }
        .map_err(|e| denied(guest, e))?;
        match self.roots.under(&path) {
            Some((i, rel)) => Ok(Beneath {
                dir: self
                    .roots
                    .handle(i, access == Access::Write)
                    .map_err(|e| io_error(guest, e))?,
                rel: rel.to_path_buf(),
            }),
            None if !resolved => self.place(guest, access, true),
            // Resolved and under no root: one of the readable files (`check_read`).
            None => match (path.parent(), path.file_name()) {
                (Some(dir), Some(name)) if self.roots.is_readable_file(&path) => Ok(Beneath {
                    dir: Arc::new(open_dir(dir).map_err(|e| io_error(guest, e))?),
                    rel: PathBuf::from(name),
                }),
                _ => Err(denied(guest, Denied::Outside(path))),
            },
        }
    }

    /// A read-only command's write: beneath the index cache's own handle, so it lands in
    /// the cache itself, not where a symlink in it leads.
    fn in_cache(&self, guest: &str, cache: &Path) -> StorageResult<Beneath> {
        let read_only =
            || StorageError::PermissionDenied(format!("{guest} (this command is read-only)"));
        let path = plain(guest).map_err(|e| denied(guest, e))?;
        let rel = path.strip_prefix(cache).map_err(|_| read_only())?;
        let Some((i, cache_rel)) = self.roots.under(cache) else {
            return Err(read_only());
        };
        let root = self.roots.handle(i, true).map_err(|e| io_error(guest, e))?;
        let mut walked = PathBuf::new();
        for c in cache_rel.components() {
            walked.push(c);
            match root.symlink_metadata(&walked) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(read_only()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    match root.create_dir(&walked) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(io_error(guest, e)),
                    }
                }
                Err(e) => return Err(io_error(guest, e)),
            }
        }
        let dir = root.open_dir(cache_rel).map_err(|e| io_error(guest, e))?;
        Ok(Beneath {
            dir: Arc::new(dir),
            rel: rel.to_path_buf(),
        })
    }
}

impl PathPolicy for Confinement {
    /// Every storage call: beneath a root's handle, as written.
    fn beneath(&self, guest: &str, access: Access) -> Option<StorageResult<Beneath>> {
        Some(self.place(guest, access, false))
    }

    /// A path cap-std refused as leading out (an absolute symlink, or one into another
    /// root): placed again by its resolved form, which has no symlink left to follow.
    fn beneath_resolved(&self, guest: &str, access: Access) -> Option<StorageResult<Beneath>> {
        Some(self.place(guest, access, true))
    }

    /// The host path of a guest path SQLite opens by name (the history databases), fully
    /// resolved and checked to lie inside the roots.
    fn resolve(&self, guest: &str, access: Access) -> StorageResult<PathBuf> {
        let cache = self.cache_rule(guest, access)?;
        let checked = match access {
            Access::Read => self.roots.check_read(guest),
            Access::Write => self.roots.check(guest),
        };
        let resolved = checked.map_err(|e| denied(guest, e))?;
        // A read-only command's write lands in the cache itself, not where a symlink in
        // it leads.
        match cache {
            Some(c) if !self.writable && !resolved.starts_with(c.dir()) => Err(
                StorageError::PermissionDenied(format!("{guest} (this command is read-only)")),
            ),
            _ => Ok(resolved),
        }
    }

    /// A file with another name may have it outside the roots (a hard link made to a
    /// file elsewhere): reading or writing it would cross the confinement.
    fn single_link(&self) -> bool {
        true
    }
}

/// A file the component reads in pieces (`open-reader`): the guest path (for errors)
/// and the open file.
pub struct Reader {
    path: String,
    file: fs::File,
}

/// The store data: the confined filesystem, the open history databases (the `history`
/// imports, in `history.rs`), the open readers, and the progress of a long command.
pub struct FsHost {
    fs: FsStorage<Confinement>,
    pub(crate) history: HistoryDbs,
    table: ResourceTable,
    /// What the reads have done so far, on stderr (see [`crate::progress`]).
    pub(crate) reads: Option<Reads>,
}

type R<T> = Result<T, wit::StorageError>;

fn to_wit(e: StorageError) -> wit::StorageError {
    match e {
        StorageError::NotFound(m) => wit::StorageError::NotFound(m),
        StorageError::AlreadyExists(m) => wit::StorageError::AlreadyExists(m),
        StorageError::PermissionDenied(m) => wit::StorageError::PermissionDenied(m),
        StorageError::Other(m) => wit::StorageError::Other(m),
    }
}

/// The confined filesystem storage alone, for what the host runs natively over the core
/// (`sync`): the same roots, the same refusals as the component's.
pub fn confined_storage(roots: Roots, writable: bool) -> FsStorage<Confinement> {
    FsStorage::with_policy(Confinement {
        roots,
        writable,
        cache: None,
    })
}

impl FsHost {
    pub fn new(roots: Roots, writable: bool, cache: Option<IndexCacheDir>) -> FsHost {
        FsHost {
            fs: FsStorage::with_policy(Confinement {
                roots,
                writable,
                cache,
            }),
            history: HistoryDbs::new(),
            table: ResourceTable::new(),
            reads: None,
        }
    }

    /// Counts `bytes` read from `path` on the progress display, if there is one.
    fn progress<T: AsRef<[u8]>>(&mut self, path: &str, read: &R<T>) {
        if let (Some(reads), Ok(bytes)) = (&mut self.reads, read) {
            reads.read(path, bytes.as_ref().len() as u64);
        }
    }

    /// The host path of a guest path, or `permission-denied`.
    pub(crate) fn path(&self, guest: &str) -> R<PathBuf> {
        self.fs.resolve(guest, Access::Read).map_err(to_wit)
    }

    /// Like [`Self::path`], for an operation that modifies the filesystem.
    pub(crate) fn write_path(&self, guest: &str) -> R<PathBuf> {
        self.fs.resolve(guest, Access::Write).map_err(to_wit)
    }
}

/// Largest piece handed to the component in one `reader.read`.
const MAX_READ_CHUNK: u64 = 64 << 20;

impl HostReader for FsHost {
    fn read(&mut self, reader: Resource<Reader>, max_bytes: u64) -> R<Vec<u8>> {
        let reader = self
            .table
            .get_mut(&reader)
            .map_err(|e| wit::StorageError::Other(format!("reader: {e}")))?;
        let want = max_bytes.min(MAX_READ_CHUNK) as usize;
        let mut buf = Vec::with_capacity(want);
        (&mut reader.file)
            .take(want as u64)
            .read_to_end(&mut buf)
            .map_err(|e| to_wit(io_error(&reader.path, e)))?;
        if let Some(reads) = &mut self.reads {
            reads.read(&reader.path, buf.len() as u64);
        }
        Ok(buf)
    }

    fn drop(&mut self, reader: Resource<Reader>) -> wasmtime::Result<()> {
        self.table.delete(reader)?;
        Ok(())
    }
}

impl Host for FsHost {
    fn open_reader(&mut self, path: String) -> R<Resource<Reader>> {
        let file = self.fs.open(&path).map_err(to_wit)?;
        self.table
            .push(Reader { path, file })
            .map_err(|e| wit::StorageError::Other(format!("reader: {e}")))
    }

    fn read(&mut self, path: String) -> R<Vec<u8>> {
        let bytes = self.fs.read(&path).map_err(to_wit);
        self.progress(&path, &bytes);
        stop_after_read(&path);
        bytes
    }

    fn read_prefix(&mut self, path: String, max_bytes: u64) -> R<Vec<u8>> {
        let bytes = self.fs.read_prefix(&path, max_bytes).map_err(to_wit);
        self.progress(&path, &bytes);
        bytes
    }

    /// Opened as `read` and `read-prefix` are (confined, regular, one link, never
    /// blocking), then read with `pread` at `offset`: nothing before it is read.
    fn read_range(&mut self, path: String, offset: u64, len: u64) -> R<Vec<u8>> {
        let bytes = self.fs.read_range(&path, offset, len).map_err(to_wit);
        self.progress(&path, &bytes);
        stop_after_read(&path);
        bytes
    }

    fn write(&mut self, path: String, data: Vec<u8>) -> R<()> {
        self.fs.write(&path, &data).map_err(to_wit)
    }

    fn append(&mut self, path: String, data: Vec<u8>) -> R<()> {
        self.fs.append(&path, &data).map_err(to_wit)
    }

    fn rename(&mut self, from: String, to: String) -> R<()> {
        self.fs.rename(&from, &to).map_err(to_wit)
    }

    fn unlink(&mut self, path: String) -> R<()> {
        self.fs.unlink(&path).map_err(to_wit)
    }

    fn list_dir(&mut self, path: String) -> R<Vec<wit::DirEntry>> {
        let items = self.fs.list_dir(&path).map_err(to_wit)?;
        Ok(items
            .into_iter()
            .map(|d| wit::DirEntry {
                name: d.name,
                is_dir: d.is_dir,
            })
            .collect())
    }

    fn stat(&mut self, path: String) -> R<wit::FileStat> {
        let s = self.fs.stat(&path).map_err(to_wit)?;
        Ok(wit::FileStat {
            size: s.size,
            mtime_ms: s.mtime_ms,
            is_dir: s.is_dir,
        })
    }

    fn mkdir_all(&mut self, path: String) -> R<()> {
        self.fs.mkdir_all(&path).map_err(to_wit)
    }

    fn fsync(&mut self, path: String) -> R<()> {
        self.fs.fsync(&path).map_err(to_wit)
    }

    fn rmdir(&mut self, path: String) -> R<()> {
        self.fs.rmdir(&path).map_err(to_wit)
    }

    fn create_new(&mut self, path: String, data: Vec<u8>) -> R<()> {
        self.fs.create_new(&path, &data).map_err(to_wit)
    }

    fn process_identity(&mut self) -> (u32, String) {
        let me = self.fs.env().process_identity();
        (me.pid, me.host)
    }

    fn process_alive(&mut self, pid: u32) -> Option<bool> {
        self.fs.env().process_alive(pid)
    }
}

/// The WASI wall clock, from the storage's environment (milliseconds).
impl crate::bindings::wasi::clocks::wall_clock::Host for FsHost {
    fn now(&mut self) -> Datetime {
        let ms = u64::try_from(self.fs.env().now_ms()).unwrap_or(0);
        Datetime {
            seconds: ms / 1000,
            nanoseconds: (ms % 1000) as u32 * 1_000_000,
        }
    }

    fn resolution(&mut self) -> Datetime {
        Datetime {
            seconds: 0,
            nanoseconds: 1_000_000,
        }
    }
}

/// WASI insecure random numbers, from the storage's environment (ids: unique, not secret).
impl crate::bindings::wasi::random::insecure::Host for FsHost {
    fn get_insecure_random_bytes(&mut self, len: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(len as usize);
        while (out.len() as u64) < len {
            out.extend_from_slice(&self.fs.env().random_u64().to_le_bytes());
        }
        out.truncate(len as usize);
        out
    }

    fn get_insecure_random_u64(&mut self) -> u64 {
        self.fs.env().random_u64()
    }
}

/// A test hook (host/tests/races.rs): with `XCSH_SESSION_STOP_AFTER_READ=<path>`, the
/// process stops itself (SIGSTOP) right after its first read of that file (whole, or of a
/// range: a lazy open reads only ranges), so a test can
/// run another process in the window between a read and whatever follows it, then
/// resume it (SIGCONT), as an adversary with a debugger or a loaded machine would.
fn stop_after_read(path: &str) {
    #[cfg(target_os = "linux")]
    {
        use std::sync::atomic::{AtomicBool, Ordering};
        static STOPPED: AtomicBool = AtomicBool::new(false);
        if std::env::var_os("XCSH_SESSION_STOP_AFTER_READ").is_some_and(|p| p == path)
            && !STOPPED.swap(true, Ordering::SeqCst)
        {
            // SAFETY: raise has no preconditions; SIGSTOP stops the process until SIGCONT.
            unsafe {
                libc::raise(libc::SIGSTOP);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use xcsh_session::storage::{range_of, StorageExt};

    fn host(writable: bool) -> (tempfile::TempDir, String, FsHost) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(tmp.path()).expect("canonical");
        let roots = Roots::new(&[&root]).expect("roots");
        let dir = root.to_str().expect("utf-8").to_string();
        (tmp, dir, FsHost::new(roots, writable, None))
    }

    #[test]
    fn create_new_is_confined_and_refused_by_read_only_commands() {
        let (_t, dir, mut h) = host(true);
        let outside = tempfile::tempdir().expect("tempdir");
        let target = outside.path().join("x");
        let denied = h.create_new(target.to_str().expect("utf-8").into(), b"x".to_vec());
        assert!(
            matches!(denied, Err(wit::StorageError::PermissionDenied(_))),
            "{denied:?}"
        );
        assert!(!target.exists());
        // A symlink planted at the lock's path is not followed.
        std::os::unix::fs::symlink(&target, format!("{dir}/link")).expect("symlink");
        assert!(h.create_new(format!("{dir}/link"), b"x".to_vec()).is_err());
        assert!(!target.exists());

        let (_t2, dir, mut ro) = host(false);
        let path = format!("{dir}/lock");
        assert!(matches!(
            ro.create_new(path.clone(), b"x".to_vec()),
            Err(wit::StorageError::PermissionDenied(_))
        ));
        assert!(!Path::new(&path).exists());
    }

    /// The confinement, and after each check a directory of the checked path replaced by
    /// a symlink to `outside` (an adversary winning the race between check and use).
    struct SwapAfterCheck {
        confinement: Confinement,
        victim: PathBuf,
        outside: PathBuf,
    }

    impl PathPolicy for SwapAfterCheck {
        fn resolve(&self, guest: &str, access: Access) -> StorageResult<PathBuf> {
            self.confinement.resolve(guest, access)
        }
        fn beneath(&self, guest: &str, access: Access) -> Option<StorageResult<Beneath>> {
            let placed = self.confinement.beneath(guest, access);
            if !fs::symlink_metadata(&self.victim).is_ok_and(|m| m.file_type().is_symlink()) {
                fs::rename(&self.victim, self.victim.with_extension("aside")).expect("aside");
                std::os::unix::fs::symlink(&self.outside, &self.victim).expect("symlink");
            }
            placed
        }
        fn beneath_resolved(&self, guest: &str, access: Access) -> Option<StorageResult<Beneath>> {
            self.confinement.beneath_resolved(guest, access)
        }
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_after_the_check_leads_nowhere_outside() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = fs::canonicalize(tmp.path()).expect("canonical");
        let (root, outside) = (base.join("root"), base.join("outside"));
        let blobs = root.join("blobs");
        fs::create_dir_all(&blobs).expect("mkdir");
        fs::create_dir_all(&outside).expect("mkdir");
        fs::write(outside.join("secret"), "secret").expect("write");
        fs::write(blobs.join("secret"), "inside").expect("write");
        let confinement = Confinement {
            roots: Roots::new(&[&root]).expect("roots"),
            writable: true,
            cache: None,
        };
        let st = FsStorage::with_policy(SwapAfterCheck {
            confinement,
            victim: blobs.clone(),
            outside: outside.clone(),
        });
        let dir = blobs.to_str().expect("utf-8");
        let reset = || {
            let _ = fs::remove_file(&blobs);
            let _ = fs::rename(blobs.with_extension("aside"), &blobs);
        };
        st.blob_put(dir, "abc", b"x")
            .expect_err("put through the symlink");
        reset();
        let err = st
            .read(&format!("{dir}/secret"))
            .expect_err("read through the symlink");
        assert!(err.to_string().contains("symlink"), "{err}");
        reset();
        st.write(&format!("{dir}/new"), b"x")
            .expect_err("write through the symlink");
        reset();
        st.mkdir_all(&format!("{dir}/d"))
            .expect_err("mkdir through the symlink");
        reset();
        st.unlink(&format!("{dir}/secret"))
            .expect_err("unlink through the symlink");
        let names: Vec<_> = fs::read_dir(&outside)
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["secret"]);
        assert_eq!(
            fs::read_to_string(outside.join("secret")).expect("read"),
            "secret"
        );
    }

    /// The bytes of the test file: 10000 of them, no two neighbours alike.
    fn numbered() -> Vec<u8> {
        (0..10_000u32).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn read_range_reads_the_bytes_at_the_offset() {
        let (_t, dir, mut h) = host(false);
        let data = numbered();
        let path = format!("{dir}/s.jsonl");
        fs::write(&path, &data).expect("write");
        let cases: [(u64, u64); 14] = [
            (0, 10),
            (0, 0),
            (1234, 100),
            (1234, 0),
            (9990, 10),
            (9990, 100),
            (9999, 1),
            (10_000, 0),
            (10_000, 5),
            (20_000, 5),
            (5000, u64::MAX),
            (0, u64::MAX),
            (u64::MAX, u64::MAX),
            (u64::MAX - 1, 10),
        ];
        for (offset, len) in cases {
            let got = h.read_range(path.clone(), offset, len).expect("read-range");
            assert_eq!(got, range_of(&data, offset, len), "{offset}+{len}");
        }
        assert_eq!(
            h.read_range(path.clone(), 1234, 3).expect("r"),
            [230, 231, 232]
        );
        assert_eq!(h.read_range(path.clone(), 9990, 100).expect("r").len(), 10);
        assert!(h.read_range(path, 10_000, 5).expect("r").is_empty());
        let missing = h.read_range(format!("{dir}/missing.jsonl"), 0, 10);
        assert!(
            matches!(missing, Err(wit::StorageError::NotFound(_))),
            "{missing:?}"
        );
    }

    /// A 1 TiB sparse file: a range at its end is read where it is. Reading the whole file
    /// first (or everything before the offset) would need a terabyte.
    #[test]
    fn read_range_reads_at_the_offset_not_from_the_start() {
        let (_t, dir, mut h) = host(false);
        let path = format!("{dir}/sparse.jsonl");
        let size = 1u64 << 40;
        let file = fs::File::create(&path).expect("create");
        file.set_len(size).expect("set_len");
        {
            use std::os::unix::fs::FileExt;
            file.write_all_at(b"tail\n", size - 5).expect("write");
        }
        drop(file);
        assert_eq!(
            h.read_range(path.clone(), size - 5, 100).expect("r"),
            b"tail\n"
        );
        assert_eq!(
            h.read_range(path.clone(), size - 7, 3).expect("r"),
            b"\0\0t"
        );
        assert!(h.read_range(path, size, 1 << 30).expect("r").is_empty());
    }

    /// Each refusal of `read-prefix` (the same check, the same error) is `read-range`'s.
    fn refused_alike(h: &mut FsHost, path: &str) -> wit::StorageError {
        let prefix = h
            .read_prefix(path.into(), 10)
            .expect_err("read-prefix refused");
        let range = h
            .read_range(path.into(), 2, 10)
            .expect_err("read-range refused");
        assert_eq!(format!("{range:?}"), format!("{prefix:?}"), "{path}");
        range
    }

    #[test]
    fn read_range_is_confined_as_read_prefix_is() {
        let (_t, dir, mut h) = host(false);
        let outside = tempfile::tempdir().expect("tempdir");
        let secret = fs::canonicalize(outside.path()).expect("c").join("secret");
        fs::write(&secret, "secret bytes").expect("write");
        let denied = |e: &wit::StorageError| matches!(e, wit::StorageError::PermissionDenied(_));

        // A path outside the roots, named directly or through `..`.
        let e = refused_alike(&mut h, secret.to_str().expect("utf-8"));
        assert!(denied(&e), "{e:?}");
        let rel = format!(
            "{dir}/../{}",
            secret.strip_prefix("/").expect("abs").display()
        );
        let e = refused_alike(&mut h, &rel);
        assert!(denied(&e), "{e:?}");
        // A symlink inside that leads outside.
        std::os::unix::fs::symlink(&secret, format!("{dir}/link.jsonl")).expect("symlink");
        let e = refused_alike(&mut h, &format!("{dir}/link.jsonl"));
        assert!(denied(&e), "{e:?}");
        // A hard link inside to the file outside (its other name is outside).
        let hard = format!("{dir}/hard.jsonl");
        if fs::hard_link(&secret, &hard).is_ok() {
            let e = refused_alike(&mut h, &hard);
            assert!(denied(&e), "{e:?}");
            assert!(format!("{e:?}").contains("hard link"), "{e:?}");
        }
        // A directory is no file.
        fs::create_dir(format!("{dir}/d")).expect("mkdir");
        refused_alike(&mut h, &format!("{dir}/d"));
        // A path with NUL.
        let e = refused_alike(&mut h, &format!("{dir}/a\0b"));
        assert!(denied(&e), "{e:?}");
    }

    #[test]
    fn read_range_of_a_fifo_is_refused_without_blocking() {
        let (_t, dir, _h) = host(false);
        let fifo = format!("{dir}/fifo.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("run mkfifo");
        assert!(made.success(), "mkfifo {fifo}");
        let (tx, rx) = std::sync::mpsc::channel();
        let roots_dir = dir.clone();
        std::thread::spawn(move || {
            let roots = Roots::new(&[Path::new(&roots_dir)]).expect("roots");
            let mut h = FsHost::new(roots, false, None);
            let _ = tx.send(h.read_range(fifo, 0, 10));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("read-range blocked on a FIFO");
        match got {
            Err(wit::StorageError::Other(m)) => {
                assert!(m.ends_with("is not a regular file"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn process_identity_and_liveness() {
        let (_t, _dir, mut h) = host(false);
        let (pid, name) = h.process_identity();
        assert_eq!(pid, std::process::id());
        assert!(!name.is_empty() && !name.contains('\n'), "{name:?}");
        if cfg!(target_os = "linux") {
            assert_eq!(h.process_alive(pid), Some(true));
            assert_eq!(h.process_alive(0), Some(false));
            // pid_max is at most 2^22 on Linux.
            assert_eq!(h.process_alive(u32::MAX - 1), Some(false));
            let mut child = std::process::Command::new("true").spawn().expect("spawn");
            let child_pid = child.id();
            child.wait().expect("wait");
            assert_eq!(h.process_alive(child_pid), Some(false));
        }
    }
}
