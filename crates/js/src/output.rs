//! `OutputSink` for JavaScript: the core's streaming sink (sanitize, bounded tail, spill
//! to an artifact file) with the agent's options (`artifactPath`, `artifactId`,
//! `spillThreshold`, `onChunk`, `chunkThrottleMs`, `maskSecrets`) and `imageProtocol`
//! (the agent reads it from its terminal: image sequences are kept when it is set).

use crate::convert::{get, invalid, opt_prop, opt_string, parse};
use crate::session::storage_option;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use xcsh_session::{ArtifactTarget, OutputSink};

type JsResult<T> = Result<T, JsValue>;

#[wasm_bindgen(js_name = OutputSink)]
pub struct JsOutputSink {
    inner: OutputSink,
    on_chunk: Option<js_sys::Function>,
    mask_secrets: Option<js_sys::Function>,
    throttle_ms: f64,
    last_chunk_ms: f64,
}

fn opt_function(options: &JsValue, key: &'static str) -> JsResult<Option<js_sys::Function>> {
    opt_prop(options, key, "a function", |v| v.dyn_into().ok())
}

fn opt_count(options: &JsValue, key: &'static str) -> JsResult<Option<f64>> {
    opt_prop(options, key, "a non-negative number", |v| {
        v.as_f64().filter(|n| *n >= 0.0 && n.is_finite())
    })
}

#[wasm_bindgen(js_class = OutputSink)]
impl JsOutputSink {
    /// A sink for one tool run. With `artifactPath` (and the `storage` it is written
    /// through) the whole output goes to that file once it passes `spillThreshold` bytes
    /// (default 50 KiB) or `maxLines` lines (default 3000).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "OutputSinkOptions")] options: JsValue,
    ) -> JsResult<JsOutputSink> {
        let path = opt_string(&options, "artifactPath")?;
        let id = opt_string(&options, "artifactId")?;
        let storage = get(&options, "storage");
        if path.is_some() && (storage.is_undefined() || storage.is_null()) {
            return Err(invalid(
                "OutputSink with an artifactPath needs the storage to write it through (options.storage)",
            ));
        }
        let target = path.map(|path| ArtifactTarget { id, path });
        let max_bytes = opt_count(&options, "spillThreshold")?
            .map_or(xcsh_session::DEFAULT_MAX_BYTES, |n| n as usize);
        let max_lines = opt_count(&options, "maxLines")?
            .map_or(xcsh_session::DEFAULT_MAX_LINES, |n| n as usize);
        let mut inner =
            OutputSink::with_limits(storage_option(&options)?, target, max_lines, max_bytes);
        let protocol = get(&options, "imageProtocol");
        if !(protocol.is_undefined() || protocol.is_null()) {
            inner = inner.keeping_images();
        }
        Ok(JsOutputSink {
            inner,
            on_chunk: opt_function(&options, "onChunk")?,
            mask_secrets: opt_function(&options, "maskSecrets")?,
            throttle_ms: opt_count(&options, "chunkThrottleMs")?.unwrap_or(0.0),
            last_chunk_ms: f64::NEG_INFINITY,
        })
    }

    fn masked(&self, text: String) -> JsResult<String> {
        match &self.mask_secrets {
            None => Ok(text),
            Some(f) => f
                .call1(&JsValue::NULL, &JsValue::from_str(&text))?
                .as_string()
                .ok_or_else(|| invalid("maskSecrets must return a string")),
        }
    }

    /// Add a chunk: masked, passed raw to `onChunk` (at most once per `chunkThrottleMs`),
    /// then sanitized into the tail (and the artifact file once spilling). The chunk is
    /// taken as UTF-16 when it may hold a lone surrogate (dropped, not U+FFFD).
    pub fn push(&mut self, chunk: js_sys::JsString) -> JsResult<()> {
        let chunk = match &self.mask_secrets {
            None => chunk,
            Some(f) => f
                .call1(&JsValue::NULL, &chunk)?
                .dyn_into::<js_sys::JsString>()
                .map_err(|_| invalid("maskSecrets must return a string"))?,
        };
        if let Some(f) = &self.on_chunk {
            let now = js_sys::Date::now();
            if now - self.last_chunk_ms >= self.throttle_ms {
                self.last_chunk_ms = now;
                f.call1(&JsValue::NULL, &chunk)?;
            }
        }
        let text = String::from(&chunk);
        if text.contains('\u{fffd}') {
            // A lone surrogate would come in as U+FFFD: removed here, counted by the core.
            let lone_surrogate = js_sys::RegExp::new("\\p{Surrogate}", "gu");
            let kept = chunk.replace_by_pattern(&lone_surrogate, "");
            let dropped = (chunk.length() - kept.length()) as usize;
            self.inner.push_js_text(&String::from(&kept), dropped);
        } else {
            self.inner.push(&text);
        }
        Ok(())
    }

    /// Whether the output passed a limit (the tail is all that is shown).
    #[wasm_bindgen(getter)]
    pub fn truncated(&self) -> bool {
        self.inner.is_truncated()
    }

    /// The summary: `output` (the tail, `[notice]` first when given, masked),
    /// `truncated`, line and byte counts, and `artifactId` only when the whole output
    /// really is in the artifact file (`artifactError` says why it is not).
    #[wasm_bindgen(unchecked_return_type = "OutputSummary")]
    pub fn dump(&mut self, notice: Option<String>) -> JsResult<JsValue> {
        let mut summary = self.inner.dump(notice.as_deref());
        summary.output = self.masked(summary.output)?;
        parse(&summary.to_json())
    }
}
