//! The bindings in a real browser (headless Chromium via scripts/test-browser): parsing,
//! context building, a Session over a JS storage object, and thrown error kinds.
#![cfg(target_arch = "wasm32")]

use js_sys::{Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use xcsh_session_js::{
    build_session_context, build_session_context_json, parse_session, JsSession, JsStorage,
};

wasm_bindgen_test_configure!(run_in_browser);

/// A v3 session with a branch at `a0000002` and a label; the leaf is `a0000003`.
const SMALL: &str = include_str!("small-session.jsonl");
/// The native core's context JSON of `SMALL` (`cargo run --example context`).
const SMALL_CONTEXT: &str = include_str!("small-session.context.json");

#[wasm_bindgen(inline_js = r#"
export function memoryStorage() {
  const files = new Map(), dirs = new Set(['/']), mtimes = new Map();
  let clock = 0;
  const fail = (code, path) => Object.assign(new Error(`${code}: ${path}`), { code });
  const parent = (p) => p.slice(0, Math.max(1, p.lastIndexOf('/')));
  return {
    files,
    read(p) { if (!files.has(p)) throw fail('ENOENT', p); return files.get(p).slice(); },
    readPrefix(p, n) { return this.read(p).subarray(0, n); },
    write(p, d) { if (!dirs.has(parent(p))) throw fail('ENOENT', p); files.set(p, d); mtimes.set(p, ++clock); },
    append(p, d) {
      const old = files.get(p) ?? new Uint8Array();
      const out = new Uint8Array(old.length + d.length); out.set(old); out.set(d, old.length);
      files.set(p, out); mtimes.set(p, ++clock);
    },
    rename(a, b) { if (!files.has(a)) throw fail('ENOENT', a); files.set(b, files.get(a)); mtimes.set(b, mtimes.get(a)); files.delete(a); },
    unlink(p) { if (!files.delete(p)) throw fail('ENOENT', p); },
    listDir(p) { return [...files.keys()].filter((k) => parent(k) === p).map((k) => ({ name: k.slice(p.length + 1), isDir: false })); },
    stat(p) {
      if (dirs.has(p)) return { size: 0, mtimeMs: 0, isDir: true };
      if (!files.has(p)) throw fail('ENOENT', p);
      return { size: files.get(p).length, mtimeMs: mtimes.get(p) ?? 0, isDir: false };
    },
    mkdirAll(p) { let acc = ''; for (const part of p.split('/').filter(Boolean)) { acc += '/' + part; dirs.add(acc); } },
    fsync(p) { if (!files.has(p)) throw fail('ENOENT', p); },
    rmdir(p) { dirs.delete(p); },
  };
}
export function fileText(storage, path) {
  const data = storage.files.get(path);
  return data === undefined ? undefined : new TextDecoder().decode(data);
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = memoryStorage)]
    fn memory_storage() -> JsStorage;
    #[wasm_bindgen(js_name = fileText)]
    fn file_text(storage: &JsStorage, path: &str) -> Option<String>;
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).expect("an object")
}

fn json(text: &str) -> JsValue {
    JSON::parse(text).expect("valid JSON")
}

fn stringify(value: &JsValue) -> String {
    JSON::stringify(value).expect("serializable").into()
}

fn kind(error: JsValue) -> (String, String) {
    let e = error.dyn_into::<js_sys::Error>().expect("an Error");
    (
        get(&e, "kind").as_string().unwrap_or_default(),
        e.message().into(),
    )
}

#[wasm_bindgen_test]
fn parse_session_reads_header_count_and_leaf() {
    let p = parse_session(SMALL.into()).unwrap();
    assert_eq!(
        get(&get(&p, "header"), "id").as_string().unwrap(),
        "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    );
    assert_eq!(get(&p, "entryCount").as_f64(), Some(10.0));
    assert_eq!(get(&p, "leafId").as_string().unwrap(), "a0000003");
    assert_eq!(get(&p, "version").as_f64(), Some(3.0));
    assert_eq!(get(&p, "migrationNeeded").as_bool(), Some(false));
    assert_eq!(
        stringify(&get(&p, "report")),
        r#"{"issues":[],"nonEntries":0}"#
    );
}

#[wasm_bindgen_test]
fn context_is_byte_identical_to_the_native_core() {
    assert_eq!(
        build_session_context_json(SMALL.into(), JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap(),
        SMALL_CONTEXT.trim_end()
    );
    let ctx = build_session_context(SMALL.into(), JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap();
    assert_eq!(stringify(&ctx), SMALL_CONTEXT.trim_end());
}

#[wasm_bindgen_test]
fn context_at_a_leaf_null_and_unknown() {
    let at = build_session_context(SMALL.into(), "u0000002".into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(get(&at, "thinkingLevel").as_string().unwrap(), "high");
    assert_eq!(
        get(&at, "messages")
            .unchecked_into::<js_sys::Array>()
            .length(),
        5
    );
    let empty = build_session_context(SMALL.into(), JsValue::NULL, JsValue::UNDEFINED).unwrap();
    assert_eq!(
        get(&empty, "messages")
            .unchecked_into::<js_sys::Array>()
            .length(),
        0
    );
    assert_eq!(
        build_session_context_json(SMALL.into(), "unknown".into(), JsValue::UNDEFINED).unwrap(),
        SMALL_CONTEXT.trim_end()
    );
}

#[wasm_bindgen_test]
fn tree_shows_the_branch_and_the_label() {
    let mut s = JsSession::from_text(SMALL.into(), JsValue::UNDEFINED).unwrap();
    let tree = s.tree_json(JsValue::UNDEFINED).unwrap();
    assert!(tree.contains(r#""label":"listing""#), "{tree}");
    // The outline keeps labels and ids whole, and cuts long strings.
    let outline = s.tree_json(JsValue::from(3)).unwrap();
    assert!(outline.contains(r#""label":"listing""#), "{outline}");
    assert!(outline.len() < tree.len(), "{outline}");
    assert_eq!(
        s.children("a0000002")
            .unwrap()
            .unchecked_into::<js_sys::Array>()
            .length(),
        2
    );
    assert_eq!(s.label("a0000002").unwrap().as_deref(), Some("listing"));
    assert_eq!(s.to_jsonl().unwrap(), SMALL);
}

#[wasm_bindgen_test]
fn errors_carry_their_kind() {
    let mut s = JsSession::from_text(SMALL.into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        kind(s.entry("nope").unwrap_err()),
        ("entryNotFound".into(), "Entry nope not found".into())
    );
    let (k, _) = kind(
        s.append_message(json(r#"{"role":"user","content":"x","timestamp":1}"#))
            .unwrap_err(),
    );
    assert_eq!(k, "readOnly");
    let (k, _) =
        kind(build_session_context(SMALL.into(), 7.into(), JsValue::UNDEFINED).unwrap_err());
    assert_eq!(k, "invalidInput");
}

#[wasm_bindgen_test]
fn session_persists_through_a_js_storage_object() {
    let storage = memory_storage();
    let mut s = JsSession::create(
        memory_storage_clone(&storage),
        json(r#"{"agentDir":"/agent","cwd":"/work/demo"}"#),
    )
    .unwrap();
    let file = s.file().unwrap();
    assert!(file.starts_with("/agent/sessions/--work-demo--/"), "{file}");
    let u = s
        .append_message(json(r#"{"role":"user","content":"hi","timestamp":1}"#))
        .unwrap();
    assert_eq!(
        file_text(&storage, &file),
        None,
        "nothing before the first assistant message"
    );
    let a = s
        .append_message(json(r#"{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"p","model":"m","timestamp":2}"#))
        .unwrap();
    let text = file_text(&storage, &file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[0].starts_with(r#"{"type":"session","version":3,"#),
        "{}",
        lines[0]
    );
    assert!(
        lines[2].contains(&format!(r#""id":"{a}","parentId":"{u}""#)),
        "{}",
        lines[2]
    );
    s.append_model_change("openai/gpt-5", Some("smol".into()))
        .unwrap();
    assert_eq!(file_text(&storage, &file).unwrap().lines().count(), 4);

    // A second writer would be refused while `s` holds the lock: read it back read-only.
    let mut r = JsSession::open(storage, &file, json(r#"{"readOnly":true}"#)).unwrap();
    assert_eq!(r.entries_json().unwrap(), s.entries_json().unwrap());
    assert_eq!(
        r.context_json(JsValue::UNDEFINED).unwrap(),
        s.context_json(JsValue::UNDEFINED).unwrap()
    );
    assert_eq!(r.leaf_id(), s.leaf_id());
}

/// The same JS object again (the constructors take the storage by value).
fn memory_storage_clone(storage: &JsStorage) -> JsStorage {
    let value: &JsValue = storage.as_ref();
    value.clone().unchecked_into()
}
