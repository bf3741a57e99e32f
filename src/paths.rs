//! Where sessions live: `<agentDir>/sessions/--<cwd-encoded>--/<ts>_<id>.jsonl`, blobs in
//! `<agentDir>/blobs/`, breadcrumbs in `<agentDir>/terminal-sessions/`.

use crate::entry::Header;
use crate::storage::{basename, join, parent};

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

/// The temp root whose projects get `-tmp-<relative>` session directories.
const TEMP_ROOT: &str = "/tmp";

/// Where new sessions of a working directory go, as the agent puts them: `-<relative>`
/// for a cwd under the home of `agent_dir` (`<home>/.xcsh/agent`), `-tmp-<relative>`
/// under `/tmp`, else `--<encoded cwd>--`.
pub fn session_dir_for_cwd(agent_dir: &str, cwd: &str) -> String {
    let name = session_dir_name(cwd, home_of_agent_dir(agent_dir), TEMP_ROOT);
    join(&sessions_root(agent_dir), &name)
}

/// The name of the folder new sessions of `cwd` go to, for a host that knows its home and
/// temp directories (the agent's `os.homedir()` and `os.tmpdir()`): `-<rel>` under
/// `home`, `-tmp-<rel>` under `temp`, else `--<encoded cwd>--`.
pub fn session_dir_name(cwd: &str, home: Option<&str>, temp: &str) -> String {
    home_relative_dir_name(cwd, home, temp).unwrap_or_else(|| legacy_dir_name(cwd))
}

/// The sessions root that `session_dir`, a folder of `cwd`'s sessions, lies in, as the
/// agent finds it when it moves a session (`resolveManagedSessionRoot`): the folder's
/// parent when its name is one `cwd`'s sessions get (`name`, see [`session_dir_name`], or
/// the legacy `--<cwd>--`); `None` for a folder named otherwise.
pub fn managed_sessions_root<'a>(session_dir: &'a str, cwd: &str, name: &str) -> Option<&'a str> {
    let dir = session_dir.trim_end_matches('/');
    let own = basename(dir);
    (own == name || own == legacy_dir_name(cwd)).then(|| parent(dir))
}

/// Where a session of `cwd` kept in `session_dir` goes when it moves to `new_cwd`, as the
/// agent places it: `new_cwd`'s folder in the same sessions root when `session_dir` is
/// `cwd`'s own folder ([`managed_sessions_root`]), else in `<agentDir>/sessions`.
pub fn moved_session_dir(agent_dir: &str, session_dir: &str, cwd: &str, new_cwd: &str) -> String {
    let home = home_of_agent_dir(agent_dir);
    moved_session_dir_with(agent_dir, session_dir, (cwd, new_cwd), home, TEMP_ROOT)
}

/// [`moved_session_dir`] for a host that knows its home and temp directories (see
/// [`session_dir_name`]); `cwds`: from, to.
pub fn moved_session_dir_with(
    agent_dir: &str,
    session_dir: &str,
    (cwd, new_cwd): (&str, &str),
    home: Option<&str>,
    temp: &str,
) -> String {
    let name = session_dir_name(cwd, home, temp);
    let root = managed_sessions_root(session_dir, cwd, &name)
        .map_or_else(|| sessions_root(agent_dir), str::to_string);
    join(&root, &session_dir_name(new_cwd, home, temp))
}

/// `<agentDir>/sessions/--<encoded cwd>--`: where sessions of `cwd` went before the
/// home-relative names (merged into the newer folder by [`crate::merge_legacy_dir`]).
pub fn legacy_session_dir(agent_dir: &str, cwd: &str) -> String {
    join(&sessions_root(agent_dir), &legacy_dir_name(cwd))
}

/// The `--<encoded cwd>--` directory name (the seed's, and every cwd's before the
/// home-relative names).
fn legacy_dir_name(cwd: &str) -> String {
    format!("--{}--", encode_cwd(cwd))
}

pub fn blobs_dir(agent_dir: &str) -> String {
    join(agent_dir, "blobs")
}

/// The session files outside `<agentDir>/sessions` that reference blobs in this agent
/// dir's store, and the blobs each pins (one JSON record a line, see `gc/referrers.rs`):
/// garbage collection reads them too.
pub fn blob_referrers_file(agent_dir: &str) -> String {
    join(agent_dir, "blob-referrers.jsonl")
}

/// Whether `file` lies under `<agentDir>/sessions` (where garbage collection looks).
pub fn is_under_sessions_root(agent_dir: &str, file: &str) -> bool {
    let root = sessions_root(agent_dir);
    file.strip_prefix(root.trim_end_matches('/'))
        .is_some_and(|rest| rest.starts_with('/') && !rest.split('/').any(|c| c == ".."))
}

/// The agent directory of a session file laid out as the agent lays them out,
/// `<agentDir>/sessions/<project>/<file>`; `None` for a file anywhere else.
pub fn agent_dir_of_session(file: &str) -> Option<&str> {
    let (dir, name) = file.rsplit_once('/')?;
    let (sessions, project) = dir.rsplit_once('/')?;
    let (agent, last) = sessions.rsplit_once('/')?;
    let plain = |c: &str| !c.is_empty() && c != "." && c != "..";
    (last == "sessions" && plain(project) && plain(name) && !agent.is_empty()).then_some(agent)
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

/// The file name a session gets when it is imported from a single file (a file given by
/// the user, not found in an agent directory): a name already in the agent's
/// `<something>_<id>.jsonl` form is kept; else the agent's name from the header's timestamp
/// and id; else the given name with every run of characters outside `[A-Za-z0-9_.-]`
/// replaced by `_`, ending in `.jsonl`.
pub fn import_file_name(header: Option<&Header>, given: &str) -> String {
    if is_agent_file_name(given) {
        return given.to_string();
    }
    if let Some(h) = header {
        if let (id, Some(ts)) = (h.id(), h.timestamp()) {
            if !id.is_empty() && !ts.is_empty() {
                return session_file_name(ts, id);
            }
        }
    }
    let mut safe = String::with_capacity(given.len());
    let mut in_run = false;
    for c in given.chars() {
        if is_name_char(c) {
            safe.push(c);
        } else if !in_run {
            safe.push('_');
        }
        in_run = !is_name_char(c);
    }
    format!("{}.jsonl", safe.strip_suffix(".jsonl").unwrap_or(&safe))
}

/// The directory a session file without a place goes to: its header's cwd's directory,
/// `/unknown`'s when the header has no cwd (or there is no header).
pub fn session_dir_for_file(agent_dir: &str, file_start: &[u8]) -> String {
    let header = Header::from_file_start(file_start);
    let cwd = header
        .as_ref()
        .and_then(Header::cwd)
        .filter(|c| !c.is_empty());
    session_dir_for_cwd(agent_dir, cwd.unwrap_or(UNKNOWN_CWD))
}

/// The cwd of sessions whose header names none.
pub const UNKNOWN_CWD: &str = "/unknown";

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// `<[A-Za-z0-9_.-]+>_<[A-Za-z0-9_-]+>.jsonl`
fn is_agent_file_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".jsonl") else {
        return false;
    };
    if !stem.chars().all(is_name_char) {
        return false;
    }
    // An `_` with something before it and only `[A-Za-z0-9_-]` (at least one) after it.
    let after_dot = stem.rfind('.').map_or(0, |d| d + 1);
    (after_dot.max(1)..stem.len().saturating_sub(1)).any(|i| stem.as_bytes()[i] == b'_')
}

/// What an opened folder is, judged by its name and its files' relative paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderLayout {
    /// An agent directory: it has `sessions/` (its `sessions/` and `blobs/` are used).
    AgentDir,
    /// A sessions directory: it has `--<cwd>--/` project directories (only those are used).
    SessionsDir,
    /// One project directory, itself named `--<cwd>--`.
    ProjectDir,
    /// Any other folder: its `.jsonl` files go to their header's cwd's directory, each
    /// with its artifacts directory (the same path without `.jsonl`).
    Loose,
}

/// `--<anything>--`, the form of a project directory's name.
fn is_project_dir_name(name: &str) -> bool {
    name.len() >= 4 && name.starts_with("--") && name.ends_with("--")
}

fn first_dir(rel: &str) -> Option<&str> {
    rel.split_once('/').map(|(dir, _)| dir)
}

impl FolderLayout {
    pub fn detect(root_name: &str, rels: &[&str]) -> FolderLayout {
        if rels.iter().any(|r| first_dir(r) == Some("sessions")) {
            FolderLayout::AgentDir
        } else if rels
            .iter()
            .any(|r| first_dir(r).is_some_and(is_project_dir_name))
        {
            FolderLayout::SessionsDir
        } else if is_project_dir_name(root_name) {
            FolderLayout::ProjectDir
        } else {
            FolderLayout::Loose
        }
    }
}

/// One file of an opened folder: its path relative to the folder and, for `.jsonl` files
/// of a loose folder, the start of its content (for the header's cwd; `None`: `/unknown`).
#[derive(Debug, Clone, Copy)]
pub struct FolderFile<'a> {
    pub rel: &'a str,
    pub start: Option<&'a [u8]>,
}

/// Where the files of an opened folder go in `agent_dir`: for each file, the paths it is
/// copied to (empty: left out). Hidden files and directories (a part starting with `.`)
/// are always left out. The result does not depend on the contents for any layout but
/// [`FolderLayout::Loose`], and there only the `.jsonl` files' directories do: which files
/// are kept can be asked with no contents first.
pub fn opened_folder_targets(
    agent_dir: &str,
    root_name: &str,
    files: &[FolderFile],
) -> Vec<Vec<String>> {
    let rels: Vec<&str> = files.iter().map(|f| f.rel).collect();
    let layout = FolderLayout::detect(root_name, &rels);
    let sessions = sessions_root(agent_dir);
    // Loose folders: `<rel without .jsonl>` → the directory its artifacts go to.
    let mut placed: Vec<(&str, String)> = Vec::new();
    let mut out: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            if f.rel.split('/').any(|p| p.starts_with('.')) {
                return vec![];
            }
            let target = match layout {
                FolderLayout::AgentDir => matches!(first_dir(f.rel), Some("sessions" | "blobs"))
                    .then(|| join(agent_dir, f.rel)),
                FolderLayout::SessionsDir => first_dir(f.rel)
                    .is_some_and(is_project_dir_name)
                    .then(|| join(&sessions, f.rel)),
                FolderLayout::ProjectDir => Some(join(&join(&sessions, root_name), f.rel)),
                FolderLayout::Loose => f.rel.strip_suffix(".jsonl").map(|stem| {
                    let dir = session_dir_for_file(agent_dir, f.start.unwrap_or_default());
                    let name = basename(f.rel);
                    placed.push((stem, join(&dir, artifacts_dir(name).as_str())));
                    join(&dir, name)
                }),
            };
            target.into_iter().collect()
        })
        .collect();
    if layout == FolderLayout::Loose {
        for (f, targets) in files.iter().zip(out.iter_mut()) {
            if f.rel.split('/').any(|p| p.starts_with('.')) {
                continue;
            }
            for (stem, dir) in &placed {
                if let Some(rest) = f.rel.strip_prefix(stem).and_then(|r| r.strip_prefix('/')) {
                    targets.push(join(dir, rest));
                }
            }
        }
    }
    out
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

/// Every directory that may hold a cwd's sessions: the `--<cwd>--` form (the seed's, and
/// older agents'), then the home-relative form new sessions get, when it differs.
pub fn session_dirs_for_cwd(agent_dir: &str, cwd: &str) -> Vec<String> {
    let legacy = legacy_session_dir(agent_dir, cwd);
    let current = session_dir_for_cwd(agent_dir, cwd);
    if current == legacy {
        vec![legacy]
    } else {
        vec![legacy, current]
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_session_in_the_agents_layout_names_its_agent_directory() {
        let of = agent_dir_of_session;
        assert_eq!(
            of("/home/u/.xcsh/agent/sessions/--work-pi--/s.jsonl"),
            Some("/home/u/.xcsh/agent")
        );
        assert_eq!(of("/a/sessions/-proj/x.jsonl"), Some("/a"));
        assert_eq!(of("/home/u/notes/s.jsonl"), None);
        assert_eq!(
            of("/sessions/--w--/s.jsonl"),
            None,
            "no agent directory above sessions/"
        );
        assert_eq!(
            of("/a/sessions/s.jsonl"),
            None,
            "a file straight in sessions/"
        );
        assert_eq!(of("/a/sessions/../s.jsonl"), None);
        assert_eq!(of("s.jsonl"), None);
    }

    use super::*;

    #[test]
    fn a_file_is_under_the_sessions_root_only_below_it() {
        let a = "/h/.xcsh/agent";
        assert!(is_under_sessions_root(
            a,
            "/h/.xcsh/agent/sessions/--w--/s.jsonl"
        ));
        assert!(!is_under_sessions_root(
            a,
            "/h/.xcsh/agent/sessions-old/s.jsonl"
        ));
        assert!(!is_under_sessions_root(
            a,
            "/h/.xcsh/agent/sessions/../x.jsonl"
        ));
        assert!(!is_under_sessions_root(a, "/tmp/s.jsonl"));
    }

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
    fn imported_files_get_the_agents_name() {
        let header = Header::from_json(
            r#"{"type":"session","id":"abc","timestamp":"2026-02-16T10:20:30.123Z","cwd":"/w"}"#,
        );
        // Already the agent's form: kept.
        for name in [
            "2026-02-16T10-20-30-123Z_abc.jsonl",
            "a_b.jsonl",
            "x.y_z-1.jsonl",
        ] {
            assert_eq!(import_file_name(header.as_ref(), name), name);
        }
        // Otherwise from the header's timestamp and id.
        assert_eq!(
            import_file_name(header.as_ref(), "my session.jsonl"),
            "2026-02-16T10-20-30-123Z_abc.jsonl"
        );
        // Without a header: the given name made safe (runs of other characters → `_`).
        assert_eq!(
            import_file_name(None, "my  sessión (2).jsonl"),
            "my_sessi_n_2_.jsonl"
        );
        assert_eq!(import_file_name(None, "notes.txt"), "notes.txt.jsonl");
        assert_eq!(import_file_name(None, "a_b.c.jsonl"), "a_b.c.jsonl");
        assert_eq!(import_file_name(None, "_b.jsonl"), "_b.jsonl");
        assert_eq!(import_file_name(None, "ab_.jsonl"), "ab_.jsonl");
        assert!(!is_agent_file_name("_b.jsonl") && !is_agent_file_name("a_b.c.jsonl"));
    }

    #[test]
    fn a_file_without_a_place_goes_to_its_cwds_directory() {
        let start = br#"{"type":"session","id":"s","cwd":"/work/pi"}"#;
        assert_eq!(session_dir_for_file("/a", start), "/a/sessions/--work-pi--");
        assert_eq!(session_dir_for_file("/a", b"{}"), "/a/sessions/--unknown--");
        let no_cwd = br#"{"type":"session","id":"s","cwd":""}"#;
        assert_eq!(
            session_dir_for_file("/a", no_cwd),
            "/a/sessions/--unknown--"
        );
    }

    fn targets(root: &str, files: &[(&str, Option<&[u8]>)]) -> Vec<Vec<String>> {
        let files: Vec<FolderFile> = files
            .iter()
            .map(|&(rel, start)| FolderFile { rel, start })
            .collect();
        opened_folder_targets("/A", root, &files)
    }

    #[test]
    fn an_opened_folder_is_placed_by_its_layout() {
        // The agent directory: its sessions/ and blobs/ only; hidden files never.
        assert_eq!(
            targets(
                "agent",
                &[
                    ("sessions/--w--/a_b.jsonl", None),
                    ("blobs/h", None),
                    ("history.db", None),
                    ("sessions/.git/x", None),
                ]
            ),
            vec![
                vec!["/A/sessions/--w--/a_b.jsonl".to_string()],
                vec!["/A/blobs/h".to_string()],
                vec![],
                vec![]
            ]
        );
        // A sessions directory: its project directories.
        assert_eq!(
            targets("sessions", &[("--w--/a_b.jsonl", None), ("x.jsonl", None)]),
            vec![vec!["/A/sessions/--w--/a_b.jsonl".to_string()], vec![]]
        );
        // One project directory: everything in it.
        assert_eq!(
            targets("--w--", &[("a_b.jsonl", None), ("a_b/1.bash.log", None)]),
            vec![
                vec!["/A/sessions/--w--/a_b.jsonl".to_string()],
                vec!["/A/sessions/--w--/a_b/1.bash.log".to_string()]
            ]
        );
    }

    #[test]
    fn loose_files_go_to_their_headers_cwd_with_their_artifacts() {
        let start: &[u8] = br#"{"type":"session","id":"s","cwd":"/work/pi"}"#;
        let files = [
            ("deep/s.jsonl", Some(start)),
            ("deep/s/1.bash.log", None),
            ("other.txt", None),
            ("n.jsonl", None),
        ];
        assert_eq!(
            targets("downloads", &files),
            vec![
                vec!["/A/sessions/--work-pi--/s.jsonl".to_string()],
                vec!["/A/sessions/--work-pi--/s/1.bash.log".to_string()],
                vec![],
                vec!["/A/sessions/--unknown--/n.jsonl".to_string()],
            ]
        );
        assert_eq!(
            FolderLayout::detect("downloads", &["a.jsonl"]),
            FolderLayout::Loose
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

    #[test]
    fn a_moved_session_stays_in_the_sessions_root_of_its_cwds_own_folder() {
        let agent = "/home/u/.xcsh/agent";
        let moved = |dir: &str| moved_session_dir(agent, dir, "/home/u/a", "/home/u/b");
        assert_eq!(moved("/data/sessions/-a"), "/data/sessions/-b");
        assert_eq!(moved("/data/sessions/--home-u-a--/"), "/data/sessions/-b");
        assert_eq!(
            moved("/data/sessions/custom"),
            "/home/u/.xcsh/agent/sessions/-b"
        );
        assert_eq!(
            managed_sessions_root("/data/-a", "/home/u/a", "-a"),
            Some("/data")
        );
        assert_eq!(managed_sessions_root("/data/-b", "/home/u/a", "-a"), None);
    }
}
