//! What a session has cost: `getUsageStatistics` (token, premium-request and cost totals
//! over every entry, on every branch) and `getLastModelChangeRole`.

use super::Session;
use crate::entry::{pick, Payload};
use crate::json::Double;

/// Totals of the `usage` of every assistant message and of every `task` tool result's
/// `details.usage` (subagent runs), as the agent keeps them. A missing number counts 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageStatistics {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub premium_requests: f64,
    pub cost: f64,
}

/// One `usage` object as a message carries it (numbers read as `JSON.parse` reads them).
#[derive(serde::Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Usage {
    input: Double,
    output: Double,
    cache_read: Double,
    cache_write: Double,
    premium_requests: Double,
    cost: Cost,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Cost {
    total: Double,
}

impl UsageStatistics {
    fn add(&mut self, usage_json: &str) {
        let Ok(u) = serde_json::from_str::<Usage>(usage_json) else {
            return;
        };
        // Doubles added message by message in the entries' order, as the agent adds them.
        self.input += u.input.0;
        self.output += u.output.0;
        self.cache_read += u.cache_read.0;
        self.cache_write += u.cache_write.0;
        self.premium_requests += u.premium_requests.0;
        self.cost += u.cost.total.0;
    }
}

impl Session {
    /// `getUsageStatistics`: computed over the entries (one pass; only the `usage` values
    /// are parsed).
    pub fn usage_statistics(&self) -> UsageStatistics {
        self.assert_read();
        let mut total = UsageStatistics::default();
        for e in &self.entries {
            let (
                Payload::Message {
                    role: Some(role), ..
                },
                Some(m),
            ) = (&e.payload, e.message_json())
            else {
                continue;
            };
            match role.as_ref() {
                "assistant" => {
                    if let Ok(f) = pick(m, &["usage"]) {
                        if let Some(u) = f[0] {
                            total.add(u.get());
                        }
                    }
                }
                "toolResult" => {
                    let Ok(f) = pick(m, &["toolName", "details"]) else {
                        continue;
                    };
                    if f[0].map(|t| t.get()) != Some("\"task\"") {
                        continue;
                    }
                    if let Some(usage) = f[1]
                        .and_then(|d| pick(d.get(), &["usage"]).ok())
                        .and_then(|u| u[0])
                    {
                        total.add(usage.get());
                    }
                }
                _ => {}
            }
        }
        total
    }

    /// `getLastModelChangeRole`: the role of the nearest `model_change` on the path from
    /// the leaf to the root (`"default"` when it names none), `None` without one.
    pub fn last_model_change_role(&self) -> Option<&str> {
        let mut current = self.leaf_entry();
        let mut steps = 0;
        while let Some(e) = current {
            if let Payload::ModelChange { role, .. } = &e.payload {
                return Some(role);
            }
            steps += 1;
            if steps > self.entries.len() {
                return None; // a parent cycle
            }
            current = e.parent_id.as_deref().and_then(|p| self.entry(p).ok());
        }
        None
    }
}
