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
    /// Whether `total` is what the provider billed (`true`) or a catalog estimate (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
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
    /// The part of `cacheWrite` written with one-hour retention (Anthropic), priced higher.
    #[serde(
        rename = "cacheWrite1h",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_write_1h: Option<u64>,
    /// Reasoning (thinking) tokens, part of `output`, when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    pub total_tokens: u64,
    pub cost: UsageCost,
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
            cache_write_1h: None,
            reasoning: None,
            cost: UsageCost::default(),
        }
    }

    /// The sum of two calls' usage, as pi-ai 1.6's `combineUsage`: the optional counts are
    /// there when either has them, and the total is provider-billed only when both are.
    pub fn combine(&self, other: &Usage) -> Usage {
        let either = |a: Option<u64>, b: Option<u64>| {
            (a.is_some() || b.is_some()).then(|| a.unwrap_or(0).saturating_add(b.unwrap_or(0)))
        };
        Usage {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            cache_write: self.cache_write.saturating_add(other.cache_write),
            cache_write_1h: either(self.cache_write_1h, other.cache_write_1h),
            reasoning: either(self.reasoning, other.reasoning),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
            cost: UsageCost {
                input: self.cost.input + other.cost.input,
                output: self.cost.output + other.cost.output,
                cache_read: self.cost.cache_read + other.cost.cache_read,
                cache_write: self.cost.cache_write + other.cost.cache_write,
                total: self.cost.total + other.cost.total,
                total_from_provider: Some(
                    self.cost.total_from_provider == Some(true)
                        && other.cost.total_from_provider == Some(true),
                ),
            },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_usage_sums_and_is_billed_only_when_both_are() {
        let mut a = Usage::from_tokens(1, 2, 3, 4);
        a.reasoning = Some(1);
        a.cost.total = 0.5;
        a.cost.total_from_provider = Some(true);
        let mut b = Usage::from_tokens(10, 20, 30, 40);
        b.cost.total = 1.0;
        b.cost.total_from_provider = Some(false);
        let both = a.combine(&b);
        assert_eq!((both.input, both.output, both.total_tokens), (11, 22, 110));
        assert_eq!(both.reasoning, Some(1));
        assert_eq!(both.cache_write_1h, None);
        assert_eq!(both.cost.total, 1.5);
        assert_eq!(both.cost.total_from_provider, Some(false));
        b.cost.total_from_provider = Some(true);
        assert_eq!(a.combine(&b).cost.total_from_provider, Some(true));
    }
}
