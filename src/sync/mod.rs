//! Sessions across machines: sync through an object store, merged without loss.
//!
//! A session file is an append-only tree of immutable entries keyed by id, so the union
//! of two copies is a session. Sync makes that union on every machine:
//! - **each machine writes only its own objects**: the lines it added to a session go to
//!   `<prefix>/sessions/<project>/<session-id>/<machine-id>/<seq>.jsonl`, a segment never
//!   changed once written (put-if-absent); blobs to `<prefix>/blobs/<sha256>`. The store
//!   needs no lock, and a sync that stops halfway leaves nothing half-written;
//! - **a pull merges by entry id**: the entries of other machines' segments that the file
//!   lacks are added with every parent before its children; the file stays one the agent
//!   reads. The leaf stays where the user left it, the other machine's newer leaves are
//!   reported as branches (see [`merge`](self) for the rules, labels included);
//! - a segment cut short, not made of entries, or of another session is refused whole,
//!   with why, and nothing of it is merged.
//!
//! Two ports: the local [`Storage`](crate::Storage) and an [`ObjectStore`] (put-if-absent,
//! get, get-range, list by prefix). The CLI implements the store with the `object_store`
//! crate (S3 and compatible stores, local folders); [`MemoryObjectStore`] serves tests.
//! What was synced is recorded under `<agent-dir>/sync/`: deleting it makes the next sync
//! compare every session whole, with the same result.
//!
//! Not merged yet: a session's name kept in its header (`title`, xcsh's way), which each
//! machine keeps as it has it; pi's names are `session_info` entries and merge as entries.
//!
//! ```
//! use std::rc::Rc;
//! use xcsh_session::storage::{MemoryStorage, Storage};
//! use xcsh_session::sync::{sync, MemoryObjectStore, Scope, SyncOptions};
//! use xcsh_session::session::CreateOptions;
//! use xcsh_session::Session;
//!
//! let remote = MemoryObjectStore::new();
//! let opts = SyncOptions { remote: "memory://team".into(), prefix: "team".into(), scope: Scope::All, dry_run: false };
//! let laptop: Rc<dyn Storage> = Rc::new(MemoryStorage::with_seed(1, 1_700_000_000_000));
//! let server: Rc<dyn Storage> = Rc::new(MemoryStorage::with_seed(2, 1_700_000_000_000));
//!
//! let opts_new = CreateOptions { agent_dir: "/agent".into(), cwd: "/home/me/proj".into(), ..Default::default() };
//! let mut s = Session::create(laptop.clone(), &opts_new);
//! s.append_message(r#"{"role":"user","content":"hello","timestamp":1}"#).unwrap();
//! s.append_message(r#"{"role":"assistant","provider":"p","model":"m","content":[],"timestamp":2}"#).unwrap();
//! s.flush().unwrap();
//!
//! sync(laptop.clone(), "/agent", &remote, &opts).unwrap();
//! let got = sync(server.clone(), "/agent", &remote, &opts).unwrap();
//! assert!(got.sessions[0].created);
//! assert_eq!(got.sessions[0].pulled_entries, 2);
//! ```

mod apply;
mod blobs;
mod layout;
mod lines;
mod merge;
mod run;
mod session;
mod state;
mod store;

pub use layout::{machine_id, segment_key, sessions_prefix};
pub use lines::SegmentError;
pub use run::{sync, sync_with_progress, Scope, SyncError, SyncOptions, SyncReport};
pub use session::SessionSync;
pub use store::{MemoryObjectStore, ObjectError, ObjectMeta, ObjectStore, Put, Traffic};
