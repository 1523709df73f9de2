//! Layer 5: the policy filter. First the scopes of the principal, then OpenClaw's 7-step
//! allow/deny cascade (`tool-policy-pipeline.ts`):
//!
//! 1. `tools.profile` (an agent's own `agents.<id>.tools.profile` replaces it)
//! 2. `tools.byProvider.<key>.profile` (the agent's `byProvider` entry replaces it)
//! 3. `tools.allow` / `tools.deny`
//! 4. `tools.byProvider.<key>.allow` / `deny`
//! 5. `agents.<agentId>.tools.allow` / `deny`
//! 6. `agents.<agentId>.tools.byProvider.<key>.allow` / `deny`
//! 7. `groups.<groupId>.tools.allow` / `deny`
//!
//! Each step only narrows: a tool removed once never comes back. An absent step passes
//! everything, an empty allowlist allows everything, deny wins over allow. Entries are names,
//! `*` patterns or `group:` names ([`super::tool_groups`]). Entries of a configured list that
//! match no tool of the session are reported as warnings; a configured allowlist made only of
//! such entries is ignored (OpenClaw "strips plugin-only allowlists") so a typo cannot remove
//! every tool. Built-in profiles are never stripped: `minimal` means minimal.

use std::sync::Arc;

use pi_agent_core::AgentTool;
use serde::{Deserialize, Serialize};

use super::policy_config::{ToolPolicyConfig, ToolsPolicy, resolve_by_provider};
use super::scopes::{ScopeTable, has_scope};
use super::tool_groups::{
    PatternList, ToolGroups, entry_matches_any, normalize_tool_name, profile_allowlist,
    profile_names,
};

/// Who and what the tools are for: selects the `byProvider`, agent and group entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyTarget {
    /// The model's provider (`pi_ai::Model::provider`).
    pub provider: String,
    /// The model id (`pi_ai::Model::id`).
    pub model_id: String,
    /// The agent of the session (`agents.<id>`).
    pub agent_id: Option<String>,
    /// The chat group or channel of the session (`groups.<id>`).
    pub group_id: Option<String>,
    /// The principal's scopes; `"*"` holds every scope.
    pub scopes: Vec<String>,
}

impl PolicyTarget {
    /// A target for this model, with no agent, group or scopes.
    pub fn for_model(model: &pi_ai::Model) -> Self {
        Self {
            provider: model.provider.clone(),
            model_id: model.id.clone(),
            ..Self::default()
        }
    }
}

/// One resolved step of the cascade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyStep {
    /// 1 to 7.
    pub number: u8,
    /// Where a tool missing from the allowlist is reported (e.g. `tools.allow`).
    pub allow_label: String,
    /// Where a denied tool is reported (e.g. `tools.deny`).
    pub deny_label: String,
    /// The allowlist, if the step has one.
    pub allow: Option<Vec<String>>,
    /// The denylist, if the step has one.
    pub deny: Option<Vec<String>>,
    /// Whether the lists come from the config (checked for unknown entries) rather than a
    /// built-in profile.
    pub configured: bool,
}

/// A tool the policy removed, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRemoval {
    /// The tool's name.
    pub tool: String,
    /// The rule that removed it, e.g. `tools.deny` or `scopes (requires "admin")`.
    pub step: String,
    /// 0 for scopes, 1 to 7 for the cascade.
    pub step_number: u8,
}

/// What the policy layer kept, removed and warned about.
pub struct PolicyOutcome {
    /// The tools left, in their original order.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// The removed tools, in the order they were removed.
    pub removed: Vec<PolicyRemoval>,
    /// Unknown profiles and list entries that match no tool.
    pub warnings: Vec<String>,
}

/// The steps of the cascade that are present for `target` (absent ones are left out),
/// and warnings about unknown profiles.
pub fn policy_steps(
    config: &ToolPolicyConfig,
    target: &PolicyTarget,
) -> (Vec<PolicyStep>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut steps = Vec::new();
    let agent: Option<(&str, &ToolsPolicy)> = target
        .agent_id
        .as_deref()
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .and_then(|id| config.agents.get(id).map(|a| (id, &a.tools)));
    let global_provider = resolve_by_provider(
        &config.tools.by_provider,
        &target.provider,
        &target.model_id,
    );
    let agent_provider = agent.and_then(|(id, tools)| {
        resolve_by_provider(&tools.by_provider, &target.provider, &target.model_id)
            .map(|(key, policy)| (id, key, policy))
    });

    // Step 1: the agent's profile, else the global one.
    let profile = match agent {
        Some((id, tools)) if tools.profile.is_some() => tools
            .profile
            .as_deref()
            .map(|p| (format!("agents.{id}.tools.profile"), p, &tools.also_allow)),
        _ => config
            .tools
            .profile
            .as_deref()
            .map(|p| ("tools.profile".to_owned(), p, &config.tools.also_allow)),
    };
    if let Some((label, name, also)) = profile {
        steps.extend(profile_step(1, &label, name, also, &mut warnings));
    }

    // Step 2: the agent's byProvider profile, else the global byProvider profile.
    let provider_profile = match agent_provider {
        Some((id, key, p)) if p.profile.is_some() => p.profile.as_deref().map(|name| {
            (
                format!("agents.{id}.tools.byProvider.{key}.profile"),
                name,
                &p.also_allow,
            )
        }),
        _ => global_provider.and_then(|(key, p)| {
            p.profile.as_deref().map(|name| {
                (
                    format!("tools.byProvider.{key}.profile"),
                    name,
                    &p.also_allow,
                )
            })
        }),
    };
    if let Some((label, name, also)) = provider_profile {
        steps.extend(profile_step(2, &label, name, also, &mut warnings));
    }

    // Steps 3-7: the configured allow/deny lists.
    let t = &config.tools;
    steps.extend(list_step(3, "tools", &t.allow, &t.also_allow, &t.deny));
    if let Some((key, p)) = global_provider {
        let prefix = format!("tools.byProvider.{key}");
        steps.extend(list_step(4, &prefix, &p.allow, &p.also_allow, &p.deny));
    }
    if let Some((id, tools)) = agent {
        let prefix = format!("agents.{id}.tools");
        steps.extend(list_step(
            5,
            &prefix,
            &tools.allow,
            &tools.also_allow,
            &tools.deny,
        ));
    }
    if let Some((id, key, p)) = agent_provider {
        let prefix = format!("agents.{id}.tools.byProvider.{key}");
        steps.extend(list_step(6, &prefix, &p.allow, &p.also_allow, &p.deny));
    }
    let group = target
        .group_id
        .as_deref()
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .and_then(|id| config.groups.get(id).map(|g| (id, &g.tools)));
    if let Some((id, lists)) = group {
        let prefix = format!("groups.{id}.tools");
        steps.extend(list_step(7, &prefix, &lists.allow, &None, &lists.deny));
    }
    (steps, warnings)
}

fn profile_step(
    number: u8,
    label: &str,
    name: &str,
    also_allow: &Option<Vec<String>>,
    warnings: &mut Vec<String>,
) -> Option<PolicyStep> {
    let Some(mut allow) = profile_allowlist(name) else {
        warnings.push(format!(
            "tools: {label} names unknown profile \"{name}\" (known: {}); the step is skipped",
            profile_names().join(", ")
        ));
        return None;
    };
    allow.extend(also_allow.iter().flatten().cloned());
    let label = format!("{label} ({})", name.trim());
    Some(PolicyStep {
        number,
        allow_label: label.clone(),
        deny_label: label,
        allow: Some(allow),
        deny: None,
        configured: false,
    })
}

fn list_step(
    number: u8,
    prefix: &str,
    allow: &Option<Vec<String>>,
    also_allow: &Option<Vec<String>>,
    deny: &Option<Vec<String>>,
) -> Option<PolicyStep> {
    if allow.is_none() && deny.is_none() {
        return None;
    }
    // `alsoAllow` widens a given allowlist; alone it restricts nothing.
    let allow = allow.as_ref().map(|allow| {
        let mut allow = allow.clone();
        if !allow.is_empty() {
            allow.extend(also_allow.iter().flatten().cloned());
        }
        allow
    });
    Some(PolicyStep {
        number,
        allow_label: format!("{prefix}.allow"),
        deny_label: format!("{prefix}.deny"),
        allow,
        deny: deny.clone(),
        configured: true,
    })
}

/// Applies scopes, then the cascade. `scopes` says which tool needs which scope; `groups`
/// resolves `group:` entries (including the session's dynamic groups).
pub fn apply_policy(
    tools: Vec<Arc<dyn AgentTool>>,
    config: &ToolPolicyConfig,
    target: &PolicyTarget,
    scopes: &ScopeTable,
    groups: &ToolGroups,
) -> PolicyOutcome {
    let (steps, mut warnings) = policy_steps(config, target);
    let universe: Vec<String> = tools
        .iter()
        .map(|t| normalize_tool_name(t.name()))
        .collect();
    let mut removed = Vec::new();

    let mut kept = Vec::with_capacity(tools.len());
    for tool in tools {
        match scopes.required(tool.name()) {
            Some(scope) if !has_scope(&target.scopes, scope) => removed.push(PolicyRemoval {
                tool: tool.name().to_owned(),
                step: format!("scopes (requires \"{scope}\")"),
                step_number: 0,
            }),
            _ => kept.push(tool),
        }
    }

    for step in &steps {
        let allow = effective_allow(step, &universe, groups, &mut warnings);
        let deny = step.deny.as_deref().map(|deny| {
            if step.configured {
                warn_unknown(&step.deny_label, deny, &universe, groups, &mut warnings);
            }
            PatternList::compile(deny, groups)
        });
        kept.retain(|tool| {
            let name = tool.name();
            let rule = if deny.as_ref().is_some_and(|d| d.matches(name)) {
                &step.deny_label
            } else if allow.as_ref().is_some_and(|a| !a.matches(name)) {
                &step.allow_label
            } else {
                return true;
            };
            removed.push(PolicyRemoval {
                tool: name.to_owned(),
                step: rule.clone(),
                step_number: step.number,
            });
            false
        });
    }
    PolicyOutcome {
        tools: kept,
        removed,
        warnings,
    }
}

/// The allowlist a step enforces: `None` when it allows everything (absent, empty, or a
/// configured list whose entries all match no tool).
fn effective_allow(
    step: &PolicyStep,
    universe: &[String],
    groups: &ToolGroups,
    warnings: &mut Vec<String>,
) -> Option<PatternList> {
    let entries: Vec<String> = step
        .allow
        .as_ref()?
        .iter()
        .map(|e| normalize_tool_name(e))
        .filter(|e| !e.is_empty())
        .collect();
    if entries.is_empty() {
        return None;
    }
    if step.configured {
        let unknown = unknown_entries(&entries, universe, groups);
        if unknown.len() == entries.len() {
            warnings.push(format!(
                "tools: {} contains only entries that match no tool ({}). Ignoring the \
                 allowlist so the tools remain available.",
                step.allow_label,
                unknown.join(", ")
            ));
            return None;
        }
        if !unknown.is_empty() {
            warnings.push(format!(
                "tools: {} contains entries that match no tool ({}); they are ignored.",
                step.allow_label,
                unknown.join(", ")
            ));
        }
    }
    Some(PatternList::compile(&entries, groups))
}

fn warn_unknown(
    label: &str,
    entries: &[String],
    universe: &[String],
    groups: &ToolGroups,
    warnings: &mut Vec<String>,
) {
    let unknown = unknown_entries(entries, universe, groups);
    if !unknown.is_empty() {
        warnings.push(format!(
            "tools: {label} contains entries that match no tool ({}); they are ignored.",
            unknown.join(", ")
        ));
    }
}

fn unknown_entries(entries: &[String], universe: &[String], groups: &ToolGroups) -> Vec<String> {
    let mut unknown: Vec<String> = Vec::new();
    for entry in entries {
        let entry = normalize_tool_name(entry);
        if !entry.is_empty()
            && !entry_matches_any(&entry, universe, groups)
            && !unknown.contains(&entry)
        {
            unknown.push(entry);
        }
    }
    unknown
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
