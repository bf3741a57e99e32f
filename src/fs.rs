//! The real filesystem behind the storage port (native builds only).

use crate::storage::{DirEntry, FileStat, Storage, StorageError, StorageResult};
use std::fs;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// `std::fs` storage. Paths are used as given (absolute or relative to the process cwd);
/// a confined variant for untrusted callers lives in the CLI host.
#[derive(Debug, Default, Clone)]
pub struct FsStorage {
    seq: std::cell::Cell<u64>,
}

impl FsStorage {
    pub fn new() -> Self {
        Self::default()
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

/// A whole file, read the fast way for large files (huge pages, several threads); also
/// used by the CLI's confined storage.
pub fn read_file(path: impl AsRef<std::path::Path>) -> io::Result<Vec<u8>> {
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

impl Storage for FsStorage {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        read_file(path).map_err(|e| io_error(path, e))
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        let file = fs::File::open(path).map_err(|e| io_error(path, e))?;
        let mut buf = Vec::with_capacity(max_bytes.min(1 << 20) as usize);
        file.take(max_bytes)
            .read_to_end(&mut buf)
            .map_err(|e| io_error(path, e))?;
        Ok(buf)
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        fs::write(path, data).map_err(|e| io_error(path, e))
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| io_error(path, e))?;
        file.write_all(data).map_err(|e| io_error(path, e))
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        fs::rename(from, to).map_err(|e| io_error(from, e))
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        fs::remove_file(path).map_err(|e| io_error(path, e))
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        let mut out = Vec::new();
        for item in fs::read_dir(path).map_err(|e| io_error(path, e))? {
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
        let meta = fs::metadata(path).map_err(|e| io_error(path, e))?;
        Ok(FileStat {
            size: meta.len(),
            mtime_ms: mtime_ms(&meta),
            is_dir: meta.is_dir(),
        })
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        fs::create_dir_all(path).map_err(|e| io_error(path, e))
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        let file = fs::OpenOptions::new()
            .read(true)
            .open(path)
            .map_err(|e| io_error(path, e))?;
        file.sync_all().map_err(|e| io_error(path, e))?;
        // Make a rename or a new file durable too: sync the parent directory (best effort).
        if let Some(dir) = PathBuf::from(path).parent() {
            if let Ok(d) = fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| io_error(path, e))?;
        file.write_all(data).map_err(|e| io_error(path, e))?;
        file.sync_all().map_err(|e| io_error(path, e))
    }

    fn process_identity(&self) -> crate::storage::ProcessIdentity {
        let host = fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| fs::read_to_string("/etc/hostname"))
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        crate::storage::ProcessIdentity {
            pid: std::process::id(),
            host,
        }
    }

    fn process_alive(&self, pid: u32) -> Option<bool> {
        // Linux: a live (or zombie) process has /proc/<pid>.
        if !std::path::Path::new("/proc/self").exists() {
            return None;
        }
        Some(std::path::Path::new(&format!("/proc/{pid}")).exists())
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        fs::remove_dir(path).map_err(|e| io_error(path, e))
    }

    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }

    fn random_u64(&self) -> u64 {
        // std's RandomState is seeded from the OS; mixing in time and a counter keeps
        // successive values distinct without another dependency.
        use std::hash::{BuildHasher, Hasher};
        let n = self.seq.get().wrapping_add(1);
        self.seq.set(n);
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_i64(self.now_ms());
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
