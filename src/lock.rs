//! One live writer per session file: `<file>.lock`, created exclusively, holding the
//! owner's pid, host, start time and a random token. A lock whose owner is known to be
//! dead (same host, process gone) or that is unreadable and old is recovered; any other
//! lock makes a second writer fail with a clear error instead of silently interleaving
//! writes (users of the reference lost hours of work to that).

use crate::storage::{FileStat, Storage, StorageError};
use crate::time::iso_from_ms;
use std::cell::Cell;

/// An unreadable lock file older than this is taken to be a crash leftover.
pub const TORN_LOCK_GRACE_MS: i64 = 10_000;

/// Who holds a lock; the lock file is its JSON (`{"pid", "host", "startedAt", "token"}`)
/// and a newline.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockOwner {
    pub pid: u32,
    pub host: String,
    /// ISO-8601 time the lock was taken.
    pub started_at: String,
    pub token: String,
}

impl LockOwner {
    fn to_json(&self) -> String {
        let mut line = crate::json::record(self);
        line.push('\n');
        line
    }

    fn parse(bytes: &[u8]) -> Option<LockOwner> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        Some(LockOwner {
            pid: u32::try_from(v.get("pid")?.as_u64()?).ok()?,
            host: v.get("host")?.as_str()?.to_string(),
            started_at: v.get("startedAt")?.as_str()?.to_string(),
            token: v.get("token")?.as_str()?.to_string(),
        })
    }
}

impl std::fmt::Display for LockOwner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {} since {}",
            self.pid, self.host, self.started_at
        )
    }
}

/// Why a lock could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// Another writer holds it.
    Held(LockOwner),
    /// A lock file exists but cannot be read (and is not old enough to be presumed torn).
    Unreadable,
    Storage(StorageError),
}

/// What [`SessionLock::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockCheck {
    Held,
    /// The lock file is gone (its directory deleted, say): take it again.
    Missing,
    /// Someone else's lock now: a newer open in this process, or a process that took it.
    Replaced(LockOwner),
}

/// More than any lock file holds: a check reads at most this much of it.
const LOCK_READ_MAX: u64 = 4096;

/// The lock path of a session file.
pub fn lock_path(session_file: &str) -> String {
    format!("{session_file}.lock")
}

/// A held lock; released by [`SessionLock::release`] (sessions release on drop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLock {
    pub path: String,
    pub owner: LockOwner,
    /// What the checks learnt of the lock file ([`SessionLock::check`]).
    seen: Cell<Seen>,
}

/// What [`SessionLock::check`] knows of the lock file from its earlier checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Nothing yet.
    Nothing,
    /// The storage gives no file identity ([`FileStat::id`]): every check reads the file.
    Unidentified,
    /// The lock file's stat, taken just before a read that found this lock's token.
    Ours(FileStat),
}

impl SessionLock {
    fn held(path: String, owner: LockOwner) -> SessionLock {
        SessionLock {
            path,
            owner,
            seen: Cell::new(Seen::Nothing),
        }
    }

    /// Take the lock of `session_file`, recovering a stale one; a lock held by this very
    /// process is taken over (the newest open of a session in a process writes it).
    pub fn acquire(storage: &dyn Storage, session_file: &str) -> Result<SessionLock, LockError> {
        Self::take(storage, session_file, true)
    }

    /// [`SessionLock::acquire`] that takes over no live lock, not even this process's
    /// own: for what must leave a session alone while anyone writes it (the legacy-folder
    /// merge moves only sessions nobody has open).
    pub fn acquire_idle(
        storage: &dyn Storage,
        session_file: &str,
    ) -> Result<SessionLock, LockError> {
        Self::take(storage, session_file, false)
    }

    fn take(
        storage: &dyn Storage,
        session_file: &str,
        take_over_own: bool,
    ) -> Result<SessionLock, LockError> {
        let path = lock_path(session_file);
        let env = storage.env();
        let me = env.process_identity();
        let owner = LockOwner {
            pid: me.pid,
            host: me.host.clone(),
            started_at: iso_from_ms(env.now_ms()),
            token: format!("{:016x}", env.random_u64()),
        };
        let dir = crate::storage::parent(&path);
        if !dir.is_empty() {
            storage.mkdir_all(dir).map_err(LockError::Storage)?;
        }
        for _ in 0..3 {
            match storage.create_new(&path, owner.to_json().as_bytes()) {
                Ok(()) => return Ok(SessionLock::held(path, owner)),
                Err(StorageError::AlreadyExists(_)) => {}
                Err(e) => return Err(LockError::Storage(e)),
            }
            let existing = match storage.read(&path) {
                Ok(b) => b,
                Err(e) if e.is_not_found() => continue, // released meanwhile: retry
                Err(e) => return Err(LockError::Storage(e)),
            };
            let stale = match LockOwner::parse(&existing) {
                // Held by this very process (an older object on the same file): the
                // newest open takes over, and the older one is fenced (`check`).
                Some(held)
                    if take_over_own
                        && held.pid == me.pid
                        && held.host == me.host
                        && me.pid != 0 =>
                {
                    crate::storage::StorageExt::atomic_write(
                        storage,
                        &path,
                        owner.to_json().as_bytes(),
                    )
                    .map_err(LockError::Storage)?;
                    return Ok(SessionLock::held(path, owner));
                }
                Some(held) => {
                    let dead = held.host == me.host && env.process_alive(held.pid) == Some(false);
                    if !dead {
                        return Err(LockError::Held(held));
                    }
                    true
                }
                None => {
                    // A torn lock (crash while writing it): recovered once it is old.
                    let age = storage
                        .stat(&path)
                        .map(|s| env.now_ms() - s.mtime_ms)
                        .unwrap_or(0);
                    if age < TORN_LOCK_GRACE_MS {
                        return Err(LockError::Unreadable);
                    }
                    true
                }
            };
            if stale {
                match storage.unlink(&path) {
                    Ok(()) => {}
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(LockError::Storage(e)),
                }
            }
        }
        Err(LockError::Unreadable)
    }

    /// Remove the lock file if it is still ours.
    pub fn release(&self, storage: &dyn Storage) {
        if let Ok(bytes) = storage.read(&self.path) {
            if LockOwner::parse(&bytes).is_some_and(|o| o.token == self.owner.token) {
                let _ = storage.unlink(&self.path);
            }
        }
    }

    /// Is the lock still ours? Each append asks, so it costs one `stat` of the lock file
    /// where the storage identifies files ([`FileStat::id`]: the native, Node and memory
    /// storages), else one read of the file's start (a lock file is one short JSON line).
    ///
    /// The stat is enough once a read has found the token ours, and the filesystem's
    /// clock had passed the lock file's mtime then. Lock files are never written in place
    /// (created exclusively, replaced by a rename, deleted), so a lock file with the same
    /// identity, size and mtime is the same file, unless it was deleted and another
    /// created in its place (a process that found this one dead takes over so): that one
    /// can get the same inode number (ext4 gives it again at once) and, created within
    /// the same tick of the filesystem's clock as ours, the same mtime. Created after the
    /// read that found ours, it cannot have our mtime once the clock had passed it then.
    /// `written_ms` tells that it had: the mtime of the session file (same directory,
    /// same clock) as this session's last write, before this check, left it. The stat is
    /// taken before the read, so the stat kept is that of the file the read found ours
    /// (our token was only ever in the one file this lock wrote).
    pub fn check(&self, storage: &dyn Storage, written_ms: Option<i64>) -> LockCheck {
        let seen = self.seen.get();
        let stat = match seen {
            Seen::Unidentified => None,
            Seen::Nothing | Seen::Ours(_) => match storage.stat(&self.path) {
                Err(e) if e.is_not_found() => return LockCheck::Missing,
                Err(_) => None,
                Ok(now) if seen == Seen::Ours(now) => return LockCheck::Held,
                Ok(now) => Some(now),
            },
        };
        let (check, ours) = self.read_check(storage);
        if ours {
            match stat {
                Some(now) if now.id.is_none() => self.seen.set(Seen::Unidentified),
                Some(now) if written_ms.is_some_and(|ms| ms > now.mtime_ms) => {
                    self.seen.set(Seen::Ours(now))
                }
                _ => {}
            }
        }
        check
    }

    /// The check by reading the lock file, and whether it found our token there.
    fn read_check(&self, storage: &dyn Storage) -> (LockCheck, bool) {
        match storage.read_prefix(&self.path, LOCK_READ_MAX) {
            Err(e) if e.is_not_found() => (LockCheck::Missing, false),
            Err(_) => (LockCheck::Held, false), // cannot tell: the write's own checks decide
            Ok(bytes) => match LockOwner::parse(&bytes) {
                Some(o) if o.token == self.owner.token => (LockCheck::Held, true),
                Some(o) => (LockCheck::Replaced(o), false),
                None => (LockCheck::Held, false),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Environment, Layer, MemoryStorage, ProcessIdentity};

    /// The exact bytes of a lock file (a JSON line).
    #[test]
    fn lock_file_bytes() {
        let owner = LockOwner {
            pid: 4_294_967_295,
            host: "q\"b\\s/c\u{0}\u{1}\u{1f}\u{7f}\t\n\r\u{8}\u{c} é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'".into(),
            started_at: "2026-01-01T00:00:00.000Z".into(),
            token: "00000000000000ff".into(),
        };
        assert_eq!(owner.to_json(), GOLDEN_LOCK);
        assert_eq!(LockOwner::parse(owner.to_json().as_bytes()), Some(owner));
        let s = MemoryStorage::with_seed(3, 1_760_000_000_000);
        let lock = SessionLock::acquire(&s, "/d/s.jsonl").unwrap();
        let text = String::from_utf8(s.read("/d/s.jsonl.lock").unwrap()).unwrap();
        assert_eq!(text, GOLDEN_LOCK_FILE);
        assert_eq!(text, lock.owner.to_json());
    }

    /// A storage that reports a chosen identity and a liveness oracle.
    struct Proc<'a> {
        inner: &'a MemoryStorage,
        pid: u32,
        alive: Option<bool>,
    }

    impl Layer for Proc<'_> {
        fn inner(&self) -> &dyn Storage {
            self.inner
        }
        fn env(&self) -> &dyn Environment {
            self
        }
    }

    impl Environment for Proc<'_> {
        fn now_ms(&self) -> i64 {
            self.inner.now_ms()
        }
        fn random_u64(&self) -> u64 {
            self.inner.random_u64()
        }
        fn process_identity(&self) -> ProcessIdentity {
            ProcessIdentity {
                pid: self.pid,
                host: "h".into(),
            }
        }
        fn process_alive(&self, _pid: u32) -> Option<bool> {
            self.alive
        }
    }

    #[test]
    fn a_second_writer_is_refused_while_the_first_lives() {
        let s = MemoryStorage::new();
        let a = SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 10,
                alive: Some(true),
            },
            "/d/s.jsonl",
        )
        .unwrap();
        match SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 11,
                alive: Some(true),
            },
            "/d/s.jsonl",
        ) {
            Err(LockError::Held(owner)) => assert_eq!((owner.pid, owner.host.as_str()), (10, "h")),
            other => panic!("{other:?}"),
        }
        a.release(&s);
        assert!(SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 11,
                alive: Some(true)
            },
            "/d/s.jsonl"
        )
        .is_ok());
    }

    #[test]
    fn an_idle_acquire_never_takes_over_a_lock_its_own_process_holds() {
        let s = MemoryStorage::new();
        let me = Proc {
            inner: &s,
            pid: 10,
            alive: Some(true),
        };
        let open = SessionLock::acquire(&me, "/d/s.jsonl").unwrap();
        match SessionLock::acquire_idle(&me, "/d/s.jsonl") {
            Err(LockError::Held(owner)) => assert_eq!(owner, open.owner),
            other => panic!("{other:?}"),
        }
        assert_eq!(open.check(&s, None), LockCheck::Held);
        open.release(&s);
        let idle = SessionLock::acquire_idle(&me, "/d/s.jsonl").unwrap();
        assert_eq!(idle.check(&s, None), LockCheck::Held);
    }

    #[test]
    fn a_dead_owners_lock_is_recovered() {
        let s = MemoryStorage::new();
        SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 10,
                alive: None,
            },
            "/d/s.jsonl",
        )
        .unwrap();
        let unknown = SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 11,
                alive: None,
            },
            "/d/s.jsonl",
        );
        assert!(
            matches!(unknown, Err(LockError::Held(_))),
            "cannot tell: refuse"
        );
        let recovered = SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 11,
                alive: Some(false),
            },
            "/d/s.jsonl",
        )
        .unwrap();
        assert_eq!(recovered.owner.pid, 11);
        assert_eq!(recovered.check(&s, None), LockCheck::Held);
    }

    #[test]
    fn a_torn_lock_is_recovered_only_when_old() {
        let s = MemoryStorage::new();
        s.mkdir_all("/d").unwrap();
        s.write("/d/s.jsonl.lock", b"{\"pid\":").unwrap();
        let p = Proc {
            inner: &s,
            pid: 1,
            alive: Some(true),
        };
        assert_eq!(
            SessionLock::acquire(&p, "/d/s.jsonl"),
            Err(LockError::Unreadable)
        );
        s.set_mtime("/d/s.jsonl.lock", 0);
        assert!(SessionLock::acquire(&p, "/d/s.jsonl").is_ok());
    }

    #[test]
    fn release_leaves_a_lock_that_someone_else_took_over() {
        let s = MemoryStorage::new();
        let a = SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 10,
                alive: Some(false),
            },
            "/d/s.jsonl",
        )
        .unwrap();
        let b = SessionLock::acquire(
            &Proc {
                inner: &s,
                pid: 11,
                alive: Some(false),
            },
            "/d/s.jsonl",
        )
        .unwrap();
        assert!(matches!(a.check(&s, None), LockCheck::Replaced(_)));
        a.release(&s);
        assert_eq!(
            b.check(&s, None),
            LockCheck::Held,
            "a's release must not remove b's lock"
        );
    }

    const GOLDEN_LOCK: &str = "{\"pid\":4294967295,\"host\":\"q\\\"b\\\\s/c\\u0000\\u0001\\u001f\u{7f}\\t\\n\\r\\b\\f é 日本 🎉 \u{2028}\u{2029}\u{feff}<>&'\",\"startedAt\":\"2026-01-01T00:00:00.000Z\",\"token\":\"00000000000000ff\"}\n";

    const GOLDEN_LOCK_FILE: &str =
        "{\"pid\":0,\"host\":\"unknown\",\"startedAt\":\"2025-10-09T08:53:20.001Z\",\"token\":\"00000000c18660c3\"}\n";
}
