//! `Session.outline(previewChars)`: the tree as outline rows in typed columns, made by the
//! core ([`xcsh_session::outline::Outline`]), for viewers of sessions of any size.

use crate::session::JsSession;
use js_sys::{
    Array, Float64Array, Int32Array, Object, Reflect, Uint16Array, Uint32Array, Uint8Array,
};
use wasm_bindgen::prelude::*;
use xcsh_session::outline::{Digests, Outline, OutlineBuilder, PREVIEW_CHARS};

fn set(obj: &Object, key: &str, value: JsValue) -> Result<(), JsValue> {
    Reflect::set(obj, &key.into(), &value).map(|_| ())
}

fn strings<S: AsRef<str>>(items: &[S]) -> JsValue {
    items
        .iter()
        .map(|s| JsValue::from_str(s.as_ref()))
        .collect::<Array>()
        .into()
}

fn digests(d: &Digests) -> Result<JsValue, JsValue> {
    let obj = Object::new();
    set(&obj, "message", Uint8Array::from(&d.message[..]).into())?;
    for (key, column) in [
        ("time", &d.time),
        ("input", &d.input),
        ("output", &d.output),
        ("cacheRead", &d.cache_read),
        ("cacheWrite", &d.cache_write),
        ("cost", &d.cost),
    ] {
        set(&obj, key, Float64Array::from(&column[..]).into())?;
    }
    set(&obj, "model", Int32Array::from(&d.model[..]).into())?;
    set(&obj, "models", strings(&d.models))?;
    Ok(obj.into())
}

/// `o` as the `Outline` object JavaScript gets: typed columns, the kinds, labels, digests.
fn outline_object(o: &Outline) -> Result<JsValue, JsValue> {
    let obj = Object::new();
    set(&obj, "ids", strings(&o.ids))?;
    set(&obj, "texts", strings(&o.texts))?;
    set(&obj, "parent", Int32Array::from(&o.parent[..]).into())?;
    set(&obj, "depth", Uint16Array::from(&o.depth[..]).into())?;
    set(&obj, "flags", Uint8Array::from(&o.flags[..]).into())?;
    set(&obj, "kids", Uint32Array::from(&o.kids[..]).into())?;
    set(&obj, "end", Uint32Array::from(&o.end[..]).into())?;
    set(&obj, "kind", Uint16Array::from(&o.kind[..]).into())?;
    let kinds: Array = o
        .kinds
        .iter()
        .map(|(tag, class)| Array::of2(&tag.into(), &(*class).into()))
        .collect();
    set(&obj, "kindTable", kinds.into())?;
    let labels: Array = o
        .labels
        .iter()
        .map(|(row, label)| Array::of2(&(*row).into(), &label.into()))
        .collect();
    set(&obj, "labels", labels.into())?;
    set(&obj, "digests", digests(&o.digests)?)?;
    Ok(obj.into())
}

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// The tree as outline rows in columns (`Outline`): depth first, a side branch right
    /// under its branch point; each row's preview (tag, class, one line of text) and what
    /// the branch totals need of it. Strings are read up to `previewChars` (default 160).
    #[wasm_bindgen(unchecked_return_type = "Outline")]
    pub fn outline(
        &mut self,
        #[wasm_bindgen(js_name = previewChars)] preview_chars: Option<u32>,
    ) -> Result<JsValue, JsValue> {
        let s = self.read()?;
        outline_object(&Outline::of(
            s,
            preview_chars.map_or(PREVIEW_CHARS, |n| n as usize),
        ))
    }

    /// `outline()` made a piece at a time (`OutlineBuilder`): the rows laid out now, their
    /// previews described by each `step`, so that a caller can report progress and let other
    /// work in between. The session must not change until `finish()`.
    #[wasm_bindgen(js_name = outlineBuilder)]
    pub fn outline_builder(
        &mut self,
        #[wasm_bindgen(js_name = previewChars)] preview_chars: Option<u32>,
    ) -> Result<JsOutlineBuilder, JsValue> {
        let s = self.read()?;
        Ok(JsOutlineBuilder {
            inner: OutlineBuilder::new(s, preview_chars.map_or(PREVIEW_CHARS, |n| n as usize)),
        })
    }
}

/// An outline made a piece at a time (`Session.outlineBuilder`):
/// `while (!b.step(session, 2000)) report(b.done, b.rows);` then `b.finish()`.
#[wasm_bindgen(js_name = OutlineBuilder)]
pub struct JsOutlineBuilder {
    inner: OutlineBuilder,
}

#[wasm_bindgen(js_class = OutlineBuilder)]
impl JsOutlineBuilder {
    /// How many rows the outline has.
    #[wasm_bindgen(getter)]
    pub fn rows(&self) -> u32 {
        self.inner.rows() as u32
    }

    /// How many rows are described.
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> u32 {
        self.inner.done() as u32
    }

    /// Describes up to `maxRows` more rows of `session` (the one that made this builder);
    /// true once all are. Throws when the session changed since.
    pub fn step(
        &mut self,
        session: &mut JsSession,
        #[wasm_bindgen(js_name = maxRows)] max_rows: u32,
    ) -> Result<bool, JsValue> {
        let s = session.read()?;
        let before = self.inner.done();
        let done = self.inner.step(s, max_rows as usize);
        if !done && self.inner.done() == before && max_rows > 0 {
            return Err(crate::convert::invalid(
                "the session changed since its outline was begun",
            ));
        }
        Ok(done)
    }

    /// The outline (`Outline`), every row described once `step` said so.
    #[wasm_bindgen(unchecked_return_type = "Outline")]
    pub fn finish(self) -> Result<JsValue, JsValue> {
        outline_object(&self.inner.finish())
    }
}
