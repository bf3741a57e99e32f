//! The file operations of a confined storage
//! ([`PathPolicy::beneath`](super::PathPolicy::beneath)): every path is resolved by cap-std
//! beneath a directory handle. cap-std follows a symlink only while it stays beneath the
//! handle (one `openat2(RESOLVE_BENEATH)` where the kernel has it, else one component at a
//! time), so a directory or file replaced by a symlink that leads out makes the call fail;
//! it can never redirect it.

use super::{io_error, open_error, regular, OpenMode};
use crate::storage::{DirEntry, FileStat, StorageError, StorageResult};
use cap_std::fs::{Dir, FileType, Metadata, OpenOptions};
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The directory itself for an empty relative path.
fn here(rel: &Path) -> &Path {
    if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    }
}

/// What a path cap-std refused as leading out of its directory is reported as.
const LEADS_OUT: &str = "leads outside the allowed directory through a symlink; not followed";

/// Whether cap-std refused the call's path as leading out of its directory (a symlink
/// leaving it, or an absolute one, which cap-std never follows).
pub(super) fn led_out(e: &StorageError) -> bool {
    matches!(e, StorageError::PermissionDenied(m) if m.ends_with(&format!("({LEADS_OUT})")))
}

/// Whether an I/O error is cap-std's refusal of a path leading out (a permission error
/// of its own, without an OS error code).
fn escaped(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none()
}

/// cap-std's refusal of a path leading out, said so; anything else is mapped by `map`.
fn refused(path: &str, e: io::Error, map: fn(&str, io::Error) -> StorageError) -> StorageError {
    if escaped(&e) {
        return StorageError::PermissionDenied(format!("{path} ({LEADS_OUT})"));
    }
    map(path, e)
}

fn error(path: &str, e: io::Error) -> StorageError {
    refused(path, e, io_error)
}

/// Options that never block on a FIFO or a device (opening one waits for its other end).
fn nonblocking() -> OpenOptions {
    #[allow(unused_mut)]
    let mut o = OpenOptions::new();
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        o.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    o
}

/// The file `rel` opened for `mode`, never blocking, if it is a regular file.
pub(super) fn open(dir: &Dir, rel: &Path, mode: OpenMode, path: &str) -> StorageResult<fs::File> {
    let mut o = nonblocking();
    match mode {
        OpenMode::Read => o.read(true),
        // Not truncated here: `open_regular` does it once the file passed its checks.
        OpenMode::Write => o.write(true).create(true),
        OpenMode::Append => o.append(true).create(true),
    };
    let file = dir
        .open_with(here(rel), &o)
        .map_err(|e| refused(path, e, open_error))?;
    regular(file.into_std(), path)
}

/// `O_CREAT|O_EXCL`, write, fsync; the file is removed again when writing fails.
pub(super) fn create_new(dir: &Dir, rel: &Path, data: &[u8], path: &str) -> StorageResult<()> {
    let mut file = dir
        .open_with(rel, OpenOptions::new().write(true).create_new(true))
        .map_err(|e| error(path, e))?
        .into_std();
    if let Err(e) = file.write_all(data).and_then(|()| file.sync_all()) {
        drop(file);
        let _ = dir.remove_file(rel);
        return Err(io_error(path, e));
    }
    sync_parent(dir, rel);
    Ok(())
}

/// Flush the file, then its directory (best effort).
pub(super) fn fsync(dir: &Dir, rel: &Path, path: &str) -> StorageResult<()> {
    let file = dir
        .open_with(here(rel), nonblocking().read(true))
        .map_err(|e| refused(path, e, open_error))?;
    file.sync_all().map_err(|e| io_error(path, e))?;
    sync_parent(dir, rel);
    Ok(())
}

/// Best-effort fsync of the directory holding `rel` (makes a create or rename durable).
/// Opened for reading: the handle cap-std's `open_dir` gives is `O_PATH` on Linux, which
/// `fsync` refuses (`EBADF`).
fn sync_parent(dir: &Dir, rel: &Path) {
    let parent = here(rel.parent().unwrap_or(Path::new("")));
    if let Ok(d) = dir.open_with(parent, OpenOptions::new().read(true)) {
        let _ = d.sync_all();
    }
}

pub(super) fn mkdir_all(dir: &Dir, rel: &Path, path: &str) -> StorageResult<()> {
    if rel.as_os_str().is_empty() {
        return Ok(());
    }
    dir.create_dir_all(rel).map_err(|e| {
        // A symlink leading out where a directory should be: `mkdir` saw it exist, and
        // following it is refused.
        match dir.metadata(rel) {
            Err(out) if escaped(&out) => error(path, out),
            _ => error(path, e),
        }
    })
}

pub(super) fn rename(
    (from_dir, from_rel): (&Dir, &Path),
    (to_dir, to_rel): (&Dir, &Path),
    from: &str,
) -> StorageResult<()> {
    from_dir
        .rename(from_rel, to_dir, to_rel)
        .map_err(|e| error(from, e))
}

/// `unlink`, or `rmdir` when `is_dir` is set.
pub(super) fn remove(dir: &Dir, rel: &Path, is_dir: bool, path: &str) -> StorageResult<()> {
    let removed = if is_dir {
        dir.remove_dir(rel)
    } else {
        dir.remove_file(rel)
    };
    removed.map_err(|e| error(path, e))
}

/// Whether `rel` is a FIFO, a socket or a device.
pub(super) fn special(dir: &Dir, rel: &Path, path: &str) -> StorageResult<bool> {
    let meta = dir.metadata(here(rel)).map_err(|e| error(path, e))?;
    Ok(is_special(meta.file_type()))
}

pub(super) fn stat(dir: &Dir, rel: &Path, path: &str) -> StorageResult<FileStat> {
    let meta = dir.metadata(here(rel)).map_err(|e| error(path, e))?;
    Ok(FileStat {
        size: meta.len(),
        mtime_ms: mtime_ms(&meta),
        is_dir: meta.is_dir(),
        id: file_id(&meta),
    })
}

fn mtime_ms(meta: &Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.into_std().duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// [`FileStat::id`](crate::storage::FileStat::id): device and inode (none on Windows).
fn file_id(meta: &Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// FIFOs, sockets and devices: no storage reads them, so listings leave them out.
#[cfg(unix)]
fn is_special(t: FileType) -> bool {
    use cap_std::fs::FileTypeExt;
    t.is_fifo() || t.is_socket() || t.is_char_device() || t.is_block_device()
}

#[cfg(not(unix))]
fn is_special(_t: FileType) -> bool {
    false
}

/// The directories, files and symlinks in `rel` (FIFOs, sockets and devices, and
/// symlinks to them, are left out: no storage reads them). `special_link` tells for a
/// symlink cap-std will not follow (it leads out, or is absolute) whether it names one.
pub(super) fn list_dir(
    dir: &Dir,
    rel: &Path,
    path: &str,
    special_link: &dyn Fn(&str) -> bool,
) -> StorageResult<Vec<DirEntry>> {
    let listed = dir.open_dir(here(rel)).map_err(|e| error(path, e))?;
    let mut out = Vec::new();
    for item in listed.entries().map_err(|e| error(path, e))? {
        let item = item.map_err(|e| error(path, e))?;
        let Ok(kind) = item.file_type() else {
            continue;
        };
        let name = item.file_name();
        if is_special(kind)
            || (kind.is_symlink()
                && match listed.metadata(&name) {
                    Ok(m) => is_special(m.file_type()),
                    Err(e) if escaped(&e) => special_link(&name.to_string_lossy()),
                    Err(_) => false,
                })
        {
            continue;
        }
        out.push(DirEntry {
            name: name.to_string_lossy().into_owned(),
            is_dir: kind.is_dir(),
        });
    }
    out.sort();
    Ok(out)
}
