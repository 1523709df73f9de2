//! Prompt-cache misses found in a session's entries (pi 1.6.0's `computeCacheWaste`): a
//! request whose prompt repeats most of the previous one but read much less of it from the
//! cache paid again for what the cache should have held.
//!
//! The scan follows the entries in file order. A compaction or branch summary forgets the
//! previous request; a cache-warming `usage` entry stands for a request that reported
//! caching; each assistant reply is compared with the request before it.

use pi_ai::{AssistantMessage, Usage};
use serde_json::Value;

use super::entry::{EntryKind, SessionEntry};
use super::time::parse_iso_millis;

/// Misses of fewer tokens than this are not counted.
const MIN_MISSED_TOKENS: u64 = 1024;

/// The request a reply is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviousRequest {
    pub prompt_tokens: u64,
    /// `provider/model`.
    pub model_key: String,
    /// Milliseconds since the epoch (none when a `usage` entry's time cannot be read).
    pub timestamp: Option<i64>,
    /// Some request so far reported cache reads or writes.
    pub reported_cache: bool,
}

/// One reply that paid again for a cached prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheMiss {
    pub missed_tokens: u64,
    /// What the missed tokens cost over reading them from the cache.
    pub missed_cost: f64,
    pub idle_ms: i64,
    /// The reply came from another model than the request before it.
    pub model_changed: bool,
}

/// The misses of a session, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CacheWaste {
    pub missed_tokens: u64,
    pub missed_cost: f64,
    pub miss_count: u64,
}

/// What a scan found: the last request, the sums, and each miss with its entry's id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CacheScan {
    pub prev: Option<PreviousRequest>,
    pub totals: CacheWaste,
    pub misses: Vec<(String, CacheMiss)>,
}

fn prompt_tokens(usage: &Usage) -> u64 {
    usage.input + usage.cache_read + usage.cache_write
}

/// Whether `message` missed the cache the request `prev` filled. `cache_read_price`
/// gives a model's cache-read price per million tokens (for replies that read nothing).
fn detect_miss(
    prev: Option<&PreviousRequest>,
    message: &AssistantMessage,
    cache_read_price: &dyn Fn(&str, &str) -> Option<f64>,
) -> Option<CacheMiss> {
    let usage = &message.usage;
    let prompt = prompt_tokens(usage);
    let prev = prev?;
    if prompt == 0 || (usage.cache_read + usage.cache_write == 0 && !prev.reported_cache) {
        return None;
    }
    let missed = prev.prompt_tokens.min(prompt) as i64 - usage.cache_read as i64;
    if missed <= MIN_MISSED_TOKENS as i64 {
        return None;
    }
    let missed = missed as u64;
    let paid_tokens = usage.input + usage.cache_write;
    let paid_per_token = if paid_tokens > 0 {
        (usage.cost.input + usage.cost.cache_write) / paid_tokens as f64
    } else {
        0.0
    };
    let read_per_token = if usage.cache_read > 0 {
        usage.cost.cache_read / usage.cache_read as f64
    } else {
        cache_read_price(&message.provider, &message.model).unwrap_or(0.0) / 1e6
    };
    Some(CacheMiss {
        missed_tokens: missed,
        missed_cost: missed as f64 * (paid_per_token - read_per_token).max(0.0),
        idle_ms: prev
            .timestamp
            .map_or(0, |at| (message.timestamp - at).max(0)),
        model_changed: format!("{}/{}", message.provider, message.model) != prev.model_key,
    })
}

fn as_previous_request(
    message: &AssistantMessage,
    reported_cache: bool,
) -> Option<PreviousRequest> {
    let usage = &message.usage;
    let prompt = prompt_tokens(usage);
    (prompt > 0).then(|| PreviousRequest {
        prompt_tokens: prompt,
        model_key: format!("{}/{}", message.provider, message.model),
        timestamp: Some(message.timestamp),
        reported_cache: reported_cache || usage.cache_read + usage.cache_write > 0,
    })
}

/// A token count of a usage kept as JSON.
fn count(usage: &Value, key: &str) -> u64 {
    usage.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Scans `entries` (in file order) for cache misses.
pub fn scan(
    entries: &[SessionEntry],
    cache_read_price: &dyn Fn(&str, &str) -> Option<f64>,
) -> CacheScan {
    let mut out = CacheScan::default();
    for entry in entries {
        match &entry.kind {
            EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. } => out.prev = None,
            EntryKind::Usage {
                kind,
                provider,
                model,
                usage,
                ..
            } if kind == "cache_warm" => {
                let prompt =
                    count(usage, "input") + count(usage, "cacheRead") + count(usage, "cacheWrite");
                if prompt > 0 {
                    out.prev = Some(PreviousRequest {
                        prompt_tokens: prompt,
                        model_key: format!(
                            "{}/{}",
                            provider.as_deref().unwrap_or("undefined"),
                            model.as_deref().unwrap_or("undefined")
                        ),
                        timestamp: parse_iso_millis(&entry.timestamp),
                        reported_cache: true,
                    });
                }
            }
            EntryKind::Message { message } => {
                let Some(reply) = message.as_assistant() else {
                    continue;
                };
                if let Some(miss) = detect_miss(out.prev.as_ref(), reply, cache_read_price) {
                    out.totals.missed_tokens += miss.missed_tokens;
                    out.totals.missed_cost += miss.missed_cost;
                    out.totals.miss_count += 1;
                    out.misses.push((entry.id.clone(), miss));
                }
                let reported = out.prev.as_ref().is_some_and(|p| p.reported_cache);
                if let Some(prev) = as_previous_request(reply, reported) {
                    out.prev = Some(prev);
                }
            }
            _ => {}
        }
    }
    out
}

/// The cache misses of `entries`, summed.
pub fn compute_cache_waste(
    entries: &[SessionEntry],
    cache_read_price: &dyn Fn(&str, &str) -> Option<f64>,
) -> CacheWaste {
    scan(entries, cache_read_price).totals
}

#[cfg(test)]
#[path = "cache_waste_tests.rs"]
mod tests;
