//! The WebAssembly component shell of xcsh-session (world `session-component`).
//!
//! It imports only `xcsh:session/storage` and exports `xcsh:session/session-api`: every
//! storage call is forwarded to the host ([`WitStorage`]), every API call to
//! [`xcsh_session::api`]. No session logic lives here.

use std::rc::Rc;

use xcsh_session::api::{self, ErrorKind as CoreErrorKind};
use xcsh_session::storage::{DirEntry, FileStat, Storage, StorageError, StorageResult};
use xcsh_session::SessionError;

wit_bindgen::generate!({
    world: "session-component",
    path: "../../wit",
});

use exports::xcsh::session::session_api::{ApiError, ErrorKind, Guest};
use xcsh::session::storage as wit;

/// The storage port backed by the host's `storage` imports.
#[derive(Debug, Clone, Copy, Default)]
pub struct WitStorage;

fn from_wit(e: wit::StorageError) -> StorageError {
    match e {
        wit::StorageError::NotFound(m) => StorageError::NotFound(m),
        wit::StorageError::AlreadyExists(m) => StorageError::AlreadyExists(m),
        wit::StorageError::PermissionDenied(m) => StorageError::PermissionDenied(m),
        wit::StorageError::Other(m) => StorageError::Other(m),
    }
}

impl Storage for WitStorage {
    fn read(&self, path: &str) -> StorageResult<Vec<u8>> {
        wit::read(path).map_err(from_wit)
    }

    fn read_prefix(&self, path: &str, max_bytes: u64) -> StorageResult<Vec<u8>> {
        wit::read_prefix(path, max_bytes).map_err(from_wit)
    }

    fn write(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        wit::write(path, data).map_err(from_wit)
    }

    fn append(&self, path: &str, data: &[u8]) -> StorageResult<()> {
        wit::append(path, data).map_err(from_wit)
    }

    fn rename(&self, from: &str, to: &str) -> StorageResult<()> {
        wit::rename(from, to).map_err(from_wit)
    }

    fn unlink(&self, path: &str) -> StorageResult<()> {
        wit::unlink(path).map_err(from_wit)
    }

    fn list_dir(&self, path: &str) -> StorageResult<Vec<DirEntry>> {
        wit::list_dir(path)
            .map(|items| {
                items
                    .into_iter()
                    .map(|d| DirEntry {
                        name: d.name,
                        is_dir: d.is_dir,
                    })
                    .collect()
            })
            .map_err(from_wit)
    }

    fn stat(&self, path: &str) -> StorageResult<FileStat> {
        wit::stat(path)
            .map(|s| FileStat {
                size: s.size,
                mtime_ms: s.mtime_ms,
                is_dir: s.is_dir,
            })
            .map_err(from_wit)
    }

    fn mkdir_all(&self, path: &str) -> StorageResult<()> {
        wit::mkdir_all(path).map_err(from_wit)
    }

    fn fsync(&self, path: &str) -> StorageResult<()> {
        wit::fsync(path).map_err(from_wit)
    }

    fn rmdir(&self, path: &str) -> StorageResult<()> {
        wit::rmdir(path).map_err(from_wit)
    }

    fn now_ms(&self) -> i64 {
        wit::now_ms()
    }

    fn random_u64(&self) -> u64 {
        wit::random_u64()
    }

    fn blob_put(&self, blobs_dir: &str, hash: &str, data: &[u8]) -> StorageResult<()> {
        wit::blob_put(blobs_dir, hash, data).map_err(from_wit)
    }

    fn blob_get(&self, blobs_dir: &str, hash: &str) -> StorageResult<Option<Vec<u8>>> {
        wit::blob_get(blobs_dir, hash).map_err(from_wit)
    }

    fn copy_dir(&self, from: &str, to: &str) -> StorageResult<()> {
        wit::copy_dir(from, to).map_err(from_wit)
    }
}

fn storage() -> Rc<dyn Storage> {
    Rc::new(WitStorage)
}

fn to_wit(e: SessionError) -> ApiError {
    let kind = match CoreErrorKind::of(&e) {
        CoreErrorKind::EntryNotFound => ErrorKind::EntryNotFound,
        CoreErrorKind::NotFound => ErrorKind::NotFound,
        CoreErrorKind::InvalidInput => ErrorKind::InvalidInput,
        CoreErrorKind::ReadOnly => ErrorKind::ReadOnly,
        CoreErrorKind::Persistence => ErrorKind::Persistence,
        CoreErrorKind::Storage => ErrorKind::Storage,
        // Only the resume API reports these; `ErrorKind::of` never returns them for the
        // operations this world exports, and the WIT enum has no such cases.
        CoreErrorKind::Ambiguous | CoreErrorKind::OtherProject => ErrorKind::InvalidInput,
    };
    ApiError {
        kind,
        message: e.to_string(),
    }
}

/// The exported `session-api`.
struct Component;

impl Guest for Component {
    fn show(path: String, agent_dir: String) -> Result<String, ApiError> {
        api::show_file(storage(), &path, &agent_dir).map_err(to_wit)
    }

    fn context(path: String, agent_dir: String, leaf: Option<String>) -> Result<String, ApiError> {
        api::context_file(storage(), &path, &agent_dir, leaf.as_deref()).map_err(to_wit)
    }

    fn tree(path: String, agent_dir: String) -> Result<String, ApiError> {
        api::tree_file(storage(), &path, &agent_dir).map_err(to_wit)
    }

    fn migrate(path: String, agent_dir: String) -> Result<String, ApiError> {
        api::migrate_file(storage(), &path, &agent_dir).map_err(to_wit)
    }

    fn append(path: String, agent_dir: String, entry_json: String) -> Result<String, ApiError> {
        api::append_file(storage(), &path, &agent_dir, &entry_json).map_err(to_wit)
    }
}

export!(Component);
