//! The economics of keeping a prompt cache warm, as pi-ai 1.6.0 weighs them: a refresh
//! re-sends the last request with a one-token output cap shortly before the cache entry
//! expires, when the expected saving (the chance another request comes in time, times
//! what losing the entry would cost) beats the price of the refresh by at least $0.05.

use std::time::Duration;

use crate::models::calculate_cost;
use crate::types::{CacheRetention, Model, Usage};

/// Warming during a run stops after an hour.
pub const MAX_AGE: Duration = Duration::from_secs(60 * 60);
/// Warming between runs stops after half an hour.
pub const MAX_IDLE_AGE: Duration = Duration::from_secs(30 * 60);
/// The least expected saving that makes a refresh worth it, in dollars.
pub const MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// The chance that a request follows while no run is going.
pub const IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;

/// Whether a run is going (every refresh is expected to pay off) or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Streaming,
    Idle,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Streaming => "streaming",
            Phase::Idle => "idle",
        }
    }
}

/// One weighing of a refresh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub phase: Phase,
    /// What the refresh costs.
    pub warm_cost: f64,
    /// What the next request costs more if the entry is lost.
    pub miss_cost: f64,
    pub continuation_probability: f64,
    pub expected_savings: f64,
    /// The model has prices and the prompt has tokens.
    pub economics_available: bool,
    /// `true`: refresh; `false`: stop.
    pub warm: bool,
}

/// The cache lifetime of `model` for the retention the request asked for; none when the
/// request turned caching off or the model declares no lifetime.
pub fn prompt_cache_ttl(
    model: &Model,
    retention: Option<CacheRetention>,
    env: Option<&std::collections::BTreeMap<String, String>>,
) -> Option<Duration> {
    let cache = model.extras.prompt_cache?;
    let seconds = match CacheRetention::resolve(retention, env) {
        CacheRetention::None => return None,
        CacheRetention::Short => cache.short?,
        CacheRetention::Long => cache.long?,
    };
    Some(Duration::from_secs(seconds))
}

/// When to refresh after a request: at 90% of the lifetime, and at least ten seconds
/// before it ends; none for lifetimes of ten seconds or less.
pub fn delay(ttl: Duration) -> Option<Duration> {
    let ttl_ms = ttl.as_millis() as u64;
    if ttl_ms <= 10_000 {
        return None;
    }
    let at = (ttl_ms as f64 * 0.9).min((ttl_ms - 10_000) as f64).floor() as u64;
    Some(Duration::from_millis(at.max(1)))
}

/// Whether the request can be sent again as it was: Anthropic requests with reasoning can
/// only when the model thinks adaptively (their budget would not fit one output token).
pub fn replayable(model: &Model, reasoning: bool) -> bool {
    !reasoning
        || model.api != "anthropic-messages"
        || model
            .compat
            .as_ref()
            .and_then(|c| c.force_adaptive_thinking)
            == Some(true)
}

fn price(model: &Model, mut usage: Usage) -> f64 {
    calculate_cost(model, &mut usage).total
}

/// Weighs a refresh of a prompt of `prompt_tokens` tokens.
pub fn evaluate(model: &Model, prompt_tokens: u64, phase: Phase) -> Decision {
    let hit = price(model, Usage::from_tokens(0, 0, prompt_tokens, 0));
    let miss = if model.cost.cache_write > 0.0 {
        price(model, Usage::from_tokens(0, 0, 0, prompt_tokens))
    } else {
        price(model, Usage::from_tokens(prompt_tokens, 0, 0, 0))
    };
    let warm_cost = price(model, Usage::from_tokens(0, 1, prompt_tokens, 0));
    let miss_cost = (miss - hit).max(0.0);
    let continuation_probability = match phase {
        Phase::Idle => IDLE_CONTINUATION_PROBABILITY,
        Phase::Streaming => 1.0,
    };
    let expected_savings = continuation_probability * miss_cost - warm_cost;
    Decision {
        phase,
        warm_cost,
        miss_cost,
        continuation_probability,
        expected_savings,
        economics_available: prompt_tokens > 0 && (hit > 0.0 || miss > 0.0),
        warm: expected_savings >= MINIMUM_EXPECTED_SAVINGS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ModelCost, PromptCache};

    fn model() -> Model {
        let mut model = crate::models::get_model("anthropic", "claude-haiku-4-5").unwrap();
        model.cost = ModelCost {
            input: 15.0,
            output: 75.0,
            cache_read: 1.5,
            cache_write: 18.75,
            tiers: None,
        };
        model.extras.prompt_cache = Some(PromptCache {
            short: Some(300),
            long: Some(3600),
        });
        model
    }

    #[test]
    fn refresh_times_follow_the_lifetime() {
        assert_eq!(
            delay(Duration::from_secs(300)),
            Some(Duration::from_secs(270))
        );
        assert_eq!(delay(Duration::from_secs(11)), Some(Duration::from_secs(1)));
        assert_eq!(delay(Duration::from_secs(10)), None);
        let m = model();
        assert_eq!(
            prompt_cache_ttl(&m, Some(CacheRetention::Long), None),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(prompt_cache_ttl(&m, Some(CacheRetention::None), None), None);
    }

    #[test]
    fn a_large_prompt_is_worth_warming_while_idle_a_small_one_is_not() {
        let m = model();
        let big = evaluate(&m, 100_000, Phase::Idle);
        assert!(big.warm && big.economics_available, "{big:?}");
        assert!((big.miss_cost - 1.725).abs() < 1e-9, "{big:?}");
        let small = evaluate(&m, 1_000, Phase::Idle);
        assert!(!small.warm, "{small:?}");
        assert!(evaluate(&m, 1_000, Phase::Streaming).continuation_probability == 1.0);
        assert!(!evaluate(&m, 0, Phase::Idle).economics_available);
    }
}
