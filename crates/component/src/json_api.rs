//! The exported `session-json`: the JSON text the CLI prints, the same bytes in every
//! host. Each function converts its arguments, calls the core's JSON façade
//! ([`xcsh_session::api`], [`xcsh_session::history`]) and returns its text.

use xcsh_session::api;
use xcsh_session::history as core_history;
use xcsh_session::listing::ListText;

use crate::exports::xcsh::session::session_json::{Guest, SessionSearch};
use crate::{
    history, session_err, size, storage, terminal, to_wit, with_last_prompt, ApiError, Component,
};

impl Guest for Component {
    fn show(path: String, agent_dir: String) -> Result<String, ApiError> {
        api::show_file(storage(), &path, &agent_dir).map_err(to_wit)
    }

    fn migrate(path: String, agent_dir: String) -> Result<String, ApiError> {
        api::migrate_file(storage(), &path, &agent_dir).map_err(to_wit)
    }

    fn append(
        path: String,
        agent_dir: String,
        cwd: String,
        entry_json: String,
    ) -> Result<String, ApiError> {
        api::append_file(storage(), &path, &agent_dir, &cwd, &entry_json).map_err(session_err)
    }

    fn recent(agent_dir: String, cwd: String, limit: u32) -> Result<String, ApiError> {
        api::recent(storage(), &agent_dir, &cwd, size(limit)).map_err(to_wit)
    }

    fn list(agent_dir: String, cwd: Option<String>) -> Result<String, ApiError> {
        api::list(storage(), &agent_dir, cwd.as_deref(), ListText::Include).map_err(to_wit)
    }

    fn list_without_text(agent_dir: String, cwd: Option<String>) -> Result<String, ApiError> {
        api::list(storage(), &agent_dir, cwd.as_deref(), ListText::Leave).map_err(to_wit)
    }

    fn list_first(agent_dir: String, cwd: Option<String>, limit: u32) -> Result<String, ApiError> {
        api::list_first(
            storage(),
            &agent_dir,
            cwd.as_deref(),
            None,
            size(limit),
            ListText::Leave,
        )
        .map_err(to_wit)
    }

    fn search(agent_dir: String, cwd: Option<String>, query: String) -> Result<String, ApiError> {
        api::search(storage(), &agent_dir, cwd.as_deref(), &query).map_err(to_wit)
    }

    type SessionSearch = crate::search::SessionSearchResource;

    fn open_search(
        agent_dir: String,
        cwd: Option<String>,
        query: String,
    ) -> Result<SessionSearch, ApiError> {
        let search =
            xcsh_session::SessionSearch::new(storage(), &agent_dir, cwd.as_deref(), &query)
                .map_err(|e| to_wit(e.into()))?;
        Ok(SessionSearch::new(
            crate::search::SessionSearchResource::new(search),
        ))
    }

    fn resume(
        agent_dir: String,
        cwd: String,
        arg: String,
        confirm: bool,
    ) -> Result<String, ApiError> {
        api::resume(storage(), &agent_dir, &cwd, &arg, confirm).map_err(to_wit)
    }

    fn continue_recent(
        agent_dir: String,
        cwd: String,
        tty: Option<String>,
        env: Vec<(String, String)>,
    ) -> Result<String, ApiError> {
        let terminal = terminal(tty, &env);
        api::continue_recent(storage(), &agent_dir, &cwd, None, terminal.as_deref()).map_err(to_wit)
    }

    fn put_blob(agent_dir: String, data: Vec<u8>) -> Result<String, ApiError> {
        api::blob_put(storage(), &agent_dir, &data).map_err(to_wit)
    }

    fn resolve_url(
        session_file: String,
        url: String,
        offset: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, ApiError> {
        api::resolve_url(
            storage(),
            &session_file,
            &url,
            offset.map(size),
            limit.map(size),
        )
        .map_err(to_wit)
    }

    fn fork(agent_dir: String, file: String) -> Result<String, ApiError> {
        api::fork(storage(), &agent_dir, &file).map_err(to_wit)
    }

    fn move_session(agent_dir: String, file: String, to_cwd: String) -> Result<String, ApiError> {
        api::move_session(storage(), &agent_dir, &file, &to_cwd).map_err(to_wit)
    }

    fn gc(agent_dir: String, dry_run: bool, forget_missing: bool) -> Result<String, ApiError> {
        api::gc(storage(), &agent_dir, dry_run, forget_missing).map_err(to_wit)
    }

    fn history_add(
        agent_dir: String,
        prompt: String,
        cwd: Option<String>,
    ) -> Result<String, ApiError> {
        with_last_prompt(&agent_dir, |store, cache, now_ms| {
            core_history::add_json(store, cache, &prompt, cwd.as_deref(), now_ms)
        })
        .map_err(to_wit)
    }

    fn history_search(
        agent_dir: String,
        query: String,
        limit: u32,
        cwd: Option<String>,
    ) -> Result<String, ApiError> {
        core_history::search_json(&history(&agent_dir), &query, size(limit), cwd.as_deref())
            .map_err(to_wit)
    }

    fn history_recent(
        agent_dir: String,
        limit: u32,
        cwd: Option<String>,
    ) -> Result<String, ApiError> {
        core_history::recent_json(&history(&agent_dir), size(limit), cwd.as_deref()).map_err(to_wit)
    }
}
