//! Cost per message: usage × the model's $/M-token prices.

use crate::types::{Model, Usage, UsageCost};

/// Fills `usage.cost` from the model's prices (same arithmetic as the TypeScript pi, so the
/// floating-point results match) and returns it.
///
/// As in pi 1.6, a price tier applies to the whole request when its input (input, cache
/// read and cache write tokens) is above the tier's threshold; of several, the highest
/// threshold wins.
pub fn calculate_cost(model: &Model, usage: &mut Usage) -> UsageCost {
    let input_tokens = usage
        .input
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write) as f64;
    let base = &model.cost;
    let mut rates = (base.input, base.output, base.cache_read, base.cache_write);
    let mut threshold = -1.0;
    for tier in base.tiers.iter().flatten() {
        if input_tokens > tier.input_tokens_above && tier.input_tokens_above > threshold {
            rates = (tier.input, tier.output, tier.cache_read, tier.cache_write);
            threshold = tier.input_tokens_above;
        }
    }
    let per_token = |price: f64, tokens: u64| (price / 1_000_000.0) * tokens as f64;
    // One-hour cache writes cost twice the input rate, the rest the cache-write rate.
    let long_write = usage.cache_write_1h.unwrap_or(0).min(usage.cache_write);
    let short_write = usage.cache_write - long_write;
    let cost = &mut usage.cost;
    cost.input = per_token(rates.0, usage.input);
    cost.output = per_token(rates.1, usage.output);
    cost.cache_read = per_token(rates.2, usage.cache_read);
    cost.cache_write =
        (rates.3 * short_write as f64 + rates.0 * 2.0 * long_write as f64) / 1_000_000.0;
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
    cost.total_from_provider = Some(false);
    *cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ModelCost;

    #[test]
    fn cost_is_usage_times_price_per_million() {
        let mut model = crate::models::get_model("anthropic", "claude-haiku-4-5").unwrap();
        model.cost = ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        };
        let mut usage = Usage::from_tokens(1_000_000, 2_000, 500_000, 100_000);
        let cost = calculate_cost(&model, &mut usage);
        assert_eq!(cost.input, 3.0);
        assert!((cost.output - 0.03).abs() < 1e-15);
        assert_eq!(cost.cache_read, 0.15);
        assert_eq!(cost.cache_write, 0.375);
        assert!((cost.total - 3.555).abs() < 1e-12);
        assert_eq!(usage.cost, cost);
        assert_eq!(cost.total_from_provider, Some(false));
    }

    #[test]
    fn one_hour_cache_writes_cost_twice_the_input_rate() {
        let mut model = crate::models::get_model("anthropic", "claude-haiku-4-5").unwrap();
        model.cost = ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        };
        let mut usage = Usage::from_tokens(0, 0, 0, 300_000);
        usage.cache_write_1h = Some(200_000);
        let cost = calculate_cost(&model, &mut usage);
        assert_eq!(
            cost.cache_write,
            (3.75 * 100_000.0 + 6.0 * 200_000.0) / 1_000_000.0
        );
    }

    #[test]
    fn azure_models_keep_openais_long_context_tier() {
        let azure = crate::models::get_model("azure", "gpt-5.4").unwrap();
        let openai = crate::models::get_model("openai", "gpt-5.4").unwrap();
        assert_eq!(azure.cost.tiers, openai.cost.tiers);
        let mut usage = Usage::from_tokens(300_000, 1_000, 0, 0);
        let cost = calculate_cost(&azure, &mut usage);
        assert_eq!(cost.input, (5.0 / 1_000_000.0) * 300_000.0);
    }

    #[test]
    fn the_highest_tier_below_the_request_input_prices_it_all() {
        let model = crate::models::get_model("openai", "gpt-6.2-sol").unwrap();
        let tiers = model.cost.tiers.clone().unwrap();
        assert_eq!(tiers[0].input_tokens_above, 272_000.0);
        // At the threshold: base prices ($2 in, $10 out).
        let mut usage = Usage::from_tokens(200_000, 1_000_000, 72_000, 0);
        let cost = calculate_cost(&model, &mut usage);
        assert_eq!(cost.input, (2.0 / 1_000_000.0) * 200_000.0);
        assert_eq!(cost.output, 10.0);
        // Above it, counting cached input: the tier's ($4 in, $15 out, $0.2 cache read).
        let mut usage = Usage::from_tokens(200_000, 1_000_000, 72_001, 0);
        let cost = calculate_cost(&model, &mut usage);
        assert_eq!(cost.input, (4.0 / 1_000_000.0) * 200_000.0);
        assert_eq!(cost.output, 15.0);
        assert_eq!(cost.cache_read, (0.2 / 1_000_000.0) * 72_001.0);
    }
}
