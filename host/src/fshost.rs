//! The `xcsh:session/storage` imports over the real filesystem, confined to the roots.

use crate::bindings::xcsh::session::storage::{DirEntry, FileStat, Host, StorageError};
use crate::confine::{Denied, Roots};
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The store data: the roots, whether the command may write, and entropy state.
pub struct FsHost {
    roots: Roots,
    writable: bool,
    seed: RandomState,
    seq: u64,
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
        }
    }

    /// The host path of a guest path, or `permission-denied`.
    fn path(&self, guest: &str) -> R<PathBuf> {
        self.roots.check(guest).map_err(|e| match e {
            Denied::Io(io) => io_err(guest, io),
            other => StorageError::PermissionDenied(format!("{guest} ({other})")),
        })
    }

    /// Like [`Self::path`], for an operation that modifies the filesystem.
    fn write_path(&self, guest: &str) -> R<PathBuf> {
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

impl Host for FsHost {
    fn read(&mut self, path: String) -> R<Vec<u8>> {
        let p = self.path(&path)?;
        fs::read(&p).map_err(|e| io_err(&path, e))
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
