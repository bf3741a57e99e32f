//! The file operations on a path that is promised to have no symlink in it
//! ([`PathPolicy::symlink_free`](super::PathPolicy::symlink_free)): each component is
//! opened relative to the directory opened before it, with `O_NOFOLLOW`, and the last one
//! is created, opened, renamed or removed relative to its parent's handle (`openat`,
//! `mkdirat`, `renameat`, `unlinkat`, `fstatat`). A directory swapped for a symlink after
//! the policy checked the path therefore makes the call fail; it can never redirect it.

use super::{io_error, open_error};
use crate::storage::{DirEntry, FileStat, StorageError, StorageResult};
use rustix::fs::{
    fstat, mkdirat, openat, renameat, statat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags, Stat,
    CWD,
};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

/// How a directory on the way is opened: only to look up names in it (`O_PATH` where it
/// exists, so a directory that may be searched but not listed is still passed through).
#[cfg(any(target_os = "linux", target_os = "android"))]
const WALK: OFlags = OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const WALK: OFlags = OFlags::RDONLY;

fn dir_flags(access: OFlags) -> OFlags {
    access | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// What a symlink found in the way is reported as.
fn symlink_in_the_way(path: &str) -> StorageError {
    StorageError::PermissionDenied(format!(
        "{path} (a symlink is in the way: a component of the checked path was replaced by one; not followed)"
    ))
}

/// The error of a call on `name` in `dir`: a symlink there (the swap this module exists
/// to stop) is said so, anything else is mapped as usual.
fn refused(dir: &OwnedFd, name: &OsStr, e: Errno, path: &str) -> StorageError {
    if matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::MLINK)
        && statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode as _) == FileType::Symlink)
    {
        return symlink_in_the_way(path);
    }
    open_error(path, e.into())
}

/// The names of `path`'s components (a path with `..` or a prefix is refused).
fn plain_names<'p>(path: &'p Path, storage_path: &str) -> StorageResult<Vec<&'p OsStr>> {
    let mut names = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir | Component::Prefix(_) => {
                return Err(StorageError::PermissionDenied(format!(
                    "{storage_path} (not a plain path)"
                )))
            }
        }
    }
    Ok(names)
}

/// The directory a walk starts from (`/`, or the working directory for a relative path)
/// and the names below it.
fn start<'p>(
    path: &'p Path,
    access: OFlags,
    storage_path: &str,
) -> StorageResult<(OwnedFd, Vec<&'p OsStr>)> {
    let names = plain_names(path, storage_path)?;
    let from = if path.is_absolute() { "/" } else { "." };
    let access = if names.is_empty() { access } else { WALK };
    let fd = openat(CWD, from, dir_flags(access), Mode::empty())
        .map_err(|e| io_error(storage_path, e.into()))?;
    Ok((fd, names))
}

/// The directory `path` names, every component opened without following a symlink, the
/// last one with `access`.
fn open_dir(path: &Path, access: OFlags, storage_path: &str) -> StorageResult<OwnedFd> {
    plain_names(path, storage_path)?;
    if let Some(fd) = at_once::open_dir(path, access) {
        return Ok(fd);
    }
    let (mut fd, names) = start(path, access, storage_path)?;
    let last = names.len().saturating_sub(1);
    for (i, name) in names.iter().enumerate() {
        let flags = dir_flags(if i == last { access } else { WALK });
        fd = openat(&fd, *name, flags, Mode::empty())
            .map_err(|e| refused(&fd, name, e, storage_path))?;
    }
    Ok(fd)
}

/// One `openat2(RESOLVE_NO_SYMLINKS)` in place of the walk where the kernel has it
/// (Linux 5.6+): the kernel refuses a symlink in any component, which is what the walk
/// checks one `openat` at a time (a deep path cost a dozen calls per storage call). Any
/// failure (missing, a symlink, an old kernel or a sandbox refusing the call) falls back
/// to the walk, which says precisely what went wrong; a kernel without the call is asked
/// once.
#[cfg(any(target_os = "linux", target_os = "android"))]
mod at_once {
    use super::dir_flags;
    use rustix::fs::{openat2, Mode, OFlags, ResolveFlags, CWD};
    use rustix::io::Errno;
    use std::os::fd::OwnedFd;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

    pub(super) fn open_dir(path: &Path, access: OFlags) -> Option<OwnedFd> {
        if UNSUPPORTED.load(Ordering::Relaxed) {
            return None;
        }
        let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match openat2(CWD, path, dir_flags(access), Mode::empty(), resolve) {
            Ok(fd) => Some(fd),
            Err(Errno::NOSYS | Errno::PERM) => {
                UNSUPPORTED.store(true, Ordering::Relaxed);
                None
            }
            Err(_) => None,
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod at_once {
    pub(super) fn open_dir(
        _: &std::path::Path,
        _: rustix::fs::OFlags,
    ) -> Option<std::os::fd::OwnedFd> {
        None
    }
}

/// The handle of `path`'s parent directory and its last component.
fn parent(path: &Path, storage_path: &str) -> StorageResult<(OwnedFd, OsString)> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => Ok((open_dir(dir, WALK, storage_path)?, name.to_owned())),
        _ => Err(StorageError::Other(format!(
            "{storage_path} does not name a file"
        ))),
    }
}

/// Open the file `path` (`flags`: access and creation; never following a symlink, never
/// blocking on a FIFO or a device).
pub(super) fn open(
    path: &Path,
    flags: OFlags,
    storage_path: &str,
) -> StorageResult<(fs::File, OwnedFd, OsString)> {
    let (dir, name) = parent(path, storage_path)?;
    let flags = flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = openat(&dir, &name, flags, Mode::from_raw_mode(0o666))
        .map_err(|e| refused(&dir, &name, e, storage_path))?;
    Ok((fs::File::from(fd), dir, name))
}

/// [`open`], then refuse anything but a regular file.
pub(super) fn open_regular(
    path: &Path,
    flags: OFlags,
    storage_path: &str,
) -> StorageResult<fs::File> {
    let (file, _, _) = open(path, flags, storage_path)?;
    let st = fstat(&file).map_err(|e| io_error(storage_path, e.into()))?;
    if FileType::from_raw_mode(st.st_mode as _) != FileType::RegularFile {
        return Err(StorageError::not_regular(storage_path));
    }
    Ok(file)
}

/// `O_CREAT|O_EXCL`, write, fsync; the file is removed again when writing fails.
pub(super) fn create_new(path: &Path, data: &[u8], storage_path: &str) -> StorageResult<()> {
    use std::io::Write;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
    let (mut file, dir, name) = open(path, flags, storage_path)?;
    if let Err(e) = file.write_all(data).and_then(|()| file.sync_all()) {
        drop(file);
        let _ = unlinkat(&dir, &name, AtFlags::empty());
        return Err(io_error(storage_path, e));
    }
    sync_dir(&dir);
    Ok(())
}

/// Flush the file, then its directory (best effort).
pub(super) fn fsync(path: &Path, storage_path: &str) -> StorageResult<()> {
    let (file, dir, _) = open(path, OFlags::RDONLY, storage_path)?;
    file.sync_all().map_err(|e| io_error(storage_path, e))?;
    sync_dir(&dir);
    Ok(())
}

fn sync_dir(dir: &OwnedFd) {
    if let Ok(fd) = openat(dir, ".", dir_flags(OFlags::RDONLY), Mode::empty()) {
        let _ = fs::File::from(fd).sync_all();
    }
}

pub(super) fn mkdir_all(path: &Path, storage_path: &str) -> StorageResult<()> {
    let (mut fd, names) = start(path, WALK, storage_path)?;
    for name in names {
        let next = match openat(&fd, name, dir_flags(WALK), Mode::empty()) {
            Err(Errno::NOENT) => {
                match mkdirat(&fd, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(refused(&fd, name, e, storage_path)),
                }
                openat(&fd, name, dir_flags(WALK), Mode::empty())
            }
            other => other,
        };
        fd = next.map_err(|e| refused(&fd, name, e, storage_path))?;
    }
    Ok(())
}

pub(super) fn rename(from: &Path, to: &Path, from_path: &str, to_path: &str) -> StorageResult<()> {
    let (src_dir, src) = parent(from, from_path)?;
    let (dst_dir, dst) = parent(to, to_path)?;
    renameat(&src_dir, &src, &dst_dir, &dst).map_err(|e| io_error(from_path, e.into()))
}

/// `unlink`, or `rmdir` when `dir` is set.
pub(super) fn remove(path: &Path, dir: bool, storage_path: &str) -> StorageResult<()> {
    let (parent, name) = parent(path, storage_path)?;
    let flags = if dir {
        AtFlags::REMOVEDIR
    } else {
        AtFlags::empty()
    };
    unlinkat(&parent, &name, flags).map_err(|e| refused(&parent, &name, e, storage_path))
}

/// The path itself, not a symlink's target (a symlink there was not in the checked path).
pub(super) fn stat(path: &Path, storage_path: &str) -> StorageResult<FileStat> {
    let st = match parent(path, storage_path) {
        Ok((dir, name)) => statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| refused(&dir, &name, e, storage_path))?,
        // The root directory itself.
        Err(_) => fstat(open_dir(path, WALK, storage_path)?)
            .map_err(|e| io_error(storage_path, e.into()))?,
    };
    Ok(file_stat(&st))
}

#[allow(clippy::unnecessary_cast)] // the field types differ between platforms
fn file_stat(st: &Stat) -> FileStat {
    FileStat {
        size: st.st_size as u64,
        mtime_ms: st.st_mtime as i64 * 1000 + st.st_mtime_nsec as i64 / 1_000_000,
        is_dir: FileType::from_raw_mode(st.st_mode as _) == FileType::Directory,
    }
}

/// The directories, files and symlinks in `path` (FIFOs, sockets and devices, and
/// symlinks to them, are left out: no storage reads them).
pub(super) fn list_dir(path: &Path, storage_path: &str) -> StorageResult<Vec<DirEntry>> {
    let fd = open_dir(path, OFlags::RDONLY, storage_path)?;
    let mut dir = Dir::new(fd).map_err(|e| io_error(storage_path, e.into()))?;
    let mut out = Vec::new();
    while let Some(item) = dir.next() {
        let item = item.map_err(|e| io_error(storage_path, e.into()))?;
        let name = item.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let dirfd = dir.fd().map_err(|e| io_error(storage_path, e.into()))?;
        let type_of = |flags| {
            statat(dirfd.as_fd(), item.file_name(), flags)
                .map(|st| FileType::from_raw_mode(st.st_mode as _))
        };
        let mut kind = item.file_type();
        if kind == FileType::Unknown {
            kind = type_of(AtFlags::SYMLINK_NOFOLLOW).unwrap_or(FileType::Unknown);
        }
        let special = |t: FileType| {
            matches!(
                t,
                FileType::Fifo
                    | FileType::Socket
                    | FileType::CharacterDevice
                    | FileType::BlockDevice
            )
        };
        if special(kind)
            || (kind == FileType::Symlink && type_of(AtFlags::empty()).is_ok_and(special))
        {
            continue;
        }
        out.push(DirEntry {
            name: String::from_utf8_lossy(name).into_owned(),
            is_dir: kind == FileType::Directory,
        });
    }
    out.sort();
    Ok(out)
}
