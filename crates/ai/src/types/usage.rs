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
}

impl Usage {
    /// Usage from token counts, with `totalTokens` summed and no cost yet.
    pub fn from_tokens(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Self {
        Self {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: input + output + cache_read + cache_write,
            cost: UsageCost::default(),
        }
    }

    /// Recomputes `totalTokens` from the four token classes.
    pub fn recompute_total(&mut self) {
        self.total_tokens = self.input + self.output + self.cache_read + self.cache_write;
    }
}
