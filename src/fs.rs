//! The real filesystem behind the storage port (native builds only): [`FsStorage`] for
//! the file primitives, [`SystemEnv`] for the clock, entropy and processes.
//!
//! Every call first asks the storage's [`PathPolicy`] which file a storage path names:
//! [`AsGiven`] uses paths as they are; the CLI host plugs in its confinement (the allowed
//! roots, and a refusal of every write for read-only commands), so the file operations,
//! their error mapping and the fast large-file reads exist once, here.
//!
//! A confining policy ([`PathPolicy::beneath`], the CLI's roots) names, instead of a path,
//! a directory handle and a path relative to it: every call is then resolved beneath the
//! handle by cap-std (the capability-based filesystem of wasmtime's WASI), which follows a
//! symlink only while it stays beneath (`openat2(RESOLVE_BENEATH)` where the kernel has
//! it). A directory or file swapped for a symlink leading out between two calls makes the
//! call fail instead of redirecting it.
//!
//! Only regular files are read or written: every file is opened without blocking
//! (`O_NONBLOCK`, so a FIFO or a device named like a session cannot hang the caller) and
//! checked on the open handle; anything else is refused ("is not a regular file"), and
//! `list_dir` leaves FIFOs, sockets and devices out, so scans never meet them. A policy
//! may also refuse files with more than one hard link ([`PathPolicy::single_link`]),
//! checked on the open handle before a byte is read or written (a write truncates only
//! after the check).

mod beneath;
mod plain;

/// A directory handle a confined storage resolves paths beneath (cap-std's).
pub use cap_std::fs::Dir;

use crate::storage::{
    DirEntry, Environment, FileStat, ProcessIdentity, Storage, StorageError, StorageResult,
};
use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Open the directory `path` as a handle to confine paths beneath (it must exist).
pub fn open_dir(path: &Path) -> io::Result<Dir> {
    Dir::open_ambient_dir(path, cap_std::ambient_authority())
}

/// Where a confining policy puts a storage path: `rel` (relative, no `..`) beneath `dir`.
#[derive(Debug, Clone)]
pub struct Beneath {
    pub dir: Arc<Dir>,
    pub rel: PathBuf,
}

/// Whether a call only looks at a path or changes the filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Which file a storage path names, asked before every call of an [`FsStorage`]; an
/// error refuses the call (errors name the storage path, never the resolved one).
pub trait PathPolicy {
    fn resolve(&self, path: &str, access: Access) -> StorageResult<PathBuf>;

    /// For a confining policy: the directory `path` must stay beneath and the path
    /// relative to it, used by every storage call in place of [`Self::resolve`]'s path
    /// (cap-std resolves it, following no symlink that leads out). `None` (the default):
    /// the resolved path is opened as it is, symlinks followed.
    fn beneath(&self, _path: &str, _access: Access) -> Option<StorageResult<Beneath>> {
        None
    }

    /// Asked once when cap-std refused the place [`Self::beneath`] gave as leading out of
    /// its directory: cap-std follows no absolute symlink, even one pointing back inside,
    /// nor one into another allowed directory. The policy may place the path again from
    /// its fully resolved form (symlink-free, so nothing is left to follow), or keep the
    /// refusal (`None`, the default).
    fn beneath_resolved(&self, _path: &str, _access: Access) -> Option<StorageResult<Beneath>> {
        None
    }

    /// Whether a file with more than one hard link is refused
    /// ([`crate::storage::single_link`]): another name of it may be outside the places
    /// this policy allows. `false` (the default): any file is read and written.
    fn single_link(&self) -> bool {
        false
    }
}

/// Paths as given: absolute, or relative to the process's working directory.
#[derive(Debug, Default, Clone, Copy)]
pub struct AsGiven;

impl PathPolicy for AsGiven {
    fn resolve(&self, path: &str, _access: Access) -> StorageResult<PathBuf> {
        Ok(PathBuf::from(path))
    }
}

/// `std::fs` storage, its paths resolved by a [`PathPolicy`] (by default [`AsGiven`]); its
/// environment is the [`SystemEnv`].
#[derive(Debug, Default, Clone)]
pub struct FsStorage<P = AsGiven> {
    policy: P,
    env: SystemEnv,
}

impl FsStorage {
    /// Paths as given.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<P: PathPolicy> FsStorage<P> {
    /// Paths resolved by `policy`.
    pub fn with_policy(policy: P) -> Self {
        FsStorage {
            policy,
            env: SystemEnv::default(),
        }
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The file `path` names, or the policy's refusal.
    pub fn resolve(&self, path: &str, access: Access) -> StorageResult<PathBuf> {
        self.policy.resolve(path, access)
    }

    /// The regular file `path`, open for reading (the CLI's chunked reader).
    pub fn open(&self, path: &str) -> StorageResult<fs::File> {
        self.open_regular(path, Access::Read, OpenMode::Read)
    }

    /// Where `path` is: beneath a directory handle for a confining policy, else a path.
    fn place(&self, path: &str, access: Access) -> StorageResult<Place> {
        match self.policy.beneath(path, access) {
            Some(b) => b.map(Place::Beneath),
            None => self.resolve(path, access).map(Place::Path),
        }
    }

    /// `op` on `path` beneath `b`; once more on the policy's resolved place when cap-std
    /// refused the path as leading out ([`PathPolicy::beneath_resolved`]).
    fn beneath_op<T>(
        &self,
        path: &str,
        access: Access,
        b: Beneath,
        op: impl Fn(&Beneath) -> StorageResult<T>,
    ) -> StorageResult<T> {
        match op(&b) {
            Err(e) if beneath::led_out(&e) => match self.policy.beneath_resolved(path, access) {
                // Placed again, or the refusal that says what led out.
                Some(Ok(again)) => op(&again),
                Some(Err(_)) | None => Err(e),
            },
            other => other,
        }
    }

    /// `on_beneath` beneath a confining policy's directory handle (placed again once if
    /// cap-std refused the path as leading out), else `on_path` on the resolved path.
    fn at<T>(
        &self,
        path: &str,
        access: Access,
        on_beneath: impl Fn(&Beneath) -> StorageResult<T>,
        on_path: impl FnOnce(PathBuf) -> StorageResult<T>,
    ) -> StorageResult<T> {
        match self.place(path, access)? {
            Place::Beneath(b) => self.beneath_op(path, access, b, on_beneath),
            Place::Path(p) => on_path(p),
        }
    }

    /// The regular file `path` opened for `mode`, never blocking on a FIFO or a device;
    /// anything but a regular file is refused, and so is a file with several names when
    /// the policy says so ([`PathPolicy::single_link`]), before anything is written.
    fn open_regular(&self, path: &str, access: Access, mode: OpenMode) -> StorageResult<fs::File> {
        let file = self.at(
            path,
            access,
            |b| beneath::open(&b.dir, &b.rel, mode, path),
            |p| plain::open(&p, mode, path),
        )?;
        #[cfg(unix)]
        if self.policy.single_link() {
            use std::os::unix::fs::MetadataExt;
            let links = file.metadata().map_err(|e| io_error(path, e))?.nlink();
            crate::storage::single_link(path, links)?;
        }
        if let OpenMode::Write = mode {
            // Truncated only now, once the file is known to be one we may write.
            file.set_len(0).map_err(|e| io_error(path, e))?;
        }
        Ok(file)
    }
}

/// A storage path as a policy places it.
enum Place {
    Path(PathBuf),
    Beneath(Beneath),
}

/// `file` if it is a regular file.
fn regular(file: fs::File, path: &str) -> StorageResult<fs::File> {
    match file.metadata() {
        Ok(meta) if meta.is_file() => Ok(file),
        Ok(_) => Err(StorageError::not_regular(path)),
        Err(e) => Err(io_error(path, e)),
    }
}

/// How [`FsStorage::open_regular`] opens a file.
#[derive(Debug, Clone, Copy)]
enum OpenMode {
    Read,
    /// Create, or truncate (after the open: [`FsStorage::open_regular`]).
    Write,
    /// Create, or append at the end.
    Append,
}

impl OpenMode {
    fn options(self) -> fs::OpenOptions {
        let mut o = fs::OpenOptions::new();
        match self {
            OpenMode::Read => o.read(true),
            // Not truncated here: `open_regular` does it once the file passed its checks.
            OpenMode::Write => o.write(true).create(true).truncate(false),
            OpenMode::Append => o.append(true).create(true),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Opening a FIFO blocks until the other end is opened; a device may too.
            o.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
        }
        o
    }
}

/// [`io_error`] for a failed open: `ENXIO` (a FIFO without a reader opened for writing
/// without blocking, a socket, a device without its device) is a file that is not regular.
fn open_error(path: &str, e: io::Error) -> StorageError {
    #[cfg(unix)]
    if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) {
        return StorageError::not_regular(path);
    }
    io_error(path, e)
}

/// Files at least this large are read by several threads at once: most of the time of
/// reading a large session into a fresh buffer goes to page faults, which then run on
/// every core.
const PARALLEL_READ_BYTES: usize = 16 << 20;

#[cfg(not(unix))]
fn read_parallel(_file: &fs::File, _len: usize) -> io::Result<Vec<u8>> {
    unreachable!("only unix reads in parallel")
}

#[cfg(unix)]
fn read_parallel(file: &fs::File, len: usize) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let mut buf = vec![0u8; len];
    advise_huge_pages(&mut buf);
    let part = len.div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = buf
            .chunks_mut(part)
            .enumerate()
            .map(|(i, chunk)| {
                scope.spawn(move || -> io::Result<()> {
                    let mut offset = (i * part) as u64;
                    let mut rest = chunk;
                    while !rest.is_empty() {
                        let n = file.read_at(rest, offset)?;
                        if n == 0 {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "file shrank while being read",
                            ));
                        }
                        offset += n as u64;
                        rest = &mut rest[n..];
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(io::Error::other("reader thread panicked")))
        })
    })?;
    // A file that grew meanwhile: take the rest too.
    let mut tail = Vec::new();
    let mut f = file;
    use std::io::Seek;
    f.seek(io::SeekFrom::Start(len as u64))?;
    f.read_to_end(&mut tail)?;
    buf.extend_from_slice(&tail);
    Ok(buf)
}

/// Ask Linux to back a large, still untouched buffer with transparent huge pages: filling
/// it then takes one page fault per 2 MiB instead of one per 4 KiB, and freeing it is
/// cheaper too. Only a hint (machines with THP set to `never` simply ignore it).
#[cfg(target_os = "linux")]
fn advise_huge_pages(buf: &mut [u8]) {
    const HUGE: usize = 2 << 20;
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    let start = (buf.as_mut_ptr() as usize).next_multiple_of(HUGE);
    let end = (buf.as_mut_ptr() as usize + buf.len()) / HUGE * HUGE;
    if end > start {
        // SAFETY: [start, end) lies inside `buf`, which we own; MADV_HUGEPAGE changes
        // how the range is backed, never its contents.
        unsafe {
            madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_buf: &mut [u8]) {}

/// A whole open file, read the fast way for large files (huge pages, several threads).
fn read_file(mut file: fs::File) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len() as usize;
    if len < PARALLEL_READ_BYTES || cfg!(not(unix)) {
        let mut buf = Vec::with_capacity(len);
        file.read_to_end(&mut buf)?;
        return Ok(buf);
    }
    read_parallel(&file, len)
}

/// Map an io::Error to the port's error, keeping not-found distinct.
pub fn io_error(path: &str, e: io::Error) -> StorageError {
    match e.kind() {
        io::ErrorKind::NotFound => StorageError::NotFound(path.to_string()),
        io::ErrorKind::AlreadyExists => StorageError::AlreadyExists(path.to_string()),
        io::ErrorKind::PermissionDenied => StorageError::PermissionDenied(path.to_string()),
        _ => StorageError::Other(format!("{e}: {path}")),
    }
}

fn mtime_ms(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// [`FileStat::id`](crate::storage::FileStat::id): device and inode (none on Windows).
fn file_id(meta: &fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Best-effort fsync of a directory (makes a create or rename durable).
fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// FIFOs, sockets and devices: no storage reads them, so listings leave them out.
#[cfg(unix)]
fn is_special(t: fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    t.is_fifo() || t.is_socket() || t.is_char_device() || t.is_block_device()
}

#[cfg(not(unix))]
fn is_special(_t: fs::FileType) -> bool {
    false
}

/// Up to `len` bytes at `offset` of an open file: short at the end of the file, empty
/// past it. The buffer is sized by what the file holds there (a huge `len` on a small file
/// allocates only that) and filled without being zeroed first. Moves the file's cursor.
pub fn read_at(file: &fs::File, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Seek;
    let size = file.metadata()?.len();
    let want = len.min(size.saturating_sub(offset));
    if want == 0 {
        return Ok(Vec::new()); // at or past the end: nothing to seek to
    }
    let mut buf = Vec::with_capacity(want as usize);
    let mut f = file;
    f.seek(std::io::SeekFrom::Start(offset))?;
    f.take(want).read_to_end(&mut buf)?;
    Ok(buf)
}

impl<P: PathPolicy> Storage for FsStorage<P> {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        read_file(self.open(path)?).map_err(|e| io_error(path, e))
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        let file = self.open(path)?;
        let mut buf = Vec::with_capacity(max_bytes.min(1 << 20) as usize);
        file.take(max_bytes)
            .read_to_end(&mut buf)
            .map_err(|e| io_error(path, e))?;
        Ok(buf)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        let file = self.open(path)?;
        read_at(&file, offset, len).map_err(|e| io_error(path, e))
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let mut file = self.open_regular(path, Access::Write, OpenMode::Write)?;
        file.write_all(data).map_err(|e| io_error(path, e))
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let mut file = self.open_regular(path, Access::Write, OpenMode::Append)?;
        file.write_all(data).map_err(|e| io_error(path, e))
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        match (
            self.place(from, Access::Write)?,
            self.place(to, Access::Write)?,
        ) {
            (Place::Beneath(s), Place::Beneath(d)) => {
                match beneath::rename((&s.dir, &s.rel), (&d.dir, &d.rel), from) {
                    Err(e) if beneath::led_out(&e) => {
                        let again = |p: &str, b: Beneath| match self
                            .policy
                            .beneath_resolved(p, Access::Write)
                        {
                            Some(Ok(again)) => again,
                            Some(Err(_)) | None => b,
                        };
                        let (s, d) = (again(from, s), again(to, d));
                        beneath::rename((&s.dir, &s.rel), (&d.dir, &d.rel), from)
                    }
                    other => other,
                }
            }
            (Place::Path(src), Place::Path(dst)) => plain::rename(&src, &dst, from),
            _ => Err(StorageError::Other(format!(
                "{from} -> {to}: one path is confined, the other not"
            ))),
        }
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        self.at(
            path,
            Access::Write,
            |b| beneath::remove(&b.dir, &b.rel, false, path),
            |p| plain::remove(&p, false, path),
        )
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        // A symlink cap-std will not follow (it leads out, or is absolute): placed again
        // by the policy to tell whether it names a FIFO, a socket or a device.
        let special_link = |name: &str| {
            let child = format!("{}/{name}", path.trim_end_matches('/'));
            let Ok(Place::Beneath(c)) = self.place(&child, Access::Read) else {
                return false;
            };
            self.beneath_op(&child, Access::Read, c, |c| {
                beneath::special(&c.dir, &c.rel, &child)
            }) == Ok(true)
        };
        self.at(
            path,
            Access::Read,
            |b| beneath::list_dir(&b.dir, &b.rel, path, &special_link),
            |p| plain::list_dir(&p, path),
        )
    }

    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        self.at(
            path,
            Access::Read,
            |b| beneath::stat(&b.dir, &b.rel, path),
            |p| plain::stat(&p, path),
        )
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        self.at(
            path,
            Access::Write,
            |b| beneath::mkdir_all(&b.dir, &b.rel, path),
            |p| plain::mkdir_all(&p, path),
        )
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        self.at(
            path,
            Access::Read,
            |b| beneath::fsync(&b.dir, &b.rel, path),
            |p| plain::fsync(&p, path),
        )
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        self.at(
            path,
            Access::Write,
            |b| beneath::remove(&b.dir, &b.rel, true, path),
            |p| plain::remove(&p, true, path),
        )
    }

    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        self.at(
            path,
            Access::Write,
            |b| beneath::create_new(&b.dir, &b.rel, data, path),
            |p| plain::create_new(&p, data, path),
        )
    }

    fn env(&self) -> &dyn Environment {
        &self.env
    }
}

/// This machine: the system clock, entropy from the OS, and processes seen in `/proc`.
#[derive(Debug, Default, Clone)]
pub struct SystemEnv {
    /// Seeded from the OS once; a counter and the clock make successive values distinct.
    seed: RandomState,
    seq: Cell<u64>,
}

impl Environment for SystemEnv {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }

    fn random_u64(&self) -> u64 {
        let n = self.seq.get().wrapping_add(1);
        self.seq.set(n);
        let mut h = self.seed.build_hasher();
        h.write_u64(n);
        h.write_i64(self.now_ms());
        h.finish()
    }

    /// The process id and this machine's host name: `/proc/sys/kernel/hostname`, else
    /// `/etc/hostname`, else `unknown`.
    fn process_identity(&self) -> ProcessIdentity {
        let host = ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .filter_map(|f| fs::read_to_string(f).ok())
            .map(|s| s.trim().to_string())
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| ProcessIdentity::unknown().host);
        ProcessIdentity {
            pid: std::process::id(),
            host,
        }
    }

    /// Whether `/proc/<pid>` exists (a live or zombie process); `None` without a procfs
    /// to ask (not Linux, or not mounted).
    fn process_alive(&self, pid: u32) -> Option<bool> {
        if !cfg!(target_os = "linux") || !Path::new("/proc/self").exists() {
            return None;
        }
        if pid == 0 {
            return Some(false);
        }
        Some(Path::new(&format!("/proc/{pid}")).exists())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("xcsh-fs-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn path(&self, name: &str) -> String {
            self.0.join(name).to_str().expect("utf-8").to_string()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn create_new_creates_once_then_reports_already_exists() {
        let dir = TempDir::new("create-new");
        let s = FsStorage::new();
        let path = dir.path("lock");
        s.create_new(&path, b"first").expect("create");
        assert_eq!(fs::read(&path).expect("read"), b"first");
        match s.create_new(&path, b"second") {
            Err(StorageError::AlreadyExists(p)) => assert_eq!(p, path),
            other => panic!("expected already-exists, got {other:?}"),
        }
        assert_eq!(fs::read(&path).expect("read"), b"first", "overwritten");
        // A directory counts as existing too.
        fs::create_dir(dir.path("d")).expect("mkdir");
        assert!(matches!(
            s.create_new(&dir.path("d"), b""),
            Err(StorageError::AlreadyExists(_))
        ));
        // A missing parent is not-found, not created.
        assert!(matches!(
            s.create_new(&dir.path("no/such/lock"), b""),
            Err(StorageError::NotFound(_))
        ));
    }

    #[test]
    fn a_policy_resolves_every_path_and_errors_name_the_storage_path() {
        struct Under(PathBuf);
        impl PathPolicy for Under {
            fn resolve(&self, path: &str, access: Access) -> StorageResult<PathBuf> {
                if access == Access::Write && path.contains("ro") {
                    return Err(StorageError::PermissionDenied(path.to_string()));
                }
                Ok(self.0.join(path.trim_start_matches('/')))
            }
        }
        let dir = TempDir::new("policy");
        let s = FsStorage::with_policy(Under(dir.0.clone()));
        s.mkdir_all("/a").unwrap();
        s.write("/a/f", b"x").unwrap();
        assert_eq!(fs::read(dir.0.join("a/f")).unwrap(), b"x");
        assert_eq!(s.read("/a/f").unwrap(), b"x");
        assert_eq!(
            s.read("/a/missing").unwrap_err(),
            StorageError::NotFound("/a/missing".into())
        );
        assert!(matches!(
            s.write("/ro", b"x"),
            Err(StorageError::PermissionDenied(_))
        ));
        assert!(!dir.0.join("ro").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_policy_refusing_hard_links_neither_reads_truncates_nor_appends_to_one() {
        struct SingleLink(bool);
        impl PathPolicy for SingleLink {
            fn resolve(&self, path: &str, _access: Access) -> StorageResult<PathBuf> {
                Ok(PathBuf::from(path))
            }
            fn beneath(&self, path: &str, _access: Access) -> Option<StorageResult<Beneath>> {
                self.0.then(|| {
                    Ok(Beneath {
                        dir: Arc::new(open_dir(Path::new("/")).expect("open /")),
                        rel: PathBuf::from(path.trim_start_matches('/')),
                    })
                })
            }
            fn single_link(&self) -> bool {
                true
            }
        }
        let dir = TempDir::new("single-link");
        let outside = dir.path("outside.jsonl");
        fs::write(&outside, b"outside\n").unwrap();
        let link = dir.path("s.jsonl");
        fs::hard_link(&outside, &link).unwrap();
        // Both ways of opening: beneath a directory handle, and as given.
        for storage in [
            FsStorage::with_policy(SingleLink(true)),
            FsStorage::with_policy(SingleLink(false)),
        ] {
            for result in [
                storage.read(&link).map(drop),
                storage.read_prefix(&link, 4).map(drop),
                storage.open(&link).map(drop),
                storage.write(&link, b"x"),
                storage.append(&link, b"x"),
            ] {
                match result {
                    Err(StorageError::PermissionDenied(m)) => assert_eq!(
                        m,
                        format!(
                            "{link} (a hard link: the file has 2 names, one may be outside the \
                             allowed directories; not read or written)"
                        )
                    ),
                    other => panic!("expected permission denied, got {other:?}"),
                }
            }
            assert_eq!(fs::read(&outside).unwrap(), b"outside\n", "written through");
        }
        // One name again: read and written as any file.
        fs::remove_file(&outside).unwrap();
        let storage = FsStorage::with_policy(SingleLink(true));
        storage.write(&link, b"mine\n").unwrap();
        storage.append(&link, b"more\n").unwrap();
        assert_eq!(storage.read(&link).unwrap(), b"mine\nmore\n");
    }

    #[test]
    fn large_files_are_read_whole_by_several_threads() {
        let dir = std::env::temp_dir().join(format!("xcsh-fs-read-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.jsonl");
        let data: Vec<u8> = (0..PARALLEL_READ_BYTES + 12_345)
            .map(|i| (i % 251) as u8)
            .collect();
        fs::write(&path, &data).unwrap();
        let read = FsStorage::new().read(path.to_str().unwrap()).unwrap();
        assert!(read == data, "same bytes in the same order");
        fs::remove_dir_all(&dir).unwrap();
    }
}
