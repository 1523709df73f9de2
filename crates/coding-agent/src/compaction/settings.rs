//! The `compaction` and `branchSummary` blocks of `settings.json`.

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
