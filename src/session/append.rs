//! Recording changes: the `append_*` methods, each adding one entry at the leaf, and the
//! session name kept in the header.

use super::{Persistence, Session};
use crate::entry::{compose_line, Entry, EntryType, Text};
use crate::error::{Result, SessionError};
use crate::ids::entry_id;
use crate::json::{push_quoted, quote, to_text};
use crate::time::iso_from_ms;
use serde_json::Value;

/// `append`: the id of the entry written.
#[derive(serde::Serialize)]
pub struct AppendedRecord<'a> {
    pub id: &'a str,
}

/// The fields of a compaction entry (`appendCompaction`).
#[derive(Debug, Clone, Default)]
pub struct CompactionInput {
    pub summary: String,
    pub short_summary: Option<String>,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// JSON text.
    pub details: Option<String>,
    pub from_extension: Option<bool>,
    /// JSON text.
    pub preserve_data: Option<String>,
}

/// A session name as the agent keeps it: every control character (C0, DEL, C1) a space,
/// runs of spaces one space, trimmed as JavaScript's `trim` does.
fn sanitize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if !(c == ' ' && out.ends_with(' ')) {
            out.push(c);
        }
    }
    out.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .to_string()
}

/// A title set by the user stays until the user renames the session: an automatic one
/// never replaces it.
fn may_rename(current_source: Option<&str>, source: &str) -> bool {
    !(current_source == Some("user") && source == "auto")
}

pub(super) fn json_arg(what: &str, text: &str) -> Result<String> {
    serde_json::from_str::<Value>(text)
        .map(|v| to_text(&v))
        .map_err(|e| SessionError::InvalidInput(format!("{what} is not valid JSON: {e}")))
}

/// Add the field `key` with the JSON text `value` (validated, compacted), if there is one.
fn push_json<'k>(
    fields: &mut Vec<(&'k str, String)>,
    key: &'k str,
    value: Option<&str>,
) -> Result<()> {
    if let Some(v) = value {
        fields.push((key, json_arg(key, v)?));
    }
    Ok(())
}

fn list_json(items: &[String]) -> String {
    let mut out = String::from("[");
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_quoted(&mut out, s);
    }
    out.push(']');
    out
}

impl Session {
    /// Append one entry given as (key, JSON text) payload fields; returns its id.
    pub fn append_fields(&mut self, type_name: &str, fields: &[(&str, String)]) -> Result<String> {
        let leaf = self.leaf.clone();
        self.append_child(leaf.as_deref(), type_name, fields)
    }

    /// Append one entry as a child of `parent` (the leaf moves to it). A refused append
    /// (fenced, locked, file changed on disk, invalid) changes nothing: not the entries,
    /// the leaf, the labels or the file.
    pub(super) fn append_child(
        &mut self,
        parent: Option<&str>,
        type_name: &str,
        fields: &[(&str, String)],
    ) -> Result<String> {
        self.check_writable()?;
        self.fenced(|s| s.append_fenced(parent, type_name, fields))
    }

    /// Run `change` on a session that is not fenced: a fenced object (its lock taken
    /// over) takes no change, not even in memory.
    pub(super) fn fenced<T>(&mut self, change: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.fence()?;
        let changed = change(self);
        // The check was for this change's write only, whether or not it got that far.
        self.lock_checked = false;
        changed
    }

    fn append_fenced(
        &mut self,
        parent: Option<&str>,
        type_name: &str,
        fields: &[(&str, String)],
    ) -> Result<String> {
        if type_name == "session" {
            return Err(SessionError::InvalidInput(
                "\"session\" is the header type, not an entry type".into(),
            ));
        }
        self.prepare_new_ids();
        let storage = self.storage.clone();
        let id = entry_id(|id| self.id_taken(id), || storage.env().random_u64());
        let timestamp = iso_from_ms(self.storage.env().now_ms());
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let line = compose_line(type_name, &id, parent, &timestamp, &borrowed);
        let entry = Entry::parse(Text::from(line))
            .map_err(|e| SessionError::InvalidInput(e.to_string()))?;
        if self.pins_whole_session_next() {
            // The first write of a file outside the sessions folder pins every blob the
            // session references: its entries are read for that.
            self.materialize()?;
        }
        let plan = self.plan_append(entry.is_assistant_message())?;
        self.push_entry(entry);
        self.persist_last(plan)?;
        Ok(id)
    }

    /// Replace an entry in memory by an edited copy of it (the agent prunes old tool output
    /// by editing entries in place): the same `id`, `parentId` and `type`, any other
    /// content. Nothing is written until [`Session::rewrite_entries`] (or another write
    /// that rewrites the whole file).
    pub fn replace_entry(&mut self, json: &str) -> Result<()> {
        self.replace_entry_at(None, json)
    }

    /// [`Session::replace_entry`] of the entry at `position` in [`Session::entries`]
    /// (default: the last entry with the edited copy's id): of entries that share an id,
    /// each can be edited.
    pub fn replace_entry_at(&mut self, position: Option<usize>, json: &str) -> Result<()> {
        self.check_writable()?;
        self.materialize()?;
        let entry = Entry::parse(Text::from(json.to_string()))
            .map_err(|e| SessionError::InvalidInput(e.to_string()))?;
        let i = match position {
            None => self.index_of(&entry.id),
            Some(i) => Some(i).filter(|&i| self.entries.get(i).is_some_and(|e| e.id == entry.id)),
        }
        .ok_or_else(|| SessionError::EntryNotFound(entry.id.clone()))?;
        let old = &self.entries[i];
        if old.parent_id != entry.parent_id || old.entry_type != entry.entry_type {
            return Err(SessionError::InvalidInput(format!(
                "entry {}: an edit keeps its parentId and type",
                entry.id
            )));
        }
        self.entries[i] = entry;
        // The same id at the same place: the index is unchanged.
        self.note_entry(i);
        self.edited.insert(i);
        Ok(())
    }

    /// Append an entry given as a JSON object without `id`, `parentId` and `timestamp`
    /// (they are assigned); its other keys keep their order.
    pub fn append_entry_json(&mut self, json: &str) -> Result<String> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| SessionError::InvalidInput(format!("entry is not valid JSON: {e}")))?;
        let Value::Object(obj) = value else {
            return Err(SessionError::InvalidInput(
                "entry must be a JSON object".into(),
            ));
        };
        let Some(Value::String(ty)) = obj.get("type") else {
            return Err(SessionError::InvalidInput(
                "entry needs a string \"type\"".into(),
            ));
        };
        for reserved in ["id", "parentId", "timestamp"] {
            if obj.contains_key(reserved) {
                return Err(SessionError::InvalidInput(format!(
                    "entry must not contain \"{reserved}\": it is assigned on append"
                )));
            }
        }
        match EntryType::parse(ty) {
            EntryType::Message if !obj.get("message").is_some_and(Value::is_object) => {
                return Err(SessionError::InvalidInput(
                    "a message entry needs a \"message\" object".into(),
                ));
            }
            EntryType::Label => {
                self.materialize()?;
                let target = obj
                    .get("targetId")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.entry(target)?;
            }
            _ => {}
        }
        let ty = ty.clone();
        let fields: Vec<(&str, String)> = obj
            .iter()
            .filter(|(k, _)| *k != "type")
            .map(|(k, v)| (k.as_str(), to_text(v)))
            .collect();
        self.append_fields(&ty, &fields)
    }

    /// `appendMessage`: the message object as JSON text.
    pub fn append_message(&mut self, message_json: &str) -> Result<String> {
        let m = json_arg("message", message_json)?;
        if !m.starts_with('{') {
            return Err(SessionError::InvalidInput(
                "message must be a JSON object".into(),
            ));
        }
        self.append_fields("message", &[("message", m)])
    }

    /// `appendThinkingLevelChange`; an absent level is written as `null`.
    pub fn append_thinking_level_change(&mut self, level: Option<&str>) -> Result<String> {
        self.append_fields(
            "thinking_level_change",
            &[(
                "thinkingLevel",
                level.map(quote).unwrap_or_else(|| "null".into()),
            )],
        )
    }

    /// `appendModelChange`: `model` is `provider/id`.
    pub fn append_model_change(&mut self, model: &str, role: Option<&str>) -> Result<String> {
        let mut fields = vec![("model", quote(model))];
        if let Some(r) = role {
            fields.push(("role", quote(r)));
        }
        self.append_fields("model_change", &fields)
    }

    pub fn append_compaction(&mut self, c: &CompactionInput) -> Result<String> {
        let mut fields = vec![("summary", quote(&c.summary))];
        if let Some(s) = &c.short_summary {
            fields.push(("shortSummary", quote(s)));
        }
        fields.push(("firstKeptEntryId", quote(&c.first_kept_entry_id)));
        fields.push(("tokensBefore", c.tokens_before.to_string()));
        push_json(&mut fields, "details", c.details.as_deref())?;
        if let Some(f) = c.from_extension {
            fields.push(("fromExtension", f.to_string()));
        }
        push_json(&mut fields, "preserveData", c.preserve_data.as_deref())?;
        self.append_fields("compaction", &fields)
    }

    /// `appendCustomEntry`: extension state, ignored by context building.
    pub fn append_custom_entry(&mut self, custom_type: &str, data: Option<&str>) -> Result<String> {
        let mut fields = vec![("customType", quote(custom_type))];
        push_json(&mut fields, "data", data)?;
        self.append_fields("custom", &fields)
    }

    /// `appendCustomMessageEntry`: `content` is a string or a block array, as JSON text.
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: &str,
        display: bool,
        details: Option<&str>,
        attribution: Option<&str>,
    ) -> Result<String> {
        let mut fields = vec![
            ("customType", quote(custom_type)),
            ("content", json_arg("content", content)?),
            ("display", display.to_string()),
        ];
        push_json(&mut fields, "details", details)?;
        if let Some(a) = self.flavour.attribution(attribution) {
            fields.push(("attribution", quote(a)));
        }
        self.append_fields("custom_message", &fields)
    }

    /// `appendLabelChange`: `None` clears the label. The target must exist.
    pub fn append_label_change(&mut self, target_id: &str, label: Option<&str>) -> Result<String> {
        self.materialize()?;
        self.entry(target_id)?;
        let mut fields = vec![("targetId", quote(target_id))];
        if let Some(l) = label {
            fields.push(("label", quote(l)));
        }
        self.append_fields("label", &fields)
    }

    pub fn append_ttsr_injection(&mut self, rules: &[String]) -> Result<String> {
        self.append_fields("ttsr_injection", &[("injectedRules", list_json(rules))])
    }

    pub fn append_session_init(
        &mut self,
        system_prompt: &str,
        task: &str,
        tools: &[String],
        output_schema: Option<&str>,
    ) -> Result<String> {
        let mut fields = vec![
            ("systemPrompt", quote(system_prompt)),
            ("task", quote(task)),
            ("tools", list_json(tools)),
        ];
        push_json(&mut fields, "outputSchema", output_schema)?;
        self.append_fields("session_init", &fields)
    }

    pub fn append_mode_change(&mut self, mode: &str, data: Option<&str>) -> Result<String> {
        let mut fields = vec![("mode", quote(mode))];
        push_json(&mut fields, "data", data)?;
        self.append_fields("mode_change", &fields)
    }

    pub fn append_context_change(
        &mut self,
        context_name: &str,
        tenant: &str,
        namespace: &str,
    ) -> Result<String> {
        self.append_fields(
            "context_change",
            &[
                ("contextName", quote(context_name)),
                ("tenant", quote(tenant)),
                ("namespace", quote(namespace)),
            ],
        )
    }

    pub fn append_service_tier_change(&mut self, tier: Option<&str>) -> Result<String> {
        self.append_fields(
            "service_tier_change",
            &[(
                "serviceTier",
                tier.map(quote).unwrap_or_else(|| "null".into()),
            )],
        )
    }

    pub fn append_mcp_tool_selection(&mut self, names: &[String]) -> Result<String> {
        self.append_fields(
            "mcp_tool_selection",
            &[("selectedToolNames", list_json(names))],
        )
    }

    /// `setSessionName`: the name sanitized ([`sanitize_name`]) becomes the title, unless
    /// it is empty or the user's title would give way to an automatic one
    /// ([`may_rename`]); returns whether the name was taken.
    /// A refused rename (fenced, locked, file changed on disk) leaves the header as it was.
    pub fn set_session_name(&mut self, name: &str, source: &str) -> Result<bool> {
        self.check_writable()?;
        if !may_rename(self.header.str_field("titleSource"), source) {
            return Ok(false);
        }
        let clean = sanitize_name(name);
        if clean.is_empty() {
            return Ok(false);
        }
        if self.header.title() == Some(clean.as_str())
            && self.header.str_field("titleSource") == Some(source)
        {
            return Ok(true);
        }
        self.fenced(|s| {
            let write = s.persistence == Persistence::Persistent && s.flushed;
            if write {
                s.guard_write()?;
            }
            s.header.set("title", Value::String(clean));
            s.header
                .set("titleSource", Value::String(source.to_string()));
            if write {
                s.write_whole_guarded()?;
            }
            Ok(true)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_has_control_characters_as_spaces_runs_of_spaces_collapsed_and_is_trimmed() {
        assert_eq!(sanitize_name("a\nb"), "a b");
        assert_eq!(sanitize_name("  padded  name "), "padded name");
        assert_eq!(
            sanitize_name("tab\there\u{1b}[1m\u{85}end\u{7f}"),
            "tab here [1m end"
        );
        assert_eq!(sanitize_name("\u{feff}\u{a0}wide\u{3000}\u{a0}"), "wide");
        assert_eq!(
            sanitize_name("a\u{a0}\u{a0}b"),
            "a\u{a0}\u{a0}b",
            "only spaces collapse"
        );
        assert_eq!(sanitize_name(" \n\t\u{7} "), "");
    }

    #[test]
    fn only_an_automatic_title_over_the_users_is_refused() {
        assert!(!may_rename(Some("user"), "auto"));
        assert!(may_rename(Some("user"), "user"));
        assert!(may_rename(Some("auto"), "auto"));
        assert!(may_rename(Some("auto"), "user"));
        assert!(may_rename(None, "auto"));
    }
}
