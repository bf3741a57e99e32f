//! Conversions at the JS edge: core errors to thrown `Error`s with a `kind`, JS values to
//! the JSON text the core takes, and the core's JSON text back to JS values.

use js_sys::{Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::api::ErrorKind;
use xcsh_session::context::Leaf;
use xcsh_session::SessionError;

/// A core error as a JS `Error` whose `kind` is the [`ErrorKind`] name.
pub fn js_error(e: SessionError) -> JsValue {
    let error = js_sys::Error::new(&e.to_string());
    // Setting a property on a fresh Error cannot fail.
    let _ = Reflect::set(
        &error,
        &JsValue::from_str("kind"),
        &JsValue::from_str(ErrorKind::of(&e).as_str()),
    );
    error.into()
}

/// A bad argument, thrown as kind `invalidInput`.
pub fn invalid(message: impl Into<String>) -> JsValue {
    js_error(SessionError::InvalidInput(message.into()))
}

/// The message of a thrown JS value (an `Error`'s message, or the value as text).
pub fn error_message(err: &JsValue) -> String {
    match err.dyn_ref::<js_sys::Error>() {
        Some(e) => String::from(e.message()),
        None => err
            .as_string()
            .unwrap_or_else(|| String::from(js_sys::JsString::from(err.clone()))),
    }
}

/// The core's JSON text as a JS value.
pub fn parse(json: &str) -> Result<JsValue, JsValue> {
    JSON::parse(json).map_err(|e| {
        invalid(format!(
            "the core produced invalid JSON: {}",
            error_message(&e)
        ))
    })
}

/// A JS value as JSON text for the core (`JSON.stringify`).
pub fn stringify(value: &JsValue, what: &str) -> Result<String, JsValue> {
    let text = JSON::stringify(value).map_err(|e| {
        invalid(format!(
            "{what} cannot be turned into JSON: {}",
            error_message(&e)
        ))
    })?;
    text.as_string()
        .ok_or_else(|| invalid(format!("{what} cannot be turned into JSON")))
}

/// `JSON.stringify` of an optional value (`undefined` → `None`).
pub fn stringify_opt(value: &JsValue, what: &str) -> Result<Option<String>, JsValue> {
    if value.is_undefined() {
        Ok(None)
    } else {
        stringify(value, what).map(Some)
    }
}

/// The property `key` of an options object (`undefined` when `obj` is not an object).
pub fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// An optional string property (`undefined`/`null` → `None`).
pub fn opt_string(obj: &JsValue, key: &str) -> Result<Option<String>, JsValue> {
    let v = get(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.as_string()
        .map(Some)
        .ok_or_else(|| invalid(format!("{key} must be a string")))
}

pub fn string(obj: &JsValue, key: &str) -> Result<String, JsValue> {
    opt_string(obj, key)?.ok_or_else(|| invalid(format!("{key} is required")))
}

pub fn opt_bool(obj: &JsValue, key: &str) -> Result<Option<bool>, JsValue> {
    let v = get(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.as_bool()
        .map(Some)
        .ok_or_else(|| invalid(format!("{key} must be a boolean")))
}

/// A leaf argument: `undefined` (the default), `null` (before the first entry) or an id.
pub enum LeafArg {
    Default,
    Null,
    Id(String),
}

impl LeafArg {
    pub fn from_js(value: &JsValue) -> Result<LeafArg, JsValue> {
        if value.is_undefined() {
            Ok(LeafArg::Default)
        } else if value.is_null() {
            Ok(LeafArg::Null)
        } else {
            value
                .as_string()
                .map(LeafArg::Id)
                .ok_or_else(|| invalid("leafId must be a string, null or undefined"))
        }
    }

    /// The core's leaf, with `undefined` meaning `default`.
    pub fn leaf<'a>(&'a self, default: Leaf<'a>) -> Leaf<'a> {
        match self {
            LeafArg::Default => default,
            LeafArg::Null => Leaf::Null,
            LeafArg::Id(id) => Leaf::Id(id),
        }
    }
}

/// JSON array text of the given JSON texts.
pub fn json_array<'a>(items: impl IntoIterator<Item = impl AsRef<str> + 'a>) -> String {
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item.as_ref());
    }
    out.push(']');
    out
}

/// Session text given as a string or as UTF-8 bytes (`Uint8Array`, e.g. straight from
/// `fs.readFileSync` or `File.arrayBuffer()`): bytes cross into wasm at their own size,
/// while a JS string with non-ASCII characters may need up to three times its length.
/// Invalid UTF-8 is replaced (U+FFFD), as when a file is read.
pub fn session_text(value: JsValue) -> Result<String, JsValue> {
    if let Some(s) = value.as_string() {
        return Ok(s);
    }
    match value.dyn_into::<js_sys::Uint8Array>() {
        Ok(bytes) => Ok(match String::from_utf8(bytes.to_vec()) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
        Err(_) => Err(invalid("session text must be a string or a Uint8Array")),
    }
}
