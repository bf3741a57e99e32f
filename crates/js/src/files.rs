//! A session's files and the rules of an agent directory, for viewers and tools that
//! handle sessions as files: which files make up a session, copying and importing,
//! deleting, where an opened folder's files go, the session files of an agent directory,
//! the newest session's cwd, a listed session's display name, and the prompts of sessions.
//! Each function converts its arguments and calls one core function.

use crate::convert::{get, invalid, js_error, opt_string, parse, string};
use crate::storage::{JsPort, JsStorage};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::api::record;
use xcsh_session::paths::{self, FolderFile};
use xcsh_session::session::{self, SessionCopy};
use xcsh_session::{history, listing, SessionError};

type JsResult<T> = Result<T, JsValue>;

fn copied(r: xcsh_session::error::Result<SessionCopy>) -> JsResult<JsValue> {
    parse(&record(&r.map_err(js_error)?))
}

fn storage_error(e: xcsh_session::StorageError) -> JsValue {
    js_error(SessionError::Storage(e))
}

fn array_of(value: &JsValue, what: &str) -> JsResult<Array> {
    value
        .clone()
        .dyn_into::<Array>()
        .map_err(|_| invalid(format!("{what} must be an array")))
}

/// The files of a session: the `.jsonl` file, its artifacts and the blobs it references.
#[wasm_bindgen(js_name = sessionFiles)]
pub fn session_files(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    path: &str,
) -> JsResult<Vec<String>> {
    session::session_files(&JsPort::new(storage)?, agent_dir, path).map_err(storage_error)
}

/// Copy a session's files into another agent directory, at the same relative paths.
#[wasm_bindgen(js_name = copySession, unchecked_return_type = "SessionCopy")]
pub fn copy_session(
    from: JsStorage,
    #[wasm_bindgen(js_name = fromAgentDir)] from_agent_dir: &str,
    path: &str,
    to: JsStorage,
    #[wasm_bindgen(js_name = toAgentDir)] to_agent_dir: &str,
) -> JsResult<JsValue> {
    copied(session::copy_session(
        &JsPort::new(from)?,
        from_agent_dir,
        path,
        &JsPort::new(to)?,
        to_agent_dir,
    ))
}

/// Import a session known only by its text (a single file) into an agent directory.
#[wasm_bindgen(js_name = importSessionText, unchecked_return_type = "SessionCopy")]
pub fn import_session_text(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    text: &str,
    #[wasm_bindgen(js_name = fileName)] file_name: &str,
) -> JsResult<JsValue> {
    copied(session::import_session_text(
        &JsPort::new(storage)?,
        agent_dir,
        text,
        file_name,
    ))
}

/// Delete a session: its file, its artifacts directory and its lock. Refused (kind
/// `conflict`) while a live writer of another process holds the session.
#[wasm_bindgen(js_name = deleteSession)]
pub fn delete_session(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    path: &str,
) -> JsResult<()> {
    session::delete_session(&JsPort::new(storage)?, agent_dir, path).map_err(js_error)
}

/// Every session file of an agent directory (`.jsonl` anywhere under `sessions/`).
#[wasm_bindgen(js_name = sessionFilePaths)]
pub fn session_file_paths(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
) -> JsResult<Vec<String>> {
    listing::session_file_paths(&JsPort::new(storage)?, agent_dir).map_err(storage_error)
}

/// The cwd of the most recently modified session of an agent directory.
#[wasm_bindgen(js_name = newestSessionCwd)]
pub fn newest_session_cwd(
    storage: JsStorage,
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
) -> JsResult<Option<String>> {
    Ok(listing::newest_session_cwd(
        &JsPort::new(storage)?,
        agent_dir,
    ))
}

/// The name a viewer shows for a listed session (a recent, list or search record).
#[wasm_bindgen(js_name = sessionDisplayName)]
pub fn session_display_name(
    #[wasm_bindgen(unchecked_param_type = "SessionNameFields")] info: JsValue,
) -> JsResult<String> {
    Ok(listing::display_name(
        opt_string(&info, "name")?.as_deref(),
        opt_string(&info, "title")?.as_deref(),
        opt_string(&info, "firstMessage")?.as_deref(),
        &string(&info, "id")?,
    ))
}

/// Where the files of an opened folder go in an agent directory (see the typings).
#[wasm_bindgen(js_name = openedFolderTargets, unchecked_return_type = "string[][]")]
pub fn opened_folder_targets(
    #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
    #[wasm_bindgen(js_name = folderName)] folder_name: &str,
    #[wasm_bindgen(unchecked_param_type = "OpenedFolderFile[]")] files: JsValue,
) -> JsResult<JsValue> {
    let items = array_of(&files, "files")?;
    let mut owned: Vec<(String, Option<Vec<u8>>)> = Vec::with_capacity(items.length() as usize);
    for item in items.iter() {
        let start = get(&item, "start");
        let start = if start.is_undefined() || start.is_null() {
            None
        } else {
            Some(
                start
                    .dyn_into::<Uint8Array>()
                    .map_err(|_| invalid("start must be a Uint8Array"))?
                    .to_vec(),
            )
        };
        owned.push((string(&item, "rel")?, start));
    }
    let files: Vec<FolderFile> = owned
        .iter()
        .map(|(rel, start)| FolderFile {
            rel,
            start: start.as_deref(),
        })
        .collect();
    parse(&record(&paths::opened_folder_targets(
        agent_dir,
        folder_name,
        &files,
    )))
}

/// The user prompts of session files, oldest first, for importing into the history.
#[wasm_bindgen(js_name = sessionPrompts, unchecked_return_type = "SessionPrompts")]
pub fn session_prompts(
    storage: JsStorage,
    #[wasm_bindgen(unchecked_param_type = "{ path: string, cwd?: string | null }[]")]
    sessions: JsValue,
    #[wasm_bindgen(
        js_name = onProgress,
        unchecked_optional_param_type = "(done: number, total: number) => void"
    )]
    on_progress: JsValue,
) -> JsResult<JsValue> {
    let items = array_of(&sessions, "sessions")?;
    let list = items
        .iter()
        .map(|s| Ok((string(&s, "path")?, opt_string(&s, "cwd")?)))
        .collect::<JsResult<Vec<_>>>()?;
    let on_progress = on_progress.dyn_into::<js_sys::Function>().ok();
    let found = history::prompts_of_sessions(&JsPort::new(storage)?, &list, &mut |done, total| {
        crate::session::report_progress(&on_progress, done, total)
    });
    parse(&record(&found))
}
