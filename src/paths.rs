//! Where sessions live: `<agentDir>/sessions/--<cwd-encoded>--/<ts>_<id>.jsonl`, blobs in
//! `<agentDir>/blobs/`, breadcrumbs in `<agentDir>/terminal-sessions/`.

use crate::storage::join;

/// `<cwd-encoded>`: the leading slash removed, `/`, `\` and `:` replaced by `-`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect()
}

pub fn sessions_root(agent_dir: &str) -> String {
    join(agent_dir, "sessions")
}

/// The default session directory of a working directory.
pub fn session_dir_for_cwd(agent_dir: &str, cwd: &str) -> String {
    join(
        &sessions_root(agent_dir),
        &format!("--{}--", encode_cwd(cwd)),
    )
}

pub fn blobs_dir(agent_dir: &str) -> String {
    join(agent_dir, "blobs")
}

pub fn terminal_sessions_dir(agent_dir: &str) -> String {
    join(agent_dir, "terminal-sessions")
}

/// `<iso with ':' and '.' replaced by '-'>_<sessionId>.jsonl`
pub fn session_file_name(iso_timestamp: &str, session_id: &str) -> String {
    format!(
        "{}_{session_id}.jsonl",
        iso_timestamp.replace([':', '.'], "-")
    )
}

/// The artifacts directory of a session file: the same path without `.jsonl`.
pub fn artifacts_dir(session_file: &str) -> String {
    session_file
        .strip_suffix(".jsonl")
        .unwrap_or(session_file)
        .to_string()
}

/// Artifacts directory of a session, or a per-session temporary one when the session has
/// no file (the Task tool's fallback for subagent outputs).
pub fn artifacts_dir_or_temp(
    session_file: Option<&str>,
    temp_root: &str,
    session_id: &str,
) -> String {
    match session_file {
        Some(f) => artifacts_dir(f),
        None => join(temp_root, &format!("xcsh-artifacts-{session_id}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_the_agent() {
        assert_eq!(encode_cwd("/work/pi"), "work-pi");
        assert_eq!(encode_cwd("C:\\Users\\me"), "C--Users-me");
        assert_eq!(
            session_dir_for_cwd("/h/.xcsh/agent", "/work/pi"),
            "/h/.xcsh/agent/sessions/--work-pi--"
        );
    }

    #[test]
    fn file_name_from_timestamp() {
        assert_eq!(
            session_file_name("2026-02-16T10:20:30.123Z", "1f9d2a6b9c0d1234"),
            "2026-02-16T10-20-30-123Z_1f9d2a6b9c0d1234.jsonl"
        );
        assert_eq!(artifacts_dir("/s/a_b.jsonl"), "/s/a_b");
    }
}
