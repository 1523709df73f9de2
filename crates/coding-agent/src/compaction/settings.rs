//! The `compaction` and `branchSummary` blocks of `settings.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// When to compact and how much recent context to keep verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionSettings {
    /// Compact automatically when the context nears the window (default `true`).
    pub enabled: bool,
    /// Tokens kept free for the prompt and the reply (default 16384).
    pub reserve_tokens: u64,
    /// Tokens of the newest messages kept as they are (default 20000).
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
        }
    }
}

/// The `compaction` block as written: every value optional, plus per-model token budgets
/// (`modelOverrides`, keyed by exact `provider/modelId`, pi 1.6).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_recent_tokens: Option<u64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub model_overrides: BTreeMap<String, TokenBudgets>,
}

/// One model's compaction budgets; what it leaves out comes from the ordinary settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TokenBudgets {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_recent_tokens: Option<u64>,
}

impl CompactionConfig {
    /// The settings for the model `provider/model_id` (`None`: no model): each value from
    /// the model's override, else the ordinary setting, else the default.
    pub fn resolve(&self, model_key: Option<&str>) -> CompactionSettings {
        let defaults = CompactionSettings::default();
        let model = model_key
            .and_then(|key| self.model_overrides.get(key))
            .copied()
            .unwrap_or_default();
        CompactionSettings {
            enabled: self.enabled.unwrap_or(defaults.enabled),
            reserve_tokens: model
                .reserve_tokens
                .or(self.reserve_tokens)
                .unwrap_or(defaults.reserve_tokens),
            keep_recent_tokens: model
                .keep_recent_tokens
                .or(self.keep_recent_tokens)
                .unwrap_or(defaults.keep_recent_tokens),
        }
    }
}

/// How branch summaries are made when leaving a branch of the session tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BranchSummarySettings {
    /// Tokens kept free for the prompt and the reply (default 16384).
    pub reserve_tokens: u64,
    /// Skip the "summarize the branch?" question and make no summary (default `false`).
    pub skip_prompt: bool,
}

impl Default for BranchSummarySettings {
    fn default() -> Self {
        Self {
            reserve_tokens: 16384,
            skip_prompt: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_override_wins_value_by_value() {
        let config: CompactionConfig = serde_json::from_str(
            r#"{"reserveTokens": 1000, "keepRecentTokens": 500,
                "modelOverrides": {"p/m": {"keepRecentTokens": 7}}}"#,
        )
        .unwrap();
        let model = config.resolve(Some("p/m"));
        assert_eq!((model.reserve_tokens, model.keep_recent_tokens), (1000, 7));
        let other = config.resolve(Some("p/other"));
        assert_eq!(
            (other.reserve_tokens, other.keep_recent_tokens),
            (1000, 500)
        );
        assert_eq!(
            CompactionConfig::default().resolve(None),
            CompactionSettings::default()
        );
    }

    #[test]
    fn defaults_fill_missing_fields() {
        let s: CompactionSettings = serde_json::from_str(r#"{"reserveTokens": 1000}"#).unwrap();
        assert_eq!(
            s,
            CompactionSettings {
                enabled: true,
                reserve_tokens: 1000,
                keep_recent_tokens: 20000
            }
        );
        let b: BranchSummarySettings = serde_json::from_str(r#"{"skipPrompt": true}"#).unwrap();
        assert_eq!(b.reserve_tokens, 16384);
        assert!(b.skip_prompt);
        assert_eq!(
            serde_json::to_value(CompactionSettings::default()).unwrap(),
            serde_json::json!({"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000})
        );
    }
}
