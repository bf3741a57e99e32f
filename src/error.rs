//! The core's error type. "Not found" cases are their own variants.

use crate::storage::StorageError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// A lookup by entry id failed (exact message of the agent).
    #[error("Entry {0} not found")]
    EntryNotFound(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Persistence failed earlier; latched and re-raised by every later operation.
    #[error("session persistence failed ({file}): {cause}")]
    Persistence { file: String, cause: String },
    /// Caller input that is not a valid entry or value.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Another live process is writing this session (its lock file names it).
    #[error("session {file} is being written by another process ({owner}); open it read-only or try again when it is done")]
    Locked { file: String, owner: String },
    /// A delete of a session that a live writer of another process holds (its lock file
    /// names it): nothing was deleted.
    #[error("session {file} is being written by another process ({owner}); nothing was deleted: delete it when that writer is done")]
    DeleteLocked { file: String, owner: String },
    /// This object's writer lock was taken over: by a newer open of the same file in this
    /// process (the agent reopens a session it switches back to), or by another process.
    /// It can still be read; writes go through the newer object.
    #[error("session {file} was opened for writing again {by}; this older handle can no longer write (reading still works)")]
    Superseded { file: String, by: String },
    /// The file changed on disk since this session read or wrote it; writing now would
    /// overwrite or interleave with that change.
    #[error(
        "session {file} was changed by someone else since it was loaded; reload it before writing"
    )]
    ExternallyModified { file: String },
    /// A session file read a piece at a time (a large context streamed through its
    /// index) was rewritten between two reads: a line is no longer where it was.
    #[error("session {file} changed while it was being read (a line is no longer where it was); open it again")]
    ChangedWhileRead { file: String },
    /// A write was asked of a session opened read-only.
    #[error("session is read-only: {0}")]
    ReadOnly(String),
}

pub type Result<T> = std::result::Result<T, SessionError>;
