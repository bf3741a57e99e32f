//! Stale replay data of OpenAI's Responses API, dropped from what a loaded session hands to
//! the model, as the agent's load path does: an assistant message whose `providerPayload`
//! is `openaiResponsesHistory` belongs to a provider connection that is gone, and replaying
//! it (or the thinking signatures that point into it) on a new connection is rejected.
//! Only messages read from a file are affected: the file itself is never changed, but a
//! copy made from it (`forkFrom`, `fork`, `createBranchedSession`) is written without
//! them, as the agent writes its in-memory entries, cleaned at load.

use crate::entry::{Entry, Text};
use serde_json::Value;

const MARK: &str = "openaiResponsesHistory";

/// The assistant message's JSON without its stale replay data, or `None` when there is
/// nothing to drop (not such a message).
pub(crate) fn without_stale_replay(message_json: &str) -> Option<String> {
    if !message_json.contains(MARK) {
        return None;
    }
    let mut message: Value = serde_json::from_str(message_json).ok()?;
    let obj = message.as_object_mut()?;
    if obj.get("role").and_then(Value::as_str) != Some("assistant")
        || obj
            .get("providerPayload")
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            != Some(MARK)
    {
        return None;
    }
    obj.shift_remove("providerPayload");
    if let Some(Value::Array(blocks)) = obj.get_mut("content") {
        for block in blocks.iter_mut().filter_map(Value::as_object_mut) {
            if block.get("type").and_then(Value::as_str) == Some("thinking") {
                block.shift_remove("thinkingSignature");
            }
        }
    }
    Some(crate::json::to_text(&message))
}

/// A copy of `entry` without its message's stale replay data, or `None` when there is
/// nothing to drop.
pub(crate) fn entry_without_stale_replay(entry: &Entry) -> Option<Entry> {
    if !entry.is_assistant_message() {
        return None;
    }
    let message = without_stale_replay(entry.message_json()?)?;
    let mut value = entry.to_value();
    value
        .as_object_mut()?
        .insert("message".into(), serde_json::from_str(&message).ok()?);
    Entry::parse(Text::from(crate::json::to_text(&value))).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_assistant_messages_with_a_responses_history_payload_change() {
        let stale = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"r","thinkingSignature":"{\"x\":1}"},{"type":"text","text":"done","textSignature":"t"}],"providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[]},"timestamp":2}"#;
        assert_eq!(
            without_stale_replay(stale).as_deref(),
            Some(
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"r"},{"type":"text","text":"done","textSignature":"t"}],"timestamp":2}"#
            )
        );
        let user = stale.replace(r#""role":"assistant""#, r#""role":"user""#);
        assert_eq!(without_stale_replay(&user), None);
        let other = stale.replace("openaiResponsesHistory\"", "somethingElse\"");
        assert_eq!(without_stale_replay(&other), None);
        assert_eq!(
            without_stale_replay(r#"{"role":"assistant","content":"openaiResponsesHistory"}"#),
            None
        );
    }
}
