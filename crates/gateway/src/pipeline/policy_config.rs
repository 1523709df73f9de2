//! The tool policy configuration (`<agentDir>/gateway.json`), mirroring OpenClaw's JSON:
//!
//! ```json
//! {"tools": {"profile": "coding", "alsoAllow": [], "allow": [], "deny": [],
//!            "byProvider": {"openai/gpt-4o": {"profile": "minimal", "allow": [], "deny": []}}},
//!  "agents": {"<agentId>": {"tools": {"...": "same as tools"}}},
//!  "groups": {"<groupId>": {"tools": {"allow": [], "deny": []}}}}
//! ```
//!
//! Other top-level keys of the file are ignored, so the gateway may keep more there.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::PipelineError;

/// The whole tool policy: global, per agent and per group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolPolicyConfig {
    /// `tools`: the global policy (steps 1-4).
    pub tools: ToolsPolicy,
    /// `agents.<agentId>`: per-agent policies (steps 5-6, and the agent's profile).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, AgentPolicy>,
    /// `groups.<groupId>`: per-group (chat group / channel) policies (step 7).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, GroupPolicy>,
}

/// A `tools` object: a profile, allow/deny lists and per-provider overrides.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolsPolicy {
    /// A built-in profile: `minimal`, `coding`, `messaging` or `full`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Tools allowed (names, `*` patterns, `group:` names); absent or empty allows all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Tools added to the profile's allowlist (and to `allow` when that is given), so a
    /// profile can be widened without restating it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub also_allow: Option<Vec<String>>,
    /// Tools denied; deny wins over allow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
    /// Keyed by provider (`openai`) or `provider/model` (`openai/gpt-4o`), case-insensitive.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_provider: BTreeMap<String, ProviderPolicy>,
}

/// A `byProvider` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProviderPolicy {
    /// A built-in profile applied for this provider/model (step 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Allowlist for this provider/model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Added to this entry's profile allowlist (and to `allow` when that is given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub also_allow: Option<Vec<String>>,
    /// Denylist for this provider/model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
}

/// `agents.<agentId>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentPolicy {
    /// The agent's `tools` object (same shape as the global one).
    pub tools: ToolsPolicy,
}

/// `groups.<groupId>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GroupPolicy {
    /// The group's allow/deny lists.
    pub tools: AllowDeny,
}

/// Just an allowlist and a denylist.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AllowDeny {
    /// Tools allowed; absent or empty allows all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Tools denied; deny wins over allow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
}

/// Reads the policy from a JSON file: a missing file is the default (no restriction),
/// an unreadable or malformed one an error naming the file.
pub fn load_policy_config(path: impl AsRef<Path>) -> Result<ToolPolicyConfig, PipelineError> {
    let path = path.as_ref();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ToolPolicyConfig::default());
        }
        Err(source) => {
            return Err(PipelineError::ConfigRead {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    serde_json::from_str(&text).map_err(|source| PipelineError::ConfigParse {
        path: path.to_path_buf(),
        source,
    })
}

/// The `byProvider` entry for a model, as OpenClaw picks it: keys compare trimmed and
/// lowercased; `provider/model` (the model id as is when it already holds a `/`) is tried
/// before the bare provider. Returns the key as written in the config and the entry.
pub fn resolve_by_provider<'a>(
    by_provider: &'a BTreeMap<String, ProviderPolicy>,
    provider: &str,
    model_id: &str,
) -> Option<(&'a str, &'a ProviderPolicy)> {
    let provider = provider.trim().to_lowercase();
    if provider.is_empty() || by_provider.is_empty() {
        return None;
    }
    let model_id = model_id.trim().to_lowercase();
    let full = if model_id.is_empty() {
        None
    } else if model_id.contains('/') {
        Some(model_id)
    } else {
        Some(format!("{provider}/{model_id}"))
    };
    full.into_iter().chain([provider]).find_map(|candidate| {
        by_provider
            .iter()
            .find(|(key, _)| key.trim().to_lowercase() == candidate)
            .map(|(key, policy)| (key.as_str(), policy))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_openclaw_shape() {
        let config: ToolPolicyConfig = serde_json::from_value(json!({
            "tools": {"profile": "coding", "deny": ["bash"],
                      "byProvider": {"openai": {"profile": "minimal", "allow": ["read"]}}},
            "agents": {"coder": {"tools": {"allow": ["group:fs"]}}},
            "groups": {"g1": {"tools": {"deny": ["write"]}}},
            "server": {"port": 1234}
        }))
        .unwrap();
        assert_eq!(config.tools.profile.as_deref(), Some("coding"));
        assert_eq!(config.tools.deny, Some(vec!["bash".to_owned()]));
        assert_eq!(
            config.tools.by_provider["openai"].profile.as_deref(),
            Some("minimal")
        );
        assert_eq!(
            config.agents["coder"].tools.allow,
            Some(vec!["group:fs".to_owned()])
        );
        assert_eq!(
            config.groups["g1"].tools.deny,
            Some(vec!["write".to_owned()])
        );
        let back = serde_json::to_value(&config).unwrap();
        assert_eq!(
            back["tools"]["byProvider"]["openai"]["allow"],
            json!(["read"])
        );
    }

    #[test]
    fn provider_keys_match_model_first_then_provider() {
        let mut map = BTreeMap::new();
        map.insert("OpenAI".to_owned(), ProviderPolicy::default());
        map.insert(
            "openai/gpt-4o".to_owned(),
            ProviderPolicy {
                profile: Some("minimal".into()),
                ..Default::default()
            },
        );
        assert_eq!(
            resolve_by_provider(&map, "openai", "GPT-4o").map(|(k, _)| k),
            Some("openai/gpt-4o")
        );
        assert_eq!(
            resolve_by_provider(&map, "openai", "gpt-5").map(|(k, _)| k),
            Some("OpenAI")
        );
        assert_eq!(
            resolve_by_provider(&map, "openrouter", "openai/gpt-4o").map(|(k, _)| k),
            Some("openai/gpt-4o")
        );
        assert!(resolve_by_provider(&map, "anthropic", "claude").is_none());
        assert!(resolve_by_provider(&map, "", "gpt-4o").is_none());
    }

    #[test]
    fn missing_file_is_default_and_malformed_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gateway.json");
        assert_eq!(
            load_policy_config(&missing).unwrap(),
            ToolPolicyConfig::default()
        );

        std::fs::write(&missing, r#"{"tools": {"allow": "bash"}}"#).unwrap();
        let err = load_policy_config(&missing).unwrap_err();
        assert!(matches!(err, PipelineError::ConfigParse { .. }));
        let message = err.to_string();
        assert!(message.contains("gateway.json"), "{message}");
        assert!(message.contains("line 1"), "{message}");

        std::fs::write(&missing, r#"{"tools": {"deny": ["bash"]}, "other": 1}"#).unwrap();
        let config = load_policy_config(&missing).unwrap();
        assert_eq!(config.tools.deny, Some(vec!["bash".to_owned()]));
    }

    #[test]
    fn unreadable_path_is_a_read_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_policy_config(dir.path()).unwrap_err();
        assert!(matches!(err, PipelineError::ConfigRead { .. }), "{err}");
    }
}
