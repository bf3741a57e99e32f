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

/// The home directory an agent dir lives in (`<home>/.xcsh/agent`, or the pi / omp
/// equivalents), used to read the newer home-relative session directories.
pub fn home_of_agent_dir(agent_dir: &str) -> Option<&str> {
    let trimmed = agent_dir.trim_end_matches('/');
    [".xcsh/agent", ".omp/agent", ".pi/agent"]
        .iter()
        .find_map(|suffix| {
            trimmed
                .strip_suffix(suffix)
                .map(|h| h.trim_end_matches('/'))
        })
        .filter(|h| !h.is_empty())
}

/// `path` relative to `base` when it is inside it (`Some("")` for `base` itself).
fn inside<'a>(path: &'a str, base: &str) -> Option<&'a str> {
    let path = path.trim_end_matches('/');
    let base = base.trim_end_matches('/');
    if path == base {
        return Some("");
    }
    path.strip_prefix(base)
        .and_then(|rest| rest.strip_prefix('/'))
}

/// The newer (oh-my-pi) directory name: `-<cwd relative to home>` (`-` for home
/// itself), `-tmp-<relative>` under the temp dir; `None` elsewhere.
pub fn home_relative_dir_name(cwd: &str, home: Option<&str>, temp: &str) -> Option<String> {
    let encode = |prefix: &str, rel: &str| {
        let enc: String = rel
            .chars()
            .map(|c| {
                if matches!(c, '/' | '\\' | ':') {
                    '-'
                } else {
                    c
                }
            })
            .collect();
        match (enc.is_empty(), prefix.ends_with('-')) {
            (true, _) => prefix.to_string(),
            (false, true) => format!("{prefix}{enc}"),
            (false, false) => format!("{prefix}-{enc}"),
        }
    };
    if let Some(rel) = home.and_then(|h| inside(cwd, h)) {
        return Some(encode("-", rel));
    }
    inside(cwd, temp).map(|rel| encode("-tmp", rel))
}

/// Every directory that may hold a cwd's sessions: the `--<cwd>--` form this library
/// writes (the seed's), then the home-relative form newer agents write, when it differs.
pub fn session_dirs_for_cwd(agent_dir: &str, cwd: &str) -> Vec<String> {
    let mut dirs = vec![session_dir_for_cwd(agent_dir, cwd)];
    if let Some(name) = home_relative_dir_name(cwd, home_of_agent_dir(agent_dir), "/tmp") {
        let dir = join(&sessions_root(agent_dir), &name);
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
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
    fn home_relative_names_as_newer_agents_write_them() {
        assert_eq!(home_of_agent_dir("/home/me/.xcsh/agent"), Some("/home/me"));
        assert_eq!(home_of_agent_dir("/elsewhere/agent"), None);
        assert_eq!(
            home_relative_dir_name("/home/me/work/pi", Some("/home/me"), "/tmp").as_deref(),
            Some("-work-pi")
        );
        assert_eq!(
            home_relative_dir_name("/home/me", Some("/home/me"), "/tmp").as_deref(),
            Some("-")
        );
        assert_eq!(
            home_relative_dir_name("/tmp/x/y", Some("/home/me"), "/tmp").as_deref(),
            Some("-tmp-x-y")
        );
        assert_eq!(
            home_relative_dir_name("/srv/app", Some("/home/me"), "/tmp"),
            None
        );
        assert_eq!(
            home_relative_dir_name("/home/meow", Some("/home/me"), "/tmp"),
            None
        );
        assert_eq!(
            session_dirs_for_cwd("/home/me/.xcsh/agent", "/home/me/work/pi"),
            vec![
                "/home/me/.xcsh/agent/sessions/--home-me-work-pi--",
                "/home/me/.xcsh/agent/sessions/-work-pi"
            ]
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
