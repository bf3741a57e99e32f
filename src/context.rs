//! `buildSessionContext`: what is sent to the model for the branch ending at a leaf.
//!
//! Walk from the leaf to the root, derive runtime state along the path (thinking level,
//! models, service tier, TTSR rules, MCP tool selection, mode, active context), then emit
//! messages: with a compaction on the path, its summary first, then the kept entries from
//! `firstKeptEntryId` up to the compaction, then everything after it. Message payloads are
//! copied as raw JSON text, never parsed into trees.

use crate::entry::{pick, Entry, EntryType, IdIndex, Payload};
use crate::json::{push_quoted, quote, raw_str};
use crate::time::ms_from_iso;
use serde_json::Value;
use std::borrow::Cow;

/// Which leaf to build for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf<'a> {
    /// The last entry in the file (leafId undefined).
    Last,
    /// Explicitly before the first entry: the empty context.
    Null,
    /// This entry; an unknown id falls back to the last entry.
    Id(&'a str),
}

/// The built context. Messages and state values are JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext<'a> {
    pub messages: Vec<Cow<'a, str>>,
    pub thinking_level: String,
    pub service_tier: Option<String>,
    /// role → model JSON, in first-set order (reassigning keeps the position, as in JS).
    pub models: Vec<(String, String)>,
    pub injected_ttsr_rules: Vec<String>,
    pub selected_mcp_tool_names: Vec<String>,
    pub has_persisted_mcp_tool_selection: bool,
    pub mode: Option<String>,
    pub mode_data: Option<String>,
    pub active_context_name: Option<String>,
    pub active_context_tenant: Option<String>,
    /// Set when the parent chain loops: the id where the walk stopped.
    pub cycle_at: Option<String>,
    /// The id of the entry each message came from (parallel to `messages`; not part of
    /// the agent's JSON), so viewers can link a message to the tree.
    pub entry_ids: Vec<&'a str>,
    /// The last `model_change` or assistant message on the path: pi's `model` comes
    /// from it.
    pub last_model: Option<ModelSource<'a>>,
    /// Write pi's `model` (`{ provider, modelId }` or `null`) in the JSON (the pi
    /// flavour, [`crate::Flavour::context_has_model`]).
    pub with_model: bool,
}

impl<'a> SessionContext<'a> {
    pub fn empty() -> Self {
        SessionContext {
            messages: Vec::new(),
            thinking_level: "\"off\"".into(),
            service_tier: None,
            models: Vec::new(),
            injected_ttsr_rules: Vec::new(),
            selected_mcp_tool_names: Vec::new(),
            has_persisted_mcp_tool_selection: false,
            mode: Some("\"none\"".into()),
            mode_data: None,
            active_context_name: None,
            active_context_tenant: None,
            cycle_at: None,
            entry_ids: Vec::new(),
            last_model: None,
            with_model: false,
        }
    }

    /// `JSON.stringify(context)`: camelCase keys, absent optional values omitted.
    pub fn to_json(&self) -> String {
        let tail = self.json_tail();
        let mut out = String::with_capacity(self.json_len(&tail));
        let mut k = 0;
        while let Some(piece) = self.json_piece(k, &tail) {
            out.push_str(piece);
            k += 1;
        }
        out
    }

    /// The same bytes as [`SessionContext::to_json`], read in chunks: nothing holds the
    /// whole text (a 1 GB session's context is about 1 GB of JSON).
    pub fn into_json_reader(self) -> ContextJsonReader<'a> {
        let tail = self.json_tail();
        ContextJsonReader {
            ctx: self,
            tail,
            piece: 0,
            offset: 0,
        }
    }

    /// Piece `k` of the JSON text: the head, then each message with the commas between
    /// them, then `tail`; `None` past the end. Every writer of the text joins these.
    fn json_piece<'p>(&'p self, k: usize, tail: &'p str) -> Option<&'p str> {
        let n = self.messages.len();
        let separators = n.saturating_sub(1);
        match k {
            0 => Some(JSON_HEAD),
            k if k <= n + separators => Some(match (k - 1) % 2 {
                0 => &self.messages[(k - 1) / 2],
                _ => ",",
            }),
            k if k == n + separators + 1 => Some(tail),
            _ => None,
        }
    }

    /// The length of the JSON text: its pieces' lengths.
    fn json_len(&self, tail: &str) -> usize {
        let messages: usize = self.messages.iter().map(|m| m.len()).sum();
        JSON_HEAD.len() + messages + self.messages.len().saturating_sub(1) + tail.len()
    }

    /// Everything after the messages: the runtime state, camelCase, absent values left out.
    pub(crate) fn json_tail(&self) -> String {
        let mut out = String::from("],\"thinkingLevel\":");
        out.push_str(&self.thinking_level);
        if let Some(t) = &self.service_tier {
            out.push_str(",\"serviceTier\":");
            out.push_str(t);
        }
        out.push_str(",\"models\":{");
        for (i, (role, model)) in self.models.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_quoted(&mut out, role);
            out.push(':');
            out.push_str(model);
        }
        out.push_str("},\"injectedTtsrRules\":");
        push_list(&mut out, &self.injected_ttsr_rules);
        out.push_str(",\"selectedMCPToolNames\":");
        push_list(&mut out, &self.selected_mcp_tool_names);
        out.push_str(",\"hasPersistedMCPToolSelection\":");
        out.push_str(if self.has_persisted_mcp_tool_selection {
            "true"
        } else {
            "false"
        });
        for (key, value) in [
            ("mode", &self.mode),
            ("modeData", &self.mode_data),
            ("activeContextName", &self.active_context_name),
            ("activeContextTenant", &self.active_context_tenant),
        ] {
            if let Some(v) = value {
                out.push_str(",\"");
                out.push_str(key);
                out.push_str("\":");
                out.push_str(v);
            }
        }
        if self.with_model {
            out.push_str(",\"model\":");
            out.push_str(&pi_model(self.last_model.map(|m| m.0)));
        }
        out.push('}');
        out
    }
}

/// Pi's context `model` from the entry that sets it: a `model_change`'s `provider` and
/// `modelId`, an assistant message's `provider` and `model`; `null` without one. A field
/// the entry lacks is left out, as `JSON.stringify` leaves out `undefined`.
fn pi_model(entry: Option<&Entry>) -> String {
    let Some(entry) = entry else {
        return "null".into();
    };
    let (source, model_key) = match entry.entry_type {
        EntryType::ModelChange => (entry.to_value(), "modelId"),
        _ => (
            entry
                .message_json()
                .and_then(|m| serde_json::from_str(m).ok())
                .unwrap_or(Value::Null),
            "model",
        ),
    };
    let mut model = serde_json::Map::new();
    for (from, to) in [("provider", "provider"), (model_key, "modelId")] {
        if let Some(v) = source.get(from) {
            model.insert(to.to_string(), v.clone());
        }
    }
    crate::json::to_text(&Value::Object(model))
}

/// The entry pi's context `model` comes from (two are equal when their ids are).
#[derive(Debug, Clone, Copy)]
pub struct ModelSource<'a>(pub &'a Entry);

impl PartialEq for ModelSource<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

pub(crate) const JSON_HEAD: &str = "{\"messages\":[";

/// A context's JSON read a chunk at a time ([`SessionContext::into_json_reader`]): the
/// CLI, the component's `context-reader` and the npm package's `writeContextJson` pass a
/// huge context on without a second copy of it.
pub struct ContextJsonReader<'a> {
    ctx: SessionContext<'a>,
    tail: String,
    /// The piece being read ([`SessionContext::json_piece`]) and how much of it is read.
    piece: usize,
    offset: usize,
}

impl ContextJsonReader<'_> {
    /// The context being read.
    pub fn context(&self) -> &SessionContext<'_> {
        &self.ctx
    }

    /// The whole JSON's length in bytes, read or not.
    pub fn total_bytes(&self) -> usize {
        self.ctx.json_len(&self.tail)
    }

    /// Append at most `max` more bytes of the JSON to `out`; 0 at the end (and for `max`
    /// 0). Chunks may end inside a UTF-8 character: join them before decoding.
    pub fn read_into(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.next_bytes(max, |bytes| out.extend_from_slice(bytes))
    }

    /// Hand the next at most `max` bytes to `put`, a piece at a time; how many in all.
    fn next_bytes(&mut self, max: usize, mut put: impl FnMut(&[u8])) -> usize {
        let mut done = 0;
        while done < max {
            let Some(piece) = self.ctx.json_piece(self.piece, &self.tail) else {
                break;
            };
            let rest = &piece.as_bytes()[self.offset..];
            let take = rest.len().min(max - done);
            put(&rest[..take]);
            done += take;
            self.offset += take;
            if self.offset == piece.len() {
                self.piece += 1;
                self.offset = 0;
            }
        }
        done
    }
}

impl std::io::Read for ContextJsonReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut at = 0;
        Ok(self.next_bytes(buf.len(), |bytes| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        }))
    }
}

fn push_list(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_quoted(out, s);
    }
    out.push(']');
}

/// The path root → leaf as entry indices; the second value is the id where a parent cycle
/// stopped the walk, if any.
pub(crate) fn path_to_root(
    entries: &[Entry],
    by_id: &IdIndex,
    leaf: usize,
) -> (Vec<usize>, Option<String>) {
    let (path, cycle) = walk_to_root(leaf, entries.len(), |i| {
        entries[i]
            .parent_id
            .as_ref()
            .and_then(|p| by_id.get(entries, p))
    });
    (path, cycle.map(|i| entries[i].id.clone()))
}

/// The walk from `leaf` to the root through `parent` over `n` positions, returned root
/// first; the second value is the position where a parent cycle stopped it (met twice).
/// The one rule of both readers: the entries in memory and the session index.
pub(crate) fn walk_to_root(
    leaf: usize,
    n: usize,
    parent: impl Fn(usize) -> Option<usize>,
) -> (Vec<usize>, Option<usize>) {
    let mut path = Vec::new();
    let mut seen = vec![false; n];
    let mut current = Some(leaf);
    let mut cycle = None;
    while let Some(i) = current {
        if seen[i] {
            cycle = Some(i);
            break;
        }
        seen[i] = true;
        path.push(i);
        current = parent(i);
    }
    path.reverse();
    (path, cycle)
}

/// Resolve a [`Leaf`] to an entry index (`None`: empty context).
pub(crate) fn resolve_leaf(entries: &[Entry], by_id: &IdIndex, leaf: Leaf) -> Option<usize> {
    match leaf {
        Leaf::Null => None,
        Leaf::Id(id) => by_id
            .get(entries, id)
            .or_else(|| entries.len().checked_sub(1)),
        Leaf::Last => entries.len().checked_sub(1),
    }
}

/// JSON text of an entry timestamp as epoch ms (`new Date(ts).getTime()`, NaN → null).
fn epoch_ms(ts: &str) -> String {
    ms_from_iso(ts)
        .map(|ms| ms.to_string())
        .unwrap_or_else(|| "null".into())
}

/// Build an object from (key, raw JSON) pairs, skipping absent values (JS `undefined`).
fn object(fields: &[(&str, Option<Cow<str>>)]) -> String {
    let mut out = String::from("{");
    for (key, value) in fields {
        if let Some(v) = value {
            if out.len() > 1 {
                out.push(',');
            }
            push_quoted(&mut out, key);
            out.push(':');
            out.push_str(v);
        }
    }
    out.push('}');
    out
}

fn field<'t>(f: &[Option<&'t serde_json::value::RawValue>], i: usize) -> Option<Cow<'t, str>> {
    f[i].map(|r| Cow::Borrowed(r.get()))
}

fn custom_message(entry: &Entry) -> String {
    let f = pick(
        entry.json(),
        &["customType", "content", "display", "details", "attribution"],
    )
    .unwrap_or_else(|_| vec![None; 5]);
    object(&[
        ("role", Some(Cow::Borrowed("\"custom\""))),
        ("customType", field(&f, 0)),
        ("content", field(&f, 1)),
        ("display", field(&f, 2)),
        ("details", field(&f, 3)),
        ("attribution", field(&f, 4)),
        ("timestamp", Some(Cow::Owned(epoch_ms(entry.timestamp())))),
    ])
}

fn branch_summary_message(entry: &Entry) -> String {
    let f = pick(entry.json(), &["summary", "fromId"]).unwrap_or_else(|_| vec![None; 2]);
    object(&[
        ("role", Some(Cow::Borrowed("\"branchSummary\""))),
        ("summary", field(&f, 0)),
        ("fromId", field(&f, 1)),
        ("timestamp", Some(Cow::Owned(epoch_ms(entry.timestamp())))),
    ])
}

/// The remote-compaction payload, when `preserveData.openaiRemoteCompaction` has a
/// non-empty string `provider` and an array `replacementHistory`.
fn provider_payload(preserve_data: Option<&serde_json::value::RawValue>) -> Option<String> {
    let remote = pick(preserve_data?.get(), &["openaiRemoteCompaction"]).ok()?[0]?;
    let f = pick(remote.get(), &["provider", "replacementHistory"]).ok()?;
    let provider = raw_str(f[0]?)?;
    let history = f[1]?.get();
    if provider.is_empty() || !history.starts_with('[') {
        return None;
    }
    Some(format!(
        "{{\"type\":\"openaiResponsesHistory\",\"provider\":{},\"items\":{history}}}",
        quote(&provider)
    ))
}

fn compaction_message(entry: &Entry) -> (String, bool) {
    let f = pick(
        entry.json(),
        &["summary", "shortSummary", "tokensBefore", "preserveData"],
    )
    .unwrap_or_else(|_| vec![None; 4]);
    let payload = provider_payload(f[3]);
    let remote = payload.is_some();
    let msg = object(&[
        ("role", Some(Cow::Borrowed("\"compactionSummary\""))),
        ("summary", field(&f, 0)),
        ("shortSummary", field(&f, 1)),
        ("tokensBefore", field(&f, 2)),
        ("providerPayload", payload.map(Cow::Owned)),
        ("timestamp", Some(Cow::Owned(epoch_ms(entry.timestamp())))),
    ]);
    (msg, remote)
}

/// Build the context. `finish` turns the message taken from an entry (a message entry's
/// message, the message built from a custom_message) into what the model sees (it
/// resolves blob references when the caller has a blob store).
pub(crate) fn build_session_context<'a>(
    entries: &'a [Entry],
    by_id: &IdIndex,
    leaf: Leaf,
    finish: &dyn Fn(&'a Entry, Cow<'a, str>) -> Cow<'a, str>,
) -> SessionContext<'a> {
    let (path, cycle) = branch_of(entries, by_id, leaf);
    context_along(&path, cycle, finish)
}

/// The entries of `leaf`'s branch, root first (none for [`Leaf::Null`]), and where a parent
/// cycle stopped the walk.
pub(crate) fn branch_of<'a>(
    entries: &'a [Entry],
    by_id: &IdIndex,
    leaf: Leaf,
) -> (Vec<&'a Entry>, Option<String>) {
    let Some(leaf) = resolve_leaf(entries, by_id, leaf) else {
        return (Vec::new(), None);
    };
    let (path, cycle) = path_to_root(entries, by_id, leaf);
    (path.iter().map(|&i| &entries[i]).collect(), cycle)
}

/// The state [`build_session_context`] leaves at `leaf` (thinking level, models, mode...),
/// without its messages: the path walked, no message made.
pub(crate) fn build_session_state<'a>(
    entries: &'a [Entry],
    by_id: &IdIndex,
    leaf: Leaf,
) -> SessionContext<'a> {
    let (path, cycle) = branch_of(entries, by_id, leaf);
    state_along(&path, cycle).0
}

/// The context of a path, root first (`cycle`: where a parent loop stopped the walk).
/// The path may leave out entries the context does not read (an open through the index
/// reads only those): messages before the compaction's kept ones other than the first
/// and last assistant messages, labels, custom entries and session inits before it.
pub(crate) fn context_along<'a>(
    path: &[&'a Entry],
    cycle: Option<String>,
    finish: &dyn Fn(&'a Entry, Cow<'a, str>) -> Cow<'a, str>,
) -> SessionContext<'a> {
    let (mut ctx, compaction) = state_along(path, cycle);
    let emit = |entry: &'a Entry, ctx: &mut SessionContext<'a>| {
        if let Some(message) = entry_message(entry, finish) {
            ctx.messages.push(message);
            ctx.entry_ids.push(&entry.id);
        }
    };
    match compaction {
        Some(cpos) => {
            let comp = path[cpos];
            let (summary, first_kept) = compaction_parts(comp);
            ctx.messages.push(Cow::Owned(summary));
            ctx.entry_ids.push(&comp.id);
            if let Some(first_kept) = first_kept {
                let kept = path[..cpos].iter().position(|e| e.id == first_kept);
                for &entry in kept.map_or(&[][..], |k| &path[k..cpos]) {
                    emit(entry, &mut ctx);
                }
            }
            for &entry in &path[cpos + 1..] {
                emit(entry, &mut ctx);
            }
        }
        None => {
            for &entry in path {
                emit(entry, &mut ctx);
            }
        }
    }
    ctx
}

/// The runtime state a path leaves (thinking level, models, service tier, TTSR rules,
/// MCP tool selection, mode, active context), no messages yet; and where its last
/// compaction is.
pub(crate) fn state_along<'a>(
    path: &[&'a Entry],
    cycle: Option<String>,
) -> (SessionContext<'a>, Option<usize>) {
    let mut ctx = SessionContext::empty();
    ctx.cycle_at = cycle;
    let mut compaction: Option<usize> = None;
    let mut rules: Vec<String> = Vec::new();
    for (pos, &entry) in path.iter().enumerate() {
        match &entry.payload {
            Payload::ThinkingLevelChange { level } => {
                ctx.thinking_level = level
                    .as_ref()
                    .map(|l| l.get().to_string())
                    .unwrap_or_else(|| "\"off\"".into());
            }
            Payload::ModelChange { model, role } => {
                ctx.last_model = Some(ModelSource(entry));
                if let Some(model) = model {
                    set_model(&mut ctx.models, role, model.get().to_string());
                }
            }
            Payload::ServiceTierChange { tier } => {
                ctx.service_tier = tier.as_ref().map(|t| t.get().to_string())
            }
            Payload::Message {
                model_key: Some(key),
                ..
            } => {
                ctx.last_model = Some(ModelSource(entry));
                set_model(&mut ctx.models, "default", quote(key));
            }
            Payload::Compaction { .. } => compaction = Some(pos),
            Payload::TtsrInjection { rules: injected } => {
                for r in injected {
                    if !rules.contains(r) {
                        rules.push(r.clone());
                    }
                }
            }
            Payload::McpToolSelection { names } => {
                ctx.selected_mcp_tool_names = names.clone();
                ctx.has_persisted_mcp_tool_selection = true;
            }
            Payload::ModeChange { mode, data } => {
                ctx.mode = mode.as_ref().map(|m| m.get().to_string());
                ctx.mode_data = data.as_ref().map(|d| d.get().to_string());
            }
            Payload::ContextChange { name, tenant } => {
                ctx.active_context_name = name.as_ref().map(|n| n.get().to_string());
                ctx.active_context_tenant = tenant.as_ref().map(|t| t.get().to_string());
            }
            _ => {}
        }
    }
    ctx.injected_ttsr_rules = rules;
    (ctx, compaction)
}

/// The message an entry puts in the context, if any: a message entry's message, the
/// message built from a custom_message (both through `finish`), a branch summary's.
pub(crate) fn entry_message<'a>(
    entry: &'a Entry,
    finish: &dyn Fn(&'a Entry, Cow<'a, str>) -> Cow<'a, str>,
) -> Option<Cow<'a, str>> {
    Some(match &entry.payload {
        Payload::Message { .. } => finish(entry, Cow::Borrowed(entry.message_json()?)),
        Payload::CustomMessage { .. } => finish(entry, Cow::Owned(custom_message(entry))),
        Payload::BranchSummary { has_summary: true } => Cow::Owned(branch_summary_message(entry)),
        _ => return None,
    })
}

/// A compaction's summary message, and the id of the first entry it keeps (`None`: it
/// keeps none, as a remote compaction whose provider history replaces them).
pub(crate) fn compaction_parts(comp: &Entry) -> (String, Option<&str>) {
    let (summary, remote) = compaction_message(comp);
    let first_kept = match &comp.payload {
        Payload::Compaction {
            first_kept_entry_id,
        } if !remote => first_kept_entry_id.as_deref(),
        _ => None,
    };
    (summary, first_kept)
}

fn set_model(models: &mut Vec<(String, String)>, role: &str, model: String) {
    match models.iter_mut().find(|(r, _)| r == role) {
        Some(slot) => slot.1 = model,
        None => models.push((role.to_string(), model)),
    }
}
