//! `SessionSearch`: the picker's search over an agent directory, a step at a time (see
//! [`xcsh_session::SessionSearch`]): the caller shows progress between steps, yields to
//! its event loop, and stops whenever it wants (an abort signal, a new query) by no
//! longer calling `step`.

use crate::convert::{api_error, opt_string, parse, string};
use crate::storage::{JsPort, JsStorage};
use js_sys::{Object, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use xcsh_session::api;

type JsResult<T> = Result<T, JsValue>;

/// What one `step()` reads when not told: about 4 MiB (a few milliseconds).
const DEFAULT_STEP: f64 = (4 << 20) as f64;

#[wasm_bindgen(js_name = SessionSearch)]
pub struct JsSessionSearch {
    inner: xcsh_session::SessionSearch,
}

#[wasm_bindgen(js_class = SessionSearch)]
impl JsSessionSearch {
    /// A search for `query` over the sessions of `cwd`'s project, or of every project
    /// without it: lists and stats the files, reads none. Hits are those of
    /// `searchSessions`, in the same order.
    #[wasm_bindgen(constructor)]
    pub fn new(
        storage: JsStorage,
        #[wasm_bindgen(unchecked_param_type = "{ agentDir: string, cwd?: string, query: string }")]
        options: JsValue,
    ) -> JsResult<JsSessionSearch> {
        let port: Rc<dyn xcsh_session::Storage> = Rc::new(JsPort::new(storage)?);
        let inner = xcsh_session::SessionSearch::new(
            port,
            &string(&options, "agentDir")?,
            opt_string(&options, "cwd")?.as_deref(),
            &string(&options, "query")?,
        )
        .map_err(|e| api_error(e.into()))?;
        Ok(JsSessionSearch { inner })
    }

    /// Search on until about `budget` bytes are read (default 4 MiB; at least one
    /// message line or file), or to the end; the progress after it.
    #[wasm_bindgen(unchecked_return_type = "SearchProgress")]
    pub fn step(&mut self, budget: Option<f64>) -> JsResult<JsValue> {
        let budget = budget.unwrap_or(DEFAULT_STEP);
        if budget.is_nan() || budget < 0.0 {
            return Err(js_sys::TypeError::new(
                "step(budget): budget must be a non-negative number",
            )
            .into());
        }
        self.inner.step(budget as u64);
        self.progress()
    }

    /// Whether every file has been searched.
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> bool {
        self.inner.is_done()
    }

    /// How far the search has come.
    #[wasm_bindgen(getter, unchecked_return_type = "SearchProgress")]
    pub fn progress(&self) -> JsResult<JsValue> {
        let p = self.inner.progress();
        let out = Object::new();
        for (key, value) in [
            ("filesDone", p.files_done as f64),
            ("files", p.files as f64),
            ("bytesDone", p.bytes_done as f64),
            ("bytes", p.bytes as f64),
            ("hits", p.hits as f64),
        ] {
            Reflect::set(&out, &key.into(), &value.into())?;
        }
        Ok(out.into())
    }

    /// The sessions found so far, best first, each with its `score` (as
    /// `searchSessions` returns them, without `allMessagesText`).
    #[wasm_bindgen(unchecked_return_type = "(SessionInfo & { score: number })[]")]
    pub fn hits(&self) -> JsResult<JsValue> {
        parse(&api::search_hits_json(&self.inner))
    }
}
