//! The file operations of a storage whose policy names plain paths (no confinement, or
//! one that only checks them): each path opened as it is, symlinks followed. The twin of
//! [`super::beneath`], which resolves every path beneath a directory handle.

use super::{file_id, io_error, is_special, mtime_ms, open_error, regular, sync_dir, OpenMode};
use crate::storage::{DirEntry, FileStat, StorageResult};
use std::fs;
use std::io::Write;
use std::path::Path;

/// The file `p` opened for `mode`, never blocking, if it is a regular file.
pub(super) fn open(p: &Path, mode: OpenMode, path: &str) -> StorageResult<fs::File> {
    let file = mode.options().open(p).map_err(|e| open_error(path, e))?;
    regular(file, path)
}

/// `O_CREAT|O_EXCL` (atomic against a concurrent creator, and never following a symlink
/// planted at the final component), write, fsync; the file is removed again when writing
/// fails.
pub(super) fn create_new(p: &Path, data: &[u8], path: &str) -> StorageResult<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(|e| io_error(path, e))?;
    let written = file.write_all(data).and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let _ = fs::remove_file(p);
        return Err(io_error(path, e));
    }
    if let Some(dir) = p.parent() {
        sync_dir(dir);
    }
    Ok(())
}

/// Flush the file, then its directory (a rename or a new file made durable too).
pub(super) fn fsync(p: &Path, path: &str) -> StorageResult<()> {
    // Not blocking on a FIFO (whatever it is, only a regular file has data to flush).
    let file = OpenMode::Read
        .options()
        .open(p)
        .map_err(|e| open_error(path, e))?;
    file.sync_all().map_err(|e| io_error(path, e))?;
    if let Some(dir) = p.parent() {
        sync_dir(dir);
    }
    Ok(())
}

pub(super) fn mkdir_all(p: &Path, path: &str) -> StorageResult<()> {
    fs::create_dir_all(p).map_err(|e| io_error(path, e))
}

pub(super) fn rename(from: &Path, to: &Path, path: &str) -> StorageResult<()> {
    fs::rename(from, to).map_err(|e| io_error(path, e))
}

/// `unlink`, or `rmdir` when `is_dir` is set.
pub(super) fn remove(p: &Path, is_dir: bool, path: &str) -> StorageResult<()> {
    let removed = if is_dir {
        fs::remove_dir(p)
    } else {
        fs::remove_file(p)
    };
    removed.map_err(|e| io_error(path, e))
}

pub(super) fn stat(p: &Path, path: &str) -> StorageResult<FileStat> {
    let meta = fs::metadata(p).map_err(|e| io_error(path, e))?;
    Ok(FileStat {
        size: meta.len(),
        mtime_ms: mtime_ms(&meta),
        is_dir: meta.is_dir(),
        id: file_id(&meta),
    })
}

/// The directories, files and symlinks in `dir` (FIFOs, sockets and devices, and
/// symlinks to them, are left out: no storage reads them).
pub(super) fn list_dir(dir: &Path, path: &str) -> StorageResult<Vec<DirEntry>> {
    let mut out = Vec::new();
    for item in fs::read_dir(dir).map_err(|e| io_error(path, e))? {
        let item = item.map_err(|e| io_error(path, e))?;
        let Ok(kind) = item.file_type() else {
            continue;
        };
        if is_special(kind)
            || (kind.is_symlink()
                && fs::metadata(item.path()).is_ok_and(|m| is_special(m.file_type())))
        {
            continue;
        }
        out.push(DirEntry {
            name: item.file_name().to_string_lossy().into_owned(),
            is_dir: kind.is_dir(),
        });
    }
    out.sort();
    Ok(out)
}
