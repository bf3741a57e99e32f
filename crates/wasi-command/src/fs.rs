//! [`WasiFsStorage`]: the core's storage port over standard `wasi:filesystem`.
//!
//! The guest sees only the directories the host preopened (`wasi:filesystem/preopens`),
//! each under a guest path such as `/data`. A storage path is mapped to the preopen with
//! the longest matching prefix and the rest is passed, relative, to that directory's
//! descriptor (`open-at`, `stat-at`, `rename-at`, ...). A path under no preopen is refused
//! here, before the host is asked, and the host refuses whatever a relative path or a
//! symlink would lead outside its preopen: the preopens are the sandbox. A file with more
//! than one hard link is refused ([`xcsh_session::storage::single_link`]): its other name
//! may be outside the preopens.
//!
//! Preopens may nest (`/a` and `/a/sessions/--p--`): a path belongs to the innermost one,
//! and a directory above a preopen's guest path lists it (and is one, even where the
//! outer preopen has nothing there), so scans such as `list --all` and gc see its files.

use std::rc::Rc;

use wasi::filesystem::preopens::get_directories;
use wasi::filesystem::types::{
    filesystem_error_code, Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags,
    PathFlags,
};
use wasi::io::streams::{OutputStream, StreamError};
use xcsh_session::storage::{
    DirEntry, Environment, FileStat, ProcessIdentity, Storage, StorageError, StorageResult,
};

/// Bytes asked of the host per `read` or `write` call.
const CHUNK: u64 = 4 << 20;

/// One preopened directory: its guest path (absolute, normalized) and its descriptor.
struct Mount {
    guest: String,
    dir: Descriptor,
}

/// The storage port over the preopened directories of a WASI 0.2 host.
pub struct WasiFsStorage {
    mounts: Vec<Mount>,
    writable: bool,
    env: WasiEnv,
}

impl WasiFsStorage {
    /// Every preopen the host gives whose guest path is absolute (a relative one, such as
    /// `.`, names no place in the absolute paths the core uses, and is left out).
    /// `writable: false` refuses every call that would change a file, as the CLI host does
    /// for its read-only commands.
    pub fn from_preopens(writable: bool) -> WasiFsStorage {
        let mounts = get_directories()
            .into_iter()
            .filter_map(|(dir, name)| normalize(&name).ok().map(|guest| Mount { guest, dir }))
            .collect();
        WasiFsStorage {
            mounts,
            writable,
            env: WasiEnv,
        }
    }

    /// The storage as the core's API takes it.
    pub fn shared(self) -> Rc<dyn Storage> {
        Rc::new(self)
    }

    /// The preopen that holds `path` and the path relative to it (`.` for the preopen
    /// itself), or `permission-denied` naming the path.
    fn locate(&self, path: &str) -> StorageResult<(&Descriptor, String)> {
        let norm = normalize(path).map_err(|why| denied(path, why))?;
        let mut best: Option<(&Mount, &str)> = None;
        for m in &self.mounts {
            let rest = if m.guest == "/" {
                Some(norm.trim_start_matches('/'))
            } else if norm == m.guest {
                Some("")
            } else {
                norm.strip_prefix(m.guest.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                if best.is_none_or(|(b, _)| m.guest.len() > b.guest.len()) {
                    best = Some((m, rest));
                }
            }
        }
        match best {
            Some((m, "")) => Ok((&m.dir, ".".to_string())),
            Some((m, rest)) => Ok((&m.dir, rest.to_string())),
            None => Err(self.outside(path)),
        }
    }

    /// [`Self::locate`] for a call that changes the filesystem.
    fn locate_write(&self, path: &str) -> StorageResult<(&Descriptor, String)> {
        if !self.writable {
            return Err(StorageError::PermissionDenied(format!(
                "{path} (this command is read-only)"
            )));
        }
        self.locate(path)
    }

    fn outside(&self, path: &str) -> StorageError {
        let dirs: Vec<&str> = self.mounts.iter().map(|m| m.guest.as_str()).collect();
        let why = if dirs.is_empty() {
            "no directory is preopened".to_string()
        } else {
            format!("outside the preopened directories: {}", dirs.join(", "))
        };
        denied(path, &why)
    }

    /// The directories a listing of `norm` shows for the preopens nested under it.
    fn mounts_below(&self, norm: &str) -> Vec<String> {
        names_below(self.mounts.iter().map(|m| m.guest.as_str()), norm)
    }

    /// `rel` in `dir`, opened, after checking that it is a regular file (a FIFO or a
    /// device is refused before it is opened, so nothing blocks on one) with one name.
    /// With `CREATE`, a missing file is fine; `TRUNCATE` empties it only after the checks.
    fn open_regular(
        &self,
        dir: &Descriptor,
        rel: &str,
        path: &str,
        open: OpenFlags,
        flags: DescriptorFlags,
    ) -> StorageResult<Descriptor> {
        match dir.stat_at(PathFlags::SYMLINK_FOLLOW, rel) {
            Ok(st) if st.type_ == DescriptorType::RegularFile => {}
            Ok(_) => return Err(StorageError::not_regular(path)),
            Err(ErrorCode::NoEntry) if open.contains(OpenFlags::CREATE) => {}
            Err(e) => return Err(fs_error(path, e)),
        }
        let truncate = open.contains(OpenFlags::TRUNCATE);
        let file = dir
            .open_at(
                PathFlags::SYMLINK_FOLLOW,
                rel,
                open.difference(OpenFlags::TRUNCATE),
                flags,
            )
            .map_err(|e| fs_error(path, e))?;
        let st = file.stat().map_err(|e| fs_error(path, e))?;
        if st.type_ != DescriptorType::RegularFile {
            return Err(StorageError::not_regular(path));
        }
        xcsh_session::storage::single_link(path, st.link_count)?;
        if truncate {
            file.set_size(0).map_err(|e| fs_error(path, e))?;
        }
        Ok(file)
    }

    /// At most `len` bytes of the regular file `path` from byte `offset`: the
    /// descriptor's positioned `read`s ([`read_span`]), nothing before `offset`.
    fn read_at(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        let (dir, rel) = self.locate(path)?;
        let file = self.open_regular(dir, &rel, path, OpenFlags::empty(), DescriptorFlags::READ)?;
        let size = file.stat().map(|s| s.size).unwrap_or(0);
        read_span(offset, len, size, CHUNK, |want, at| {
            file.read(want, at).map_err(|e| fs_error(path, e))
        })
    }

    /// Best-effort sync of `rel`'s directory, so that a create or a rename is durable.
    fn sync_parent(dir: &Descriptor, rel: &str) {
        let parent = match rel.rfind('/') {
            Some(i) => &rel[..i],
            None => ".",
        };
        if let Ok(d) = dir.open_at(
            PathFlags::empty(),
            parent,
            OpenFlags::DIRECTORY,
            DescriptorFlags::READ,
        ) {
            let _ = d.sync();
        }
    }
}

/// At most `len` bytes from byte `offset` of a file of `size` bytes (as stat saw it: the
/// buffer's first size, not a limit), by positioned reads `read(want, at)` of at most
/// `chunk` bytes each (a descriptor's `read`: the bytes and whether the end was reached),
/// until `len` bytes, the end of the file or an empty read.
fn read_span<E>(
    offset: u64,
    len: u64,
    size: u64,
    chunk: u64,
    mut read: impl FnMut(u64, u64) -> Result<(Vec<u8>, bool), E>,
) -> Result<Vec<u8>, E> {
    let expect = len.min(size.saturating_sub(offset)).min(isize::MAX as u64);
    let mut out = Vec::with_capacity(expect as usize);
    let mut done = 0u64;
    while done < len {
        let Some(at) = offset.checked_add(done) else {
            break; // past the end of any file
        };
        let (bytes, eof) = read((len - done).min(chunk), at)?;
        done += bytes.len() as u64;
        let end = eof || bytes.is_empty();
        out.extend_from_slice(&bytes);
        if end {
            break;
        }
    }
    Ok(out)
}

/// `path` absolute, without `.`, empty components or a trailing `/` (`/` itself stays);
/// a relative path, `..` or NUL is refused.
fn normalize(path: &str) -> Result<String, &'static str> {
    if !path.starts_with('/') {
        return Err("path is not absolute");
    }
    if path.contains('\0') {
        return Err("path contains NUL");
    }
    let mut out = String::with_capacity(path.len());
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("path contains '..'"),
            name => {
                out.push('/');
                out.push_str(name);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// The first component below `norm` (a normalized guest path) of each of the normalized
/// `guests` nested under it, sorted, once each.
fn names_below<'g>(guests: impl Iterator<Item = &'g str>, norm: &str) -> Vec<String> {
    let mut names: Vec<String> = guests
        .filter_map(|guest| {
            let rest = if norm == "/" {
                guest.strip_prefix('/')
            } else {
                guest.strip_prefix(norm).and_then(|r| r.strip_prefix('/'))
            }?;
            rest.split('/')
                .next()
                .filter(|n| !n.is_empty())
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn denied(path: &str, why: &str) -> StorageError {
    StorageError::PermissionDenied(format!("{path} ({why})"))
}

/// A `wasi:filesystem` error as the port's, keeping not-found, exists and the refusals
/// apart.
fn fs_error(path: &str, e: ErrorCode) -> StorageError {
    let what = match e {
        ErrorCode::NoEntry => return StorageError::NotFound(path.to_string()),
        ErrorCode::Exist => return StorageError::AlreadyExists(path.to_string()),
        ErrorCode::Access | ErrorCode::NotPermitted => {
            return StorageError::PermissionDenied(path.to_string())
        }
        ErrorCode::IsDirectory => "Is a directory",
        ErrorCode::NotDirectory => "Not a directory",
        ErrorCode::NotEmpty => "Directory not empty",
        ErrorCode::InsufficientSpace => "No space left on device",
        ErrorCode::ReadOnly => "Read-only file system",
        ErrorCode::Loop => "Too many levels of symbolic links",
        ErrorCode::CrossDevice => "Invalid cross-device link",
        other => other.name(),
    };
    StorageError::Other(format!("{what}: {path}"))
}

/// A stream error while writing `path`.
fn stream_error(path: &str, e: StreamError) -> StorageError {
    match e {
        StreamError::LastOperationFailed(err) => match filesystem_error_code(&err) {
            Some(code) => fs_error(path, code),
            None => StorageError::Other(format!("{}: {path}", err.to_debug_string())),
        },
        StreamError::Closed => StorageError::Other(format!("stream closed: {path}")),
    }
}

/// Write all of `data` to `stream` and flush it, waiting whenever the host's buffer is
/// full (`check-write` says how much it takes now).
pub(crate) fn write_all(stream: &OutputStream, mut data: &[u8]) -> Result<(), StreamError> {
    while !data.is_empty() {
        let room = stream.check_write()?;
        if room == 0 {
            stream.subscribe().block();
            continue;
        }
        let n = data.len().min(room.min(CHUNK) as usize);
        stream.write(&data[..n])?;
        data = &data[n..];
    }
    stream.blocking_flush()
}

impl Storage for WasiFsStorage {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        self.read_at(path, 0, u64::MAX)
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        self.read_at(path, 0, max_bytes)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> StorageResult<Vec<u8>> {
        self.read_at(path, offset, len)
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let (dir, rel) = self.locate_write(path)?;
        let file = self.open_regular(
            dir,
            &rel,
            path,
            OpenFlags::CREATE | OpenFlags::TRUNCATE,
            DescriptorFlags::WRITE,
        )?;
        let mut offset = 0usize;
        while offset < data.len() {
            let end = data.len().min(offset + CHUNK as usize);
            let n = file
                .write(&data[offset..end], offset as u64)
                .map_err(|e| fs_error(path, e))?;
            if n == 0 {
                return Err(StorageError::Other(format!("wrote nothing: {path}")));
            }
            offset += n as usize;
        }
        Ok(())
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let (dir, rel) = self.locate_write(path)?;
        let file = self.open_regular(dir, &rel, path, OpenFlags::CREATE, DescriptorFlags::WRITE)?;
        let stream = file.append_via_stream().map_err(|e| fs_error(path, e))?;
        write_all(&stream, data).map_err(|e| stream_error(path, e))
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        let (src_dir, src) = self.locate_write(from)?;
        let (dst_dir, dst) = self.locate_write(to)?;
        src_dir
            .rename_at(&src, dst_dir, &dst)
            .map_err(|e| fs_error(from, e))
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        let (dir, rel) = self.locate_write(path)?;
        dir.unlink_file_at(&rel).map_err(|e| fs_error(path, e))
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        let norm = normalize(path).map_err(|why| denied(path, why))?;
        let nested = self.mounts_below(&norm);
        let mut out: Vec<DirEntry> = nested
            .iter()
            .map(|name| DirEntry {
                name: name.clone(),
                is_dir: true,
            })
            .collect();
        let located = match self.locate(path) {
            Ok(found) => found,
            // Above a preopen and in none: a directory of preopens only.
            Err(_) if !nested.is_empty() => return Ok(out),
            Err(e) => return Err(e),
        };
        let (dir, rel) = located;
        let d = match dir.open_at(
            PathFlags::SYMLINK_FOLLOW,
            &rel,
            OpenFlags::DIRECTORY,
            DescriptorFlags::READ,
        ) {
            Ok(d) => d,
            Err(ErrorCode::NoEntry | ErrorCode::NotDirectory) if !nested.is_empty() => {
                return Ok(out)
            }
            Err(e) => return Err(fs_error(path, e)),
        };
        let entries = d.read_directory().map_err(|e| fs_error(path, e))?;
        let special = |t: DescriptorType| {
            matches!(
                t,
                DescriptorType::Fifo
                    | DescriptorType::Socket
                    | DescriptorType::CharacterDevice
                    | DescriptorType::BlockDevice
            )
        };
        while let Some(item) = entries
            .read_directory_entry()
            .map_err(|e| fs_error(path, e))?
        {
            // FIFOs, sockets and devices (also behind a symlink) are no session files:
            // listings leave them out, as the CLI host's storage does.
            let target_special = || {
                d.stat_at(PathFlags::SYMLINK_FOLLOW, &item.name)
                    .is_ok_and(|st| special(st.type_))
            };
            // A preopen nested here stands for whatever this one holds under its name.
            if nested.contains(&item.name)
                || special(item.type_)
                || (item.type_ == DescriptorType::SymbolicLink && target_special())
            {
                continue;
            }
            out.push(DirEntry {
                is_dir: item.type_ == DescriptorType::Directory,
                name: item.name,
            });
        }
        out.sort();
        Ok(out)
    }

    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        let norm = normalize(path).map_err(|why| denied(path, why))?;
        let above_a_preopen = !self.mounts_below(&norm).is_empty();
        let found = self.locate(path).and_then(|(dir, rel)| {
            dir.stat_at(PathFlags::SYMLINK_FOLLOW, &rel)
                .map_err(|e| fs_error(path, e))
        });
        let st = match found {
            Ok(st) if !above_a_preopen || st.type_ == DescriptorType::Directory => st,
            Err(e) if !above_a_preopen => return Err(e),
            // A directory because a preopen is below it (as `list_dir` shows it).
            _ => {
                return Ok(FileStat {
                    size: 0,
                    mtime_ms: 0,
                    is_dir: true,
                    id: None,
                })
            }
        };
        let mtime_ms = st.data_modification_timestamp.map_or(0, |t| {
            xcsh_session::ms_from_secs_nanos(t.seconds, t.nanoseconds)
        });
        Ok(FileStat {
            size: st.size,
            mtime_ms,
            is_dir: st.type_ == DescriptorType::Directory,
            id: None,
        })
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        let (dir, rel) = match self.locate_write(path) {
            Ok(found) => found,
            // Above a preopen and in none: a directory already (`stat` says so).
            Err(_) if self.writable && self.stat(path).is_ok_and(|st| st.is_dir) => return Ok(()),
            Err(e) => return Err(e),
        };
        if rel == "." {
            return Ok(());
        }
        let mut prefix = String::with_capacity(rel.len());
        for part in rel.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            match dir.create_directory_at(&prefix) {
                Ok(()) => {}
                Err(ErrorCode::Exist) => match dir.stat_at(PathFlags::SYMLINK_FOLLOW, &prefix) {
                    Ok(st) if st.type_ == DescriptorType::Directory => {}
                    Ok(_) => return Err(StorageError::AlreadyExists(path.to_string())),
                    Err(e) => return Err(fs_error(path, e)),
                },
                Err(e) => return Err(fs_error(path, e)),
            }
        }
        Ok(())
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        let (dir, rel) = self.locate(path)?;
        let file = self.open_regular(dir, &rel, path, OpenFlags::empty(), DescriptorFlags::READ)?;
        file.sync_data().map_err(|e| fs_error(path, e))?;
        Self::sync_parent(dir, &rel);
        Ok(())
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        let (dir, rel) = self.locate_write(path)?;
        dir.remove_directory_at(&rel).map_err(|e| fs_error(path, e))
    }

    fn create_new(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        let (dir, rel) = self.locate_write(path)?;
        // O_CREAT|O_EXCL, not following a symlink at the last component: atomic against
        // another creator (session locks depend on it).
        let file = dir
            .open_at(
                PathFlags::empty(),
                &rel,
                OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
                DescriptorFlags::WRITE,
            )
            .map_err(|e| fs_error(path, e))?;
        let written = file
            .write_via_stream(0)
            .map_err(|e| fs_error(path, e))
            .and_then(|s| write_all(&s, data).map_err(|e| stream_error(path, e)))
            .and_then(|()| file.sync_data().map_err(|e| fs_error(path, e)));
        if let Err(e) = written {
            drop(file);
            let _ = dir.unlink_file_at(&rel);
            return Err(e);
        }
        Self::sync_parent(dir, &rel);
        Ok(())
    }

    fn env(&self) -> &dyn Environment {
        &self.env
    }
}

/// The clock (`wasi:clocks/wall-clock`), entropy (`wasi:random/insecure`: ids must be
/// unique, not secret) and a fixed process identity: WASI has no process ids.
#[derive(Debug, Clone, Copy, Default)]
pub struct WasiEnv;

/// The host name written into session locks by this command.
pub const HOST_NAME: &str = "wasi";

impl Environment for WasiEnv {
    fn now_ms(&self) -> i64 {
        let t = wasi::clocks::wall_clock::now();
        xcsh_session::ms_from_secs_nanos(t.seconds, t.nanoseconds)
    }

    fn random_u64(&self) -> u64 {
        wasi::random::insecure::get_insecure_random_u64()
    }

    /// pid 0 on host `wasi`: a lock this command holds names no process another one
    /// could check.
    fn process_identity(&self) -> ProcessIdentity {
        ProcessIdentity {
            pid: 0,
            host: HOST_NAME.into(),
        }
    }

    /// Unknown: WASI cannot look at processes (a stale lock needs an explicit takeover).
    fn process_alive(&self, _pid: u32) -> Option<bool> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{names_below, normalize, read_span};
    use xcsh_session::storage::range_of;

    /// `read_span` over a file's bytes, read by a host that returns at most `host_max`
    /// bytes a call and reports the end (`eof`) or only an empty read at it: the bytes
    /// and the calls `(want, at, bytes returned)`.
    fn span(
        data: &[u8],
        offset: u64,
        len: u64,
        host_max: u64,
        eof: bool,
    ) -> (Vec<u8>, Vec<(u64, u64, u64)>) {
        let mut calls = Vec::new();
        let got = read_span::<()>(offset, len, data.len() as u64, 16, |want, at| {
            let bytes = range_of(data, at, want.min(host_max)).to_vec();
            calls.push((want, at, bytes.len() as u64));
            let end = at.saturating_add(bytes.len() as u64) >= data.len() as u64;
            Ok((bytes, eof && end))
        })
        .expect("read");
        (got, calls)
    }

    #[test]
    fn a_span_is_the_bytes_at_its_offset_read_in_chunks_from_there() {
        let data: Vec<u8> = (0..100u8).collect();
        let hosts = [(u64::MAX, true), (u64::MAX, false), (5, true), (5, false)];
        for offset in [0, 1, 15, 16, 50, 99, 100, 101, 1000, u64::MAX - 3, u64::MAX] {
            for len in [0, 1, 15, 16, 17, 40, 99, 100, 101, 1 << 40, u64::MAX] {
                for (host_max, eof) in hosts {
                    let case = format!("{offset}+{len}, host max {host_max}, eof {eof}");
                    let (got, calls) = span(&data, offset, len, host_max, eof);
                    assert_eq!(got, range_of(&data, offset, len), "{case}");
                    if len == 0 {
                        assert!(calls.is_empty(), "{case}: {calls:?}");
                        continue;
                    }
                    // From the offset on (nothing before it), consecutive, at most a chunk.
                    assert_eq!(calls[0].1, offset, "{case}: {calls:?}");
                    assert!(calls.iter().all(|c| c.0 <= 16), "{case}: {calls:?}");
                    for w in calls.windows(2) {
                        assert_eq!(w[1].1, w[0].1 + w[0].2, "{case}: {calls:?}");
                    }
                    // At most one call at or past the end.
                    let past = calls.iter().filter(|c| c.1 >= 100).count();
                    assert!(past <= 1, "{case}: {calls:?}");
                }
            }
        }
        let at = |calls: Vec<(u64, u64, u64)>| -> Vec<(u64, u64)> {
            calls.into_iter().map(|(want, at, _)| (want, at)).collect()
        };
        // 40 bytes from 30: 16 + 16 + 8; with the end reported, nothing more is asked.
        let (_, calls) = span(&data, 30, 40, u64::MAX, true);
        assert_eq!(at(calls), [(16, 30), (16, 46), (8, 62)]);
        assert_eq!(at(span(&data, 90, 40, u64::MAX, true).1), [(16, 90)]);
        assert_eq!(
            at(span(&data, 90, 40, u64::MAX, false).1),
            [(16, 90), (16, 100)]
        );
    }

    #[test]
    fn an_error_while_reading_is_the_error() {
        let mut n = 0;
        let got = read_span(0, 100, 100, 16, |want, _| {
            n += 1;
            match n {
                3 => Err("failed"),
                _ => Ok((vec![0; want as usize], false)),
            }
        });
        assert_eq!(got, Err("failed"));
    }

    #[test]
    fn a_directory_lists_the_first_component_of_each_preopen_below_it() {
        let guests = [
            "/a",
            "/a/sessions/--p--",
            "/a/sessions/--q--/x",
            "/b",
            "/ab",
        ];
        let below = |norm| names_below(guests.iter().copied(), norm);
        assert_eq!(below("/"), ["a", "ab", "b"]);
        assert_eq!(below("/a"), ["sessions"]);
        assert_eq!(below("/a/sessions"), ["--p--", "--q--"]);
        assert_eq!(below("/a/sessions/--q--"), ["x"]);
        assert!(below("/a/sessions/--p--").is_empty(), "itself is not below");
        assert!(below("/b/sessions").is_empty());
        assert!(
            below("/a/sess").is_empty(),
            "a prefix of a name is not a parent"
        );
    }

    #[test]
    fn paths_are_normalized_or_refused() {
        assert_eq!(normalize("/a//b/./c/").as_deref(), Ok("/a/b/c"));
        assert_eq!(normalize("/").as_deref(), Ok("/"));
        assert_eq!(normalize("/.").as_deref(), Ok("/"));
        assert!(normalize("a/b").is_err());
        assert!(normalize("/a/../b").is_err());
        assert!(normalize("/a\0").is_err());
    }
}
