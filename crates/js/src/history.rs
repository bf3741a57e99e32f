//! Prompt history for JavaScript: the core's logic (dedupe of consecutive prompts,
//! limits, the `[{id, prompt, createdAt, cwd}]` shape) over a JS history store: a SQLite
//! database (e.g. SQLite compiled to wasm, on OPFS or in memory) running the core's SQL.

use crate::convert::{api_error, invalid, opt_prop, opt_string, parse};
use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::history::{
    self, HistoryEntry, HistoryError, HistoryResult, HistoryRows, HistoryStore, LastPromptCache,
    NewHistoryRow,
};

#[wasm_bindgen]
extern "C" {
    /// A JS object implementing the history store (synchronous).
    #[wasm_bindgen(typescript_type = "JsHistoryStore")]
    pub type JsHistoryStore;

    #[wasm_bindgen(method, catch)]
    fn add(
        this: &JsHistoryStore,
        prompt: &str,
        cwd: JsValue,
        created_at: f64,
    ) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn search(
        this: &JsHistoryStore,
        query: &str,
        limit: u32,
        cwd: JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn recent(this: &JsHistoryStore, limit: u32, cwd: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = lastPrompt)]
    fn last_prompt(this: &JsHistoryStore) -> Result<JsValue, JsValue>;
}

fn history_error(e: JsValue) -> HistoryError {
    let message = crate::convert::error_message(&e);
    let kind = Reflect::get(&e, &"kind".into())
        .ok()
        .and_then(|k| k.as_string());
    if kind.as_deref() == Some("invalidQuery") || message.contains("fts5:") {
        HistoryError::InvalidQuery(message)
    } else {
        HistoryError::Other(message)
    }
}

fn cwd_value(cwd: Option<&str>) -> JsValue {
    cwd.map(JsValue::from_str).unwrap_or(JsValue::NULL)
}

fn rows(value: JsValue) -> HistoryRows {
    let array: Array = value
        .dyn_into()
        .map_err(|_| HistoryError::Other("history store returned no array".into()))?;
    array
        .iter()
        .map(|row| {
            let num = |k: &str| Reflect::get(&row, &k.into()).ok().and_then(|v| v.as_f64());
            Ok(HistoryEntry {
                id: num("id").ok_or_else(|| HistoryError::Other("history row without id".into()))?
                    as i64,
                prompt: Reflect::get(&row, &"prompt".into())
                    .ok()
                    .and_then(|v| v.as_string())
                    .unwrap_or_default(),
                created_at: num("createdAt").unwrap_or(0.0) as i64,
                cwd: Reflect::get(&row, &"cwd".into())
                    .ok()
                    .and_then(|v| v.as_string()),
            })
        })
        .collect()
}

impl HistoryStore for JsHistoryStore {
    fn add(&self, row: NewHistoryRow<'_>) -> HistoryResult<()> {
        JsHistoryStore::add(self, row.prompt, cwd_value(row.cwd), row.created_at as f64)
            .map_err(history_error)
    }
    fn search(&self, query: &str, limit: usize, cwd: Option<&str>) -> HistoryRows {
        rows(
            JsHistoryStore::search(self, query, limit as u32, cwd_value(cwd))
                .map_err(history_error)?,
        )
    }
    fn recent(&self, limit: usize, cwd: Option<&str>) -> HistoryRows {
        rows(JsHistoryStore::recent(self, limit as u32, cwd_value(cwd)).map_err(history_error)?)
    }
    fn last_prompt(&self) -> HistoryResult<Option<String>> {
        Ok(JsHistoryStore::last_prompt(self)
            .map_err(history_error)?
            .as_string())
    }
}

/// The prompt history (`HistoryStorage`).
#[wasm_bindgen(js_name = PromptHistory)]
pub struct JsPromptHistory {
    store: Box<dyn HistoryStore>,
    cache: LastPromptCache,
    backend: String,
}

fn limit_cwd(options: &JsValue) -> Result<(usize, Option<String>), JsValue> {
    let limit = opt_prop(options, "limit", "a non-negative number", |v| {
        v.as_f64().filter(|n| *n >= 0.0).map(|n| n as usize)
    })?
    .unwrap_or(20);
    Ok((limit, opt_string(options, "cwd")?))
}

#[wasm_bindgen(js_class = PromptHistory)]
impl JsPromptHistory {
    /// Over `store`: a SQLite database behind the `JsHistoryStore` methods (the viewer
    /// uses SQLite compiled to wasm, on OPFS or in memory, running `historySchema()` and
    /// `historyQueries()`). Without one it throws (`kind: "invalidInput"`): search is
    /// SQLite's FTS5 and is not imitated.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "JsHistoryStore")] store: JsValue,
    ) -> Result<JsPromptHistory, JsValue> {
        if !store.is_object() {
            return Err(invalid(
                "PromptHistory needs a store: an object with add, search, recent and lastPrompt over a SQLite database (see historySchema() and historyQueries())",
            ));
        }
        let backend = Reflect::get(&store, &"backend".into())
            .ok()
            .and_then(|b| b.as_string())
            .unwrap_or_else(|| "custom".into());
        Ok(JsPromptHistory {
            store: Box::new(store.unchecked_into::<JsHistoryStore>()),
            cache: LastPromptCache::new(),
            backend,
        })
    }

    /// The store's `backend` name (`"custom"` when it has none).
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        self.backend.clone()
    }

    /// Record a prompt: `{added: true}`, or `{added: false, reason: "empty" | "duplicate"}`
    /// (the same prompt as the previous one is not stored twice).
    #[wasm_bindgen(unchecked_return_type = "{ added: boolean, reason?: 'empty' | 'duplicate' }")]
    pub fn add(&mut self, prompt: &str, cwd: Option<String>) -> Result<JsValue, JsValue> {
        let now = js_sys::Date::now() as i64;
        parse(
            &history::add_json(&*self.store, &mut self.cache, prompt, cwd.as_deref(), now)
                .map_err(api_error)?,
        )
    }

    /// FTS5 query (prefixes `pars*`, phrases `"a b"`), best match first.
    #[wasm_bindgen(unchecked_return_type = "HistoryEntry[]")]
    pub fn search(
        &self,
        query: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "{ limit?: number, cwd?: string }")] options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let (limit, cwd) = limit_cwd(&options)?;
        parse(&history::search_json(&*self.store, query, limit, cwd.as_deref()).map_err(api_error)?)
    }

    /// Newest first.
    #[wasm_bindgen(unchecked_return_type = "HistoryEntry[]")]
    pub fn recent(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "{ limit?: number, cwd?: string }")] options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let (limit, cwd) = limit_cwd(&options)?;
        parse(&history::recent_json(&*self.store, limit, cwd.as_deref()).map_err(api_error)?)
    }

    /// Plain words to a safe FTS5 prefix query: `foo bar` → `"foo"* "bar"*`.
    #[wasm_bindgen(js_name = prefixQuery)]
    pub fn prefix_query(text: &str) -> String {
        history::prefix_query(text)
    }
}

/// The SQL of the history database, the same text the CLI host runs: the schema
/// (idempotent, run on every open) for a `JsHistoryStore` over SQLite.
#[wasm_bindgen(js_name = historySchema)]
pub fn history_schema() -> String {
    history::sql::SCHEMA.to_string()
}

/// The SQL that brings a history database to the current schema (to run in one write
/// transaction), or `null` when it is current: decided from what `historyQueries()`'s
/// `tableSql`, `columns` and `objects` read (the CLI host decides the same way).
#[wasm_bindgen(js_name = historySchemaUpgrade)]
pub fn history_schema_upgrade(
    #[wasm_bindgen(js_name = tableSql)] table_sql: Option<String>,
    columns: Vec<String>,
    objects: Vec<String>,
) -> Option<String> {
    history::sql::schema_upgrade(&history::sql::SchemaFacts {
        table_sql,
        columns,
        objects,
    })
}

/// The queries a SQLite `JsHistoryStore` runs, the CLI host's own (`?1`… parameters as
/// documented in `HistoryQueries`).
#[wasm_bindgen(js_name = historyQueries, unchecked_return_type = "HistoryQueries")]
pub fn history_queries() -> JsValue {
    use history::sql;
    let queries = js_sys::Object::new();
    for (key, sql) in [
        ("insert", sql::INSERT),
        ("search", sql::SEARCH),
        ("searchCwd", sql::SEARCH_CWD),
        ("recent", sql::RECENT),
        ("recentCwd", sql::RECENT_CWD),
        ("lastPrompt", sql::LAST_PROMPT),
        ("tableSql", sql::TABLE_SQL),
        ("columns", sql::COLUMNS),
        ("objects", sql::OBJECTS),
    ] {
        let _ = Reflect::set(&queries, &key.into(), &sql.into());
    }
    queries.into()
}
