//! `openContext`: a session file's context read through its index (the cached one under
//! `<agentDir>/cache/`, else one pass over the file that writes it), so a reopen reads
//! only the lines the context shows; a large context is streamed from the file as
//! `writeJson` hands it on. Files the index cannot describe are read whole, with the same
//! result.

use crate::convert::{api_error, index_cache, invalid, js_error, opt_string, parse, window_bounds};
use crate::storage::{JsPort, JsStorage};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::{api, OpenedContext};

type JsResult<T> = Result<T, JsValue>;

/// How much of the JSON `writeJson` hands over per call.
const CHUNK: usize = 1 << 20;

/// A session file opened for the context of one leaf ([`open_context`]).
#[wasm_bindgen(js_name = FileContext)]
pub struct JsFileContext {
    opened: OpenedContext,
}

/// Open `path` for its context (of `options.leafId`, default the last entry): a missing
/// file is kind `notFound`, an unknown leaf `entryNotFound`.
#[wasm_bindgen(js_name = openContext)]
pub fn open_context(
    storage: JsStorage,
    path: &str,
    #[wasm_bindgen(unchecked_param_type = "OpenContextOptions")] options: JsValue,
) -> JsResult<JsFileContext> {
    let agent_dir = opt_string(&options, "agentDir")?.unwrap_or_default();
    let leaf = opt_string(&options, "leafId")?;
    let cache = index_cache(&options)?;
    let port = Rc::new(JsPort::new(storage)?);
    let opened =
        api::open_for_context(port, path, &agent_dir, leaf.as_deref(), cache).map_err(api_error)?;
    Ok(JsFileContext { opened })
}

#[wasm_bindgen(js_class = FileContext)]
impl JsFileContext {
    /// Read through the index (only the lines the context shows were read); `false`: the
    /// file was read whole (an older version, or a line the index could not describe).
    #[wasm_bindgen(getter, js_name = throughIndex)]
    pub fn through_index(&self) -> bool {
        self.opened.through_index()
    }

    /// Entry lines whose bytes beyond their leading keys were not checked (0 for a file
    /// read whole): `Session.open` checks every line.
    #[wasm_bindgen(getter, js_name = uncheckedLines)]
    pub fn unchecked_lines(&self) -> f64 {
        match &self.opened {
            OpenedContext::Path(p) => p.unchecked_lines() as f64,
            OpenedContext::Whole(..) => 0.0,
        }
    }

    /// The JSON's length in bytes (a streamed context reads its lines once more to tell).
    #[wasm_bindgen(getter, js_name = byteLength)]
    pub fn byte_length(&self) -> JsResult<f64> {
        let n = self.opened.json_reader().total_bytes().map_err(js_error)?;
        Ok(n as f64)
    }

    /// How many messages the context has (known since the open: nothing is read).
    #[wasm_bindgen(getter, js_name = messageCount)]
    pub fn message_count(&self) -> f64 {
        self.opened.message_count() as f64
    }

    /// Messages `start..end` of the context (cut to its length), each with the id of
    /// the entry it comes from (a compaction's summary: the compaction's): only the
    /// lines of those messages are read. What a viewer shows of a long conversation.
    #[wasm_bindgen(unchecked_return_type = "ContextWindow")]
    pub fn window(&self, start: f64, end: f64) -> JsResult<JsValue> {
        let (start, end) = window_bounds(start, end)?;
        let w = self.opened.window(start, end).map_err(js_error)?;
        parse(&w.to_json())
    }

    /// The context's JSON text (`JSON.stringify(buildSessionContext())`).
    pub fn json(&self) -> JsResult<String> {
        let mut out = Vec::new();
        self.write_into(|chunk| {
            out.extend_from_slice(chunk);
            Ok(())
        })?;
        String::from_utf8(out).map_err(|e| invalid(e.to_string()))
    }

    /// Hand the JSON to `write` a chunk (Uint8Array, up to 1 MiB) at a time, without a
    /// whole copy; the number of bytes written. A file rewritten since it was opened
    /// throws kind `conflict`.
    #[wasm_bindgen(js_name = writeJson)]
    pub fn write_json(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(chunk: Uint8Array) => void")] write: JsValue,
    ) -> JsResult<f64> {
        let Some(write) = write.dyn_ref::<js_sys::Function>() else {
            return Err(invalid(
                "writeJson(write): write must be a function taking each chunk (a Uint8Array)",
            ));
        };
        self.write_into(|chunk| {
            let answer = write.call1(&JsValue::NULL, &js_sys::Uint8Array::from(chunk))?;
            if answer.is_instance_of::<js_sys::Promise>() {
                return Err(invalid(
                    "writeJson(write): write returned a Promise; it is called synchronously (write with fs.writeSync, or collect the chunks)",
                ));
            }
            Ok(())
        })
    }

    fn write_into(&self, mut put: impl FnMut(&[u8]) -> JsResult<()>) -> JsResult<f64> {
        let mut reader = self.opened.json_reader();
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut total = 0f64;
        loop {
            chunk.clear();
            let n = reader.read_into(&mut chunk, CHUNK).map_err(js_error)?;
            if n == 0 {
                return Ok(total);
            }
            total += n as f64;
            put(&chunk)?;
        }
    }
}
