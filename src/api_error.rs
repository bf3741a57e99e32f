//! The error vocabulary of the JSON façade, re-exported by [`crate::api`]: the error kinds
//! every shell reports, [`ApiError`] and [`ApiResult`]. Kept apart from the façade so the
//! domain modules' JSON helpers (e.g. `history`) can return it without importing `api`.

/// The error categories every shell reports (WIT `error-kind`, JS `error.kind`, CLI exit
/// codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    EntryNotFound,
    NotFound,
    InvalidInput,
    ReadOnly,
    Persistence,
    Storage,
    /// A resume prefix matched several sessions (details: the candidates).
    Ambiguous,
    /// The session belongs to another project and was not confirmed.
    OtherProject,
    /// Another process holds the session's writer lock, or the file changed on disk.
    Conflict,
}

impl ErrorKind {
    pub fn of(e: &crate::error::SessionError) -> ErrorKind {
        use crate::error::SessionError as E;
        match e {
            E::EntryNotFound(_) => ErrorKind::EntryNotFound,
            E::Storage(s) if s.is_not_found() => ErrorKind::NotFound,
            E::Storage(_) => ErrorKind::Storage,
            E::InvalidInput(_) => ErrorKind::InvalidInput,
            E::ReadOnly(_) => ErrorKind::ReadOnly,
            E::Persistence { .. } => ErrorKind::Persistence,
            E::Locked { .. }
            | E::DeleteLocked { .. }
            | E::ExternallyModified { .. }
            | E::ChangedWhileRead { .. }
            | E::Superseded { .. } => ErrorKind::Conflict,
        }
    }

    /// camelCase name used in JS errors and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::EntryNotFound => "entryNotFound",
            ErrorKind::NotFound => "notFound",
            ErrorKind::InvalidInput => "invalidInput",
            ErrorKind::ReadOnly => "readOnly",
            ErrorKind::Persistence => "persistence",
            ErrorKind::Storage => "storage",
            ErrorKind::Ambiguous => "ambiguous",
            ErrorKind::OtherProject => "otherProject",
            ErrorKind::Conflict => "conflict",
        }
    }
}

/// An error of the JSON façade: a kind, the message, and optional JSON details (the
/// candidates of an ambiguous resume).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub kind: ErrorKind,
    pub message: String,
    pub details: Option<String>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ApiError {
            kind,
            message: message.into(),
            details: None,
        }
    }
}

pub type ApiResult = std::result::Result<String, ApiError>;
