//! One sync of an agent directory with a remote: the sessions on either side, each synced
//! by [`super::session`].

use std::collections::BTreeMap;

use super::layout::{
    is_name, machine_id, parse_segment_key, sessions_prefix, sync_dir, SegmentKey,
};
use super::session::{Job, SessionSync};
use super::store::{ObjectError, ObjectStore};
use crate::entry::{Header, CURRENT_SESSION_VERSION};
use crate::lock::{lock_path, SessionLock};
use crate::paths::sessions_root;
use crate::storage::{join, Storage, StorageError, StorageExt};
use std::rc::Rc;

/// What to sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every session of the agent directory and of the remote.
    All,
    /// The sessions of one project folder (`--home-me-proj--`, a folder of `sessions/`).
    Project(String),
}

#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// The remote's name (its URL: `s3://bucket/team`): this machine keeps what it synced
    /// with each remote apart.
    pub remote: String,
    /// The remote's key prefix (`team/alice`), `""` for the bucket's root.
    pub prefix: String,
    pub scope: Scope,
    /// Say what would move; move nothing, change nothing.
    pub dry_run: bool,
}

/// Why a sync stopped. A failure of the store stops it before anything local changes for
/// the session it was at; sessions synced before stay synced. The first call is a listing:
/// a bucket that does not exist, refused credentials or an unreachable store change
/// nothing at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Store(#[from] ObjectError),
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Another sync of this agent directory is running.
    #[error("another sync of this agent directory is running (its lock: {0})")]
    Busy(String),
}

#[derive(Debug, Clone, Default)]
pub struct SyncReport {
    /// This machine's id (see [`machine_id`]).
    pub machine: String,
    pub sessions: Vec<SessionSync>,
}

/// The remote as a session's sync uses it.
pub(crate) struct Remote<'a> {
    pub store: &'a dyn ObjectStore,
    pub prefix: &'a str,
}

/// Syncs the sessions of `agent_dir` in `opts.scope` with `store`: pushes each session's
/// lines this machine added, then merges those other machines added.
pub fn sync(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    store: &dyn ObjectStore,
    opts: &SyncOptions,
) -> Result<SyncReport, SyncError> {
    sync_with_progress(storage, agent_dir, store, opts, &mut |_, _, _| {})
}

/// [`sync`], calling `progress(done, total, session)` after each session.
pub fn sync_with_progress(
    shared: Rc<dyn Storage>,
    agent_dir: &str,
    store: &dyn ObjectStore,
    opts: &SyncOptions,
    progress: &mut dyn FnMut(usize, usize, &SessionSync),
) -> Result<SyncReport, SyncError> {
    let storage: &dyn Storage = &*shared;
    let root = sessions_prefix(&opts.prefix);
    let listed = store.list(&match &opts.scope {
        Scope::All => root.clone(),
        Scope::Project(p) => format!("{root}{p}/"),
    })?;
    let mut remote_sessions: BTreeMap<(String, String), Vec<SegmentKey>> = BTreeMap::new();
    for o in listed {
        if let Some(k) = o.key.strip_prefix(&root).and_then(parse_segment_key) {
            remote_sessions
                .entry((k.project.clone(), k.session.clone()))
                .or_default()
                .push(k);
        }
    }
    // One sync at a time per agent directory: a machine's own objects are then never
    // written by two syncs at once, which a store that ignores put-if-absent (Garage 2.5
    // ignores `If-None-Match`) could not tell apart.
    let _running = if opts.dry_run {
        None
    } else {
        storage.mkdir_all(&sync_dir(agent_dir))?;
        Some(RunLock::take(storage, agent_dir)?)
    };
    let local = local_sessions(storage, agent_dir, &opts.scope)?;
    // A dry run makes no machine id: it would be the only thing it wrote.
    let machine = if opts.dry_run && !storage.exists(&join(&sync_dir(agent_dir), "machine-id")) {
        "0".repeat(16)
    } else {
        machine_id(storage, agent_dir)?
    };
    let mut keys: Vec<(String, String)> = local
        .keys()
        .chain(remote_sessions.keys())
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    let remote = Remote {
        store,
        prefix: &opts.prefix,
    };
    let mut report = SyncReport {
        machine: machine.clone(),
        sessions: vec![],
    };
    let state_dir = super::state::remote_dir(agent_dir, &opts.remote);
    let total = keys.len();
    for (project, session) in keys {
        let segments = remote_sessions
            .remove(&(project.clone(), session.clone()))
            .unwrap_or_default();
        let found = local.get(&(project.clone(), session.clone()));
        // A file of an older format (entries without ids) is migrated first, as the agent
        // migrates it when it opens it: only entries with ids can be merged by id.
        let migrated = match found {
            Some(l) if l.old && !opts.dry_run => migrate_old(&shared, &l.file, agent_dir),
            _ => false,
        };
        let file = found.map(|l| l.file.clone());
        let job = Job {
            storage,
            agent_dir,
            state_dir: &state_dir,
            remote: &remote,
            machine: &machine,
            project: &project,
            session: &session,
            dry_run: opts.dry_run,
        };
        let mut done = job.run(file, segments)?;
        done.migrated = migrated;
        report.sessions.push(done);
        progress(
            report.sessions.len(),
            total,
            report.sessions.last().expect("just pushed"),
        );
    }
    Ok(report)
}

/// The agent directory's sync lock (`<agent-dir>/sync/run.lock`, a session lock's rules:
/// a lock left by a process that is gone is taken over), released when dropped.
struct RunLock<'s> {
    storage: &'s dyn Storage,
    lock: SessionLock,
}

impl<'s> RunLock<'s> {
    fn take(storage: &'s dyn Storage, agent_dir: &str) -> Result<RunLock<'s>, SyncError> {
        let path = join(&sync_dir(agent_dir), "run");
        match SessionLock::acquire_idle(storage, &path) {
            Ok(lock) => Ok(RunLock { storage, lock }),
            Err(_) => Err(SyncError::Busy(lock_path(&path))),
        }
    }
}

impl Drop for RunLock<'_> {
    fn drop(&mut self) {
        self.lock.release(self.storage);
    }
}

/// Migrates `file`, whose header says an older format (the agent's migration, a rewrite
/// that keeps the old bytes aside); whether it did. A file the agent has open is left as
/// it is (it migrates it itself).
fn migrate_old(storage: &Rc<dyn Storage>, file: &str, agent_dir: &str) -> bool {
    crate::api::migrate_session(storage.clone(), file, agent_dir).is_ok()
}

/// A local session file, and whether its header says an older format.
#[derive(Debug, Clone)]
struct LocalSession {
    file: String,
    old: bool,
}

/// `(project, session id) → file` for the local sessions in scope (a file whose header
/// names no usable id is not synced), each header read once.
fn local_sessions(
    storage: &dyn Storage,
    agent_dir: &str,
    scope: &Scope,
) -> Result<BTreeMap<(String, String), LocalSession>, StorageError> {
    let root = sessions_root(agent_dir);
    let list = |dir: &str| match storage.list_dir(dir) {
        Ok(items) => Ok(items),
        Err(e) if e.is_not_found() => Ok(vec![]),
        Err(e) => Err(e),
    };
    let projects = match scope {
        Scope::Project(p) => vec![p.clone()],
        Scope::All => list(&root)?
            .into_iter()
            .filter(|d| d.is_dir && is_name(&d.name))
            .map(|d| d.name)
            .collect(),
    };
    let mut out = BTreeMap::new();
    for project in projects {
        let dir = join(&root, &project);
        for item in list(&dir)?
            .into_iter()
            .filter(|d| !d.is_dir && d.name.ends_with(".jsonl"))
        {
            let path = join(&dir, &item.name);
            let head = storage.read_prefix(&path, 4096)?;
            if let Some(h) = Header::from_file_start(&head).filter(|h| is_name(h.id())) {
                let old = h.version() < CURRENT_SESSION_VERSION;
                out.entry((project.clone(), h.id().to_string()))
                    .or_insert(LocalSession { file: path, old });
            }
        }
    }
    Ok(out)
}
