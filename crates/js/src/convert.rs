//! Conversions at the JS edge: core errors to thrown `Error`s with a `kind`, JS values to
//! the JSON text the core takes, and the core's JSON text back to JS values.

use js_sys::{Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::api::ErrorKind;
use xcsh_session::context::Leaf;
use xcsh_session::{IndexCache, SessionError};

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

/// An API error as a JS `Error` with `kind` (and `details`, e.g. resume candidates).
pub fn api_error(e: xcsh_session::api::ApiError) -> JsValue {
    let error = js_sys::Error::new(&e.message);
    let _ = Reflect::set(&error, &"kind".into(), &e.kind.as_str().into());
    if let Some(details) = e.details.as_deref().and_then(|d| parse(d).ok()) {
        let _ = Reflect::set(&error, &"details".into(), &details);
    }
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

/// The number property `key` of a JS object, if it is one.
pub fn number(obj: &JsValue, key: &'static str) -> Option<f64> {
    Reflect::get(obj, &name(key)).ok().and_then(|v| v.as_f64())
}

thread_local! {
    static NAMES: std::cell::RefCell<std::collections::HashMap<&'static str, JsValue>> =
        Default::default();
}

/// A property name as a JS string, made once: reading a storage's answers (a `stat` on
/// each append: `then`, `size`, `mtimeMs`, ...) would otherwise decode each name from wasm
/// memory every time, which cost more than the reads. Names are literals: a fixed few.
pub fn name(key: &'static str) -> JsValue {
    NAMES.with_borrow_mut(|names| {
        names
            .entry(key)
            .or_insert_with(|| JsValue::from_str(key))
            .clone()
    })
}

/// Let JS write into the spare capacity of `buf`: `fill` gets a `Uint8Array` view of it
/// and returns how many bytes it wrote there, which are kept (never more than the view).
pub fn fill_spare<E>(
    buf: &mut Vec<u8>,
    fill: impl FnOnce(&js_sys::Uint8Array) -> Result<usize, E>,
) -> Result<usize, E> {
    let spare = buf.capacity() - buf.len();
    // SAFETY: the view covers the spare capacity only; JS writes through it during
    // `fill`, and it is dropped before anything else touches the buffer.
    let view = unsafe { js_sys::Uint8Array::view_mut_raw(buf.as_mut_ptr().add(buf.len()), spare) };
    let n = fill(&view)?.min(spare);
    drop(view);
    // SAFETY: JS initialised `n` bytes at the start of the spare capacity.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// The property `key` of an options object (`undefined` when `obj` is not an object).
pub fn get(obj: &JsValue, key: &'static str) -> JsValue {
    if obj.is_object() {
        Reflect::get(obj, &name(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// An optional property as `cast` reads it (`undefined`/`null` → `None`); a value `cast`
/// refuses is an error `<key> must be <what>`.
pub fn opt_prop<T>(
    obj: &JsValue,
    key: &'static str,
    what: &str,
    cast: impl FnOnce(JsValue) -> Option<T>,
) -> Result<Option<T>, JsValue> {
    let v = get(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    cast(v)
        .map(Some)
        .ok_or_else(|| invalid(format!("{key} must be {what}")))
}

/// An optional string property (`undefined`/`null` → `None`).
pub fn opt_string(obj: &JsValue, key: &'static str) -> Result<Option<String>, JsValue> {
    opt_prop(obj, key, "a string", |v| v.as_string())
}

pub fn string(obj: &JsValue, key: &'static str) -> Result<String, JsValue> {
    opt_string(obj, key)?.ok_or_else(|| invalid(format!("{key} is required")))
}

pub fn opt_bool(obj: &JsValue, key: &'static str) -> Result<Option<bool>, JsValue> {
    opt_prop(obj, key, "a boolean", |v| v.as_bool())
}

/// The `indexCache` option (`openContext`, a lazy `Session.open`): `false` reads and writes
/// no index cache; absent or `true` uses it.
pub fn index_cache(options: &JsValue) -> Result<IndexCache, JsValue> {
    Ok(match opt_bool(options, "indexCache")? {
        Some(false) => IndexCache::Off,
        _ => IndexCache::Use,
    })
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
pub use xcsh_session::api::json_array;

/// Session text given as a string or as UTF-8 bytes (`Uint8Array`, e.g. straight from
/// `fs.readFileSync` or `File.arrayBuffer()`). Both cross into wasm at about their UTF-8
/// size: strings are encoded a chunk at a time straight into the session's buffer
/// (wasm-bindgen's own string passing reserves three bytes per UTF-16 unit first).
/// Invalid UTF-8 bytes and lone surrogates are replaced (U+FFFD), as when a file is read.
pub fn session_text(value: JsValue) -> Result<String, JsValue> {
    if let Some(s) = value.dyn_ref::<js_sys::JsString>() {
        return utf8_of(s);
    }
    match value.dyn_into::<js_sys::Uint8Array>() {
        Ok(bytes) => Ok(match xcsh_session::session::utf8(bytes.to_vec()) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
        Err(_) => Err(invalid("session text must be a string or a Uint8Array")),
    }
}

#[wasm_bindgen]
extern "C" {
    type TextEncoder;
    #[wasm_bindgen(constructor)]
    fn new() -> TextEncoder;
    /// `{ read, written }`
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(
        this: &TextEncoder,
        source: &js_sys::JsString,
        dest: &js_sys::Uint8Array,
    ) -> JsValue;
}

/// UTF-16 units encoded per `encodeInto` call.
const ENCODE_CHUNK: u32 = 1 << 20;

/// A JS string as UTF-8, encoded by `TextEncoder.encodeInto` in chunks straight into the
/// spare capacity of the result (never split inside a surrogate pair).
fn utf8_of(s: &js_sys::JsString) -> Result<String, JsValue> {
    let len = s.length();
    let encoder = TextEncoder::new();
    let mut buf: Vec<u8> = Vec::with_capacity(len as usize + 3 * ENCODE_CHUNK as usize);
    let mut at = 0u32;
    while at < len {
        let mut end = len.min(at + ENCODE_CHUNK);
        if end < len && (0xD800..0xDC00).contains(&(s.char_code_at(end - 1) as u32)) {
            end -= 1;
        }
        let piece = s.substring(at, end);
        let need = 3 * (end - at) as usize;
        if buf.capacity() - buf.len() < need {
            buf.reserve_exact(need.max(buf.capacity() / 8));
        }
        let mut read = 0;
        let Ok(_) = fill_spare(&mut buf, |view| {
            let done = encoder.encode_into(&piece, view);
            read = number(&done, "read").unwrap_or(0.0) as u32;
            Ok::<_, std::convert::Infallible>(number(&done, "written").unwrap_or(0.0) as usize)
        });
        // With three bytes per unit available, encodeInto always reads the whole piece.
        if read == 0 {
            return Err(invalid(
                "TextEncoder.encodeInto made no progress on the session text",
            ));
        }
        at += read;
    }
    // TextEncoder writes well-formed UTF-8 (lone surrogates become U+FFFD).
    Ok(xcsh_session::session::utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// The `start` and `end` of a window of messages: non-negative numbers (`end` may pass
/// the last message: the window is cut there).
pub fn window_bounds(start: f64, end: f64) -> Result<(usize, usize), JsValue> {
    let index = |n: f64, what: &str| {
        if n.is_nan() || n < 0.0 {
            return Err(invalid(format!(
                "window(start, end): {what} must be a non-negative number"
            )));
        }
        Ok(n.min(usize::MAX as f64) as usize)
    };
    Ok((index(start, "start")?, index(end, "end")?))
}
