//! The `Session` class: one core [`xcsh_session::Session`] behind a JS object.

use crate::convert::{
    self, js_error, opt_bool, opt_string, parse, string, stringify, stringify_opt, window_bounds,
    LeafArg,
};
use crate::storage::{JsPort, JsStorage, LocalStorage};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::api;
use xcsh_session::context::{Leaf, SessionContext};
use xcsh_session::session::{CompactionInput, CreateOptions, OpenOptions, Persistence};
use xcsh_session::Flavour;
use xcsh_session::{ContextReader, SessionError, Storage};

type CoreSession = xcsh_session::Session;

/// The longest JS string V8 makes, in UTF-16 units (`String.prototype.length`): 2^29 − 24.
const MAX_JS_STRING: usize = (1 << 29) - 24;

/// A session: an append-only tree of entries with a movable leaf, persisted through a
/// `JsStorage` (or read-only / in memory). Call `free()` when done with it, or rely on
/// the garbage collector.
#[wasm_bindgen(js_name = Session)]
pub struct JsSession {
    inner: CoreSession,
}

type JsResult<T> = Result<T, JsValue>;

/// How much of a context's JSON `writeContextJson` hands over per call.
const CONTEXT_CHUNK: usize = 1 << 20;

fn core<T>(result: Result<T, SessionError>) -> JsResult<T> {
    result.map_err(js_error)
}

/// `options.storage` as a port, or memory storage when absent.
pub(crate) fn storage_option(options: &JsValue) -> JsResult<Rc<dyn Storage>> {
    let storage = convert::get(options, "storage");
    if storage.is_undefined() || storage.is_null() {
        Ok(Rc::new(LocalStorage::default()))
    } else if storage.is_object() {
        Ok(Rc::new(JsPort::new(storage.unchecked_into())?))
    } else {
        Err(convert::invalid(
            "storage must be an object implementing JsStorage",
        ))
    }
}

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// A read-only view of a session's JSONL text (viewers). Blob references resolve in
    /// `<agentDir>/blobs` of `options.storage`.
    #[wasm_bindgen(js_name = fromText)]
    pub fn from_text(
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] text: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "FromTextOptions")] options: JsValue,
    ) -> JsResult<JsSession> {
        let agent_dir = opt_string(&options, "agentDir")?.unwrap_or_default();
        let storage = storage_option(&options)?;
        let on_progress = crate::convert::get(&options, "onProgress")
            .dyn_into::<js_sys::Function>()
            .ok();
        let mut progress = |done: usize, total: usize| report_progress(&on_progress, done, total);
        Ok(JsSession {
            inner: CoreSession::from_string_with_progress(
                storage,
                crate::convert::session_text(text)?,
                &agent_dir,
                &mut progress,
            ),
        })
    }

    /// A session that is never written (`SessionManager.inMemory`), its header linked to
    /// `parentSession` when one is given.
    #[wasm_bindgen(js_name = inMemory)]
    pub fn in_memory(
        cwd: Option<String>,
        parent_session: Option<String>,
        flavour: Option<String>,
    ) -> JsResult<JsSession> {
        let flavour = parse_flavour(flavour)?;
        Ok(JsSession {
            inner: CoreSession::in_memory_flavoured(
                Rc::new(LocalStorage::default()),
                cwd.as_deref().unwrap_or(""),
                parent_session.as_deref(),
                flavour.unwrap_or_default(),
            ),
        })
    }

    /// Whose rules this session writes by: `"xcsh"` or `"pi"`.
    #[wasm_bindgen(getter)]
    pub fn flavour(&self) -> String {
        match self.inner.flavour() {
            Flavour::Xcsh => "xcsh".into(),
            Flavour::Pi => "pi".into(),
        }
    }

    /// Load a session file (a missing file gives a new empty session at that path). An old
    /// file is migrated in memory; the next persisted write (or `rewriteEntries`) rewrites it.
    pub fn open(
        storage: JsStorage,
        path: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "OpenOptions")] options: JsValue,
    ) -> JsResult<JsSession> {
        let read_only = opt_bool(&options, "readOnly")?.unwrap_or(false);
        let flavour = flavour_option(&options)?;
        let lazy = opt_bool(&options, "lazy")?.unwrap_or(false);
        let cache = convert::index_cache(&options)?;
        let on_progress = crate::convert::get(&options, "onProgress")
            .dyn_into::<js_sys::Function>()
            .ok();
        let mut progress = |done: usize, total: usize| report_progress(&on_progress, done, total);
        let options = OpenOptions {
            persistence: if read_only {
                Persistence::ReadOnly
            } else {
                Persistence::Persistent
            },
            // Without one: the agent directory the file's place names, if it is in the
            // agent's layout (`<agentDir>/sessions/<project>/<file>`).
            agent_dir: match opt_string(&options, "agentDir")? {
                Some(dir) => dir,
                None => xcsh_session::paths::agent_dir_of_session(path)
                    .unwrap_or_default()
                    .to_string(),
            },
            cwd: opt_string(&options, "cwd")?.unwrap_or_default(),
        };
        let storage: Rc<dyn Storage> = Rc::new(JsPort::new(storage)?);
        let inner = match lazy {
            true => CoreSession::open_deferred(storage, path, &options, cache),
            false => CoreSession::open_with_progress(storage, path, &options, &mut progress),
        };
        let mut inner = core(inner)?;
        if let Some(f) = flavour {
            inner.set_flavour(f);
        }
        Ok(JsSession { inner })
    }

    /// A new persistent session; its file appears with the first assistant message.
    pub fn create(
        storage: JsStorage,
        #[wasm_bindgen(unchecked_param_type = "CreateOptions")] options: JsValue,
    ) -> JsResult<JsSession> {
        Ok(JsSession {
            inner: CoreSession::create(Rc::new(JsPort::new(storage)?), &create_options(&options)?),
        })
    }

    /// A new persistent session (of `options.cwd`, written at once) holding a copy of the
    /// session file `source`: its entries as they are, but for stale OpenAI Responses
    /// replay data, and its name; `parentSession` is the source's id. The source is only
    /// read; its artifacts are copied.
    #[wasm_bindgen(js_name = forkFrom)]
    pub fn fork_from(
        storage: JsStorage,
        source: &str,
        #[wasm_bindgen(unchecked_param_type = "CreateOptions")] options: JsValue,
    ) -> JsResult<JsSession> {
        let (inner, _) = core(CoreSession::fork_from(
            Rc::new(JsPort::new(storage)?),
            source,
            &create_options(&options)?,
        ))?;
        Ok(JsSession { inner })
    }

    // ---- reading ----

    #[wasm_bindgen(getter = sessionId)]
    pub fn session_id(&self) -> String {
        self.inner.session_id().to_string()
    }

    /// The session version of the file as read (before any migration; no `version`: 1).
    #[wasm_bindgen(getter = versionOnDisk)]
    pub fn version_on_disk(&mut self) -> JsResult<f64> {
        Ok(self.read()?.report().file_version as f64)
    }

    /// The session's name: the header's `title` (xcsh's), else the name of its latest
    /// `session_info` entry (pi's: an empty one clears it); `undefined` when it has none.
    #[wasm_bindgen(js_name = sessionName)]
    pub fn session_name(&mut self) -> JsResult<Option<String>> {
        Ok(self.read()?.session_name())
    }

    /// The title to show: the session's name (`sessionName()`) sanitized, else the first
    /// user message's text
    /// (first line, control characters dropped), capped at `maxChars` (default 80) with
    /// `…`; `null` when the session has neither. The recent list's `name` follows the
    /// same rules (capped at 40).
    #[wasm_bindgen(js_name = displayTitle, unchecked_return_type = "string | null")]
    pub fn display_title(
        &mut self,
        #[wasm_bindgen(js_name = maxChars, unchecked_optional_param_type = "number")]
        max_chars: JsValue,
    ) -> JsResult<JsValue> {
        let max = match max_chars.as_f64() {
            None if max_chars.is_undefined() || max_chars.is_null() => 80,
            Some(n) if n >= 1.0 && n.fract() == 0.0 => n as usize,
            _ => {
                return Err(crate::convert::invalid(
                    "maxChars must be a positive integer",
                ))
            }
        };
        // A lazy session not read yet: through its index (the lines the title needs).
        if let Some(title) = self.inner.deferred_title(max) {
            return Ok(title
                .map(|t| JsValue::from_str(&t))
                .unwrap_or(JsValue::NULL));
        }
        Ok(xcsh_session::listing::session_title(self.read()?, max)
            .map(|t| JsValue::from_str(&t))
            .unwrap_or(JsValue::NULL))
    }

    /// Opened with `lazy: true` and its entries still in the file (nothing has read them
    /// yet: the header, the leaf, the current context and appends do not).
    #[wasm_bindgen(getter)]
    pub fn deferred(&self) -> bool {
        self.inner.is_deferred()
    }

    /// The session file (`undefined` for in-memory and `fromText` sessions).
    #[wasm_bindgen(getter)]
    pub fn file(&self) -> Option<String> {
        self.inner.file().map(str::to_string)
    }

    #[wasm_bindgen(getter = leafId, unchecked_return_type = "string | null")]
    pub fn leaf_id(&self) -> JsValue {
        self.inner
            .leaf_id()
            .map(JsValue::from_str)
            .unwrap_or(JsValue::NULL)
    }

    #[wasm_bindgen(unchecked_return_type = "SessionHeader")]
    pub fn header(&self) -> JsResult<JsValue> {
        parse(&self.inner.header().to_json())
    }

    /// All entries in file order, blob references resolved.
    #[wasm_bindgen(unchecked_return_type = "SessionEntry[]")]
    pub fn entries(&mut self) -> JsResult<JsValue> {
        parse(&self.entries_json()?)
    }

    #[wasm_bindgen(js_name = entriesJson)]
    pub fn entries_json(&mut self) -> JsResult<String> {
        let s = self.read()?;
        Ok(convert::json_array(
            s.entries().iter().map(|e| s.entry_json(e)),
        ))
    }

    #[wasm_bindgen(unchecked_return_type = "SessionEntry")]
    pub fn entry(&mut self, id: &str) -> JsResult<JsValue> {
        let s = self.read()?;
        parse(&s.entry_json(core(s.entry(id))?))
    }

    /// Entries whose parent is `id`, in file order.
    #[wasm_bindgen(unchecked_return_type = "SessionEntry[]")]
    pub fn children(&mut self, id: &str) -> JsResult<JsValue> {
        let s = self.read()?;
        parse(&convert::json_array(
            s.children(id).into_iter().map(|e| s.entry_json(e)),
        ))
    }

    /// The path root → `fromId` (default: the leaf).
    #[wasm_bindgen(js_name = branchPath, unchecked_return_type = "SessionEntry[]")]
    pub fn branch_path(
        &mut self,
        #[wasm_bindgen(js_name = fromId)] from_id: Option<String>,
    ) -> JsResult<JsValue> {
        let s = self.read()?;
        let path = core(s.branch_path(from_id.as_deref()))?;
        parse(&convert::json_array(
            path.into_iter().map(|e| s.entry_json(e)),
        ))
    }

    #[wasm_bindgen(unchecked_return_type = "TreeNode[]")]
    pub fn tree(&mut self) -> JsResult<JsValue> {
        let s = self.read()?;
        parse(&s.tree().to_json(s))
    }

    /// The tree as nested JSON text (`[{entry, label?, children}]`). With
    /// `maxStringChars`, every string value in the entries longer than that is cut to its
    /// first `maxStringChars` characters (an escape counts as one): an outline of a huge
    /// session, for previews and totals, at a fraction of its size.
    #[wasm_bindgen(js_name = treeJson)]
    pub fn tree_json(
        &mut self,
        #[wasm_bindgen(js_name = maxStringChars, unchecked_optional_param_type = "number | null")]
        max_string_chars: JsValue,
    ) -> JsResult<String> {
        let s = self.read()?;
        let tree = s.tree();
        if max_string_chars.is_undefined() || max_string_chars.is_null() {
            return Ok(tree.to_json(s));
        }
        let max = max_string_chars
            .as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n <= u32::MAX as f64)
            .ok_or_else(|| {
                crate::convert::invalid(format!(
                    "treeJson(maxStringChars): maxStringChars must be a whole number of characters, 0 or more (got {})",
                    js_sys::JSON::stringify(&max_string_chars)
                        .map(String::from)
                        .unwrap_or_else(|_| "a value JSON cannot show".into())
                ))
            })?;
        Ok(tree.to_outline_json(s, max as usize))
    }

    pub fn label(&mut self, id: &str) -> JsResult<Option<String>> {
        Ok(self.read()?.label(id).map(str::to_string))
    }

    /// `buildSessionContext`: `undefined` → the current leaf, `null` → the empty context,
    /// an id → that entry (an unknown id falls back to the last entry, as in the agent).
    #[wasm_bindgen(unchecked_return_type = "SessionContext")]
    pub fn context(
        &mut self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<JsValue> {
        parse(&self.context_json(leaf_id)?)
    }

    /// `context()` built by serde-wasm-bindgen from the parsed context instead of by
    /// `JSON.parse` of its text: only in the bench build (feature
    /// `serde-wasm-bindgen-bench`), for the row that compares the two.
    #[cfg(feature = "serde-wasm-bindgen-bench")]
    #[wasm_bindgen(js_name = contextViaSerdeWasmBindgen, skip_typescript)]
    pub fn context_via_serde_wasm_bindgen(&mut self, leaf_id: JsValue) -> JsResult<JsValue> {
        use serde::Serialize;
        let text = self.context_json(leaf_id)?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| crate::convert::invalid(e.to_string()))?;
        value
            .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            .map_err(JsValue::from)
    }

    /// The context as JSON text. A context longer than a JS string can be (V8: 2^29 − 24
    /// UTF-16 units, ~512 MiB; a session of about 1 GB with no compaction) is refused as
    /// `invalidInput`, naming its size and `contextJsonBytes`, which has no such limit.
    #[wasm_bindgen(js_name = contextJson)]
    pub fn context_json(
        &mut self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<String> {
        let text = self.context_text(&leaf_id)?;
        if text.len() > MAX_JS_STRING && text.encode_utf16().count() > MAX_JS_STRING {
            let e = crate::convert::invalid(format!(
                "the context is {} bytes of JSON, more than a JavaScript string can hold ({MAX_JS_STRING} UTF-16 units): read it with contextJsonBytes() (UTF-8 bytes) or writeContextJson(write) (streamed) instead",
                text.len()
            ));
            // `details.contextBytes`: callers (the agent drop-in) can tell this refusal.
            let details = js_sys::Object::new();
            let _ = js_sys::Reflect::set(
                &details,
                &"contextBytes".into(),
                &(text.len() as f64).into(),
            );
            let _ = js_sys::Reflect::set(&e, &"details".into(), &details);
            return Err(e);
        }
        Ok(text)
    }

    /// The context as JSON, UTF-8 bytes: the same bytes as `contextJson`, for a context too
    /// large for a JS string (decode it in pieces, or stream it to a file).
    #[wasm_bindgen(js_name = contextJsonBytes)]
    pub fn context_json_bytes(
        &mut self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<Vec<u8>> {
        Ok(self.context_text(&leaf_id)?.into_bytes())
    }

    /// The context as JSON handed to `write` a chunk at a time: UTF-8 bytes, at most
    /// 1 MiB each (a chunk may end inside a character: join before decoding). The same
    /// bytes as `contextJsonBytes`, without the whole text in wasm memory and again in
    /// JS (a 1 GB session's context is about 1 GB). Each chunk is a new `Uint8Array` that
    /// `write` may keep; `write` is called synchronously (a Promise it returns is refused:
    /// write with `fs.writeSync`, or collect the chunks). Returns the number of bytes.
    #[wasm_bindgen(js_name = writeContextJson)]
    pub fn write_context_json(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "(chunk: Uint8Array) => void")] write: JsValue,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<f64> {
        let Some(write) = write.dyn_ref::<js_sys::Function>() else {
            return Err(crate::convert::invalid(
                "writeContextJson(write): write must be a function taking each chunk (a Uint8Array)",
            ));
        };
        self.with_json_reader(&leaf_id, |reader| {
            let mut chunk = Vec::with_capacity(CONTEXT_CHUNK);
            let mut total = 0f64;
            loop {
                chunk.clear();
                if core(reader.read_into(&mut chunk, CONTEXT_CHUNK))? == 0 {
                    return Ok(total);
                }
                total += chunk.len() as f64;
                let answer = write.call1(&JsValue::NULL, &js_sys::Uint8Array::from(&chunk[..]))?;
                if answer.is_instance_of::<js_sys::Promise>() {
                    return Err(crate::convert::invalid(
                        "writeContextJson(write): write returned a Promise; it is called synchronously (write with fs.writeSync, or collect the chunks)",
                    ));
                }
            }
        })
    }

    fn context_text(&mut self, leaf_id: &JsValue) -> JsResult<String> {
        self.with_context(leaf_id, |c| c.to_json())
    }

    /// The session with its entries read: a lazy open reads them now.
    pub(crate) fn read(&mut self) -> JsResult<&CoreSession> {
        core(self.inner.materialize())?;
        Ok(&self.inner)
    }

    /// `f` of the context at `leafId`: `undefined` → the current leaf, `null` → the empty
    /// context, an id → that entry (unknown: the last entry). A lazy session that has not
    /// changed since it was opened reads the current leaf's through the index; otherwise
    /// its entries are read first.
    fn with_context<T>(
        &mut self,
        leaf_id: &JsValue,
        f: impl FnOnce(&SessionContext<'_>) -> T,
    ) -> JsResult<T> {
        let leaf = LeafArg::from_js(leaf_id)?;
        if let (LeafArg::Default, Some(opened)) = (&leaf, self.inner.deferred_context()) {
            return Ok(f(&core(opened.context())?));
        }
        Ok(f(&context_of(self.read()?, &leaf)))
    }

    /// [`Self::with_context`] with the context's JSON as a reader (streamed from the file
    /// when a lazy session's context is large).
    fn with_json_reader<T>(
        &mut self,
        leaf_id: &JsValue,
        f: impl FnOnce(&mut ContextReader<'_>) -> JsResult<T>,
    ) -> JsResult<T> {
        let leaf = LeafArg::from_js(leaf_id)?;
        if let (LeafArg::Default, Some(opened)) = (&leaf, self.inner.deferred_context()) {
            return f(&mut opened.json_reader());
        }
        let context = context_of(self.read()?, &leaf);
        f(&mut ContextReader::Built(Box::new(
            context.into_json_reader(),
        )))
    }

    // ---- moving the leaf ----

    /// Move the leaf to an existing entry; nothing is written.
    pub fn branch(&mut self, id: &str) -> JsResult<()> {
        core(self.inner.branch(id))
    }

    /// The next append starts a new root.
    #[wasm_bindgen(js_name = resetLeaf)]
    pub fn reset_leaf(&mut self) {
        self.inner.reset_leaf()
    }

    /// Move the leaf to `fromId` (`null`: before the first entry) and record a summary of
    /// the abandoned path there; returns the summary entry's id.
    #[wasm_bindgen(js_name = branchWithSummary)]
    pub fn branch_with_summary(
        &mut self,
        #[wasm_bindgen(js_name = fromId, unchecked_param_type = "string | null")] from_id: Option<
            String,
        >,
        summary: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "unknown")] details: JsValue,
        #[wasm_bindgen(js_name = fromExtension, unchecked_optional_param_type = "boolean")]
        from_extension: Option<bool>,
    ) -> JsResult<String> {
        let details = stringify_opt(&details, "details")?;
        core(self.inner.branch_with_summary(
            from_id.as_deref(),
            summary,
            details.as_deref(),
            from_extension,
        ))
    }

    // ---- appending (each returns the new entry's id) ----

    #[wasm_bindgen(js_name = appendMessage)]
    pub fn append_message(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "AgentMessage")] message: JsValue,
    ) -> JsResult<String> {
        let message = stringify(&message, "message")?;
        core(self.inner.append_message(&message))
    }

    /// Any entry as `{type, ...fields}`; `id`, `parentId` and `timestamp` are assigned.
    #[wasm_bindgen(js_name = appendEntry)]
    pub fn append_entry(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "NewEntry")] entry: JsValue,
    ) -> JsResult<String> {
        let entry = stringify(&entry, "entry")?;
        core(self.inner.append_entry_json(&entry))
    }

    /// A missing `label` clears the target's label.
    #[wasm_bindgen(js_name = appendLabelChange)]
    pub fn append_label_change(
        &mut self,
        #[wasm_bindgen(js_name = targetId)] target_id: &str,
        label: Option<String>,
    ) -> JsResult<String> {
        core(self.inner.append_label_change(target_id, label.as_deref()))
    }

    #[wasm_bindgen(js_name = appendThinkingLevelChange)]
    pub fn append_thinking_level_change(&mut self, level: Option<String>) -> JsResult<String> {
        core(self.inner.append_thinking_level_change(level.as_deref()))
    }

    /// `model` is `provider/id`.
    #[wasm_bindgen(js_name = appendModelChange)]
    pub fn append_model_change(&mut self, model: &str, role: Option<String>) -> JsResult<String> {
        core(self.inner.append_model_change(model, role.as_deref()))
    }

    #[wasm_bindgen(js_name = appendCompaction)]
    pub fn append_compaction(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "CompactionInput")] c: JsValue,
    ) -> JsResult<String> {
        let tokens = convert::get(&c, "tokensBefore")
            .as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0);
        let input = CompactionInput {
            summary: string(&c, "summary")?,
            short_summary: opt_string(&c, "shortSummary")?,
            first_kept_entry_id: string(&c, "firstKeptEntryId")?,
            tokens_before: tokens
                .ok_or_else(|| convert::invalid("tokensBefore must be a non-negative integer"))?
                as u64,
            details: stringify_opt(&convert::get(&c, "details"), "details")?,
            from_extension: opt_bool(&c, "fromExtension")?,
            preserve_data: stringify_opt(&convert::get(&c, "preserveData"), "preserveData")?,
        };
        core(self.inner.append_compaction(&input))
    }

    /// Extension state, ignored by context building.
    #[wasm_bindgen(js_name = appendCustomEntry)]
    pub fn append_custom_entry(
        &mut self,
        #[wasm_bindgen(js_name = customType)] custom_type: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "unknown")] data: JsValue,
    ) -> JsResult<String> {
        let data = stringify_opt(&data, "data")?;
        core(self.inner.append_custom_entry(custom_type, data.as_deref()))
    }

    /// A message from an extension that takes part in the context.
    #[wasm_bindgen(js_name = appendCustomMessageEntry)]
    pub fn append_custom_message_entry(
        &mut self,
        #[wasm_bindgen(js_name = customType)] custom_type: &str,
        #[wasm_bindgen(unchecked_param_type = "string | ContentBlock[]")] content: JsValue,
        display: bool,
        #[wasm_bindgen(unchecked_optional_param_type = "unknown")] details: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string")] attribution: Option<String>,
    ) -> JsResult<String> {
        let content = stringify(&content, "content")?;
        let details = stringify_opt(&details, "details")?;
        core(self.inner.append_custom_message_entry(
            custom_type,
            &content,
            display,
            details.as_deref(),
            attribution.as_deref(),
        ))
    }

    #[wasm_bindgen(js_name = appendModeChange)]
    pub fn append_mode_change(
        &mut self,
        mode: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, unknown>")] data: JsValue,
    ) -> JsResult<String> {
        let data = stringify_opt(&data, "data")?;
        core(self.inner.append_mode_change(mode, data.as_deref()))
    }

    #[wasm_bindgen(js_name = appendTtsrInjection)]
    pub fn append_ttsr_injection(&mut self, rules: Vec<String>) -> JsResult<String> {
        core(self.inner.append_ttsr_injection(&rules))
    }

    #[wasm_bindgen(js_name = appendMcpToolSelection)]
    pub fn append_mcp_tool_selection(&mut self, names: Vec<String>) -> JsResult<String> {
        core(self.inner.append_mcp_tool_selection(&names))
    }

    #[wasm_bindgen(js_name = appendServiceTierChange)]
    pub fn append_service_tier_change(&mut self, tier: Option<String>) -> JsResult<String> {
        core(self.inner.append_service_tier_change(tier.as_deref()))
    }

    #[wasm_bindgen(js_name = appendContextChange)]
    pub fn append_context_change(
        &mut self,
        #[wasm_bindgen(js_name = contextName)] context_name: &str,
        tenant: &str,
        namespace: &str,
    ) -> JsResult<String> {
        core(
            self.inner
                .append_context_change(context_name, tenant, namespace),
        )
    }

    // ---- the session as a whole ----

    /// Sanitized (control characters as spaces, spaces collapsed, trimmed); returns whether
    /// it was taken: not when empty, nor when it is `"auto"` and the user named the session.
    #[wasm_bindgen(js_name = setSessionName)]
    pub fn set_session_name(&mut self, name: &str, source: &str) -> JsResult<bool> {
        core(self.inner.set_session_name(name, source))
    }

    /// Continue in a new session holding the path root → `leafId`; returns its file
    /// (`undefined` in memory).
    #[wasm_bindgen(js_name = createBranchedSession)]
    pub fn create_branched_session(
        &mut self,
        #[wasm_bindgen(js_name = leafId)] leaf_id: &str,
    ) -> JsResult<Option<String>> {
        core(self.inner.create_branched_session(leaf_id))
    }

    /// Write the session now, even before the first assistant message.
    #[wasm_bindgen(js_name = ensureOnDisk)]
    pub fn ensure_on_disk(&mut self) -> JsResult<()> {
        core(self.inner.ensure_on_disk())
    }

    /// Replace an entry by an edited copy (same `id`, `parentId` and `type`); written by
    /// the next `rewriteEntries`. `position` (in `entries()`) picks one of entries that
    /// share an id; default: the last.
    #[wasm_bindgen(js_name = replaceEntry)]
    pub fn replace_entry(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "SessionEntry")] entry: JsValue,
        position: Option<usize>,
    ) -> JsResult<()> {
        let json = stringify(&entry, "entry")?;
        core(self.inner.replace_entry_at(position, &json))
    }

    /// `rewriteEntries`: write the whole file now from this session's entries (after
    /// editing them, or to persist a migration at once), atomically, under the lock.
    #[wasm_bindgen(js_name = rewriteEntries)]
    pub fn rewrite_entries(&mut self) -> JsResult<()> {
        core(self.inner.rewrite_entries())
    }

    /// The file on disk still lacks what loading changed (a migration or a repair): the
    /// next persisted write, `ensureOnDisk` or `rewriteEntries` writes it whole.
    #[wasm_bindgen(getter, js_name = needsRewrite)]
    pub fn needs_rewrite(&self) -> bool {
        self.inner.needs_rewrite()
    }

    /// `getUsageStatistics`: token, premium-request and cost totals of every assistant
    /// message and every `task` tool result, on every branch.
    #[wasm_bindgen(js_name = usageStatistics, unchecked_return_type = "UsageStatistics")]
    pub fn usage_statistics(&mut self) -> JsResult<JsValue> {
        parse(&api::record(&self.read()?.usage_statistics()))
    }

    /// `getLastModelChangeRole`: the role of the nearest `model_change` from the leaf to
    /// the root (`"default"` when it names none), `undefined` without one.
    #[wasm_bindgen(js_name = lastModelChangeRole)]
    pub fn last_model_change_role(&mut self) -> JsResult<Option<String>> {
        Ok(self.read()?.last_model_change_role().map(str::to_string))
    }

    /// `allocateArtifactPath`: `{ id, path }` of the next artifact (`<n>.<tool>.log` in
    /// the session's artifacts directory, created), `{}` for a session without a file.
    #[wasm_bindgen(js_name = allocateArtifactPath, unchecked_return_type = "{ id?: string, path?: string }")]
    pub fn allocate_artifact_path(
        &mut self,
        #[wasm_bindgen(js_name = toolType)] tool_type: &str,
    ) -> JsResult<JsValue> {
        let obj = js_sys::Object::new();
        if let Some((id, path)) = core(self.inner.allocate_artifact_path(tool_type))? {
            js_sys::Reflect::set(&obj, &"id".into(), &id.into())?;
            js_sys::Reflect::set(&obj, &"path".into(), &path.into())?;
        }
        Ok(obj.into())
    }

    /// `saveArtifact`: write `content` as the next artifact; its id (kept in memory for a
    /// session without a file).
    #[wasm_bindgen(js_name = saveArtifact)]
    pub fn save_artifact(
        &mut self,
        content: &str,
        #[wasm_bindgen(js_name = toolType)] tool_type: &str,
    ) -> JsResult<String> {
        core(self.inner.save_artifact(content, tool_type))
    }

    /// `getArtifactPath`: the file of artifact `id`, or `null`.
    #[wasm_bindgen(js_name = getArtifactPath)]
    pub fn artifact_path(&self, id: &str) -> JsResult<Option<String>> {
        core(self.inner.artifact_path(id))
    }

    /// fsync the session file.
    pub fn flush(&mut self) -> JsResult<()> {
        core(self.inner.flush())
    }

    /// fsync and release the writer lock (`<file>.lock`); another `Session.open` may then
    /// write. Later writes from this session take the lock again. Also done by `free()`.
    pub fn close(&mut self) -> JsResult<()> {
        core(self.inner.close())
    }

    /// The whole file as this session would write it.
    #[wasm_bindgen(js_name = toJsonl)]
    pub fn to_jsonl(&mut self) -> JsResult<String> {
        core(self.read()?.to_jsonl().map_err(SessionError::from))
    }

    /// What loading found and did.
    #[wasm_bindgen(unchecked_return_type = "LoadReport")]
    pub fn report(&mut self) -> JsResult<JsValue> {
        parse(&api::report_json(self.read()?.report()))
    }

    /// Missing blobs, the latched persistence error.
    pub fn warnings(&mut self) -> JsResult<Vec<String>> {
        Ok(self.read()?.warnings().to_vec())
    }

    /// The id of the entry each context message came from (parallel to
    /// `context(leafId).messages`), so a viewer can link messages to the tree.
    #[wasm_bindgen(js_name = contextEntryIds)]
    pub fn context_entry_ids(
        &mut self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<Vec<String>> {
        self.with_context(&leaf_id, |ctx| {
            ctx.entry_ids.iter().map(|id| id.to_string()).collect()
        })
    }

    /// How many messages the context at `leafId` has (as `contextEntryIds`): a lazy
    /// session's current context answers through its index.
    #[wasm_bindgen(js_name = contextMessageCount)]
    pub fn context_message_count(
        &mut self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<f64> {
        let leaf = LeafArg::from_js(&leaf_id)?;
        if let (LeafArg::Default, Some(opened)) = (&leaf, self.inner.deferred_context()) {
            return Ok(opened.message_count() as f64);
        }
        let s = self.read()?;
        Ok(s.context_message_count(leaf_of(s, &leaf)) as f64)
    }

    /// The context at `leafId` without its messages (`messages` is empty): its thinking
    /// level, models, mode and the rest, as `context(leafId)` has them, with no message
    /// made. What a viewer's header shows.
    #[wasm_bindgen(js_name = contextState, unchecked_return_type = "SessionContext")]
    pub fn context_state(
        &mut self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<JsValue> {
        let leaf = LeafArg::from_js(&leaf_id)?;
        if let (LeafArg::Default, Some(opened)) = (&leaf, self.inner.deferred_context()) {
            return parse(&core(opened.state())?.to_json());
        }
        let s = self.read()?;
        parse(&s.context_state(leaf_of(s, &leaf)).to_json())
    }

    /// Messages `start..end` (cut to its length) of the context at `leafId`, each with
    /// its entry's id: that slice of `context(leafId).messages` and `contextEntryIds`,
    /// with only those messages made (a lazy session's current context reads only their
    /// lines). What a viewer shows of a long conversation.
    #[wasm_bindgen(js_name = contextWindow, unchecked_return_type = "ContextWindow")]
    pub fn context_window(
        &mut self,
        start: f64,
        end: f64,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<JsValue> {
        let (start, end) = window_bounds(start, end)?;
        let leaf = LeafArg::from_js(&leaf_id)?;
        if let (LeafArg::Default, Some(opened)) = (&leaf, self.inner.deferred_context()) {
            return parse(&core(opened.window(start, end))?.to_json());
        }
        let s = self.read()?;
        parse(&s.context_window(leaf_of(s, &leaf), start, end).to_json())
    }

    /// How many messages the whole history of the branch at `leafId` has (see
    /// `historyWindow`).
    #[wasm_bindgen(js_name = historyMessageCount)]
    pub fn history_message_count(
        &mut self,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<f64> {
        let leaf = LeafArg::from_js(&leaf_id)?;
        let s = self.read()?;
        Ok(s.history_message_count(leaf_of(s, &leaf)) as f64)
    }

    /// Messages `start..end` (cut to its length) of the whole history of the branch at
    /// `leafId`, each with its entry's id: every message of the branch from its root,
    /// each compaction as its summary where it happened, the messages it replaced
    /// included (the context holds only what the model sees). What a reader scrolls
    /// through, as the agent's export shows it.
    #[wasm_bindgen(js_name = historyWindow, unchecked_return_type = "ContextWindow")]
    pub fn history_window(
        &mut self,
        start: f64,
        end: f64,
        #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")] leaf_id: JsValue,
    ) -> JsResult<JsValue> {
        let (start, end) = window_bounds(start, end)?;
        let leaf = LeafArg::from_js(&leaf_id)?;
        let s = self.read()?;
        parse(&s.history_window(leaf_of(s, &leaf), start, end).to_json())
    }

    /// Continue in a copy under a new id in the same directory (artifacts copied);
    /// returns `{oldFile, newFile, warnings}`.
    #[wasm_bindgen(
        unchecked_return_type = "{ oldFile?: string, newFile?: string, warnings: string[] }"
    )]
    pub fn fork(&mut self) -> JsResult<JsValue> {
        let r = core(self.inner.fork())?;
        let obj = js_sys::Object::new();
        let set = |k: &str, v: JsValue| js_sys::Reflect::set(&obj, &k.into(), &v);
        set(
            "oldFile",
            r.old_file.map(JsValue::from).unwrap_or(JsValue::UNDEFINED),
        )?;
        set(
            "newFile",
            r.new_file.map(JsValue::from).unwrap_or(JsValue::UNDEFINED),
        )?;
        set(
            "warnings",
            r.warnings
                .into_iter()
                .map(JsValue::from)
                .collect::<js_sys::Array>()
                .into(),
        )?;
        Ok(obj.into())
    }

    /// Move the file and artifacts to `newCwd`'s session directory (or to `sessionDir`
    /// when given); returns the new path.
    #[wasm_bindgen(js_name = moveTo)]
    pub fn move_to(
        &mut self,
        #[wasm_bindgen(js_name = agentDir)] agent_dir: &str,
        #[wasm_bindgen(js_name = newCwd)] new_cwd: &str,
        #[wasm_bindgen(js_name = sessionDir)] session_dir: Option<String>,
    ) -> JsResult<String> {
        match session_dir {
            Some(dir) => core(self.inner.move_to_dir(&dir, new_cwd)),
            None => core(self.inner.move_to(agent_dir, new_cwd)),
        }
    }
}

/// The context at `leaf` of a session whose entries are read: `Default` → its leaf,
/// `Null` → the empty context, an id → that entry (unknown: the last entry).
fn context_of<'s>(s: &'s CoreSession, leaf: &LeafArg) -> SessionContext<'s> {
    s.context_at(leaf_of(s, leaf))
}

/// The leaf a context is built at: `undefined` the session's current one.
fn leaf_of<'a>(s: &'a CoreSession, leaf: &'a LeafArg) -> Leaf<'a> {
    match leaf {
        LeafArg::Default => s.current_leaf(),
        other => other.leaf(Leaf::Last),
    }
}

/// Call an `onProgress(done, total)` option, if given. A throwing callback must not
/// abort the load.
pub(crate) fn report_progress(on_progress: &Option<js_sys::Function>, done: usize, total: usize) {
    if let Some(f) = on_progress {
        let _ = f.call2(
            &JsValue::NULL,
            &(done as f64).into(),
            &(total as f64).into(),
        );
    }
}

fn create_options(options: &JsValue) -> JsResult<CreateOptions> {
    Ok(CreateOptions {
        agent_dir: string(options, "agentDir")?,
        cwd: string(options, "cwd")?,
        session_dir: opt_string(options, "sessionDir")?,
        parent_session: opt_string(options, "parentSession")?,
        flavour: flavour_option(options)?,
    })
}

/// `options.flavour`: `"xcsh"` or `"pi"` (absent: the agent directory's).
fn flavour_option(options: &JsValue) -> JsResult<Option<Flavour>> {
    parse_flavour(opt_string(options, "flavour")?)
}

pub(crate) fn parse_flavour(name: Option<String>) -> JsResult<Option<Flavour>> {
    name.map(|name| {
        Flavour::parse(&name).ok_or_else(|| {
            js_error(SessionError::InvalidInput(format!(
                "flavour must be \"xcsh\" or \"pi\", not {name:?}"
            )))
        })
    })
    .transpose()
}
