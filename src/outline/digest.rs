//! What a branch's totals need of each entry (tokens, cost, time, model), kept per row in
//! columns: the viewer sums the rows of the branch it shows.

use crate::time::ms_from_iso;
use serde_json::Value;

/// Not a message.
pub const NOT_MESSAGE: u8 = 0;
/// A message other than the assistant's.
pub const MESSAGE: u8 = 1;
/// An assistant message (its usage counts).
pub const ASSISTANT: u8 = 2;

/// The totals' inputs of each row, in columns (`NaN`: none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Digests {
    /// [`NOT_MESSAGE`], [`MESSAGE`] or [`ASSISTANT`].
    pub message: Vec<u8>,
    /// The message's time in ms (its own `timestamp`, else the entry's); `NaN` when neither reads.
    pub time: Vec<f64>,
    pub input: Vec<f64>,
    pub output: Vec<f64>,
    pub cache_read: Vec<f64>,
    pub cache_write: Vec<f64>,
    /// `usage.cost.total`; `NaN` when the message carries none.
    pub cost: Vec<f64>,
    /// An index into [`Digests::models`] (`provider/model`), -1 for none.
    pub model: Vec<i32>,
    pub models: Vec<String>,
}

/// A time as the viewer reads one: a finite number of ms, or an ISO text.
fn time_of(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) if !s.is_empty() => ms_from_iso(s).map(|ms| ms as f64),
        _ => None,
    }
}

/// A count of tokens: a finite positive number, else 0.
fn count(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64)
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(0.0)
}

impl Digests {
    /// Adds the row of `entry` (its JSON value).
    pub fn push(&mut self, entry: &Value) {
        let m = match (
            entry.get("type").and_then(Value::as_str),
            entry.get("message"),
        ) {
            (Some("message"), Some(m @ (Value::Object(_) | Value::Array(_)))) => m,
            _ => return self.push_row(NOT_MESSAGE, f64::NAN, [0.0; 4], f64::NAN, -1),
        };
        let time = time_of(m.get("timestamp"))
            .or_else(|| time_of(entry.get("timestamp")))
            .unwrap_or(f64::NAN);
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            return self.push_row(MESSAGE, time, [0.0; 4], f64::NAN, -1);
        }
        let usage = m.get("usage").filter(|u| u.is_object() || u.is_array());
        let field = |k: &str| usage.and_then(|u| u.get(k));
        let tokens = [
            count(field("input")),
            count(field("output")),
            count(field("cacheRead")),
            count(field("cacheWrite")),
        ];
        let cost = field("cost")
            .and_then(|c| c.get("total"))
            .and_then(Value::as_f64)
            .filter(|f| f.is_finite())
            .unwrap_or(f64::NAN);
        let name: Vec<&str> = ["provider", "model"]
            .iter()
            .filter_map(|k| m.get(*k).and_then(Value::as_str))
            .filter(|s| !s.is_empty())
            .collect();
        let model = if name.is_empty() {
            -1
        } else {
            self.model_index(name.join("/"))
        };
        self.push_row(ASSISTANT, time, tokens, cost, model);
    }

    fn model_index(&mut self, name: String) -> i32 {
        let i = match self.models.iter().position(|m| *m == name) {
            Some(i) => i,
            None => {
                self.models.push(name);
                self.models.len() - 1
            }
        };
        i32::try_from(i).unwrap_or(-1)
    }

    fn push_row(&mut self, message: u8, time: f64, tokens: [f64; 4], cost: f64, model: i32) {
        self.message.push(message);
        self.time.push(time);
        self.input.push(tokens[0]);
        self.output.push(tokens[1]);
        self.cache_read.push(tokens[2]);
        self.cache_write.push(tokens[3]);
        self.cost.push(cost);
        self.model.push(model);
    }
}
