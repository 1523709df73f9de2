//! OpenRouter's billed cost: its usage objects carry the dollars it charged, which pi-ai 1.6
//! prefers over the catalog estimate (`cost.totalFromProvider`).

use serde::Deserialize;
use serde_json::Value;

use crate::types::{Model, Usage};

/// The cost fields OpenRouter adds to a usage object.
#[derive(Debug, Default, Deserialize)]
pub struct ReportedCost {
    #[serde(default)]
    cost: Option<Value>,
    #[serde(default)]
    is_byok: Option<bool>,
    #[serde(default)]
    cost_details: Option<CostDetails>,
}

#[derive(Debug, Default, Deserialize)]
struct CostDetails {
    /// `null` (present) means "sum the prompt and completion parts"; absent means unknown.
    #[serde(default, deserialize_with = "present")]
    upstream_inference_cost: Option<Value>,
    #[serde(default)]
    upstream_inference_prompt_cost: Option<Value>,
    #[serde(default)]
    upstream_inference_completions_cost: Option<Value>,
}

/// Keeps a present `null` as `Some(Value::Null)`, so it differs from an absent field.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Whether requests to `model` go through OpenRouter.
pub fn is_openrouter(model: &Model) -> bool {
    model.provider == "openrouter" || model.base_url.contains("openrouter.ai")
}

fn valid(value: Option<&Value>) -> Option<f64> {
    value
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// Replaces the estimated total with what OpenRouter billed: its `cost` for its own keys,
/// plus the upstream cost when the user brought their own key.
pub fn apply(usage: &mut Usage, reported: &ReportedCost) {
    let Some(cost) = valid(reported.cost.as_ref()) else {
        return;
    };
    match reported.is_byok {
        Some(false) => {
            usage.cost.total = cost;
            usage.cost.total_from_provider = Some(true);
        }
        Some(true) => {
            let Some(details) = &reported.cost_details else {
                return;
            };
            let upstream = match &details.upstream_inference_cost {
                Some(Value::Null) => {
                    let prompt = valid(details.upstream_inference_prompt_cost.as_ref());
                    let completion = valid(details.upstream_inference_completions_cost.as_ref());
                    match (prompt, completion) {
                        (Some(p), Some(c)) => Some(p + c),
                        _ => None,
                    }
                }
                other => valid(other.as_ref()),
            };
            if let Some(upstream) = upstream {
                usage.cost.total = cost + upstream;
                usage.cost.total_from_provider = Some(true);
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(json: &str) -> ReportedCost {
        serde_json::from_str(json).unwrap_or_default()
    }

    #[test]
    fn billed_cost_replaces_the_estimate_as_pi_ai_16() {
        let mut usage = Usage::default();
        usage.cost.total = 9.0;
        apply(&mut usage, &reported(r#"{"cost":0.5,"is_byok":false}"#));
        assert_eq!(usage.cost.total, 0.5);
        assert_eq!(usage.cost.total_from_provider, Some(true));

        let mut byok = Usage::default();
        apply(
            &mut byok,
            &reported(
                r#"{"cost":0.1,"is_byok":true,"cost_details":{"upstream_inference_cost":null,
                "upstream_inference_prompt_cost":0.2,"upstream_inference_completions_cost":0.3}}"#,
            ),
        );
        assert!((byok.cost.total - 0.6).abs() < 1e-9);
        assert_eq!(byok.cost.total_from_provider, Some(true));

        // Unknown upstream cost, a negative cost or no byok flag: the estimate stays.
        for json in [
            r#"{"cost":0.1,"is_byok":true,"cost_details":{}}"#,
            r#"{"cost":-1,"is_byok":false}"#,
            r#"{"cost":0.1}"#,
        ] {
            let mut kept = Usage::default();
            kept.cost.total = 9.0;
            apply(&mut kept, &reported(json));
            assert_eq!(kept.cost.total, 9.0, "{json}");
            assert_eq!(kept.cost.total_from_provider, None, "{json}");
        }
    }
}
