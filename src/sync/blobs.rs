//! Blobs travel with the entries that refer to them: `<prefix>/blobs/<sha256>`, put once.

use super::lines::Line;
use super::run::{Remote, SyncError};
use crate::blob::{sha256_hex, BlobStore};
use crate::storage::StorageError;

pub(crate) fn blob_key(prefix: &str, hash: &str) -> String {
    let p = prefix.trim_matches('/');
    if p.is_empty() {
        format!("blobs/{hash}")
    } else {
        format!("{p}/blobs/{hash}")
    }
}

/// Puts the blobs `lines` refer to (those this machine has) unless the remote has them.
pub(crate) fn push<'l>(
    remote: &Remote,
    blobs: &BlobStore,
    lines: impl Iterator<Item = &'l Line>,
) -> Result<(), SyncError> {
    for hash in lines.flat_map(|l| &l.blobs) {
        if let Some(blob) = blobs
            .get(hash)
            .map_err(|e| StorageError::Other(e.to_string()))?
        {
            remote
                .store
                .put_if_absent(&blob_key(remote.prefix, hash), &blob)?;
        }
    }
    Ok(())
}

/// Fetches the blobs `lines` refer to that this machine lacks. A blob the remote does not
/// have (yet), or whose bytes are not its hash, is left out: the line reads as an image
/// whose blob is missing, as after a lost blob, and a later sync fetches it.
pub(crate) fn fetch<'l>(
    remote: &Remote,
    blobs: &BlobStore,
    lines: impl Iterator<Item = &'l Line>,
) -> Result<(), SyncError> {
    for hash in lines.flat_map(|l| &l.blobs) {
        if blobs.exists(hash) {
            continue;
        }
        if let Some(bytes) = remote.store.get(&blob_key(remote.prefix, hash))? {
            if sha256_hex(&bytes) == *hash {
                blobs
                    .put(&bytes)
                    .map_err(|e| StorageError::Other(e.to_string()))?;
            }
        }
    }
    Ok(())
}
