//! One line of text for each tree row: a short tag, a style class and a preview, the way
//! the viewer's tree shows an entry (its JSON with long strings already cut).

use super::js_text::{en_us, is_js_space, join, js_string, len16, or, prefix16, template, truthy};
use serde_json::{Map, Value};

/// How many UTF-16 units of any one string a preview reads: a preview shows 140; 160
/// leaves room for the whitespace it folds.
pub const PREVIEW_CHARS: usize = 160;

/// The tag and class of each entry type and message role.
const TAGS: &[(&str, &str, &str)] = &[
    ("user", "user", "user"),
    ("assistant", "asst", "assistant"),
    ("toolResult", "tool", "tool"),
    ("bashExecution", "bash", "bash"),
    ("custom", "ext", "custom"),
    ("hookMessage", "ext", "custom"),
    ("model_change", "model", "meta"),
    ("thinking_level_change", "think", "meta"),
    ("compaction", "compact", "compaction"),
    ("branch_summary", "branch", "branch"),
    ("custom_message", "ext", "custom"),
    ("custom_entry", "state", "meta"),
    ("label", "label", "meta"),
    ("ttsr_injection", "ttsr", "meta"),
    ("session_init", "init", "meta"),
    ("mode_change", "mode", "meta"),
    ("context_change", "context", "meta"),
    ("service_tier_change", "tier", "meta"),
    ("mcp_tool_selection", "mcp", "meta"),
    ("session_info", "name", "meta"),
];

/// What a tree row shows of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// A short tag (`user`, `asst`, `tool`, …; an unknown type's first characters).
    pub tag: String,
    /// Its style class (`user`, `assistant`, `meta`, …, `other`).
    pub class: &'static str,
    /// One line of at most 140 characters.
    pub text: String,
}

fn tag_of(name: Option<&Value>, fallback: &str, cut: usize) -> (String, &'static str) {
    let known = name
        .and_then(Value::as_str)
        .and_then(|n| TAGS.iter().find(|t| t.0 == n));
    match known {
        Some((_, tag, class)) => ((*tag).into(), class),
        None => (prefix16(&or(name, fallback), cut).into(), "other"),
    }
}

/// Whitespace runs as one space, trimmed, cut to `max` (with `…`).
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4));
    for word in s.split(is_js_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    ellipsis(out, max)
}

fn ellipsis(s: String, max: usize) -> String {
    if len16(&s) > max {
        format!("{}…", prefix16(&s, max.saturating_sub(1)))
    } else {
        s
    }
}

/// The first line, trimmed, cut to `max`.
fn first_line(s: &str, max: usize) -> String {
    let s = s.trim_matches(is_js_space);
    let line = s.split('\n').next().unwrap_or("").trim_matches(is_js_space);
    ellipsis(line.into(), max)
}

/// `String(v ?? '')` as one line of at most 140.
fn line_of(v: Option<&Value>) -> String {
    one_line(&or(v, ""), 140)
}

/// The text of a content string or block array (images as `[image]`), cut early.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => prefix16(s, PREVIEW_CHARS).into(),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            for b in blocks {
                if len16(&out) >= PREVIEW_CHARS {
                    break;
                }
                let piece = match (b.get("type").and_then(Value::as_str), b.get("text")) {
                    (Some("text"), Some(Value::String(t))) => prefix16(t, PREVIEW_CHARS),
                    (Some("image"), _) => "[image]",
                    _ => continue,
                };
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(piece);
            }
            out
        }
        _ => String::new(),
    }
}

fn blocks_of<'a>(m: &'a Map<String, Value>, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    m.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |b| b.get("type").and_then(Value::as_str) == Some(kind))
}

fn message(m: &Map<String, Value>) -> Preview {
    let role = m.get("role");
    let (tag, class) = tag_of(role, "msg", 6);
    let mut text = one_line(&text_of(m.get("content")), 140);
    match role.and_then(Value::as_str) {
        Some("assistant") => {
            let calls: Vec<Value> = blocks_of(m, "toolCall")
                .map(|b| b.get("name").cloned().unwrap_or(Value::Null))
                .collect();
            if !calls.is_empty() {
                let sep = if text.is_empty() { "" } else { " " };
                text = format!("{text}{sep}→ {}", join(&calls, ", "));
            }
            if text.is_empty() && truthy(m.get("errorMessage")) {
                text = format!("⚠ {}", line_of(m.get("errorMessage")));
            }
            if text.is_empty() && blocks_of(m, "thinking").next().is_some() {
                text = "(thinking)".into();
            }
        }
        Some("toolResult") => {
            let error = if truthy(m.get("isError")) { " ✗" } else { "" };
            text = format!("{}{error}: {text}", or(m.get("toolName"), "tool"));
        }
        Some("bashExecution") => text = format!("$ {}", line_of(m.get("command"))),
        _ => {}
    }
    Preview {
        tag,
        class,
        text: one_line(&text, 140),
    }
}

fn joined(e: &Map<String, Value>, key: &str) -> String {
    e.get(key)
        .and_then(Value::as_array)
        .map_or_else(String::new, |a| join(a, ", "))
}

/// The tag, class and one line of preview of an entry (its JSON value).
pub fn describe(entry: &Value) -> Preview {
    let empty = Map::new();
    let e = entry.as_object().unwrap_or(&empty);
    let ty = e.get("type");
    if ty.and_then(Value::as_str) == Some("message") {
        return message(
            e.get("message")
                .and_then(Value::as_object)
                .unwrap_or(&empty),
        );
    }
    let name = match ty.and_then(Value::as_str) {
        Some("custom") => Some(Value::String("custom_entry".into())),
        _ => ty.cloned(),
    };
    let (tag, class) = match tag_of(name.as_ref(), "?", 7) {
        (_, "other") => (prefix16(&or(ty, "?"), 7).into(), "other"),
        known => known,
    };
    let field = |k: &str| e.get(k);
    let text = match ty.and_then(Value::as_str).unwrap_or("") {
        "model_change" => {
            let mut t = match field("model") {
                None | Some(Value::Null) => [field("provider"), field("modelId")]
                    .into_iter()
                    .filter(|v| truthy(*v))
                    .map(|v| v.map(js_string).unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join("/"),
                Some(m) => js_string(m),
            };
            if truthy(field("role")) && field("role").and_then(Value::as_str) != Some("default") {
                t = format!("{t} ({})", template(field("role")));
            }
            t
        }
        "thinking_level_change" => format!("thinking {}", or(field("thinkingLevel"), "off")),
        "compaction" => {
            let mut t = if truthy(field("shortSummary")) {
                line_of(field("shortSummary"))
            } else {
                first_line(&or(field("summary"), ""), 120)
            };
            if let Some(n) = field("tokensBefore").filter(|v| truthy(Some(v))) {
                t = format!("{t} · {} tok", en_us(n));
            }
            t
        }
        "branch_summary" => line_of(field("summary")),
        "custom" => or(field("customType"), ""),
        "custom_message" => format!(
            "{}: {}",
            or(field("customType"), ""),
            one_line(&text_of(field("content")), 140)
        ),
        "label" => match field("label") {
            None | Some(Value::Null) => format!("clear label on {}", template(field("targetId"))),
            Some(l) => format!("“{}” → {}", js_string(l), template(field("targetId"))),
        },
        "ttsr_injection" => joined(e, "injectedRules"),
        "session_init" => line_of(match field("task") {
            None | Some(Value::Null) => field("systemPrompt"),
            task => task,
        }),
        "mode_change" => or(field("mode"), ""),
        "context_change" => ["contextName", "tenant", "namespace"]
            .iter()
            .filter(|k| truthy(field(k)))
            .map(|k| template(field(k)))
            .collect::<Vec<_>>()
            .join(" · "),
        "service_tier_change" => format!("service tier {}", or(field("serviceTier"), "default")),
        "mcp_tool_selection" => joined(e, "selectedToolNames"),
        // pi's name for the session: an empty one clears it.
        "session_info" => match field("name").map(|n| js_string(n).trim().to_string()) {
            Some(n) if !n.is_empty() => format!("named “{n}”"),
            _ => "name cleared".to_string(),
        },
        _ => or(ty, ""),
    };
    Preview {
        tag,
        class,
        text: one_line(&text, 140),
    }
}
