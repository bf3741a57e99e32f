//! Functions over a whole agent directory reached through a JS storage object: listing,
//! picker search, resume, continue, internal URLs, blobs, fork, move and blob GC. Each
//! converts its arguments, calls one `xcsh_session::api` function and parses the JSON.

use crate::convert::{api_error, opt_bool, opt_prop, opt_string, parse, string};
use crate::storage::{JsPort, JsStorage};
use js_sys::Reflect;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use xcsh_session::api;
use xcsh_session::listing::ListText;
use xcsh_session::storage::Storage;

type JsResult<T> = Result<T, JsValue>;

fn port(storage: JsStorage) -> JsResult<Rc<dyn Storage>> {
    Ok(Rc::new(JsPort::new(storage)?))
}

fn done(r: api::ApiResult) -> JsResult<JsValue> {
    parse(&r.map_err(api_error)?)
}

fn opt_usize(options: &JsValue, key: &'static str) -> JsResult<Option<usize>> {
    opt_prop(options, key, "a non-negative integer", |v| {
        v.as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0)
            .map(|n| n as usize)
    })
}

/// Where new sessions of `cwd` go: `<agentDir>/sessions/-<rel>` under the home,
/// `-tmp-<rel>` under the temp directory, else `--<cwd>--`. Without `places` the home is
/// the one `agentDir` lives in (`<home>/.xcsh/agent`) and the temp directory `/tmp`.
/// `{ flavour: "pi" }`: pi's place, always `--<cwd>--`.
#[wasm_bindgen(js_name = sessionDirForCwd)]
pub fn session_dir_for_cwd(
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    cwd: &str,
    #[wasm_bindgen(
        unchecked_optional_param_type = "{ home?: string, tempDir?: string, flavour?: \"xcsh\" | \"pi\" }"
    )]
    places: JsValue,
) -> JsResult<String> {
    use xcsh_session::paths;
    if places.is_undefined() || places.is_null() {
        return Ok(paths::session_dir_for_cwd(agent_dir, cwd));
    }
    if let Some(flavour) = crate::session::parse_flavour(opt_string(&places, "flavour")?)? {
        return Ok(flavour.session_dir_for_cwd(agent_dir, cwd));
    }
    let home = opt_string(&places, "home")?;
    let temp = opt_string(&places, "tempDir")?.unwrap_or_else(|| "/tmp".into());
    let name = paths::session_dir_name(cwd, home.as_deref(), &temp);
    Ok(xcsh_session::storage::join(
        &paths::sessions_root(agent_dir),
        &name,
    ))
}

/// Where a session of `cwd` kept in `sessionDir` goes when it moves to `newCwd`, as the
/// agent places it: `newCwd`'s folder in the same sessions root when `sessionDir` is
/// `cwd`'s own folder (by its name), else in `<agentDir>/sessions`. `places` as for
/// `sessionDirForCwd`.
#[wasm_bindgen(js_name = movedSessionDir)]
pub fn moved_session_dir(
    #[wasm_bindgen(
        unchecked_param_type = "{ agentDir: string, sessionDir: string, cwd: string, newCwd: string, home?: string, tempDir?: string }"
    )]
    options: JsValue,
) -> JsResult<String> {
    use xcsh_session::paths;
    let agent_dir = string(&options, "agentDir")?;
    let session_dir = string(&options, "sessionDir")?;
    let cwds = (string(&options, "cwd")?, string(&options, "newCwd")?);
    let home = opt_string(&options, "home")?;
    let home = home
        .as_deref()
        .or_else(|| paths::home_of_agent_dir(&agent_dir));
    let temp = opt_string(&options, "tempDir")?.unwrap_or_else(|| "/tmp".into());
    Ok(paths::moved_session_dir_with(
        &agent_dir,
        &session_dir,
        (&cwds.0, &cwds.1),
        home,
        &temp,
    ))
}

/// Fold the legacy `--<cwd>--` folder of `cwd` into `sessionDir`, moving only what
/// cannot be lost: a name both have, a locked session and a file in the way stay put.
#[wasm_bindgen(
    js_name = mergeLegacySessionDir,
    unchecked_return_type = "{ moved: string[], kept: { name: string, reason: 'targetHasIt' | 'locked' | 'targetIsAFile' }[], removed: boolean }"
)]
pub fn merge_legacy_session_dir(
    storage: JsStorage,
    #[wasm_bindgen(unchecked_param_type = "{ agentDir: string, cwd: string, sessionDir: string }")]
    options: JsValue,
) -> JsResult<JsValue> {
    done(api::merge_legacy_dir(
        port(storage)?,
        &string(&options, "agentDir")?,
        &string(&options, "cwd")?,
        &string(&options, "sessionDir")?,
    ))
}

/// `migrateSessionEntries`: the records of a file (header first) migrated to the current
/// version, in the same order; current records come back unchanged.
#[wasm_bindgen(js_name = migrateRecords, unchecked_return_type = "unknown[]")]
pub fn migrate_records(
    #[wasm_bindgen(unchecked_param_type = "unknown[]")] records: JsValue,
) -> JsResult<JsValue> {
    let text = js_sys::JSON::stringify(&records)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_default();
    done(api::migrate_records(&text))
}

/// `findMostRecentSession(sessionDir)`: the newest file (by mtime) of a session directory
/// with a valid header, or `undefined` (an empty or missing directory, no valid file).
#[wasm_bindgen(js_name = findMostRecentSession)]
pub fn find_most_recent_session(
    storage: JsStorage,
    #[wasm_bindgen(js_name = sessionDir)] session_dir: &str,
) -> JsResult<Option<String>> {
    xcsh_session::listing::find_most_recent_session(&*port(storage)?, session_dir)
        .map_err(|e| crate::convert::js_error(e.into()))
}

/// The light recent list of a project, or of one `sessionDir` (reads 4096 bytes per
/// file), newest first.
#[wasm_bindgen(js_name = recentSessions, unchecked_return_type = "RecentSessionInfo[]")]
pub fn recent_sessions(
    storage: JsStorage,
    #[wasm_bindgen(
        unchecked_param_type = "{ agentDir?: string, cwd?: string, sessionDir?: string, limit?: number }"
    )]
    options: JsValue,
) -> JsResult<JsValue> {
    let limit =
        opt_usize(&options, "limit")?.unwrap_or(xcsh_session::listing::DEFAULT_RECENT_LIMIT);
    if let Some(dir) = opt_string(&options, "sessionDir")? {
        return done(api::recent_in_dir(port(storage)?, &dir, limit));
    }
    done(api::recent(
        port(storage)?,
        &string(&options, "agentDir")?,
        &string(&options, "cwd")?,
        limit,
    ))
}

/// SessionInfo of one project (`cwd`), of one directory (`sessionDir`), or, without either,
/// of every project. Each session is read through its index (cached under `agentDir`):
/// its header line, first user message and counts; `allMessagesText` only with
/// `withText: true` (every message line read), else `sessionText` reads one on demand.
/// With `limit`, only the newest `limit` sessions (a picker's first screen): the files
/// are ordered by their modification time and only those are read. With `flavour: "pi"`,
/// pi's rules: `modified` is each session's latest message time, and `limit` keeps the
/// newest `limit` of the whole listing (pi's order needs every file read).
#[wasm_bindgen(js_name = listSessions, unchecked_return_type = "SessionInfo[]")]
pub fn list_sessions(
    storage: JsStorage,
    #[wasm_bindgen(
        unchecked_param_type = "{ agentDir: string, cwd?: string, sessionDir?: string, withText?: boolean, limit?: number, flavour?: \"xcsh\" | \"pi\" }"
    )]
    options: JsValue,
) -> JsResult<JsValue> {
    let text = ListText::with_text(opt_bool(&options, "withText")?.unwrap_or(false));
    let agent_dir = opt_string(&options, "agentDir")?.unwrap_or_default();
    let session_dir = opt_string(&options, "sessionDir")?;
    let cwd = opt_string(&options, "cwd")?;
    if let Some(flavour) = crate::session::parse_flavour(opt_string(&options, "flavour")?)? {
        return done(api::list_flavoured(
            port(storage)?,
            &agent_dir,
            cwd.as_deref(),
            session_dir.as_deref(),
            text,
            flavour,
            opt_usize(&options, "limit")?,
        ));
    }
    if let Some(limit) = opt_usize(&options, "limit")? {
        let (agent_dir, cwd) = match session_dir {
            Some(_) => (agent_dir, None),
            None => (string(&options, "agentDir")?, cwd.as_deref()),
        };
        return done(api::list_first(
            port(storage)?,
            &agent_dir,
            cwd,
            session_dir.as_deref(),
            limit,
            text,
        ));
    }
    if let Some(dir) = session_dir {
        return done(api::list_in_dir(port(storage)?, &agent_dir, &dir, text));
    }
    done(api::list(
        port(storage)?,
        &string(&options, "agentDir")?,
        cwd.as_deref(),
        text,
    ))
}

/// One listed session's `allMessagesText` (the text of every user and assistant message,
/// joined by spaces), read on demand: through its index only its message lines.
/// `undefined` when the file is no session.
#[wasm_bindgen(js_name = sessionText)]
pub fn session_text(
    storage: JsStorage,
    #[wasm_bindgen(unchecked_param_type = "{ agentDir?: string, path: string }")] options: JsValue,
) -> JsResult<Option<String>> {
    let agent_dir = opt_string(&options, "agentDir")?.unwrap_or_default();
    Ok(xcsh_session::listing::session_text(
        port(storage)?,
        &string(&options, "path")?,
        &agent_dir,
    ))
}

/// The picker's fuzzy ranking (id, title, cwd, first message, all text, path), best
/// first, without `allMessagesText`: each session's text is read a piece at a time,
/// only as far as the score needs, and not kept. `SessionSearch` is the same a step at
/// a time, with progress.
#[wasm_bindgen(js_name = searchSessions, unchecked_return_type = "(SessionInfo & { score: number })[]")]
pub fn search_sessions(
    storage: JsStorage,
    #[wasm_bindgen(unchecked_param_type = "{ agentDir: string, cwd?: string, query: string }")]
    options: JsValue,
) -> JsResult<JsValue> {
    done(api::search(
        port(storage)?,
        &string(&options, "agentDir")?,
        opt_string(&options, "cwd")?.as_deref(),
        &string(&options, "query")?,
    ))
}

/// `--resume <arg>`: the file to open. Throws kind `ambiguous` (with `details`: the
/// candidates), `otherProject` (unless `confirm`, which forks it here) or `notFound`.
#[wasm_bindgen(js_name = resolveResume, unchecked_return_type = "{ path: string }")]
pub fn resolve_resume(
    storage: JsStorage,
    #[wasm_bindgen(
        unchecked_param_type = "{ agentDir: string, cwd: string, arg: string, confirm?: boolean }"
    )]
    options: JsValue,
) -> JsResult<JsValue> {
    let confirm = opt_bool(&options, "confirm")?.unwrap_or(false);
    done(api::resume(
        port(storage)?,
        &string(&options, "agentDir")?,
        &string(&options, "cwd")?,
        &string(&options, "arg")?,
        confirm,
    ))
}

/// The agent's `resolveResumableSession`: the session `arg` names (an id prefix, a file
/// name prefix, or the id part of a file name, any case) in `sessionDir`, then, unless
/// `localOnly`, in every project; `null` when none does. More than one match throws
/// `kind: "ambiguous"` with the candidates in `details`.
#[wasm_bindgen(
    js_name = findResumableSession,
    unchecked_return_type = "{ session: SessionInfo, scope: 'local' | 'global' } | null"
)]
pub fn find_resumable_session(
    storage: JsStorage,
    #[wasm_bindgen(
        unchecked_param_type = "{ agentDir: string, sessionDir: string, arg: string, localOnly?: boolean }"
    )]
    options: JsValue,
) -> JsResult<JsValue> {
    done(api::find_resumable(
        port(storage)?,
        &string(&options, "agentDir")?,
        &string(&options, "sessionDir")?,
        !opt_bool(&options, "localOnly")?.unwrap_or(false),
        &string(&options, "arg")?,
    ))
}

/// `--continue`: this terminal's breadcrumb, else the newest session (of `sessionDir`
/// when given, else of the cwd), else a new path.
#[wasm_bindgen(js_name = continueRecent, unchecked_return_type = "{ path: string, source: 'breadcrumb' | 'mostRecent' | 'new' }")]
pub fn continue_recent(
    storage: JsStorage,
    #[wasm_bindgen(
        unchecked_param_type = "{ agentDir: string, cwd: string, sessionDir?: string, terminal?: string }"
    )]
    options: JsValue,
) -> JsResult<JsValue> {
    done(api::continue_recent(
        port(storage)?,
        &string(&options, "agentDir")?,
        &string(&options, "cwd")?,
        opt_string(&options, "sessionDir")?.as_deref(),
        opt_string(&options, "terminal")?.as_deref(),
    ))
}

/// The id of the terminal a process runs in, which names its `--continue` breadcrumb: the
/// tty path without `/dev/`, else `kitty-`, `tmux-`, `apple-` or `wt-` and the terminal's
/// variable; `undefined` when the terminal cannot be told.
#[wasm_bindgen(js_name = terminalId)]
pub fn terminal_id(
    tty: Option<String>,
    #[wasm_bindgen(unchecked_param_type = "Record<string, string | undefined>")] env: JsValue,
) -> Option<String> {
    let lookup = |name: &str| {
        Reflect::get(&env, &name.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    xcsh_session::resume::terminal_id(tty.as_deref(), &lookup)
}

/// Resolve `artifact://<id>` or `agent://<id>[/path|?q=]` for a session file.
#[wasm_bindgen(js_name = resolveUrl, unchecked_return_type = "{ content: string, mimeType: string, size: number }")]
pub fn resolve_url(
    storage: JsStorage,
    #[wasm_bindgen(js_name = sessionFile)] session_file: &str,
    url: &str,
    #[wasm_bindgen(unchecked_optional_param_type = "{ offset?: number, limit?: number }")] options: JsValue,
) -> JsResult<JsValue> {
    done(api::resolve_url(
        port(storage)?,
        session_file,
        url,
        opt_usize(&options, "offset")?,
        opt_usize(&options, "limit")?,
    ))
}

/// Store bytes in the blob store: `{hash, ref, path}`.
#[wasm_bindgen(js_name = blobPut, unchecked_return_type = "{ hash: string, ref: string, path: string }")]
pub fn blob_put(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    data: &[u8],
) -> JsResult<JsValue> {
    done(api::blob_put(port(storage)?, agent_dir, data))
}

/// A blob's bytes by hash or `blob:sha256:` reference.
#[wasm_bindgen(js_name = blobGet)]
pub fn blob_get(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    hash: &str,
) -> JsResult<Vec<u8>> {
    api::blob_get(port(storage)?, agent_dir, hash).map_err(api_error)
}

/// Fork a session file: `{oldFile, newFile, warnings}`.
#[wasm_bindgen(js_name = forkSession, unchecked_return_type = "{ oldFile: string, newFile: string, warnings: string[] }")]
pub fn fork_session(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    file: &str,
) -> JsResult<JsValue> {
    done(api::fork(port(storage)?, agent_dir, file))
}

/// Move a session (file and artifacts) to another cwd's directory: `{newFile}`.
#[wasm_bindgen(js_name = moveSession, unchecked_return_type = "{ newFile: string }")]
pub fn move_session(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    file: &str,
    #[wasm_bindgen(js_name = toCwd)] to_cwd: &str,
) -> JsResult<JsValue> {
    done(api::move_session(port(storage)?, agent_dir, file, to_cwd))
}

/// Delete blobs no session references or pins (dry run unless `dryRun: false`);
/// `forgetMissing` forgets the recorded sessions outside `<agentDir>/sessions` whose
/// files are gone, so their pins no longer hold.
#[wasm_bindgen(js_name = collectGarbage, unchecked_return_type = "{ dryRun: boolean, scannedFiles: number, referenced: number, deleted: string[], keptRecent: string[], keptPinned: string[], missing: string[], forgotten: string[], staleFiles: string[], staleIndexes: string[] }")]
pub fn collect_garbage(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    #[wasm_bindgen(js_name = dryRun)] dry_run: Option<bool>,
    #[wasm_bindgen(js_name = forgetMissing)] forget_missing: Option<bool>,
) -> JsResult<JsValue> {
    done(api::gc(
        port(storage)?,
        agent_dir,
        dry_run.unwrap_or(true),
        forget_missing.unwrap_or(false),
    ))
}
