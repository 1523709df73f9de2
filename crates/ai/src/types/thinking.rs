//! Thinking (reasoning) levels and token budgets.

use serde::{Deserialize, Serialize};

/// How hard a reasoning model should think; `off` disables reasoning.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    /// pi 1.5's level above `xhigh`; offered only by models that map it.
    Max,
}

impl ThinkingLevel {
    /// Every level, from `off` to `max`.
    pub const ALL: [ThinkingLevel; 7] = [
        Self::Off,
        Self::Minimal,
        Self::Low,
        Self::Medium,
        Self::High,
        Self::Xhigh,
        Self::Max,
    ];

    /// The level's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    /// Parses a wire name (`off`, `minimal`, … `xhigh`, `max`).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == text)
    }

    /// `xhigh` and `max` become `high`, for providers without higher settings.
    pub fn clamp_to_high(self) -> Self {
        if matches!(self, Self::Xhigh | Self::Max) {
            Self::High
        } else {
            self
        }
    }
}

impl std::fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Token budgets per level for budget-based providers (Anthropic's older models).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingBudgets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub medium: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<u64>,
}

impl ThinkingBudgets {
    /// The budget for a level: the custom value, else 1024 / 2048 / 8192 / 16384.
    /// `xhigh` uses the `high` budget; `off` has none.
    pub fn budget_for(&self, level: ThinkingLevel) -> u64 {
        match level.clamp_to_high() {
            ThinkingLevel::Off => 0,
            ThinkingLevel::Minimal => self.minimal.unwrap_or(1024),
            ThinkingLevel::Low => self.low.unwrap_or(2048),
            ThinkingLevel::Medium => self.medium.unwrap_or(8192),
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => {
                self.high.unwrap_or(16384)
            }
        }
    }
}
