//! Token usage and its cost in dollars.

use serde::{Deserialize, Serialize};

/// Dollar cost of one message, per token class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageCost {
    #[serde(serialize_with = "crate::js_number::serialize")]
    pub input: f64,
    #[serde(serialize_with = "crate::js_number::serialize")]
    pub output: f64,
    #[serde(serialize_with = "crate::js_number::serialize")]
    pub cache_read: f64,
    #[serde(serialize_with = "crate::js_number::serialize")]
    pub cache_write: f64,
    #[serde(serialize_with = "crate::js_number::serialize")]
    pub total: f64,
}

/// Tokens of one LLM call, normalized across providers.
///
/// `input` excludes cached tokens: `cacheRead` counts hits from earlier requests and
/// `cacheWrite` the tokens written to the cache by this one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total_tokens: u64,
    pub cost: UsageCost,
    /// Of `cacheWrite`, the tokens written with a one-hour lifetime (Anthropic), priced
    /// at twice the input rate (pi 1.6); absent when the provider does not say.
    #[serde(
        default,
        rename = "cacheWrite1h",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_write_1h: Option<u64>,
}

impl Usage {
    /// Usage from token counts, with `totalTokens` summed (saturating) and no cost yet.
    pub fn from_tokens(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Self {
        Self {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: input
                .saturating_add(output)
                .saturating_add(cache_read)
                .saturating_add(cache_write),
            cost: UsageCost::default(),
            cache_write_1h: None,
        }
    }

    /// Recomputes `totalTokens` from the four token classes (counts come from the provider:
    /// a sum past `u64::MAX` stays there instead of wrapping).
    pub fn recompute_total(&mut self) {
        self.total_tokens = self
            .input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write);
    }
}
