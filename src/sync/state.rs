//! What this machine knows it synced of a session, kept in the agent directory. Only a
//! record of work done: deleting it makes the next sync compare the whole session with
//! the remote (slower, same result).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::layout::sync_dir;
use crate::storage::{join, Storage, StorageError, StorageExt};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionState {
    /// Bytes at the start of the local file that the remote has (pushed, or merged from it).
    pub covered: u64,
    /// sha256 of the last (up to) 4 KiB before `covered`: a file rewritten or cut since
    /// does not match, and is compared whole.
    pub tail: String,
    /// The file's size and modification time when the state was written.
    pub size: u64,
    pub mtime_ms: i64,
    /// Per machine, the last segment merged (with every segment before it).
    pub merged: BTreeMap<String, u64>,
}

/// How much of the file before `covered` the tail hash covers.
pub(crate) const TAIL: u64 = 4096;

/// Where the states of one remote live: `<agent-dir>/sync/state/<remote>/`, `<remote>`
/// a hash of the remote's name (its URL): what one remote has says nothing of another.
pub(crate) fn remote_dir(agent_dir: &str, remote: &str) -> String {
    let key = &crate::blob::sha256_hex(remote.as_bytes())[..16];
    join(&join(&sync_dir(agent_dir), "state"), key)
}

fn state_path(dir: &str, project: &str, session: &str) -> String {
    join(&join(dir, project), &format!("{session}.json"))
}

/// The state of a session; `None` when there is none or it cannot be read (then the
/// session is compared whole).
pub(crate) fn load(
    storage: &dyn Storage,
    dir: &str,
    project: &str,
    session: &str,
) -> Option<SessionState> {
    let bytes = storage.read(&state_path(dir, project, session)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

pub(crate) fn save(
    storage: &dyn Storage,
    dir: &str,
    project: &str,
    session: &str,
    state: &SessionState,
) -> Result<(), StorageError> {
    let path = state_path(dir, project, session);
    storage.mkdir_all(crate::storage::parent(&path))?;
    let json = serde_json::to_vec(state).map_err(|e| StorageError::Other(e.to_string()))?;
    storage.atomic_write(&path, &json)
}

/// The tail hash of `covered` bytes of `file` (read from it).
pub(crate) fn tail_hash(
    storage: &dyn Storage,
    file: &str,
    covered: u64,
) -> Result<String, StorageError> {
    let start = covered.saturating_sub(TAIL);
    let bytes = storage.read_range(file, start, covered - start)?;
    Ok(crate::blob::sha256_hex(&bytes))
}
