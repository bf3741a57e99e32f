//! The real filesystem behind the storage port (native builds only): [`FsStorage`] for
//! the file primitives, [`SystemEnv`] for the clock, entropy and processes.
//!
//! Every call first asks the storage's [`PathPolicy`] which file a storage path names:
//! [`AsGiven`] uses paths as they are; the CLI host plugs in its confinement (the allowed
//! roots, and a refusal of every write for read-only commands), so the file operations,
//! their error mapping and the fast large-file reads exist once, here.

use crate::storage::{
    DirEntry, Environment, FileStat, ProcessIdentity, Storage, StorageError, StorageResult,
};
use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

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

    /// `path` open for reading (the CLI's chunked reader).
    pub fn open(&self, path: &str) -> StorageResult<fs::File> {
        fs::File::open(self.resolve(path, Access::Read)?).map_err(|e| io_error(path, e))
    }
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

/// A whole file, read the fast way for large files (huge pages, several threads).
fn read_file(path: impl AsRef<std::path::Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref();
    let file = fs::File::open(path)?;
    let len = file.metadata()?.len() as usize;
    if len < PARALLEL_READ_BYTES || cfg!(not(unix)) {
        return fs::read(path);
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

/// Best-effort fsync of a directory (makes a create or rename durable).
fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

impl<P: PathPolicy> Storage for FsStorage<P> {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        read_file(self.resolve(path, Access::Read)?).map_err(|e| io_error(path, e))
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        let file = self.open(path)?;
        let mut buf = Vec::with_capacity(max_bytes.min(1 << 20) as usize);
        file.take(max_bytes)
            .read_to_end(&mut buf)
            .map_err(|e| io_error(path, e))?;
        Ok(buf)
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        fs::write(self.resolve(path, Access::Write)?, data).map_err(|e| io_error(path, e))
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.resolve(path, Access::Write)?)
            .map_err(|e| io_error(path, e))?;
        file.write_all(data).map_err(|e| io_error(path, e))
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        let src = self.resolve(from, Access::Write)?;
        let dst = self.resolve(to, Access::Write)?;
        fs::rename(src, dst).map_err(|e| io_error(from, e))
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        fs::remove_file(self.resolve(path, Access::Write)?).map_err(|e| io_error(path, e))
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        let mut out = Vec::new();
        let dir = self.resolve(path, Access::Read)?;
        for item in fs::read_dir(dir).map_err(|e| io_error(path, e))? {
            let item = item.map_err(|e| io_error(path, e))?;
            let is_dir = item.file_type().map(|t| t.is_dir()).unwrap_or(false);
            out.push(DirEntry {
                name: item.file_name().to_string_lossy().into_owned(),
                is_dir,
            });
        }
        out.sort();
        Ok(out)
    }

    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        let meta =
            fs::metadata(self.resolve(path, Access::Read)?).map_err(|e| io_error(path, e))?;
        Ok(FileStat {
            size: meta.len(),
            mtime_ms: mtime_ms(&meta),
            is_dir: meta.is_dir(),
        })
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        fs::create_dir_all(self.resolve(path, Access::Write)?).map_err(|e| io_error(path, e))
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        let p = self.resolve(path, Access::Read)?;
        let file = fs::File::open(&p).map_err(|e| io_error(path, e))?;
        file.sync_all().map_err(|e| io_error(path, e))?;
        // Make a rename or a new file durable too: sync the parent directory.
        if let Some(dir) = p.parent() {
            sync_dir(dir);
        }
        Ok(())
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        fs::remove_dir(self.resolve(path, Access::Write)?).map_err(|e| io_error(path, e))
    }

    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let p = self.resolve(path, Access::Write)?;
        // O_CREAT|O_EXCL: atomic against a concurrent creator, and never follows a
        // symlink planted at the final component.
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
            .map_err(|e| io_error(path, e))?;
        let written = file.write_all(data).and_then(|()| file.sync_all());
        if let Err(e) = written {
            drop(file);
            let _ = fs::remove_file(&p);
            return Err(io_error(path, e));
        }
        if let Some(dir) = p.parent() {
            sync_dir(dir);
        }
        Ok(())
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
