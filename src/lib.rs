//! # xcsh-session
//!
//! The session storage of the xcsh / pi coding agents as a plain Rust library: the JSONL
//! entry model, lenient reading, migrations, the entry tree and its leaf, context
//! building, persistence transforms and blob references, all doing I/O only through the
//! [`storage::Storage`] port. The npm package, the WASI component and the web viewer are
//! thin shells over this crate.
//!
//! ```
//! use std::rc::Rc;
//! use xcsh_session::{session::Session, storage::MemoryStorage};
//!
//! let mut s = Session::in_memory(Rc::new(MemoryStorage::new()), "/work");
//! s.append_message(r#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
//! let ctx = s.context().to_json();
//! assert!(ctx.starts_with(r#"{"messages":[{"role":"user","content":"hi","timestamp":1}]"#));
//! ```

pub mod api;
mod api_error;
mod artifacts;
mod blob;
pub mod context;
mod entry;
pub mod error;
pub mod flavour;
#[cfg(feature = "native-fs")]
pub mod fs;
mod gc;
pub mod history;
mod ids;
mod index;
#[doc(hidden)]
pub mod internals;
mod json;
mod jsonl;
mod legacy_dirs;
pub mod listing;
mod lock;
mod migration;
pub mod outline;
mod output_sink;
pub mod paths;
mod persist;
mod picker;
mod replay;
pub mod resume;
mod scan;
pub mod session;
mod sort;
pub mod storage;
pub mod sync;
mod time;
/// WASI `datetime` (seconds, nanoseconds) to epoch milliseconds, for the wasm shells.
pub use time::ms_from_secs_nanos;
mod urls;

pub use artifacts::{AgentOutputManager, ArtifactManager};
pub use blob::{parse_ref as parse_blob_ref, BlobError, BlobPut, BlobStore, BLOB_REF_PREFIX};
pub use context::{ContextJsonReader, Leaf, SessionContext};
pub use entry::{Entry, EntryType, Header, Payload, CURRENT_SESSION_VERSION};
pub use error::SessionError;
pub use flavour::Flavour;
pub use gc::{
    collect_garbage, referrers_in as blob_referrers, GcError, GcOptions, GcReport, GC_GRACE_MS,
};
pub use index::path::{OpenedContext, PathContext};
pub use index::stream::{ContextReader, StreamedReader};
pub use index::window::ContextWindow;
pub use index::IndexCache;
pub use jsonl::{Issue, IssueKind};
pub use legacy_dirs::{merge_into as merge_legacy_dir, DirMerge, KeptBecause};
pub use lock::LockOwner;
pub use migration::Migration;
pub use output_sink::{
    sanitize_chunk, truncate_head, truncate_line, truncate_tail, ArtifactTarget, OutputSink,
    OutputSummary, Sanitizer, Truncation, DEFAULT_MAX_BYTES, DEFAULT_MAX_COLUMNS,
    DEFAULT_MAX_LINES,
};
pub use picker::{SearchProgress, SessionSearch};
pub use session::{OpenOptions, Persistence, Session};
pub use storage::{MemoryStorage, Storage, StorageError};
pub use urls::{resolve as resolve_url, InternalUrl, Paging, Resource, UrlError};
