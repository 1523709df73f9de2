//! Cost per message: usage × the model's $/M-token prices.

use crate::types::{Model, Usage, UsageCost};

/// Fills `usage.cost` from the model's prices (same arithmetic as the TypeScript pi, so the
/// floating-point results match) and returns it.
pub fn calculate_cost(model: &Model, usage: &mut Usage) -> UsageCost {
    let per_token = |price: f64, tokens: u64| (price / 1_000_000.0) * tokens as f64;
    let cost = &mut usage.cost;
    cost.input = per_token(model.cost.input, usage.input);
    cost.output = per_token(model.cost.output, usage.output);
    cost.cache_read = per_token(model.cost.cache_read, usage.cache_read);
    cost.cache_write = per_token(model.cost.cache_write, usage.cache_write);
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
    *cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ModelCost;

    #[test]
    fn cost_is_usage_times_price_per_million() {
        let mut model = crate::models::get_model("anthropic", "claude-3-5-haiku-20241022").unwrap();
        model.cost = ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        };
        let mut usage = Usage::from_tokens(1_000_000, 2_000, 500_000, 100_000);
        let cost = calculate_cost(&model, &mut usage);
        assert_eq!(cost.input, 3.0);
        assert!((cost.output - 0.03).abs() < 1e-15);
        assert_eq!(cost.cache_read, 0.15);
        assert_eq!(cost.cache_write, 0.375);
        assert!((cost.total - 3.555).abs() < 1e-12);
        assert_eq!(usage.cost, cost);
    }
}
