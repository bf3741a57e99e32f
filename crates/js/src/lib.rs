//! # xcsh-session-js
//!
//! The npm package `xcsh-session`: a thin `#[wasm_bindgen]` shell over the core crate.
//! Every function converts its JS arguments, calls one core operation and converts the
//! result. JSON crosses the boundary as text and is parsed with `JSON.parse` (faster
//! than building JS objects field by field for large contexts). Errors are thrown as
//! `Error`s with a `kind` (see `SessionErrorKind` in the typings).
//!
//! ```js
//! import { parseSession, buildSessionContext, Session } from 'xcsh-session';
//! const ctx = buildSessionContext(text);            // the last entry's branch
//! const s = Session.open(storage, '/agent/sessions/x.jsonl', { agentDir: '/agent' });
//! s.appendMessage({ role: 'user', content: 'hi', timestamp: Date.now() });
//! ```

mod convert;
mod file_context;
mod files;
mod history;
mod outline;
mod output;
mod search;
mod session;
mod storage;
mod storage_shape;
mod store;

pub use session::JsSession;
pub use storage::JsStorage;

use convert::LeafArg;
use std::rc::Rc;
use storage::LocalStorage;
use wasm_bindgen::prelude::*;
use xcsh_session::context::Leaf;
use xcsh_session::{api, Session};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// Panics show their message on the console instead of a bare "unreachable". Runs when
/// the module is instantiated (hidden from the typings).
#[wasm_bindgen(start, js_name = __xcshStart, skip_typescript)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error(&format!("xcsh-session panicked: {info}"))
    }));
}

/// A read-only session over `text` (no file, memory storage).
fn read_only(text: String) -> Session {
    Session::from_string(Rc::new(LocalStorage::default()), text, "")
}

/// Header, entry count, leaf, version on disk and the load report of a session's text.
#[wasm_bindgen(js_name = parseSession, unchecked_return_type = "ParsedSession")]
pub fn parse_session(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] text: JsValue,
) -> Result<JsValue, JsValue> {
    convert::parse(&api::show_json(&read_only(convert::session_text(text)?)))
}

/// `buildSessionContext` of a session's text: `leafId` `undefined` → the last entry,
/// `null` → the empty context, an id → that entry (unknown → the last entry, as the agent);
/// `flavour` `"pi"` adds pi's `model` (`{ provider, modelId }` or `null`).
#[wasm_bindgen(js_name = buildSessionContext, unchecked_return_type = "SessionContext")]
pub fn build_session_context(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] text: JsValue,
    #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")]
    leaf_id: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "\"xcsh\" | \"pi\"")] flavour: JsValue,
) -> Result<JsValue, JsValue> {
    convert::parse(&build_session_context_json(text, leaf_id, flavour)?)
}

/// `buildSessionContext` as JSON text (what `JSON.stringify` of the context gives).
#[wasm_bindgen(js_name = buildSessionContextJson)]
pub fn build_session_context_json(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] text: JsValue,
    #[wasm_bindgen(js_name = leafId, unchecked_optional_param_type = "string | null")]
    leaf_id: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "\"xcsh\" | \"pi\"")] flavour: JsValue,
) -> Result<String, JsValue> {
    let leaf = LeafArg::from_js(&leaf_id)?;
    let mut session = read_only(convert::session_text(text)?);
    if let Some(f) = session::parse_flavour(flavour.as_string())? {
        session.set_flavour(f);
    }
    Ok(session.context_at(leaf.leaf(Leaf::Last)).to_json())
}

/// The package version.
/// `parseSessionEntries`: every record of a JSONL text as written (no migration);
/// unreadable lines are skipped.
#[wasm_bindgen(js_name = parseRecords, unchecked_return_type = "Record<string, unknown>[]")]
pub fn parse_records(text: &str) -> Result<JsValue, JsValue> {
    convert::parse(&xcsh_session::api::records(text))
}

/// `loadEntriesFromFile` on the file's text: its records as written (header first), or
/// `[]` when the first record is not a session header.
#[wasm_bindgen(js_name = fileRecords, unchecked_return_type = "Record<string, unknown>[]")]
pub fn file_records(text: &str) -> Result<JsValue, JsValue> {
    convert::parse(&xcsh_session::api::file_records(text))
}

#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
