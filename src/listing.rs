//! Session discovery: the light "recent" list (4096-byte prefix reads only) and the full
//! `SessionInfo` lists of one project or of all projects (through each file's index: its
//! header, first user message and counts; the text of every message only when asked).

use crate::entry::{pick, EntryType, Header, Payload};
use crate::flavour::Flavour;
use crate::index::{each_entry, header_of, open_index, IndexCache, SessionIndex};
use crate::json::raw_str;
use crate::jsonl::parse_lenient;
use crate::paths;
use crate::session::Session;
use crate::storage::{join, Storage, StorageResult};
use crate::time::iso_from_ms;
use serde_json::value::RawValue;
use std::rc::Rc;

/// How much of each file the recent list reads.
pub const RECENT_PREFIX_BYTES: u64 = 4096;
pub const DEFAULT_RECENT_LIMIT: usize = 3;
const NAME_MAX_CHARS: usize = 40;

/// What every listed session starts with, and every session record's leading keys in
/// this order: `path`, `id`, `cwd` and `title` (left out when absent).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionHead {
    pub path: String,
    pub id: String,
    pub cwd: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl SessionHead {
    fn of(path: &str, header: &Header, title: Option<String>) -> SessionHead {
        SessionHead {
            path: path.to_string(),
            id: header.id().to_string(),
            cwd: header.cwd().unwrap_or_default().to_string(),
            title,
        }
    }
}

/// One entry of the welcome screen's recent list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentSessionInfo {
    pub head: SessionHead,
    pub first_user_text: Option<String>,
    pub mtime_ms: i64,
}

impl RecentSessionInfo {
    /// Display name: [`Self::full_name`] capped at 40 characters.
    pub fn name(&self) -> String {
        cap(&self.full_name(), NAME_MAX_CHARS)
    }

    /// The first non-empty of the sanitized title, first user prompt and header id, else
    /// the file name without `.jsonl`.
    pub fn full_name(&self) -> String {
        let candidates = [
            self.head.title.as_deref(),
            self.first_user_text.as_deref(),
            Some(self.head.id.as_str()),
        ];
        candidates
            .into_iter()
            .flatten()
            .map(sanitize)
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| crate::storage::basename(&self.head.path).replacen(".jsonl", "", 1))
    }

    /// "just now", "5m ago", "3h ago", "2d ago", or the date.
    pub fn time_ago(&self, now_ms: i64) -> String {
        time_ago(self.mtime_ms, now_ms)
    }
}

/// First line only, control characters stripped, trimmed.
pub fn sanitize(s: &str) -> String {
    let first = s.split('\n').next().unwrap_or("");
    first
        .chars()
        .filter(|c| !matches!(*c as u32, 0..=0x1f | 0x7f))
        .collect::<String>()
        .trim()
        .to_string()
}

/// At most `max` characters (UTF-16 units, as the agent counts): `max - 1` and `…`.
pub fn cap(s: &str, max: usize) -> String {
    if crate::persist::utf16_len(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut units = 0;
    for c in s.chars() {
        if units + c.len_utf16() > max - 1 {
            break;
        }
        units += c.len_utf16();
        out.push(c);
    }
    out.push('…');
    out
}

pub fn time_ago(then_ms: i64, now_ms: i64) -> String {
    let secs = (now_ms - then_ms).max(0) / 1000;
    let (mins, hours, days) = (secs / 60, secs / 3600, secs / 86_400);
    if mins < 1 {
        "just now".into()
    } else if hours < 1 {
        format!("{mins}m ago")
    } else if days < 1 {
        format!("{hours}h ago")
    } else if days < 7 {
        format!("{days}d ago")
    } else {
        iso_from_ms(then_ms)[..10].to_string()
    }
}

/// A listed session's `firstMessage` when it has no user message.
pub const NO_MESSAGES: &str = "(no messages)";

/// The name a viewer shows for a listed session, from the fields of its record (a
/// recent-list `name`, a `title`, a `firstMessage`, the `id`): the first one present, a
/// first message only when the session has one; whitespace runs become one space.
pub fn display_name(
    name: Option<&str>,
    title: Option<&str>,
    first_message: Option<&str>,
    id: &str,
) -> String {
    let message = first_message.filter(|m| !m.is_empty() && *m != NO_MESSAGES);
    let chosen = name.or(title).or(message).unwrap_or(id);
    chosen.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every session file of an agent directory: the `.jsonl` files anywhere under its
/// `sessions/` directory, in byte order of their paths.
pub fn session_file_paths(storage: &dyn Storage, agent_dir: &str) -> StorageResult<Vec<String>> {
    let mut files = crate::storage::files_under(storage, &paths::sessions_root(agent_dir))?;
    files.retain(|f| f.ends_with(".jsonl"));
    Ok(files)
}

/// The cwd in the header of the most recently modified session file (the first of equally
/// recent ones): the project a viewer shows first. `None` without sessions or header.
pub fn newest_session_cwd(storage: &dyn Storage, agent_dir: &str) -> Option<String> {
    let mut newest: Option<(&String, i64)> = None;
    let files = session_file_paths(storage, agent_dir).ok()?;
    for f in &files {
        let Ok(stat) = storage.stat(f) else { continue };
        if newest.is_none_or(|(_, m)| stat.mtime_ms > m) {
            newest = Some((f, stat.mtime_ms));
        }
    }
    let start = storage.read_prefix(newest?.0, RECENT_PREFIX_BYTES).ok()?;
    Header::from_file_start(&start)?.cwd().map(str::to_string)
}

/// Text of a message's `content` as a listed session's `firstMessage` and
/// `allMessagesText` read it (the agent's `extractTextFromContent`): a string as it is, or
/// the `text` of every block of type `text` joined with a space (a block without a string
/// `text` adds an empty part). `None` when the content is neither.
pub fn message_text(message: &str) -> Option<String> {
    let f = pick(message, &["content"]).ok()?;
    let content = f[0]?;
    if let Some(s) = raw_str(content) {
        return Some(s.into_owned());
    }
    let blocks: Vec<&RawValue> = serde_json::from_str(content.get()).ok()?;
    let texts: Vec<String> = blocks
        .iter()
        .filter_map(|b| {
            let f = pick(b.get(), &["type", "text"]).ok()?;
            (f[0].and_then(raw_str).as_deref() == Some("text")).then(|| {
                f[1].and_then(raw_str)
                    .map(|s| s.into_owned())
                    .unwrap_or_default()
            })
        })
        .collect();
    Some(texts.join(" "))
}

/// The prompt that names a session in the recent list (the agent's
/// `extractFirstUserPrompt`): a string content as it is, else the first block with a string
/// `text`, whatever its type. `None` when there is none.
fn prompt_text(message: &str) -> Option<String> {
    let f = pick(message, &["content"]).ok()?;
    let content = f[0]?;
    if let Some(s) = raw_str(content) {
        return Some(s.into_owned());
    }
    let blocks: Vec<&RawValue> = serde_json::from_str(content.get()).ok()?;
    blocks.iter().find_map(|b| {
        let f = pick(b.get(), &["text"]).ok()?;
        f[0].and_then(raw_str).map(|s| s.into_owned())
    })
}

fn jsonl_files(storage: &dyn Storage, dir: &str) -> StorageResult<Vec<String>> {
    match storage.list_dir(dir) {
        Ok(entries) => Ok(entries
            .into_iter()
            .filter(|e| !e.is_dir && e.name.ends_with(".jsonl"))
            .map(|e| join(dir, &e.name))
            .collect()),
        Err(e) if e.is_not_found() => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Read the light metadata of one file from its first 4096 bytes; `None` when the file
/// has no valid header there.
pub fn recent_info(storage: &dyn Storage, path: &str) -> Option<RecentSessionInfo> {
    let prefix = storage.read_prefix(path, RECENT_PREFIX_BYTES).ok()?;
    let mtime_ms = storage.stat(path).ok()?.mtime_ms;
    let text = String::from_utf8_lossy(&prefix);
    let parsed = parse_lenient(&text);
    let mut records = parsed.records.iter().map(|r| &text[r.start..r.end]);
    let header = Header::from_json(records.next()?)?;
    // As the agent: a header with a title (even one that sanitizes to nothing) is not
    // named by its first prompt.
    let titled = header.fields().get("title").is_some_and(truthy);
    let first_user_text = if titled {
        None
    } else {
        first_user_text(records)
    };
    Some(RecentSessionInfo {
        head: SessionHead::of(path, &header, header.title().map(str::to_string)),
        first_user_text,
        mtime_ms,
    })
}

/// JavaScript's truthiness of a JSON value.
fn truthy(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The prompt of the first user message with one among entry records (JSON text, file
/// order): see [`prompt_text`].
fn first_user_text<'a>(mut records: impl Iterator<Item = &'a str>) -> Option<String> {
    records.find_map(|r| {
        let f = pick(r, &["type", "message"]).ok()?;
        if f[0].and_then(raw_str).as_deref() != Some("message") {
            return None;
        }
        let m = f[1]?.get();
        let role = pick(m, &["role"]).ok()?[0].and_then(raw_str)?.into_owned();
        (role == "user").then(|| prompt_text(m)).flatten()
    })
}

/// The title a viewer shows for an open session, by the rules of the recent list's
/// `name` but with the caller's cap (in UTF-16 units): the sanitized session name (the
/// header title, else pi's `session_info`: [`Session::session_name`]), else the sanitized
/// text of the first user message; `None` when it has neither.
pub fn session_title(session: &crate::session::Session, max_chars: usize) -> Option<String> {
    let title = session.session_name().map(|t| sanitize(&t));
    let chosen = title.filter(|t| !t.is_empty()).or_else(|| {
        first_user_text(session.entries().iter().map(|e| e.json()))
            .map(|t| sanitize(&t))
            .filter(|t| !t.is_empty())
    })?;
    Some(cap(&chosen, max_chars))
}

/// [`session_title`] of a session opened through its index ([`Session::open_deferred`])
/// and not read yet, through the index: the name (`header`'s title, else the latest
/// `session_info` line's), else the first user message's line, the other lines unread.
/// `None` when the index cannot answer (a line not what it says): read the session.
pub(crate) fn indexed_title(
    storage: &dyn Storage,
    path: &str,
    index: &SessionIndex,
    header: &Header,
    max_chars: usize,
) -> Option<Option<String>> {
    let name = match header.title() {
        Some(t) => Some(t.to_string()),
        None => last_session_info(storage, path, index)?,
    };
    if let Some(t) = name.map(|t| sanitize(&t)).filter(|t| !t.is_empty()) {
        return Some(Some(cap(&t, max_chars)));
    }
    // One line at a time: the first user message is almost always among the first.
    for p in messages_of(index) {
        let mut found = None;
        let read = each_entry(storage, path, index, &[p], &mut |e| {
            found = first_user_text(std::iter::once(e.json()));
            true
        });
        if !matches!(read, Ok(true)) {
            return None;
        }
        if let Some(t) = found {
            let t = sanitize(&t);
            return Some((!t.is_empty()).then(|| cap(&t, max_chars)));
        }
    }
    Some(None)
}

/// `getRecentSessions(sessionDir, limit)`: newest first; files without a valid header
/// are skipped. Reads at most 4096 bytes of each file.
pub fn recent_sessions(
    storage: &dyn Storage,
    dir: &str,
    limit: usize,
) -> StorageResult<Vec<RecentSessionInfo>> {
    let out = jsonl_files(storage, dir)?
        .iter()
        .filter_map(|p| recent_info(storage, p))
        .collect();
    Ok(newest_first(out, limit))
}

/// The recent list over several directories (a project's old and new directory names).
pub fn recent_sessions_in(
    storage: &dyn Storage,
    dirs: &[String],
    limit: usize,
) -> StorageResult<Vec<RecentSessionInfo>> {
    let mut out = Vec::new();
    for dir in dirs {
        out.extend(recent_sessions(storage, dir, usize::MAX)?);
    }
    Ok(newest_first(out, limit))
}

/// The first `limit` by mtime, newest first (ties: path, descending).
fn newest_first(mut out: Vec<RecentSessionInfo>, limit: usize) -> Vec<RecentSessionInfo> {
    crate::sort::sort_by(&mut out, |a, b| {
        b.mtime_ms
            .cmp(&a.mtime_ms)
            .then_with(|| b.head.path.cmp(&a.head.path))
    });
    out.truncate(limit);
    out
}

/// `findMostRecentSession(sessionDir)`: the newest file (by mtime) with a valid header.
pub fn find_most_recent_session(storage: &dyn Storage, dir: &str) -> StorageResult<Option<String>> {
    Ok(recent_sessions(storage, dir, 1)?
        .into_iter()
        .next()
        .map(|r| r.head.path))
}

/// One session of a full listing (`SessionInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub head: SessionHead,
    pub parent_session_path: Option<String>,
    pub created: String,
    pub modified_ms: i64,
    pub message_count: usize,
    pub first_message: String,
    /// The text of every user and assistant message, joined by spaces: only when the
    /// listing was asked for it ([`ListText::Include`]); [`session_text`] reads one
    /// session's on demand.
    pub all_messages_text: Option<String>,
}

/// Whether a listing reads the text of every message (`allMessagesText`, what the
/// picker's search needs), or only what names and counts a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListText {
    /// Without it: through the session's index, its header line, its first user
    /// message and (untitled) its last compaction's line are read, nothing else.
    #[default]
    Leave,
    /// With it: every message line is read (a piece at a time).
    Include,
}

impl ListText {
    /// The shells' flag (`--with-text`, `withText`): `true` is [`ListText::Include`].
    pub fn with_text(yes: bool) -> ListText {
        match yes {
            true => ListText::Include,
            false => ListText::Leave,
        }
    }
}

/// The [`SessionInfo`] of one file; `None` without a valid header (or an empty id).
///
/// Read through the file's index when it has one (see [`crate::index`]): the header line,
/// the message count from the index's entry types, the message lines in file order up
/// to the first user message with text, and, for a session without a title, compaction
/// lines from the end up to one with a `shortSummary`; with [`ListText::Include`], every
/// message line, a piece at a time. The index comes from `<agent_dir>/cache/index/`
/// when it is there and still fits; without one (or with `agent_dir` empty: no cache),
/// the file is scanned once for it (its leading keys only) and the cache written, so
/// the first listing of a store reads every byte once and later ones read only these
/// lines. A file the index cannot describe exactly (an older version, a line it cannot
/// see, a line not what the index says) is read whole, as [`session_info_whole`] reads
/// it; the result is the same either way.
///
/// The count is of the message lines the index found by their leading keys (their other
/// bytes are not read): a message line damaged past its leading keys, which the whole
/// reader leaves out, is counted.
pub fn session_info(
    storage: Rc<dyn Storage>,
    path: &str,
    agent_dir: &str,
    text: ListText,
) -> Option<SessionInfo> {
    if let Some(index) = open_index(&*storage, path, agent_dir, IndexCache::Use) {
        if let Some(found) = indexed_info(&*storage, path, &index, text) {
            return found;
        }
    }
    let mut info = session_info_whole(storage, path)?;
    if text == ListText::Leave {
        info.all_messages_text = None;
    }
    Some(info)
}

/// The [`SessionInfo`] of one file read whole and parsed (the reference every other way
/// of listing must equal), its text included.
pub fn session_info_whole(storage: Rc<dyn Storage>, path: &str) -> Option<SessionInfo> {
    session_info_and_session(storage, path).map(|(info, _)| info)
}

/// [`session_info_whole`] and the session it read.
fn session_info_and_session(
    storage: Rc<dyn Storage>,
    path: &str,
) -> Option<(SessionInfo, Session)> {
    let bytes = storage.read(path).ok()?;
    let modified_ms = storage.stat(path).ok()?.mtime_ms;
    let text = String::from_utf8_lossy(&bytes);
    let first = parse_lenient(&text)
        .records
        .first()
        .map(|r| text[r.start..r.end].to_string())?;
    // The agent lists a header with an empty id as no session.
    Header::from_json(&first).filter(|h| !h.id().is_empty())?;
    let session = Session::from_text(storage, &text, "");
    let header = session.header();
    let mut message_count = 0;
    let mut texts = MessageTexts::default();
    let mut short_summary = None;
    let named = session.session_name();
    for e in session.entries() {
        match &e.payload {
            Payload::Message { .. } => {
                message_count += 1;
                texts.add(e);
            }
            Payload::Compaction { .. } => {
                if let Some(s) = short_summary_of(e) {
                    short_summary = Some(s);
                }
            }
            _ => {}
        }
    }
    let info = SessionInfo {
        head: SessionHead::of(path, header, named.or(short_summary)),
        parent_session_path: header.parent_session().map(str::to_string),
        created: header.timestamp().unwrap_or_default().to_string(),
        modified_ms,
        message_count,
        first_message: texts.first.unwrap_or_else(|| NO_MESSAGES.into()),
        all_messages_text: Some(texts.all.join(" ")),
    };
    Some((info, session))
}

/// `allMessagesText` of one session file (see [`SessionInfo::all_messages_text`]), read
/// on demand: through its index only its message lines, a piece at a time; else the
/// whole file. `None` when it is not a session (as [`session_info`]).
pub fn session_text(storage: Rc<dyn Storage>, path: &str, agent_dir: &str) -> Option<String> {
    if let Some(index) = open_index(&*storage, path, agent_dir, IndexCache::Use) {
        if let Some(header) = indexed_header(&*storage, path, &index) {
            header?;
            let mut texts = MessageTexts::default();
            let read = each_entry(&*storage, path, &index, &messages_of(&index), &mut |e| {
                texts.add(e);
                true
            });
            if matches!(read, Ok(true)) {
                return Some(texts.all.join(" "));
            }
        }
    }
    session_info_whole(storage, path)?.all_messages_text
}

/// The texts a listing takes from message entries, in file order.
#[derive(Default)]
struct MessageTexts {
    /// The first user message's text.
    first: Option<String>,
    /// Every user and assistant message's text.
    all: Vec<String>,
}

impl MessageTexts {
    /// Take a message entry's text; `true` when it was the first user message's.
    fn add(&mut self, e: &crate::entry::Entry) -> bool {
        let Some((role, t)) = listed_text(e) else {
            return false;
        };
        let first = role == "user" && self.first.is_none();
        if first {
            self.first = Some(t.clone());
        }
        self.all.push(t);
        first
    }
}

/// The role and text a listing takes from an entry: a user or assistant message's
/// text, when it has some (as the agent: a message without text adds nothing).
pub(crate) fn listed_text(e: &crate::entry::Entry) -> Option<(&str, String)> {
    let Payload::Message { role, .. } = &e.payload else {
        return None;
    };
    let role = role.as_deref().unwrap_or("");
    if role != "user" && role != "assistant" {
        return None;
    }
    let t = e
        .message_json()
        .and_then(message_text)
        .filter(|t| !t.is_empty())?;
    Some((role, t))
}

/// A compaction's `shortSummary`, when it is a string.
fn short_summary_of(e: &crate::entry::Entry) -> Option<String> {
    let f = pick(e.json(), &["shortSummary"]).ok()?;
    f[0].and_then(raw_str).map(|s| s.into_owned())
}

/// The positions of an index's message entries, in file order.
pub(crate) fn messages_of(index: &SessionIndex) -> Vec<usize> {
    (0..index.len())
        .filter(|&p| index.kinds[p].entry_type() == EntryType::Message)
        .collect()
}

/// The header an index's file starts with: `Some(None)` when it names no session (an
/// empty id); `None` when it cannot be read as the index says (read the file whole).
fn indexed_header(
    storage: &dyn Storage,
    path: &str,
    index: &SessionIndex,
) -> Option<Option<Header>> {
    let header = header_of(storage, path, index)?;
    Some((!header.id().is_empty()).then_some(header))
}

/// [`session_info`] through the file's index; `None` when a line is not what the index
/// says (the caller reads the file whole).
pub(crate) fn indexed_info(
    storage: &dyn Storage,
    path: &str,
    index: &SessionIndex,
    text: ListText,
) -> Option<Option<SessionInfo>> {
    let Some(header) = indexed_header(storage, path, index)? else {
        return Some(None);
    };
    let modified_ms = storage.stat(path).ok()?.mtime_ms;
    let messages = messages_of(index);
    let mut texts = MessageTexts::default();
    let read = match text {
        ListText::Include => each_entry(storage, path, index, &messages, &mut |e| {
            texts.add(e);
            true
        }),
        // One line at a time: the first user message is almost always among the first.
        ListText::Leave => {
            let mut read = Ok(true);
            for &p in &messages {
                let mut found = false;
                read = each_entry(storage, path, index, &[p], &mut |e| {
                    found = texts.add(e);
                    true
                });
                if found || !matches!(read, Ok(true)) {
                    break;
                }
            }
            read
        }
    };
    if !matches!(read, Ok(true)) {
        return None;
    }
    let title = match header.title() {
        Some(t) => Some(t.to_string()),
        None => match last_session_info(storage, path, index)? {
            Some(name) => Some(name),
            None => last_short_summary(storage, path, index)?,
        },
    };
    Some(Some(SessionInfo {
        head: SessionHead::of(path, &header, title),
        parent_session_path: header.parent_session().map(str::to_string),
        created: header.timestamp().unwrap_or_default().to_string(),
        modified_ms,
        message_count: messages.len(),
        first_message: texts.first.unwrap_or_else(|| NO_MESSAGES.into()),
        all_messages_text: (text == ListText::Include).then(|| texts.all.join(" ")),
    }))
}

/// The name the file's latest `session_info` entry gives (see [`Session::session_name`]),
/// that one line read; `None` when it is not what the index says.
fn last_session_info(
    storage: &dyn Storage,
    path: &str,
    index: &SessionIndex,
) -> Option<Option<String>> {
    let Some(p) = (0..index.len())
        .rev()
        .find(|&p| index.kinds[p].entry_type() == EntryType::SessionInfo)
    else {
        return Some(None);
    };
    let mut name = None;
    let ok = each_entry(storage, path, index, &[p], &mut |e| {
        name = crate::session::named_by_info(std::iter::once(e));
        true
    });
    matches!(ok, Ok(true)).then_some(name)
}

/// The `shortSummary` of the last compaction that has one, its lines read from the end;
/// `None` when a line is not what the index says.
fn last_short_summary(
    storage: &dyn Storage,
    path: &str,
    index: &SessionIndex,
) -> Option<Option<String>> {
    for p in (0..index.len()).rev() {
        if index.kinds[p].entry_type() != EntryType::Compaction {
            continue;
        }
        let mut summary = None;
        let ok = each_entry(storage, path, index, &[p], &mut |e| {
            summary = short_summary_of(e);
            true
        });
        if !matches!(ok, Ok(true)) {
            return None;
        }
        if summary.is_some() {
            return Some(summary);
        }
    }
    Some(None)
}

/// A listing by `flavour`'s rules: one project (`cwd`), one directory (`session_dir`) or
/// every project. xcsh's is [`list`] / [`list_all`]; pi's reads each file whole, as pi
/// does (no index, no cache written in its agent directory), its `modified` the
/// session's latest activity ([`modified_by_messages`]).
pub fn list_flavoured(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    session_dir: Option<&str>,
    text: ListText,
    flavour: Flavour,
) -> StorageResult<Vec<SessionInfo>> {
    if !flavour.modified_by_messages() {
        return match (cwd, session_dir) {
            (None, None) => list_all(storage, agent_dir, text),
            (cwd, dir) => list(storage, agent_dir, cwd.unwrap_or_default(), dir, text),
        };
    }
    let files = session_files(&*storage, agent_dir, cwd, session_dir)?;
    let infos = files.iter().filter_map(|path| {
        let (mut info, session) = session_info_and_session(storage.clone(), path)?;
        if let Some(ms) = modified_by_messages(&session) {
            info.modified_ms = ms;
        }
        if text == ListText::Leave {
            info.all_messages_text = None;
        }
        Some(info)
    });
    Ok(sorted(infos.collect()))
}

/// Pi's `modified` of a session: the latest time of a user or assistant message with
/// `content` (its numeric `timestamp`, else its entry's), else the header's `timestamp`;
/// `None` (the file's mtime stays) without either.
pub fn modified_by_messages(session: &Session) -> Option<i64> {
    let mut latest: Option<i64> = None;
    for e in session.entries() {
        let Some(Ok(m)) = e
            .message_json()
            .map(serde_json::from_str::<serde_json::Value>)
        else {
            continue;
        };
        let role = m.get("role").and_then(|r| r.as_str());
        if !matches!(role, Some("user" | "assistant")) || m.get("content").is_none() {
            continue;
        }
        let at = match m.get("timestamp").and_then(|t| t.as_f64()) {
            Some(t) => Some(t as i64),
            None => crate::time::ms_from_iso(e.timestamp()),
        };
        if let Some(at) = at {
            latest = Some(latest.unwrap_or(0).max(at));
        }
    }
    latest.filter(|&t| t > 0).or_else(|| {
        session
            .header()
            .timestamp()
            .and_then(crate::time::ms_from_iso)
    })
}

fn sorted(mut infos: Vec<SessionInfo>) -> Vec<SessionInfo> {
    crate::sort::sort_by(&mut infos, |a, b| {
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| b.head.path.cmp(&a.head.path))
    });
    infos
}

/// The session files of one project (`cwd`: the agent's directories for it, or
/// `session_dir` when given) or, with neither, of every project directory under
/// `<agentDir>/sessions`: the files [`list`] and [`list_all`] read, in no order.
pub fn session_files(
    storage: &dyn Storage,
    agent_dir: &str,
    cwd: Option<&str>,
    session_dir: Option<&str>,
) -> StorageResult<Vec<String>> {
    let dirs = match (session_dir, cwd) {
        (Some(d), _) => vec![d.to_string()],
        (None, Some(cwd)) => paths::session_dirs_for_cwd(agent_dir, cwd),
        (None, None) => {
            let root = paths::sessions_root(agent_dir);
            match storage.list_dir(&root) {
                Ok(d) => d
                    .into_iter()
                    .filter(|d| d.is_dir)
                    .map(|d| join(&root, &d.name))
                    .collect(),
                Err(e) if e.is_not_found() => Vec::new(),
                Err(e) => return Err(e),
            }
        }
    };
    let mut files = Vec::new();
    for dir in &dirs {
        files.extend(jsonl_files(storage, dir)?);
    }
    Ok(files)
}

/// Session files newest first, as a listing orders its sessions (modification time,
/// then path, both descending), each with its stat; a file gone since is left out.
/// A first screen reads the heads of the first of them only.
pub fn newest_first_files(
    storage: &dyn Storage,
    files: Vec<String>,
) -> Vec<(String, crate::storage::FileStat)> {
    let mut stated: Vec<_> = files
        .into_iter()
        .filter_map(|p| storage.stat(&p).ok().map(|s| (p, s)))
        .collect();
    crate::sort::sort_by(&mut stated, |a, b| {
        b.1.mtime_ms.cmp(&a.1.mtime_ms).then_with(|| b.0.cmp(&a.0))
    });
    stated
}

/// `SessionManager.list(cwd, sessionDir?)`: the sessions of one project, newest first; a
/// session without messages (a header alone) is listed too, as the agent lists it. Each
/// is read as [`session_info`] reads it (`agent_dir` holds the index cache; empty: none).
pub fn list(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: &str,
    session_dir: Option<&str>,
    text: ListText,
) -> StorageResult<Vec<SessionInfo>> {
    let files = session_files(&*storage, agent_dir, Some(cwd), session_dir)?;
    Ok(infos_of(storage, agent_dir, files, text))
}

/// `SessionManager.listAll()`: every project directory under `<agentDir>/sessions`, each
/// session read as [`session_info`] reads it.
pub fn list_all(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    text: ListText,
) -> StorageResult<Vec<SessionInfo>> {
    let files = session_files(&*storage, agent_dir, None, None)?;
    Ok(infos_of(storage, agent_dir, files, text))
}

/// The first `limit` sessions of a listing (a picker's first screen): the files ordered
/// by their stat, then only the newest read, until `limit` of them are sessions. Equal
/// to the head of the whole listing of the same files (see [`session_files`]).
pub fn list_first(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    cwd: Option<&str>,
    session_dir: Option<&str>,
    limit: usize,
    text: ListText,
) -> StorageResult<Vec<SessionInfo>> {
    let files = session_files(&*storage, agent_dir, cwd, session_dir)?;
    let mut infos = Vec::new();
    for (path, _) in newest_first_files(&*storage, files) {
        if infos.len() >= limit {
            break;
        }
        infos.extend(session_info(storage.clone(), &path, agent_dir, text));
    }
    // A file written between its stat and its read moves up, as in a whole listing.
    Ok(sorted(infos))
}

fn infos_of(
    storage: Rc<dyn Storage>,
    agent_dir: &str,
    files: Vec<String>,
    text: ListText,
) -> Vec<SessionInfo> {
    sorted(
        files
            .iter()
            .filter_map(|p| session_info(storage.clone(), p, agent_dir, text))
            .collect(),
    )
}

/// One item of the recent list as the shells print it (`name` and `timeAgo` computed).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentRecord<'a> {
    #[serde(flatten)]
    pub head: &'a SessionHead,
    pub name: String,
    pub full_name: String,
    pub time_ago: String,
    /// ISO-8601 mtime.
    pub modified: String,
}

impl RecentSessionInfo {
    /// The record the shells print, with the relative time at `now_ms`.
    pub fn record(&self, now_ms: i64) -> RecentRecord<'_> {
        RecentRecord {
            head: &self.head,
            name: self.name(),
            full_name: self.full_name(),
            time_ago: self.time_ago(now_ms),
            modified: iso_from_ms(self.mtime_ms),
        }
    }
}

/// JSON of a recent list (camelCase keys; `name` and `timeAgo` computed at `now_ms`).
pub fn recent_json(items: &[RecentSessionInfo], now_ms: i64) -> String {
    let records: Vec<RecentRecord> = items.iter().map(|r| r.record(now_ms)).collect();
    crate::json::record(&records)
}

/// A `SessionInfo` as the shells print it (camelCase keys as in the agent's
/// `SessionInfo`; an absent title or parent is left out).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoRecord<'a> {
    #[serde(flatten)]
    pub head: &'a SessionHead,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_path: Option<&'a str>,
    pub created: &'a str,
    /// ISO-8601 mtime.
    pub modified: String,
    pub message_count: usize,
    pub first_message: &'a str,
    /// Only when the listing read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_messages_text: Option<&'a str>,
}

impl SessionInfo {
    /// The record the shells print.
    pub fn record(&self) -> SessionInfoRecord<'_> {
        SessionInfoRecord {
            head: &self.head,
            parent_session_path: self.parent_session_path.as_deref(),
            created: &self.created,
            modified: iso_from_ms(self.modified_ms),
            message_count: self.message_count,
            first_message: &self.first_message,
            all_messages_text: self.all_messages_text.as_deref(),
        }
    }
}

/// A search hit: the picker's score, then the session's fields.
#[derive(serde::Serialize)]
pub struct SearchHitRecord<'a> {
    pub score: u32,
    #[serde(flatten)]
    pub info: SessionInfoRecord<'a>,
}

/// JSON of a full listing (camelCase keys as in the agent's `SessionInfo`).
pub fn list_json(items: &[SessionInfo]) -> String {
    let records: Vec<SessionInfoRecord> = items.iter().map(SessionInfo::record).collect();
    crate::json::record(&records)
}

/// JSON of ranked search hits (`score` first, then the `SessionInfo` fields).
pub fn search_json(hits: &[(&SessionInfo, u32)]) -> String {
    let records: Vec<SearchHitRecord> = hits
        .iter()
        .map(|(info, score)| SearchHitRecord {
            score: *score,
            info: info.record(),
        })
        .collect();
    crate::json::record(&records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_session_is_shown_by_name_title_first_message_or_id() {
        let id = "0190-abc";
        assert_eq!(
            display_name(Some("recent  name"), Some("t"), None, id),
            "recent name"
        );
        assert_eq!(
            display_name(None, Some(" My\n title "), Some("hi"), id),
            "My title"
        );
        assert_eq!(
            display_name(None, None, Some("fix\tthe bug"), id),
            "fix the bug"
        );
        assert_eq!(display_name(None, None, Some(NO_MESSAGES), id), id);
        assert_eq!(display_name(None, None, Some(""), id), id);
    }

    #[test]
    fn sessions_are_the_jsonl_files_under_sessions_and_the_newest_names_the_project() {
        use crate::storage::MemoryStorage;
        let st = MemoryStorage::new(); // its clock ticks: later writes are newer
        assert_eq!(newest_session_cwd(&st, "/a"), None);
        for (path, cwd) in [
            ("/a/sessions/--p--/1_x.jsonl", "/p"),
            ("/a/sessions/--q--/2_y.jsonl", "/q"),
            ("/a/sessions/--p--/1_x/sub.jsonl", "/sub"),
        ] {
            st.mkdir_all(crate::storage::parent(path)).unwrap();
            let header = format!(r#"{{"type":"session","id":"i","cwd":"{cwd}"}}"#);
            st.write(path, header.as_bytes()).unwrap();
        }
        st.write("/a/sessions/--q--/notes.txt", b"").unwrap();
        st.write(
            "/a/sessions/--q--/2_y.jsonl",
            br#"{"type":"session","id":"i","cwd":"/q"}"#,
        )
        .unwrap();
        assert_eq!(
            session_file_paths(&st, "/a").unwrap(),
            [
                "/a/sessions/--p--/1_x.jsonl",
                "/a/sessions/--p--/1_x/sub.jsonl",
                "/a/sessions/--q--/2_y.jsonl"
            ]
        );
        assert_eq!(newest_session_cwd(&st, "/a").as_deref(), Some("/q"));
    }

    #[test]
    fn names_are_sanitized_and_capped_at_40() {
        assert_eq!(sanitize("  a\u{1}b\x7f \nsecond"), "ab");
        let long = "x".repeat(50);
        let capped = cap(&long, 40);
        assert_eq!(capped.chars().count(), 40);
        assert!(capped.ends_with('…'));
        assert_eq!(cap(&"y".repeat(40), 40), "y".repeat(40));
    }

    #[test]
    fn time_ago_buckets() {
        let now = 10 * 86_400_000;
        assert_eq!(time_ago(now - 30_000, now), "just now");
        assert_eq!(time_ago(now - 5 * 60_000, now), "5m ago");
        assert_eq!(time_ago(now - 3 * 3_600_000, now), "3h ago");
        assert_eq!(time_ago(now - 2 * 86_400_000, now), "2d ago");
        assert_eq!(time_ago(0, now), "1970-01-01");
    }

    #[test]
    fn message_text_joins_text_blocks() {
        assert_eq!(
            message_text(r#"{"content":"plain"}"#).as_deref(),
            Some("plain")
        );
        assert_eq!(
            message_text(r#"{"content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]}"#).as_deref(),
            Some("a b")
        );
        assert_eq!(message_text(r#"{"content":[]}"#).as_deref(), Some(""));
        assert_eq!(message_text(r#"{"role":"user"}"#), None);
    }

    #[test]
    fn an_open_session_is_titled_by_its_title_else_its_first_user_message() {
        use crate::storage::MemoryStorage;
        let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}"#;
        let user = r#"{"type":"message","id":"u1","parentId":"a0","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"  fix\tthe parser\nand more"}],"timestamp":1}}"#;
        let assistant = r#"{"type":"message","id":"a0","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"p","model":"m","timestamp":0}}"#;
        let open = |text: String| {
            crate::session::Session::from_string(std::rc::Rc::new(MemoryStorage::new()), text, "/a")
        };
        let s = open(format!("{header}\n{assistant}\n{user}\n"));
        // The agent's sanitizing: the first line, control characters (the tab too) dropped.
        assert_eq!(session_title(&s, 80).as_deref(), Some("fixthe parser"));
        assert_eq!(session_title(&s, 5).as_deref(), Some("fixt…"));
        let titled = header.replace(
            r#""cwd":"/w"}"#,
            r#""cwd":"/w","title":"My\u0007 title\nsecond line"}"#,
        );
        let s = open(format!("{titled}\n{user}\n"));
        assert_eq!(session_title(&s, 80).as_deref(), Some("My title"));
        assert_eq!(
            session_title(&open(format!("{header}\n{assistant}\n")), 80),
            None
        );
    }
}
