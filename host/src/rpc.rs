//! `xcsh-session session`: the component's exports driven over JSON lines, one request
//! per line on stdin, one answer per line on stdout. Every function of `session-api` and
//! every method of its resources (`session`, `output-sink`, `context-reader`) is reachable
//! by its WIT name, so a program in any language drives an open session turn by turn
//! without linking wasmtime: the session stays in the instance between lines, an append
//! costs one line written.
//!
//! Requests (`id` is echoed back, any JSON):
//! - `{"id": 1, "call": "session.create", "args": [agentDir, cwd, null, null]}` (a static
//!   function, `TYPE.NAME`; `TYPE.new` is the constructor)
//! - `{"id": 2, "call": "session.append-message", "self": "session#1", "args": ["{…}"]}`
//!   (a method: `self` is a handle an earlier answer returned)
//! - `{"id": 3, "call": "show", "args": [path, agentDir]}` (a function of the interface)
//! - `{"id": 4, "call": "drop", "self": "session#1"}` (drop a resource: a session releases
//!   its writer lock)
//!
//! Answers: `{"id": 1, "ok": VALUE}` or `{"id": 1, "error": {"kind", "message",
//! "details"?}}`, with `"us"` (the host's microseconds for the request) under `--timings`. WIT values map to JSON one to one: records are objects with the WIT
//! (kebab-case) field names, enums and payload-less cases are strings, options are the
//! value or `null`, lists and tuples are arrays, a variant with a payload is `{"case":
//! value}`, a resource is its handle string. JSON text the core writes (entries,
//! contexts) arrives as a JSON string holding the exact bytes. A request that cannot be
//! understood (not UTF-8, not JSON, an unknown function, a handle of another resource
//! type) gets an `invalid-input` error and the loop goes on; at the end of stdin
//! every resource still open is dropped (locks released) and queued history rows written.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use serde_json::{json, Map, Value};
use wasmtime::component::{
    ComponentExportIndex, Func, Instance, ResourceAny, ResourceType, Type, Val,
};
use wasmtime::Store;

use crate::fshost::FsHost;

/// The interface every call is looked up in.
const INTERFACE: &str = "xcsh:session/session-api@0.2.0";

/// One failed request: the WIT `error-kind` case, the message and the details of an
/// `api-error` (or `invalid-input` for a request this host could not pass on).
struct Refused {
    kind: String,
    message: String,
    details: Option<Value>,
}

fn refused(message: impl Into<String>) -> Refused {
    Refused {
        kind: "invalid-input".to_string(),
        message: message.into(),
        details: None,
    }
}

/// The open resources, by handle (`session#1`, `output-sink#2`, `context-reader#3`).
struct Handles {
    next: u64,
    live: HashMap<String, ResourceAny>,
}

impl Handles {
    fn add(&mut self, resource: ResourceAny, type_name: &str) -> String {
        self.next += 1;
        let handle = format!("{type_name}#{}", self.next);
        self.live.insert(handle.clone(), resource);
        handle
    }

    fn get(&self, handle: &str) -> Result<ResourceAny, Refused> {
        self.live
            .get(handle)
            .copied()
            .ok_or_else(|| refused(format!("no open resource {handle:?}")))
    }
}

/// The loop: the instance and its store, the open handles, the resource types by name.
pub struct Driver<'a> {
    store: &'a mut Store<FsHost>,
    instance: Instance,
    interface: ComponentExportIndex,
    handles: Handles,
    /// Each resource type of the interface, with its WIT name.
    resource_names: Vec<(ResourceType, String)>,
    /// Whether each answer says how long the host spent on it (`"us"`).
    timings: bool,
}

impl<'a> Driver<'a> {
    /// A driver over `instance`, which must export `session-api`.
    pub fn new(
        store: &'a mut Store<FsHost>,
        instance: Instance,
        timings: bool,
    ) -> Result<Driver<'a>> {
        let interface = instance
            .get_export_index(&mut *store, None, INTERFACE)
            .with_context(|| format!("the component does not export {INTERFACE}"))?;
        let mut driver = Driver {
            store,
            instance,
            interface,
            handles: Handles {
                next: 0,
                live: HashMap::new(),
            },
            resource_names: Vec::new(),
            timings,
        };
        for name in ["session", "output-sink", "context-reader"] {
            let ty = driver
                .instance
                .get_export_index(&mut *driver.store, Some(&driver.interface), name)
                .and_then(|idx| driver.instance.get_resource(&mut *driver.store, idx))
                .with_context(|| format!("the component exports no resource {name}"))?;
            driver.resource_names.push((ty, name.to_string()));
        }
        Ok(driver)
    }

    /// Answer every line of `input` on `output`; drop what is left open at the end. A
    /// line that is not UTF-8 is answered like any bad request (its id unknown: `null`).
    pub fn serve(&mut self, mut input: impl BufRead, mut output: impl Write) -> Result<()> {
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            let read = input
                .read_until(b'\n', &mut bytes)
                .context("reading a request from stdin")?;
            if read == 0 {
                break;
            }
            let answer = match std::str::from_utf8(&bytes) {
                Ok(line) if line.trim().is_empty() => continue,
                Ok(line) => self.answer(line)?,
                Err(e) => error_answer(
                    &Value::Null,
                    &refused(format!(
                        "the request is not UTF-8 (an invalid byte at offset {})",
                        e.valid_up_to()
                    )),
                ),
            };
            let mut text = serde_json::to_string(&answer)?;
            text.push('\n');
            match output
                .write_all(text.as_bytes())
                .and_then(|()| output.flush())
            {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => break,
                other => other.context("writing an answer to stdout")?,
            }
        }
        self.drop_all()
    }

    /// Drop every open resource (a session releases its lock).
    fn drop_all(&mut self) -> Result<()> {
        let live: Vec<ResourceAny> = self.handles.live.drain().map(|(_, r)| r).collect();
        for resource in live {
            resource.resource_drop(&mut *self.store)?;
        }
        Ok(())
    }

    /// The answer to one request line. Only a trap or a host failure is an `Err` (the
    /// instance may then be unusable); everything the request got wrong is an answer.
    fn answer(&mut self, line: &str) -> Result<Value> {
        let request: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                return Ok(error_answer(
                    &Value::Null,
                    &refused(format!("the request is not JSON: {e}")),
                ))
            }
        };
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let started = std::time::Instant::now();
        let outcome = self.call(&request)?;
        let us = started.elapsed().as_micros() as u64;
        let mut answer = match outcome {
            Ok(value) => json!({ "id": id, "ok": value }),
            Err(r) => error_answer(&id, &r),
        };
        if self.timings {
            answer["us"] = json!(us);
        }
        Ok(answer)
    }

    fn call(&mut self, request: &Value) -> Result<Result<Value, Refused>> {
        let Some(call) = request.get("call").and_then(Value::as_str) else {
            return Ok(Err(refused(
                "the request has no \"call\" (a WIT function name)",
            )));
        };
        let this = request.get("self").and_then(Value::as_str);
        let args = match request.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return Ok(Err(refused("\"args\" must be an array"))),
        };
        if call == "drop" {
            return self.drop_handle(this);
        }
        let (func, method) = match self.lookup(call, this) {
            Ok(found) => found,
            Err(r) => return Ok(Err(r)),
        };
        let ty = func.ty(&*self.store);
        let params: Vec<(String, Type)> = ty.params().map(|(n, t)| (n.to_string(), t)).collect();
        let results: Vec<Type> = ty.results().collect();
        // A method's first parameter is `self`; the request's `args` are the rest.
        let (receiver, params) = match (method, this, params.split_first()) {
            (true, Some(handle), Some(((_, ty), rest))) => (Some((handle, ty.clone())), rest),
            (false, Some(_), _) => {
                return Ok(Err(refused(format!(
                    "{call} is not a method: \"self\" is only for TYPE.NAME methods"
                ))))
            }
            _ => (None, &params[..]),
        };
        if args.len() > params.len() {
            return Ok(Err(refused(format!(
                "{call} takes {} argument(s), got {}",
                params.len(),
                args.len()
            ))));
        }
        let mut vals = Vec::with_capacity(params.len() + 1);
        if let Some((handle, ty)) = receiver {
            match self.to_val(&Value::String(handle.to_string()), &ty) {
                Ok(v) => vals.push(v),
                Err(e) => return Ok(Err(refused(format!("{call}: self: {}", e.message)))),
            }
        }
        let mut given = args.into_iter();
        for (name, param_ty) in params {
            let arg = match (given.next(), param_ty) {
                (Some(a), _) => a,
                (None, Type::Option(_)) => Value::Null,
                (None, _) => return Ok(Err(refused(format!("{call}: missing argument `{name}`")))),
            };
            match self.to_val(&arg, param_ty) {
                Ok(v) => vals.push(v),
                Err(e) => {
                    return Ok(Err(refused(format!(
                        "{call}: argument `{name}`: {}",
                        e.message
                    ))))
                }
            }
        }
        let mut out = vec![Val::Bool(false); results.len()];
        func.call(&mut *self.store, &vals, &mut out)?;
        let value = match out.into_iter().next() {
            None => Value::Null,
            Some(Val::Result(Err(e))) => return Ok(Err(self.api_error(e.map(|b| *b)))),
            Some(Val::Result(Ok(v))) => v.map(|b| self.json_of(*b)).unwrap_or(Value::Null),
            Some(v) => self.json_of(v),
        };
        Ok(Ok(value))
    }

    fn drop_handle(&mut self, this: Option<&str>) -> Result<Result<Value, Refused>> {
        let Some(handle) = this else {
            return Ok(Err(refused("drop needs \"self\": the handle to drop")));
        };
        match self.handles.live.remove(handle) {
            Some(resource) => {
                resource.resource_drop(&mut *self.store)?;
                Ok(Ok(Value::Null))
            }
            None => Ok(Err(refused(format!("no open resource {handle:?}")))),
        }
    }

    /// The export a call names: `f`, `TYPE.f` (static, or a method with `self`),
    /// `TYPE.new` (constructor); and whether it is a method.
    fn lookup(&mut self, call: &str, this: Option<&str>) -> Result<(Func, bool), Refused> {
        let (export, method) = match call.split_once('.') {
            None => (call.to_string(), false),
            Some((ty, "new")) => (format!("[constructor]{ty}"), false),
            Some((ty, f)) if this.is_some() => (format!("[method]{ty}.{f}"), true),
            Some((ty, f)) => (format!("[static]{ty}.{f}"), false),
        };
        let func = self
            .instance
            .get_export_index(&mut *self.store, Some(&self.interface), &export)
            .and_then(|idx| self.instance.get_func(&mut *self.store, idx));
        match func {
            Some(f) => Ok((f, method)),
            None if this.is_none() && call.contains('.') => Err(refused(format!(
                "no function {export} in {INTERFACE} (a method needs \"self\")"
            ))),
            None => Err(refused(format!("no function {export} in {INTERFACE}"))),
        }
    }

    /// An `api-error` as an answer's error.
    fn api_error(&mut self, payload: Option<Val>) -> Refused {
        let value = payload.map(|v| self.json_of(v)).unwrap_or(Value::Null);
        let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_string);
        Refused {
            kind: text("kind").unwrap_or_else(|| "storage".to_string()),
            message: text("message").unwrap_or_else(|| value.to_string()),
            details: value.get("details").filter(|d| !d.is_null()).cloned(),
        }
    }

    /// The WIT name of a resource type of the interface (`resource` for any other).
    fn resource_name(&self, ty: ResourceType) -> &str {
        self.resource_names
            .iter()
            .find(|(t, _)| *t == ty)
            .map_or("resource", |(_, n)| n.as_str())
    }

    /// A JSON argument as the WIT value of `ty`.
    fn to_val(&self, v: &Value, ty: &Type) -> Result<Val, Refused> {
        let want = |what: &str| refused(format!("expected {what}, got {v}"));
        Ok(match ty {
            Type::Bool => Val::Bool(v.as_bool().ok_or_else(|| want("true or false"))?),
            Type::U8 => Val::U8(int(v).ok_or_else(|| want("an integer 0..=255"))?),
            Type::U16 => Val::U16(int(v).ok_or_else(|| want("an integer 0..=65535"))?),
            Type::U32 => Val::U32(int(v).ok_or_else(|| want("an integer 0..=4294967295"))?),
            Type::U64 => Val::U64(v.as_u64().ok_or_else(|| want("a non-negative integer"))?),
            Type::S8 => Val::S8(int(v).ok_or_else(|| want("an integer -128..=127"))?),
            Type::S16 => Val::S16(int(v).ok_or_else(|| want("an integer"))?),
            Type::S32 => Val::S32(int(v).ok_or_else(|| want("an integer"))?),
            Type::S64 => Val::S64(v.as_i64().ok_or_else(|| want("an integer"))?),
            Type::Float32 => Val::Float32(v.as_f64().ok_or_else(|| want("a number"))? as f32),
            Type::Float64 => Val::Float64(v.as_f64().ok_or_else(|| want("a number"))?),
            Type::Char => {
                let s = v.as_str().ok_or_else(|| want("a one-character string"))?;
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Val::Char(c),
                    _ => return Err(want("a one-character string")),
                }
            }
            Type::String => Val::String(v.as_str().ok_or_else(|| want("a string"))?.to_string()),
            Type::List(list) => {
                let elem = list.ty();
                // Bytes: an array of numbers, or a string (its UTF-8 bytes).
                if let (Type::U8, Some(s)) = (&elem, v.as_str()) {
                    return Ok(Val::List(s.bytes().map(Val::U8).collect()));
                }
                let items = v.as_array().ok_or_else(|| want("an array"))?;
                Val::List(
                    items
                        .iter()
                        .map(|i| self.to_val(i, &elem))
                        .collect::<Result<_, _>>()?,
                )
            }
            Type::Tuple(tuple) => {
                let items = v.as_array().ok_or_else(|| want("an array"))?;
                let types: Vec<Type> = tuple.types().collect();
                if items.len() != types.len() {
                    return Err(want(&format!("an array of {}", types.len())));
                }
                Val::Tuple(
                    items
                        .iter()
                        .zip(&types)
                        .map(|(i, t)| self.to_val(i, t))
                        .collect::<Result<_, _>>()?,
                )
            }
            Type::Record(record) => {
                let object = v.as_object().ok_or_else(|| want("an object"))?;
                let mut fields = Vec::new();
                for field in record.fields() {
                    let value = object.get(field.name).unwrap_or(&Value::Null);
                    let val = self
                        .to_val(value, &field.ty)
                        .map_err(|e| refused(format!("field `{}`: {}", field.name, e.message)))?;
                    fields.push((field.name.to_string(), val));
                }
                if let Some(extra) = object
                    .keys()
                    .find(|k| !record.fields().any(|f| f.name == k.as_str()))
                {
                    return Err(refused(format!("unknown field `{extra}`")));
                }
                Val::Record(fields)
            }
            Type::Enum(e) => {
                let s = v.as_str().ok_or_else(|| want("a string"))?;
                if !e.names().any(|n| n == s) {
                    let names: Vec<&str> = e.names().collect();
                    return Err(want(&format!("one of {}", names.join(", "))));
                }
                Val::Enum(s.to_string())
            }
            Type::Option(o) => match v {
                Value::Null => Val::Option(None),
                other => Val::Option(Some(Box::new(self.to_val(other, &o.ty())?))),
            },
            Type::Variant(variant) => {
                let (case, payload) = match v {
                    Value::String(s) => (s.as_str(), None),
                    Value::Object(m) if m.len() == 1 => match m.iter().next() {
                        Some((k, p)) => (k.as_str(), Some(p)),
                        None => return Err(want("a case name or {\"case\": value}")),
                    },
                    _ => return Err(want("a case name or {\"case\": value}")),
                };
                let found = variant
                    .cases()
                    .find(|c| c.name == case)
                    .ok_or_else(|| want("a case of the variant"))?;
                let val = match (found.ty, payload) {
                    (Some(t), Some(p)) => Some(Box::new(self.to_val(p, &t)?)),
                    (None, _) => None,
                    (Some(_), None) => return Err(want("{\"case\": value}")),
                };
                Val::Variant(case.to_string(), val)
            }
            Type::Borrow(expected) | Type::Own(expected) => {
                let handle = v.as_str().ok_or_else(|| want("a resource handle"))?;
                let resource = self.handles.get(handle)?;
                // wasmtime would trap on a handle of another type (ending the loop).
                if resource.ty() != *expected {
                    return Err(refused(format!(
                        "{handle:?} is of type {}, not {}",
                        self.resource_name(resource.ty()),
                        self.resource_name(*expected)
                    )));
                }
                Val::Resource(resource)
            }
            _ => return Err(refused(format!("this host cannot pass a {ty:?}"))),
        })
    }

    /// A WIT value as JSON; a returned resource becomes a new handle.
    fn json_of(&mut self, v: Val) -> Value {
        match v {
            Val::Bool(b) => Value::Bool(b),
            Val::S8(n) => json!(n),
            Val::U8(n) => json!(n),
            Val::S16(n) => json!(n),
            Val::U16(n) => json!(n),
            Val::S32(n) => json!(n),
            Val::U32(n) => json!(n),
            Val::S64(n) => json!(n),
            Val::U64(n) => json!(n),
            Val::Float32(n) => json!(n),
            Val::Float64(n) => json!(n),
            Val::Char(c) => Value::String(c.to_string()),
            Val::String(s) => Value::String(s),
            Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
                Value::Array(items.into_iter().map(|i| self.json_of(i)).collect())
            }
            Val::Record(fields) => Value::Object(
                fields
                    .into_iter()
                    .map(|(k, v)| (k, self.json_of(v)))
                    .collect::<Map<_, _>>(),
            ),
            Val::Enum(name) => Value::String(name),
            Val::Variant(name, None) => Value::String(name),
            Val::Variant(name, Some(p)) => json!({ name: self.json_of(*p) }),
            Val::Option(o) => o.map(|b| self.json_of(*b)).unwrap_or(Value::Null),
            Val::Result(Ok(v)) => json!({ "ok": v.map(|b| self.json_of(*b)) }),
            Val::Result(Err(e)) => json!({ "error": e.map(|b| self.json_of(*b)) }),
            Val::Flags(names) => json!(names),
            Val::Resource(r) => {
                let name = self.resource_name(r.ty()).to_string();
                Value::String(self.handles.add(r, &name))
            }
            other => Value::String(format!("{other:?}")),
        }
    }
}

fn int<T: TryFrom<i64>>(v: &Value) -> Option<T> {
    v.as_i64().and_then(|n| T::try_from(n).ok())
}

fn error_answer(id: &Value, r: &Refused) -> Value {
    let mut error = json!({ "kind": r.kind, "message": r.message });
    if let Some(d) = &r.details {
        error["details"] = d.clone();
    }
    json!({ "id": id, "error": error })
}
