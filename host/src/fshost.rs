//! The `xcsh:session/storage` imports over the real filesystem, confined to the roots.

use crate::bindings::xcsh::session::storage::{DirEntry, FileStat, Host, HostReader, StorageError};
use crate::confine::{Denied, Roots};
use crate::history::HistoryDbs;
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use wasmtime::component::{Resource, ResourceTable};

/// A file the component reads in pieces (`open-reader`): the guest path (for errors)
/// and the open file.
pub struct Reader {
    path: String,
    file: fs::File,
}

/// The store data: the roots, whether the command may write, entropy state, and the
/// open history databases (the `history` imports, in `history.rs`).
pub struct FsHost {
    roots: Roots,
    writable: bool,
    seed: RandomState,
    seq: u64,
    pub(crate) history: HistoryDbs,
    /// The open readers.
    table: ResourceTable,
}

type R<T> = Result<T, StorageError>;

/// Map an io::Error to the port's error, keeping not-found distinct (like the core's
/// `FsStorage`).
fn io_err(path: &str, e: io::Error) -> StorageError {
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

/// This machine's host name: `/proc/sys/kernel/hostname`, else `/etc/hostname`, else
/// `"unknown"` (the core's default).
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|f| fs::read_to_string(f).ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Whether `pid` runs on this machine: `/proc/<pid>` exists. `None` when there is no
/// procfs to ask (not Linux, or not mounted).
fn process_alive(pid: u32) -> Option<bool> {
    if !cfg!(target_os = "linux") || !Path::new("/proc/self").exists() {
        return None;
    }
    if pid == 0 {
        return Some(false);
    }
    Some(Path::new(&format!("/proc/{pid}")).exists())
}

/// A blob name must be one plain path component.
fn valid_blob_name(hash: &str) -> bool {
    !hash.is_empty() && hash != "." && hash != ".." && !hash.contains(['/', '\\', '\0'])
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

impl FsHost {
    pub fn new(roots: Roots, writable: bool) -> FsHost {
        FsHost {
            roots,
            writable,
            seed: RandomState::new(),
            seq: 0,
            history: HistoryDbs::new(),
            table: ResourceTable::new(),
        }
    }

    /// The host path of a guest path, or `permission-denied`.
    pub(crate) fn path(&self, guest: &str) -> R<PathBuf> {
        self.roots.check(guest).map_err(|e| match e {
            Denied::Io(io) => io_err(guest, io),
            other => StorageError::PermissionDenied(format!("{guest} ({other})")),
        })
    }

    /// Like [`Self::path`], for an operation that modifies the filesystem.
    pub(crate) fn write_path(&self, guest: &str) -> R<PathBuf> {
        if !self.writable {
            return Err(StorageError::PermissionDenied(format!(
                "{guest} (this command is read-only)"
            )));
        }
        self.path(guest)
    }

    fn copy_tree(&mut self, from: &str, to: &str) -> R<()> {
        let dst = self.write_path(to)?;
        fs::create_dir_all(&dst).map_err(|e| io_err(to, e))?;
        for entry in Host::list_dir(self, from.to_string())? {
            let (src_guest, dst_guest) = (join(from, &entry.name), join(to, &entry.name));
            if entry.is_dir {
                self.copy_tree(&src_guest, &dst_guest)?;
            } else {
                // Symlinks are listed as files: reading one goes through the check again.
                let src = self.path(&src_guest)?;
                let bytes = fs::read(&src).map_err(|e| io_err(&src_guest, e))?;
                let dst = self.write_path(&dst_guest)?;
                fs::write(&dst, bytes).map_err(|e| io_err(&dst_guest, e))?;
            }
        }
        Ok(())
    }
}

/// Largest piece handed to the component in one `reader.read`.
const MAX_READ_CHUNK: u64 = 64 << 20;

impl HostReader for FsHost {
    fn read(&mut self, reader: Resource<Reader>, max_bytes: u64) -> R<Vec<u8>> {
        let reader = self
            .table
            .get_mut(&reader)
            .map_err(|e| StorageError::Other(format!("reader: {e}")))?;
        let want = max_bytes.min(MAX_READ_CHUNK) as usize;
        let mut buf = Vec::with_capacity(want);
        (&mut reader.file)
            .take(want as u64)
            .read_to_end(&mut buf)
            .map_err(|e| io_err(&reader.path, e))?;
        Ok(buf)
    }

    fn drop(&mut self, reader: Resource<Reader>) -> wasmtime::Result<()> {
        self.table.delete(reader)?;
        Ok(())
    }
}

impl Host for FsHost {
    fn open_reader(&mut self, path: String) -> R<Resource<Reader>> {
        let p = self.path(&path)?;
        let file = fs::File::open(&p).map_err(|e| io_err(&path, e))?;
        self.table
            .push(Reader { path, file })
            .map_err(|e| StorageError::Other(format!("reader: {e}")))
    }

    fn read(&mut self, path: String) -> R<Vec<u8>> {
        let p = self.path(&path)?;
        read_file(&p).map_err(|e| io_err(&path, e))
    }

    fn read_prefix(&mut self, path: String, max_bytes: u64) -> R<Vec<u8>> {
        let p = self.path(&path)?;
        let file = fs::File::open(&p).map_err(|e| io_err(&path, e))?;
        let mut buf = Vec::with_capacity(max_bytes.min(1 << 20) as usize);
        file.take(max_bytes)
            .read_to_end(&mut buf)
            .map_err(|e| io_err(&path, e))?;
        Ok(buf)
    }

    fn write(&mut self, path: String, data: Vec<u8>) -> R<()> {
        let p = self.write_path(&path)?;
        fs::write(&p, data).map_err(|e| io_err(&path, e))
    }

    fn append(&mut self, path: String, data: Vec<u8>) -> R<()> {
        let p = self.write_path(&path)?;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .map_err(|e| io_err(&path, e))?;
        file.write_all(&data).map_err(|e| io_err(&path, e))
    }

    fn rename(&mut self, from: String, to: String) -> R<()> {
        let src = self.write_path(&from)?;
        let dst = self.write_path(&to)?;
        fs::rename(&src, &dst).map_err(|e| io_err(&from, e))
    }

    fn unlink(&mut self, path: String) -> R<()> {
        let p = self.write_path(&path)?;
        fs::remove_file(&p).map_err(|e| io_err(&path, e))
    }

    fn list_dir(&mut self, path: String) -> R<Vec<DirEntry>> {
        let p = self.path(&path)?;
        let mut out = Vec::new();
        for item in fs::read_dir(&p).map_err(|e| io_err(&path, e))? {
            let item = item.map_err(|e| io_err(&path, e))?;
            let is_dir = item.file_type().map(|t| t.is_dir()).unwrap_or(false);
            out.push(DirEntry {
                name: item.file_name().to_string_lossy().into_owned(),
                is_dir,
            });
        }
        out.sort_by(|a, b| (&a.name, a.is_dir).cmp(&(&b.name, b.is_dir)));
        Ok(out)
    }

    fn stat(&mut self, path: String) -> R<FileStat> {
        let p = self.path(&path)?;
        let meta = fs::metadata(&p).map_err(|e| io_err(&path, e))?;
        Ok(FileStat {
            size: meta.len(),
            mtime_ms: mtime_ms(&meta),
            is_dir: meta.is_dir(),
        })
    }

    fn mkdir_all(&mut self, path: String) -> R<()> {
        let p = self.write_path(&path)?;
        fs::create_dir_all(&p).map_err(|e| io_err(&path, e))
    }

    fn fsync(&mut self, path: String) -> R<()> {
        let p = self.path(&path)?;
        let file = fs::File::open(&p).map_err(|e| io_err(&path, e))?;
        file.sync_all().map_err(|e| io_err(&path, e))?;
        if let Some(dir) = p.parent() {
            sync_dir(dir);
        }
        Ok(())
    }

    fn rmdir(&mut self, path: String) -> R<()> {
        let p = self.write_path(&path)?;
        fs::remove_dir(&p).map_err(|e| io_err(&path, e))
    }

    fn blob_put(&mut self, blobs_dir: String, hash: String, data: Vec<u8>) -> R<()> {
        if !valid_blob_name(&hash) {
            return Err(StorageError::Other(format!("invalid blob name: {hash:?}")));
        }
        let guest = join(&blobs_dir, &hash);
        let target = self.write_path(&guest)?;
        if target.exists() {
            return Ok(());
        }
        let dir = self.write_path(&blobs_dir)?;
        fs::create_dir_all(&dir).map_err(|e| io_err(&blobs_dir, e))?;
        let tmp_name = format!(".{hash}.{:08x}.tmp", self.random_u64() as u32);
        let tmp = dir.join(&tmp_name);
        let written = fs::File::create_new(&tmp).and_then(|mut f| {
            f.write_all(&data)?;
            f.sync_all()
        });
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(io_err(&join(&blobs_dir, &tmp_name), e));
        }
        // Content-addressed: when another writer got there first, the bytes are the same.
        let result = if target.exists() {
            Ok(())
        } else {
            fs::rename(&tmp, &target)
        };
        let _ = fs::remove_file(&tmp);
        result.map_err(|e| io_err(&guest, e))?;
        sync_dir(&dir);
        Ok(())
    }

    fn blob_get(&mut self, blobs_dir: String, hash: String) -> R<Option<Vec<u8>>> {
        if !valid_blob_name(&hash) {
            return Err(StorageError::Other(format!("invalid blob name: {hash:?}")));
        }
        let guest = join(&blobs_dir, &hash);
        let p = self.path(&guest)?;
        match fs::read(&p) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&guest, e)),
        }
    }

    fn copy_dir(&mut self, from: String, to: String) -> R<()> {
        self.copy_tree(&from, &to)
    }

    fn create_new(&mut self, path: String, data: Vec<u8>) -> R<()> {
        let p = self.write_path(&path)?;
        // O_CREAT|O_EXCL: atomic against a concurrent creator, and never follows a
        // symlink planted at the final component.
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
            .map_err(|e| io_err(&path, e))?;
        let written = file.write_all(&data).and_then(|()| file.sync_all());
        if let Err(e) = written {
            drop(file);
            let _ = fs::remove_file(&p);
            return Err(io_err(&path, e));
        }
        if let Some(dir) = p.parent() {
            sync_dir(dir);
        }
        Ok(())
    }

    fn process_identity(&mut self) -> (u32, String) {
        (std::process::id(), host_name())
    }

    fn process_alive(&mut self, pid: u32) -> Option<bool> {
        process_alive(pid)
    }

    fn now_ms(&mut self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }

    fn random_u64(&mut self) -> u64 {
        // RandomState is seeded from the OS once per process; a counter and the clock make
        // successive values distinct.
        self.seq = self.seq.wrapping_add(1);
        let mut h = self.seed.build_hasher();
        h.write_u64(self.seq);
        h.write_i64(self.now_ms());
        h.finish()
    }
}

/// A whole file into a buffer sized from its length; large buffers get transparent huge
/// pages (Linux), so filling them costs one page fault per 2 MiB instead of per 4 KiB.
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = fs::File::open(path)?;
    let len = file.metadata()?.len() as usize;
    let mut buf = Vec::with_capacity(len + 1);
    #[cfg(target_os = "linux")]
    if len >= 4 << 20 {
        const HUGE: usize = 2 << 20;
        let start = (buf.as_mut_ptr() as usize).next_multiple_of(HUGE);
        let end = (buf.as_mut_ptr() as usize + buf.capacity()) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside the buffer's allocation; the hint changes how
            // it is backed, not what it holds.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(writable: bool) -> (tempfile::TempDir, String, FsHost) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(tmp.path()).expect("canonical");
        let roots = Roots::new(&[&root]).expect("roots");
        let dir = root.to_str().expect("utf-8").to_string();
        (tmp, dir, FsHost::new(roots, writable))
    }

    #[test]
    fn create_new_creates_once_then_reports_already_exists() {
        let (_t, dir, mut h) = host(true);
        let path = format!("{dir}/lock");
        h.create_new(path.clone(), b"first".to_vec())
            .expect("create");
        assert_eq!(fs::read(&path).expect("read"), b"first");
        match h.create_new(path.clone(), b"second".to_vec()) {
            Err(StorageError::AlreadyExists(p)) => assert_eq!(p, path),
            other => panic!("expected already-exists, got {other:?}"),
        }
        assert_eq!(fs::read(&path).expect("read"), b"first", "overwritten");
        // A directory counts as existing too.
        fs::create_dir(format!("{dir}/d")).expect("mkdir");
        assert!(matches!(
            h.create_new(format!("{dir}/d"), Vec::new()),
            Err(StorageError::AlreadyExists(_))
        ));
        // A missing parent is not-found, not created.
        assert!(matches!(
            h.create_new(format!("{dir}/no/such/lock"), Vec::new()),
            Err(StorageError::NotFound(_))
        ));
    }

    #[test]
    fn create_new_is_confined_and_refused_by_read_only_commands() {
        let (_t, dir, mut h) = host(true);
        let outside = tempfile::tempdir().expect("tempdir");
        let target = outside.path().join("x");
        let denied = h.create_new(target.to_str().expect("utf-8").into(), b"x".to_vec());
        assert!(
            matches!(denied, Err(StorageError::PermissionDenied(_))),
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
            Err(StorageError::PermissionDenied(_))
        ));
        assert!(!Path::new(&path).exists());
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
