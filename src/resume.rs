//! Choosing which session to open: `--resume <id-prefix|path>`, `--continue` with the
//! terminal breadcrumb, and the switch flow shared by start-up and in-session switching.

use crate::entry::Payload;
use crate::error::SessionError;
use crate::listing::{self, ListText, SessionInfo};
use crate::paths;
use crate::session::{CreateOptions, OpenOptions, Persistence, Session};
use crate::storage::{join, Storage, StorageError, StorageExt};
use std::rc::Rc;

/// Resume failures, with the agent's messages (plus the deliberate ambiguity report).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    #[error("Session \"{0}\" not found.")]
    NotFound(String),
    #[error("Session \"{arg}\" is in another project ({cwd}).")]
    InAnotherProject { arg: String, cwd: String },
    #[error("Session \"{arg}\" is ambiguous: {} sessions match", candidates.len())]
    Ambiguous {
        arg: String,
        candidates: Vec<SessionInfo>,
    },
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// Where a resume argument points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeTarget {
    /// A path-like argument: opened directly.
    Path(String),
    /// A session of the current project.
    Local(SessionInfo),
    /// A session of another project: needs confirmation, then is forked here.
    OtherProject(SessionInfo),
}

/// Contains `/` or `\`, or ends with `.jsonl`.
pub fn is_path_like(arg: &str) -> bool {
    arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl")
}

/// Does `arg` (case-insensitively) prefix the session id, the file stem, or the part of
/// the stem after the last `_`? `Some(true)` for an exact match of one of them.
fn matches(info: &SessionInfo, arg: &str) -> Option<bool> {
    let arg = arg.to_lowercase();
    let stem = crate::storage::basename(&info.head.path)
        .trim_end_matches(".jsonl")
        .to_lowercase();
    let after = stem.rsplit('_').next().unwrap_or("").to_string();
    let keys = [info.head.id.to_lowercase(), stem, after];
    if keys.contains(&arg) {
        Some(true)
    } else if keys.iter().any(|k| k.starts_with(&arg)) {
        Some(false)
    } else {
        None
    }
}

fn pick_one(sessions: Vec<SessionInfo>, arg: &str) -> Result<Option<SessionInfo>, ResumeError> {
    let found: Vec<(bool, SessionInfo)> = sessions
        .into_iter()
        .filter_map(|s| matches(&s, arg).map(|exact| (exact, s)))
        .collect();
    let exact: Vec<&SessionInfo> = found.iter().filter(|(e, _)| *e).map(|(_, s)| s).collect();
    if exact.len() == 1 {
        return Ok(Some(exact[0].clone()));
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.into_iter().next().map(|(_, s)| s)),
        _ => Err(ResumeError::Ambiguous {
            arg: arg.to_string(),
            candidates: found.into_iter().map(|(_, s)| s).collect(),
        }),
    }
}

fn same_dir(a: &str, b: &str) -> bool {
    let norm = |p: &str| {
        let parts: Vec<&str> = p
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        parts.join("/")
    };
    norm(a) == norm(b)
}

/// Resolve a `--resume` value: path-like values open directly; otherwise an id prefix in
/// this project first, then (without an explicit session dir) in every project.
pub fn resolve(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    arg: &str,
    session_dir: Option<&str>,
) -> Result<ResumeTarget, ResumeError> {
    if is_path_like(arg) {
        return Ok(ResumeTarget::Path(arg.to_string()));
    }
    if let Some(local) = pick_one(
        listing::list(
            storage.clone(),
            agent_dir,
            cwd,
            session_dir,
            ListText::Leave,
        )?,
        arg,
    )? {
        return Ok(ResumeTarget::Local(local));
    }
    if session_dir.is_some() {
        return Err(ResumeError::NotFound(arg.to_string()));
    }
    match pick_one(listing::list_all(storage, agent_dir, ListText::Leave)?, arg)? {
        Some(s) if same_dir(&s.head.cwd, cwd) => Ok(ResumeTarget::Local(s)),
        Some(s) => Ok(ResumeTarget::OtherProject(s)),
        None => Err(ResumeError::NotFound(arg.to_string())),
    }
}

/// Where [`find_resumable`] found a session: the local directory, or the whole store
/// (JSON: `"local"`, `"global"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Scope {
    Local,
    Global,
}

/// The agent's `resolveResumableSession`: `arg` matched in `local_dir` first (whatever
/// the headers' cwd), then, when `search_all`, in every project of `agent_dir`. `None`
/// when nothing matches; more than one match is [`ResumeError::Ambiguous`].
pub fn find_resumable(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    local_dir: &str,
    search_all: bool,
    arg: &str,
) -> Result<Option<(SessionInfo, Scope)>, ResumeError> {
    if let Some(s) = pick_one(
        listing::list(
            storage.clone(),
            agent_dir,
            "",
            Some(local_dir),
            ListText::Leave,
        )?,
        arg,
    )? {
        return Ok(Some((s, Scope::Local)));
    }
    if !search_all {
        return Ok(None);
    }
    Ok(
        pick_one(listing::list_all(storage, agent_dir, ListText::Leave)?, arg)?
            .map(|s| (s, Scope::Global)),
    )
}

/// Turn a resolved target into the session file to open; another project's session is
/// forked into this one when `confirm` says yes, and refused otherwise.
pub fn open_target(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    arg: &str,
    target: ResumeTarget,
    confirm: bool,
) -> Result<String, ResumeError> {
    match target {
        ResumeTarget::Path(p) => Ok(p),
        ResumeTarget::Local(s) => Ok(s.head.path),
        ResumeTarget::OtherProject(s) if confirm => {
            let (forked, _) = Session::fork_from(
                storage,
                &s.head.path,
                &CreateOptions {
                    agent_dir: agent_dir.into(),
                    cwd: cwd.into(),
                    ..Default::default()
                },
            )?;
            Ok(forked.file().unwrap_or_default().to_string())
        }
        ResumeTarget::OtherProject(s) => Err(ResumeError::InAnotherProject {
            arg: arg.to_string(),
            cwd: s.head.cwd,
        }),
    }
}

// ---- terminal breadcrumbs and --continue ----

/// The terminal's id: the tty path without `/dev/` (`/` → `-`), else
/// `kitty-$KITTY_WINDOW_ID`, `tmux-$TMUX_PANE`, `apple-$TERM_SESSION_ID`,
/// `wt-$WT_SESSION`; `None` when the terminal cannot be identified.
pub fn terminal_id(tty: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let raw = match tty.filter(|t| t.starts_with("/dev/") && *t != "/dev/tty") {
        Some(t) => t.trim_start_matches("/dev/").replace('/', "-"),
        None => [
            ("KITTY_WINDOW_ID", "kitty"),
            ("TMUX_PANE", "tmux"),
            ("TERM_SESSION_ID", "apple"),
            ("WT_SESSION", "wt"),
        ]
        .iter()
        .find_map(|(var, prefix)| {
            env(var)
                .filter(|v| !v.is_empty())
                .map(|v| format!("{prefix}-{v}"))
        })?,
    };
    // The id names a file: nothing may steer it out of the breadcrumb directory.
    let safe: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '%' | ':') {
                c
            } else {
                '-'
            }
        })
        .collect();
    (!safe.is_empty() && safe != "." && safe != "..").then_some(safe)
}

/// Breadcrumb file content: `<cwd>\n<sessionFile>\n`.
pub fn write_breadcrumb(
    storage: &dyn Storage,
    agent_dir: &str,
    terminal: &str,
    cwd: &str,
    session_file: &str,
) -> Result<(), StorageError> {
    let dir = paths::terminal_sessions_dir(agent_dir);
    storage.mkdir_all(&dir)?;
    storage.atomic_write(
        &join(&dir, terminal),
        format!("{cwd}\n{session_file}\n").as_bytes(),
    )
}

/// The breadcrumb's (cwd, session file), if the file exists and has both lines.
pub fn read_breadcrumb(
    storage: &dyn Storage,
    agent_dir: &str,
    terminal: &str,
) -> Option<(String, String)> {
    let bytes = storage
        .read(&join(&paths::terminal_sessions_dir(agent_dir), terminal))
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    let (cwd, file) = (lines.next()?.to_string(), lines.next()?.to_string());
    (!cwd.is_empty() && !file.is_empty()).then_some((cwd, file))
}

/// `resume`: the session file to open.
#[derive(serde::Serialize)]
pub struct ResumedRecord<'a> {
    pub path: &'a str,
}

/// Where `continue`'s path came from (JSON: `"breadcrumb"`, `"mostRecent"`, `"new"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ContinueSource {
    Breadcrumb,
    MostRecent,
    New,
}

/// `resolveResumableSession`: the session found and where.
#[derive(serde::Serialize)]
pub struct ResumableRecord<'a> {
    pub session: crate::listing::SessionInfoRecord<'a>,
    pub scope: Scope,
}

/// `continue`: the session file and where it came from (for a new session, where it will
/// be written).
#[derive(serde::Serialize)]
pub struct ContinuedRecord<'a> {
    pub path: &'a str,
    pub source: ContinueSource,
}

/// Why `--continue` chose what it chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContinueTarget {
    /// This terminal's breadcrumb (same cwd, file still there).
    Breadcrumb(String),
    /// The newest valid session file of the project.
    MostRecent(String),
    /// Nothing to continue: a new session.
    New,
}

/// `continueRecent`: breadcrumb first, then the newest file, then a new session.
pub fn continue_recent(
    storage: &dyn Storage,
    agent_dir: &str,
    cwd: &str,
    session_dir: Option<&str>,
    terminal: Option<&str>,
) -> Result<ContinueTarget, StorageError> {
    if let Some((crumb_cwd, file)) = terminal.and_then(|t| read_breadcrumb(storage, agent_dir, t)) {
        if same_dir(&crumb_cwd, cwd) && storage.exists(&file) {
            return Ok(ContinueTarget::Breadcrumb(file));
        }
    }
    let dirs = match session_dir {
        Some(d) => vec![d.to_string()],
        None => paths::session_dirs_for_cwd(agent_dir, cwd),
    };
    Ok(
        match listing::recent_sessions_in(storage, &dirs, 1)?
            .into_iter()
            .next()
        {
            Some(r) => ContinueTarget::MostRecent(r.head.path),
            None => ContinueTarget::New,
        },
    )
}

/// `continue` as the CLI and the package do it: [`continue_recent`], with a new session's
/// path being where [`Session::create`] will write it (no session is written now, but
/// placing it folds the cwd's legacy folder into its folder, as the agent does); with a
/// terminal, its breadcrumb then points at the chosen file (best effort: a breadcrumb
/// that cannot be written never fails the caller).
pub fn continue_in(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    session_dir: Option<&str>,
    terminal: Option<&str>,
) -> Result<(String, ContinueSource), StorageError> {
    let (path, source) = match continue_recent(&*storage, agent_dir, cwd, session_dir, terminal)? {
        ContinueTarget::Breadcrumb(p) => (p, ContinueSource::Breadcrumb),
        ContinueTarget::MostRecent(p) => (p, ContinueSource::MostRecent),
        ContinueTarget::New => {
            let options = CreateOptions {
                agent_dir: agent_dir.into(),
                cwd: cwd.into(),
                session_dir: session_dir.map(str::to_string),
                ..Default::default()
            };
            let s = Session::create(storage.clone(), &options);
            (
                s.file().unwrap_or_default().to_string(),
                ContinueSource::New,
            )
        }
    };
    if let Some(t) = terminal {
        let _ = write_breadcrumb(&*storage, agent_dir, t, cwd, &path);
    }
    Ok((path, source))
}

// ---- opening a session for the agent: the same at start-up and on a switch ----

/// Thinking levels, weakest first.
pub const THINKING_LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/// Clamp a level to what the model supports (`None`: the model cannot think → `off`).
pub fn clamp_thinking_level(level: &str, model_max: Option<&str>) -> String {
    let rank = |l: &str| THINKING_LEVELS.iter().position(|x| *x == l);
    match (rank(level), model_max.and_then(rank)) {
        (_, None) => "off".into(),
        (Some(l), Some(m)) => THINKING_LEVELS[l.min(m)].to_string(),
        (None, Some(_)) => level.to_string(),
    }
}

/// What the caller supplies when a session is opened for use.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    pub agent_dir: String,
    pub cwd: String,
    /// The configured default thinking level, used when the branch has none.
    pub default_thinking_level: String,
    /// The strongest level the restored model supports (`None`: no thinking).
    pub model_max_thinking_level: Option<String>,
    /// Terminal id for the breadcrumb (written best-effort).
    pub terminal: Option<String>,
}

/// What was restored from the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub context_json: String,
    /// `provider/model` of `models.default`, if any.
    pub model: Option<String>,
    pub thinking_level: String,
    /// A `thinking_level_change` was appended because the branch had none.
    pub appended_thinking_level: bool,
    pub mode: String,
    pub mode_data: Option<String>,
    pub breadcrumb_error: Option<String>,
}

/// Open a session for use (migrate, resolve blobs lazily, rebuild the context, restore
/// model, thinking level and mode). Start-up and `switch_session` both go through here,
/// so both restore the same things.
pub fn open_for_use(
    storage: Rc<dyn Storage>,
    path: &str,
    options: &RestoreOptions,
) -> Result<(Session, Restored), SessionError> {
    let mut session = Session::open(
        storage.clone(),
        path,
        &OpenOptions {
            persistence: Persistence::Persistent,
            agent_dir: options.agent_dir.clone(),
            cwd: options.cwd.clone(),
        },
    )?;
    let breadcrumb_error = options.terminal.as_deref().and_then(|t| {
        write_breadcrumb(&*storage, &options.agent_dir, t, &options.cwd, path)
            .err()
            .map(|e| e.to_string())
    });
    let has_level = session
        .branch_path(None)?
        .iter()
        .any(|e| matches!(e.payload, Payload::ThinkingLevelChange { .. }));
    let mut appended = false;
    if !has_level {
        let level = clamp_thinking_level(
            &options.default_thinking_level,
            options.model_max_thinking_level.as_deref(),
        );
        session.append_thinking_level_change(Some(&level))?;
        appended = true;
    }
    let ctx = session.context();
    let json_str = |raw: &str| serde_json::from_str::<String>(raw).ok();
    let restored = Restored {
        model: ctx
            .models
            .iter()
            .find(|(r, _)| r == "default")
            .and_then(|(_, m)| json_str(m)),
        thinking_level: json_str(&ctx.thinking_level).unwrap_or_else(|| "off".into()),
        appended_thinking_level: appended,
        mode: ctx
            .mode
            .as_deref()
            .and_then(json_str)
            .unwrap_or_else(|| "none".into()),
        mode_data: ctx.mode_data.clone(),
        context_json: ctx.to_json(),
        breadcrumb_error,
    };
    Ok((session, restored))
}

/// Hooks around a switch; `before` may cancel it.
pub trait SwitchHooks {
    fn before_switch(&mut self, _from: Option<&str>, _to: &str) -> bool {
        true
    }
    fn after_switch(&mut self, _from: Option<&str>, _to: &str, _restored: &Restored) {}
}

/// `switchSession`: before hook (may cancel: `Ok(None)`), flush the current session, open
/// the new one for use, after hook. On success `current` is the new session.
pub fn switch_session(
    current: &mut Session,
    path: &str,
    options: &RestoreOptions,
    hooks: &mut dyn SwitchHooks,
) -> Result<Option<Restored>, SessionError> {
    let previous = current.file().map(str::to_string);
    if !hooks.before_switch(previous.as_deref(), path) {
        return Ok(None);
    }
    current.flush()?;
    let (next, restored) = open_for_use(current.storage(), path, options)?;
    *current = next;
    hooks.after_switch(previous.as_deref(), path, &restored);
    Ok(Some(restored))
}

/// Candidates of an ambiguous prefix as JSON (id, cwd, title, modified, path).
pub fn candidates_json(candidates: &[SessionInfo]) -> String {
    listing::list_json(candidates)
}
