//! A session's files in an agent directory, handled as a whole: which files make up a
//! session, copying them into another agent directory, importing a session known only by
//! its text, and deleting a session. Storage-agnostic: both ends are [`Storage`] ports.

use super::write::acquire_lock;
use crate::blob::referenced_hashes;
use crate::entry::{Header, HEADER_PREFIX_BYTES};
use crate::error::{Result, SessionError};
use crate::paths;
use crate::storage::{files_under, join, parent, remove_tree, Storage, StorageExt, StorageResult};

/// What a copy or an import did: the session file's path in the target agent directory,
/// whether that file was there already (then nothing was written), and how many files
/// were written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCopy {
    pub path: String,
    pub already: bool,
    pub written: usize,
}

/// The files of the session `path` in `agent_dir`: the `.jsonl` file itself, every file
/// of its artifacts directory (the same path without `.jsonl`), and each blob of the
/// agent directory's blob store its text references (once each, in order of first
/// reference; a referenced blob that is not there is left out).
pub fn session_files(
    storage: &dyn Storage,
    agent_dir: &str,
    path: &str,
) -> StorageResult<Vec<String>> {
    let text = storage.read(path)?;
    let mut out = vec![path.to_string()];
    if path.ends_with(".jsonl") {
        out.extend(files_under(storage, &paths::artifacts_dir(path))?);
    }
    let blobs = paths::blobs_dir(agent_dir);
    for hash in referenced_hashes(&String::from_utf8_lossy(&text)) {
        let blob = join(&blobs, &hash);
        if storage.exists(&blob) {
            out.push(blob);
        }
    }
    Ok(out)
}

/// `path` (inside `from_agent`) at the same place inside `to_agent`.
fn rebase(path: &str, from_agent: &str, to_agent: &str) -> Result<String> {
    path.strip_prefix(from_agent)
        .filter(|rel| rel.starts_with('/'))
        .map(|rel| format!("{}{rel}", to_agent.trim_end_matches('/')))
        .ok_or_else(|| SessionError::InvalidInput(format!("{path} is not in {from_agent}")))
}

/// Copies the session `path` of `from_agent` (its [`session_files`]) into `to_agent`, each
/// file at the same path relative to the agent directory. Nothing is copied when the
/// session file is there already; other files already there (a shared blob) are kept.
pub fn copy_session(
    from: &dyn Storage,
    from_agent: &str,
    path: &str,
    to: &dyn Storage,
    to_agent: &str,
) -> Result<SessionCopy> {
    let target = rebase(path, from_agent, to_agent)?;
    if to.exists(&target) {
        return Ok(SessionCopy {
            path: target,
            already: true,
            written: 0,
        });
    }
    let mut written = 0;
    for file in session_files(from, from_agent, path)? {
        let dest = rebase(&file, from_agent, to_agent)?;
        if to.exists(&dest) {
            continue;
        }
        to.mkdir_all(parent(&dest))?;
        to.write(&dest, &from.read(&file)?)?;
        written += 1;
    }
    Ok(SessionCopy {
        path: target,
        already: false,
        written,
    })
}

/// Imports a session known only by its text (a single file named `given_name`) into
/// `agent_dir`: into its header's cwd's directory ([`paths::session_dir_for_file`]) under
/// [`paths::import_file_name`]. Nothing is written when that file exists.
pub fn import_session_text(
    storage: &dyn Storage,
    agent_dir: &str,
    text: &str,
    given_name: &str,
) -> Result<SessionCopy> {
    let start = &text.as_bytes()[..text.len().min(HEADER_PREFIX_BYTES)];
    let header = Header::from_file_start(start);
    let dir = paths::session_dir_for_file(agent_dir, start);
    let name = if given_name.is_empty() {
        "session.jsonl"
    } else {
        given_name
    };
    let path = join(&dir, &paths::import_file_name(header.as_ref(), name));
    if storage.exists(&path) {
        return Ok(SessionCopy {
            path,
            already: true,
            written: 0,
        });
    }
    storage.mkdir_all(&dir)?;
    storage.write(&path, text.as_bytes())?;
    Ok(SessionCopy {
        path,
        already: false,
        written: 1,
    })
}

/// Deletes the session `path`: the file, its artifacts directory and its writer lock
/// (blobs stay: other sessions may share them; blob GC removes unreferenced ones). A
/// session is a `.jsonl` file under `<agent_dir>/sessions/`, or, anywhere else (the agent
/// deletes the file it is given wherever it is), a `.jsonl` file that starts with a
/// session header: any other file is refused, so a wrong path cannot delete a document and
/// the directory beside it. A missing file is [`SessionError::Storage`] not found, as the
/// agent's unlink fails.
///
/// A delete is a writer: it takes the session's lock first, by the rules of every writer
/// ([`crate::lock`]), and holds it until the files are gone. A live writer of another
/// process (or a lock it cannot read yet) makes it [`SessionError::DeleteLocked`] and
/// nothing is deleted: that writer's next append would otherwise write the session again
/// without its artifacts. A dead writer's lock is recovered. Within this process the
/// delete takes the lock over as a newer open does: the process asked for it (the agent
/// closes its active session before deleting it); an object of this process that still
/// has the session open writes it again whole on its next write, as after any deletion
/// behind its back.
pub fn delete_session(storage: &dyn Storage, agent_dir: &str, path: &str) -> Result<()> {
    let sessions = format!("{}/", paths::sessions_root(agent_dir));
    let is_session = path.ends_with(".jsonl")
        && (path.starts_with(&sessions) || {
            let start = storage.read_prefix(path, HEADER_PREFIX_BYTES as u64)?;
            Header::from_file_start(&start).is_some()
        });
    if !is_session {
        return Err(SessionError::InvalidInput(format!(
            "not a session file: {path}"
        )));
    }
    // A missing file is not found, before the lock could create its directory.
    storage.stat(path)?;
    let lock = acquire_lock(storage, path).map_err(|e| match e {
        SessionError::Locked { file, owner } => SessionError::DeleteLocked { file, owner },
        e => e,
    })?;
    let deleted = delete_files(storage, path);
    lock.release(storage);
    deleted
}

/// The session file and its artifacts directory (the caller holds the lock).
fn delete_files(storage: &dyn Storage, path: &str) -> Result<()> {
    storage.unlink(path)?;
    let artifacts = paths::artifacts_dir(path);
    if storage.exists(&artifacts) {
        remove_tree(storage, &artifacts)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;

    const HASH_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const HASH_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const FILE: &str = "/a/sessions/--w--/t_s.jsonl";

    /// An agent directory `/a` with one session: two artifacts, two references to blob A
    /// (stored) and one to blob B (missing), a lock, and another session beside it.
    fn agent() -> MemoryStorage {
        let st = MemoryStorage::new();
        let text = format!(
            "{{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/w\"}}\n\
             {{\"data\":\"blob:sha256:{HASH_A}\"}}\n{{\"data\":\"blob:sha256:{HASH_B}\"}}\n\
             {{\"data\":\"blob:sha256:{HASH_A}\"}}\n"
        );
        for (path, data) in [
            (FILE.to_string(), text.as_str()),
            ("/a/sessions/--w--/t_s/1.bash.log".into(), "out"),
            ("/a/sessions/--w--/t_s/sub/x.md".into(), "md"),
            (format!("{FILE}.lock"), "{}"),
            ("/a/sessions/--w--/t_other.jsonl".into(), "{}"),
            (format!("/a/blobs/{HASH_A}"), "png"),
        ] {
            st.mkdir_all(parent(&path)).unwrap();
            st.write(&path, data.as_bytes()).unwrap();
        }
        st
    }

    #[test]
    fn a_session_is_its_file_its_artifacts_and_the_blobs_it_references() {
        assert_eq!(
            session_files(&agent(), "/a", FILE).unwrap(),
            vec![
                FILE.to_string(),
                "/a/sessions/--w--/t_s/1.bash.log".into(),
                "/a/sessions/--w--/t_s/sub/x.md".into(),
                format!("/a/blobs/{HASH_A}"),
            ]
        );
    }

    #[test]
    fn a_copy_lands_at_the_same_place_in_the_other_agent_directory_once() {
        let (from, to) = (agent(), MemoryStorage::new());
        let copy = copy_session(&from, "/a", FILE, &to, "/b").unwrap();
        let path = "/b/sessions/--w--/t_s.jsonl".to_string();
        assert_eq!(
            copy,
            SessionCopy {
                path: path.clone(),
                already: false,
                written: 4
            }
        );
        assert_eq!(to.read(&path).unwrap(), from.read(FILE).unwrap());
        assert!(to.exists("/b/sessions/--w--/t_s/sub/x.md"));
        assert!(to.exists(&format!("/b/blobs/{HASH_A}")));
        // The lock and the other session are not part of it.
        assert!(!to.exists(&format!("{path}.lock")));
        assert!(!to.exists("/b/sessions/--w--/t_other.jsonl"));
        // Again: the session is there, nothing is written.
        let again = copy_session(&from, "/a", FILE, &to, "/b").unwrap();
        assert_eq!(
            again,
            SessionCopy {
                path,
                already: true,
                written: 0
            }
        );
        assert!(copy_session(&from, "/elsewhere", FILE, &to, "/b").is_err());
    }

    #[test]
    fn a_single_file_is_imported_by_its_header() {
        let st = MemoryStorage::new();
        let text = "{\"type\":\"session\",\"id\":\"s1\",\"timestamp\":\"2026-01-02T03:04:05.678Z\",\"cwd\":\"/w/p\"}\n";
        let copy = import_session_text(&st, "/b", text, "download (1).jsonl").unwrap();
        let path = "/b/sessions/--w-p--/2026-01-02T03-04-05-678Z_s1.jsonl";
        assert_eq!(
            copy,
            SessionCopy {
                path: path.into(),
                already: false,
                written: 1
            }
        );
        assert_eq!(st.read(path).unwrap(), text.as_bytes());
        assert!(
            import_session_text(&st, "/b", text, "x.jsonl")
                .unwrap()
                .already
        );
        // No header: the unknown cwd, the given name made safe (or a default one).
        let copy = import_session_text(&st, "/b", "junk\n", "").unwrap();
        assert_eq!(copy.path, "/b/sessions/--unknown--/session.jsonl");
    }

    #[test]
    fn deleting_removes_the_file_its_artifacts_and_a_stale_lock_only() {
        let st = agent();
        // The lock a writer left when it crashed while writing it (torn, and old).
        st.set_mtime(&format!("{FILE}.lock"), 0);
        delete_session(&st, "/a", FILE).unwrap();
        for gone in [FILE, "/a/sessions/--w--/t_s", &format!("{FILE}.lock")] {
            assert!(!st.exists(gone), "{gone}");
        }
        assert!(st.exists("/a/sessions/--w--/t_other.jsonl"));
        assert!(st.exists(&format!("/a/blobs/{HASH_A}")));
        st.write("/a/blobs/x.jsonl", b"{}\n").unwrap();
        st.mkdir_all("/b/sessions").unwrap();
        st.write("/b/sessions/x.jsonl", b"").unwrap();
        for not_a_session in [
            "/a/blobs/x.jsonl",
            "/a/sessions/--w--/t_s/1.bash.log",
            "/b/sessions/x.jsonl",
        ] {
            let e = delete_session(&st, "/a", not_a_session).unwrap_err();
            assert_eq!(
                e,
                SessionError::InvalidInput(format!("not a session file: {not_a_session}"))
            );
        }
        // A session that is not there: not found, and nothing created for its lock.
        let missing = "/a/sessions/--gone--/t_x.jsonl";
        assert!(delete_session(&st, "/a", missing)
            .unwrap_err()
            .to_string()
            .contains("ENOENT"));
        assert!(!st.exists("/a/sessions/--gone--"));
    }

    #[test]
    fn a_file_that_starts_with_a_session_header_is_deleted_wherever_it_is() {
        let st = MemoryStorage::new();
        let file = "/tmp/t/picked.jsonl";
        for (path, data) in [
            (file, "{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/w\"}\n"),
            ("/tmp/t/picked/0.bash.log", "out"),
            ("/tmp/t/notes.jsonl", "{\"type\":\"message\"}\n"),
            ("/tmp/t/notes/keep.txt", "keep"),
            ("/tmp/t/doc.md", "# not a session"),
        ] {
            st.mkdir_all(parent(path)).unwrap();
            st.write(path, data.as_bytes()).unwrap();
        }
        delete_session(&st, "/a", file).unwrap();
        assert!(!st.exists(file) && !st.exists("/tmp/t/picked"));
        for refused in ["/tmp/t/notes.jsonl", "/tmp/t/doc.md"] {
            assert!(matches!(
                delete_session(&st, "/a", refused),
                Err(SessionError::InvalidInput(_))
            ));
        }
        assert!(st.exists("/tmp/t/notes.jsonl") && st.exists("/tmp/t/notes/keep.txt"));
        // Missing: not found, as the agent's unlink.
        let e = delete_session(&st, "/a", "/tmp/t/gone.jsonl").unwrap_err();
        assert_eq!(
            crate::api::ErrorKind::of(&e),
            crate::api::ErrorKind::NotFound
        );
    }

    /// Every file of the session `agent()` made, with its bytes.
    fn session_bytes(st: &MemoryStorage) -> Vec<(String, Vec<u8>)> {
        [
            FILE.to_string(),
            "/a/sessions/--w--/t_s/1.bash.log".into(),
            "/a/sessions/--w--/t_s/sub/x.md".into(),
            format!("{FILE}.lock"),
        ]
        .into_iter()
        .map(|p| {
            let bytes = st.read(&p).unwrap();
            (p, bytes)
        })
        .collect()
    }

    #[test]
    fn a_session_a_writer_of_another_process_holds_is_not_deleted() {
        let st = agent();
        let lock = format!("{FILE}.lock");
        // Another host's writer: this process cannot tell whether it runs, so it does.
        let held = r#"{"pid":4242,"host":"elsewhere","startedAt":"2026-01-01T00:00:00.000Z","token":"0000000000000001"}"#;
        st.write(&lock, held.as_bytes()).unwrap();
        let before = session_bytes(&st);
        let e = delete_session(&st, "/a", FILE).unwrap_err();
        assert_eq!(
            e,
            SessionError::DeleteLocked {
                file: FILE.into(),
                owner: "pid 4242 on elsewhere since 2026-01-01T00:00:00.000Z".into(),
            }
        );
        assert_eq!(
            crate::api::ErrorKind::of(&e),
            crate::api::ErrorKind::Conflict
        );
        assert_eq!(
            e.to_string(),
            format!("session {FILE} is being written by another process (pid 4242 on elsewhere since 2026-01-01T00:00:00.000Z); nothing was deleted: delete it when that writer is done")
        );
        assert_eq!(
            session_bytes(&st),
            before,
            "the file, its artifacts and the lock"
        );
        // A lock being written right now (torn, young) is not taken either.
        st.write(&lock, b"{\"pid\":").unwrap();
        let before = session_bytes(&st);
        assert!(matches!(
            delete_session(&st, "/a", FILE),
            Err(SessionError::DeleteLocked { .. })
        ));
        assert_eq!(session_bytes(&st), before);
    }
}
