//! What a session spent, by model (pi 1.6.0's `getUsageCostBreakdown`): assistant replies
//! under `provider/model` (the model that answered, which for a virtual model is the
//! physical one), `usage` entries under theirs, and the usage of summaries under
//! "Tools/summaries".
//!
//! pi 1.6.0 also counts tool results that carry a `usage`; this build's tool results
//! carry none.

use serde_json::Value;

use super::entry::{EntryKind, SessionEntry};

/// The key of what tools and summaries spent.
pub const TOOLS_AND_SUMMARIES: &str = "Tools/summaries";

/// One row of the breakdown.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageCost {
    /// `provider/model`, or [`TOOLS_AND_SUMMARIES`].
    pub key: String,
    pub cost: f64,
    /// Input, output, cache-read and cache-write tokens.
    pub tokens: u64,
}

fn count(usage: &Value, key: &str) -> u64 {
    usage.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Tokens and cost of a usage kept as JSON.
fn json_totals(usage: &Value) -> (u64, f64) {
    let tokens = ["input", "output", "cacheRead", "cacheWrite"]
        .iter()
        .map(|k| count(usage, k))
        .sum();
    (tokens, usage["cost"]["total"].as_f64().unwrap_or(0.0))
}

/// The breakdown of `entries` (all of the session's, in file order): rows that spent
/// something, the most expensive first (ties keep their first appearance's order).
pub fn usage_cost_breakdown(entries: &[SessionEntry]) -> Vec<UsageCost> {
    let mut rows: Vec<UsageCost> = Vec::new();
    for entry in entries {
        let (key, (tokens, cost)) = match &entry.kind {
            EntryKind::Message { message } => {
                let Some(reply) = message.as_assistant() else {
                    continue;
                };
                let u = &reply.usage;
                let model = reply.response_model.as_deref().unwrap_or(&reply.model);
                (
                    format!("{}/{model}", reply.provider),
                    (
                        u.input + u.output + u.cache_read + u.cache_write,
                        u.cost.total,
                    ),
                )
            }
            EntryKind::Usage {
                provider,
                model,
                usage,
                ..
            } => (
                format!(
                    "{}/{}",
                    provider.as_deref().unwrap_or("undefined"),
                    model.as_deref().unwrap_or("undefined")
                ),
                json_totals(usage),
            ),
            EntryKind::BranchSummary {
                usage: Some(usage), ..
            }
            | EntryKind::Compaction {
                usage: Some(usage), ..
            } => (TOOLS_AND_SUMMARIES.to_owned(), json_totals(usage)),
            _ => continue,
        };
        match rows.iter_mut().find(|row| row.key == key) {
            Some(row) => {
                row.tokens += tokens;
                row.cost += cost;
            }
            None => rows.push(UsageCost { key, cost, tokens }),
        }
    }
    rows.retain(|row| row.cost > 0.0 || row.tokens > 0);
    // Stable, as JavaScript's sort.
    rows.sort_by(|a, b| b.cost.total_cmp(&a.cost));
    rows
}

#[cfg(test)]
#[path = "usage_breakdown_tests.rs"]
mod tests;
