//! Answers from the labels' next-token log-probabilities (pi 1.6.0's llama-cpp-classify):
//! a softmax at the call's temperature, the expected level of a score, the most likely
//! choice, and how far the peak stands above an even spread.

use serde_json::{Value, json};

use super::context::Question;

/// The labels' probabilities: `softmax(logprob / temperature)` over the labels only.
pub fn label_probabilities(logprobs: &[f64], temperature: f64) -> Vec<f64> {
    let scaled: Vec<f64> = logprobs.iter().map(|l| l / temperature).collect();
    let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = scaled.iter().map(|v| (v - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    weights.iter().map(|w| w / total).collect()
}

/// 0 for an even spread over the labels, 1 when one label has it all.
pub fn peak_confidence(probabilities: &[f64]) -> f64 {
    let n = probabilities.len() as f64;
    let peak = probabilities
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    ((n * peak - 1.0) / (n - 1.0)).clamp(0.0, 1.0)
}

/// The answer to `question` given each key's probability (`keys` in label order).
pub fn answer(question: &Question, keys: &[String], probabilities: &[f64]) -> Value {
    match question {
        Question::Bool { .. } => {
            let yes = keys.iter().position(|k| k == "true").unwrap_or(0);
            json!({"type": "bool", "probability": probabilities[yes]})
        }
        Question::Score { .. } => {
            let score: f64 = probabilities
                .iter()
                .enumerate()
                .map(|(index, p)| index as f64 * p)
                .sum();
            json!({"type": "score", "score": score, "confidence": peak_confidence(probabilities)})
        }
        Question::Choice { .. } => {
            let mut best = 0;
            for index in 1..probabilities.len() {
                if probabilities[index] > probabilities[best] {
                    best = index;
                }
            }
            let by_key: serde_json::Map<String, Value> = keys
                .iter()
                .zip(probabilities)
                .map(|(key, p)| (key.clone(), json!(p)))
                .collect();
            json!({
                "type": "choice",
                "choice": keys[best],
                "probabilities": by_key,
                "confidence": peak_confidence(probabilities),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_and_confidence() {
        let p = label_probabilities(&[0.0, (0.25f64).ln() - (0.75f64).ln()], 1.0);
        assert!((p[0] - 0.75).abs() < 1e-12 && (p[1] - 0.25).abs() < 1e-12);
        assert!((peak_confidence(&p) - 0.5).abs() < 1e-12);
        assert_eq!(peak_confidence(&[0.5, 0.5]), 0.0);
        let sharper = label_probabilities(&[-1.0, -2.0], 0.5);
        assert!(sharper[0] > label_probabilities(&[-1.0, -2.0], 1.0)[0]);
    }
}
