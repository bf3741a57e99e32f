//! Where sync keeps things: the objects of a remote, and this machine's id and state in
//! the agent directory.
//!
//! ```text
//! <prefix>/sessions/<project>/<session-id>/<machine-id>/<seq>.jsonl   a segment
//! <agent-dir>/sync/machine-id                                          this machine
//! <agent-dir>/sync/state/<project>/<session-id>.json                   what was synced
//! ```
//! `<project>` is the session's folder under `sessions/` (`--home-me-proj--`), `<seq>` ten
//! digits, so that key order is the order a machine wrote its segments in.

use crate::storage::{join, Storage, StorageError, StorageExt};

/// The object key of segment `seq` of `machine` for a session.
pub fn segment_key(prefix: &str, project: &str, session: &str, machine: &str, seq: u64) -> String {
    format!(
        "{}{seq:010}.jsonl",
        machine_prefix(prefix, project, session, machine)
    )
}

/// The key prefix of every segment of a session.
pub fn session_prefix(prefix: &str, project: &str, session: &str) -> String {
    format!("{}{project}/{session}/", sessions_prefix(prefix))
}

fn machine_prefix(prefix: &str, project: &str, session: &str, machine: &str) -> String {
    format!("{}{machine}/", session_prefix(prefix, project, session))
}

/// The key prefix of every session of a remote.
pub fn sessions_prefix(prefix: &str) -> String {
    let p = prefix.trim_matches('/');
    if p.is_empty() {
        "sessions/".to_string()
    } else {
        format!("{p}/sessions/")
    }
}

/// A segment's key, read back.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SegmentKey {
    pub project: String,
    pub session: String,
    pub machine: String,
    pub seq: u64,
}

/// Reads `key` (relative to [`sessions_prefix`]); `None` for a key sync did not write.
pub fn parse_segment_key(rel: &str) -> Option<SegmentKey> {
    let mut parts = rel.split('/');
    let (project, session, machine, file) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !is_name(project) || !is_name(session) || !is_machine_id(machine) {
        return None;
    }
    let digits = file.strip_suffix(".jsonl")?;
    if digits.len() != 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(SegmentKey {
        project: project.to_string(),
        session: session.to_string(),
        machine: machine.to_string(),
        seq: digits.parse().ok()?,
    })
}

/// A folder or session name that can stand in a key: no separator, no `.`/`..`.
pub fn is_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\', '\0'])
}

fn is_machine_id(s: &str) -> bool {
    s.len() == 16
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// `<agent-dir>/sync`
pub fn sync_dir(agent_dir: &str) -> String {
    join(agent_dir, "sync")
}

/// This machine's id: made once per agent directory (16 hex digits) and kept in
/// `<agent-dir>/sync/machine-id`. Two syncs making it at once agree on the first one
/// written (`create_new`).
pub fn machine_id(storage: &dyn Storage, agent_dir: &str) -> Result<String, StorageError> {
    let dir = sync_dir(agent_dir);
    let path = join(&dir, "machine-id");
    if let Some(id) = read_machine_id(storage, &path)? {
        return Ok(id);
    }
    storage.mkdir_all(&dir)?;
    let id = format!("{:016x}", storage.env().random_u64());
    match storage.create_new(&path, format!("{id}\n").as_bytes()) {
        Ok(()) => Ok(id),
        Err(StorageError::AlreadyExists(_)) => {
            read_machine_id(storage, &path)?.ok_or_else(|| bad_machine_id(&path))
        }
        Err(e) => Err(e),
    }
}

fn read_machine_id(storage: &dyn Storage, path: &str) -> Result<Option<String>, StorageError> {
    if !storage.exists(path) {
        return Ok(None);
    }
    let text = storage.read(path)?;
    let id = String::from_utf8_lossy(&text).trim().to_string();
    if is_machine_id(&id) {
        Ok(Some(id))
    } else {
        Err(bad_machine_id(path))
    }
}

fn bad_machine_id(path: &str) -> StorageError {
    StorageError::Other(format!(
        "{path}: not a machine id (16 lowercase hex digits); delete it to make a new one"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_key_reads_back() {
        let k = segment_key("team/", "--home-me-p--", "abc", "0123456789abcdef", 7);
        assert_eq!(
            k,
            "team/sessions/--home-me-p--/abc/0123456789abcdef/0000000007.jsonl"
        );
        let rel = k.strip_prefix(&sessions_prefix("team")).unwrap();
        let s = parse_segment_key(rel).unwrap();
        assert_eq!(
            (s.project.as_str(), s.session.as_str(), s.seq),
            ("--home-me-p--", "abc", 7)
        );
    }

    #[test]
    fn keys_sync_did_not_write_are_not_segments() {
        for rel in [
            "p/s/0123456789abcdef/7.jsonl",
            "p/s/xyz/0000000007.jsonl",
            "p/s/0123456789abcdef/0000000007.json",
            "p/../0123456789abcdef/0000000007.jsonl",
            "p/s/0123456789abcdef/0000000007.jsonl/x",
        ] {
            assert_eq!(parse_segment_key(rel), None, "{rel}");
        }
    }
}
