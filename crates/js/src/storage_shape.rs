//! What a JS object must look like to be a storage, checked before anything is read or
//! written: every required method present and a function, no method `async` (the port is
//! synchronous; a Promise would let a write happen after the call returned, or fail with
//! nobody listening). Each refusal names the method, so a wrong storage is a clear
//! `invalidInput` error and nothing on disk changes.
//!
//! A method that is not declared `async` but still returns a Promise (a plain function
//! returning `fs.promises.…`) is caught when it answers: [`settled`].

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The storage methods the package calls, with the signature an error shows.
pub const REQUIRED: [(&str, &str); 11] = [
    ("read", "read(path)"),
    ("readPrefix", "readPrefix(path, maxBytes)"),
    ("write", "write(path, data)"),
    ("append", "append(path, data)"),
    ("rename", "rename(from, to)"),
    ("unlink", "unlink(path)"),
    ("listDir", "listDir(path)"),
    ("stat", "stat(path)"),
    ("mkdirAll", "mkdirAll(path)"),
    ("fsync", "fsync(path)"),
    ("rmdir", "rmdir(path)"),
];

/// The methods a storage may have; when present they must be synchronous functions too.
pub const OPTIONAL: [&str; 9] = [
    "readInto",
    "readRange",
    "nowMs",
    "randomU64",
    "blobPut",
    "blobGet",
    "createNew",
    "processIdentity",
    "processAlive",
];

/// Check a storage before use: the same check `Session.open` and the other entry points
/// make (with `allowAsync`, as `AsyncSession` does, `async` methods are accepted). Throws
/// an `invalidInput` error naming the method. Returns the warnings: what works, but
/// slowly (an optional method that is missing, e.g. `readRange`); empty when none.
#[wasm_bindgen(js_name = checkStorage)]
pub fn check_storage(
    storage: JsValue,
    #[wasm_bindgen(js_name = allowAsync)] allow_async: Option<bool>,
) -> Result<Vec<String>, JsValue> {
    if !storage.is_object() {
        return Err(crate::convert::invalid(
            "storage must be an object implementing JsStorage",
        ));
    }
    match problem(&storage, allow_async.unwrap_or(false)) {
        Some(p) => Err(crate::convert::invalid(p)),
        None => Ok(warnings(&storage)),
    }
}

/// What a usable `storage` lacks that makes it slow: neither `readRange` nor `readInto`,
/// so each ranged read reads the whole file (the port falls back to `read` and a slice).
pub fn warnings(storage: &JsValue) -> Vec<String> {
    let mut out = Vec::new();
    if get(storage, "readRange").is_undefined() && get(storage, "readInto").is_undefined() {
        out.push(
            "storage has no readRange(path, offset, length): every ranged read reads the \
             whole file and slices it, which is slow for large sessions (nodeStorage(), \
             nodeAsyncStorage(), memoryStorage() and opfsStorage() have one)"
                .to_string(),
        );
    }
    out
}

/// Why `storage` cannot be used, or `None` when it can (`allow_async`: Promise-returning
/// methods are fine, as for `AsyncSession`).
pub fn problem(storage: &JsValue, allow_async: bool) -> Option<String> {
    let missing: Vec<&str> = REQUIRED
        .iter()
        .filter(|(name, _)| get(storage, name).is_undefined())
        .map(|(_, signature)| *signature)
        .collect();
    if !missing.is_empty() {
        let s = if missing.len() == 1 { "" } else { "s" };
        return Some(format!(
            "storage is missing the method{s} {}: a storage needs {} (see JsStorage; \
             nodeStorage(), nodeAsyncStorage(), memoryStorage() and opfsStorage() are ready ones)",
            missing.join(", "),
            REQUIRED.map(|(name, _)| name).join(", "),
        ));
    }
    let names = REQUIRED.iter().map(|(name, _)| *name).chain(OPTIONAL);
    for name in names {
        let value = get(storage, name);
        if value.is_undefined() {
            continue;
        }
        let Some(f) = value.dyn_ref::<Function>() else {
            return Some(format!(
                "storage.{name} is not a function (it is {})",
                describe(&value)
            ));
        };
        if !allow_async && is_async(f) {
            return Some(format!(
                "storage.{name} is an async function: storage methods must be synchronous \
                 and return their result, not a Promise (Node: the fs.*Sync functions, as \
                 nodeStorage() does); an async storage goes to AsyncSession"
            ));
        }
    }
    None
}

/// `value` unless it is a Promise (any thenable): then the refusal, naming `method`. A
/// rejected Promise is handled here, so it cannot end a Node process as an unhandled
/// rejection.
pub fn settled(value: JsValue, method: &str) -> Result<JsValue, String> {
    let then = if value.is_object() {
        get(&value, "then")
    } else {
        JsValue::UNDEFINED
    };
    let Some(then) = then.dyn_ref::<Function>() else {
        return Ok(value);
    };
    let ignore = Function::new_no_args("");
    let _ = then.call2(&value, &JsValue::UNDEFINED, &ignore);
    Err(format!(
        "storage.{method} returned a Promise: storage methods must be synchronous and \
         return their result (Node: the fs.*Sync functions, as nodeStorage() does); an async \
         storage goes to AsyncSession"
    ))
}

fn get(obj: &JsValue, key: &'static str) -> JsValue {
    Reflect::get(obj, &crate::convert::name(key)).unwrap_or(JsValue::UNDEFINED)
}

/// `async function` and `async` methods: their constructor is `AsyncFunction` (or
/// `AsyncGeneratorFunction`).
fn is_async(f: &Function) -> bool {
    let constructor = get(f, "constructor");
    get(&constructor, "name")
        .as_string()
        .is_some_and(|name| name.starts_with("Async"))
}

fn describe(value: &JsValue) -> String {
    if value.is_null() {
        "null".into()
    } else if let Some(s) = value.as_string() {
        format!("the string {s:?}")
    } else {
        value.js_typeof().as_string().unwrap_or_default()
    }
}
