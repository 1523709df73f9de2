//! Tests of the policy layer: scopes and every step of the cascade.

use serde_json::json;

use super::*;
use crate::pipeline::test_support::{FakeTool, names, strings};
use crate::pipeline::tool_groups::CHANNEL_GROUP;

const ALL: [&str; 13] = [
    "read",
    "write",
    "edit",
    "bash",
    "grep",
    "find",
    "ls",
    "session_branch",
    "session_navigate",
    "gateway_reload",
    "agent_interrupt",
    "discord_reply",
    "discord_react",
];

fn tools() -> Vec<Arc<dyn AgentTool>> {
    ALL.iter().map(|n| FakeTool::arc(n)).collect()
}

fn groups() -> ToolGroups {
    ToolGroups::builtin().with_group(CHANNEL_GROUP, strings(&["discord_reply", "discord_react"]))
}

fn target() -> PolicyTarget {
    PolicyTarget {
        provider: "openai".into(),
        model_id: "gpt-4o".into(),
        agent_id: Some("coder".into()),
        group_id: Some("g1".into()),
        scopes: strings(&["*"]),
    }
}

fn config(value: serde_json::Value) -> ToolPolicyConfig {
    serde_json::from_value(value).unwrap()
}

fn run(config: &ToolPolicyConfig, target: &PolicyTarget) -> PolicyOutcome {
    apply_policy(
        tools(),
        config,
        target,
        &ScopeTable::runtime_defaults(),
        &groups(),
    )
}

fn removal(tool: &str, step: &str, step_number: u8) -> PolicyRemoval {
    PolicyRemoval {
        tool: tool.into(),
        step: step.into(),
        step_number,
    }
}

#[test]
fn every_step_of_the_cascade_removes_what_it_forbids() {
    let config = config(json!({
        "tools": {
            "profile": "coding",
            "deny": ["write"],
            "byProvider": {
                "openai": {"profile": "messaging", "alsoAllow": ["group:fs"], "deny": ["edit"]}
            }
        },
        "agents": {"coder": {"tools": {
            "allow": ["read", "find", "ls", "grep", "session_*"],
            "byProvider": {"openai/gpt-4o": {"deny": ["session_navigate"]}}
        }}},
        "groups": {"g1": {"tools": {"allow": ["*", "write"], "deny": ["find"]}}}
    }));
    let outcome = run(&config, &target());
    assert_eq!(
        outcome.removed,
        vec![
            removal("gateway_reload", "tools.profile (coding)", 1),
            removal("discord_reply", "tools.profile (coding)", 1),
            removal("discord_react", "tools.profile (coding)", 1),
            removal("bash", "tools.byProvider.openai.profile (messaging)", 2),
            removal("write", "tools.deny", 3),
            removal("edit", "tools.byProvider.openai.deny", 4),
            removal("agent_interrupt", "agents.coder.tools.allow", 5),
            removal(
                "session_navigate",
                "agents.coder.tools.byProvider.openai/gpt-4o.deny",
                6
            ),
            removal("find", "groups.g1.tools.deny", 7),
        ]
    );
    // `write` is allowed again at step 7 but never comes back.
    assert_eq!(
        names(&outcome.tools),
        strings(&["read", "grep", "ls", "session_branch"])
    );
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

#[test]
fn absent_steps_pass_everything() {
    let outcome = run(&ToolPolicyConfig::default(), &target());
    assert_eq!(names(&outcome.tools), strings(&ALL));
    assert!(outcome.removed.is_empty());
    let (steps, warnings) = policy_steps(&ToolPolicyConfig::default(), &target());
    assert!(steps.is_empty() && warnings.is_empty());
}

#[test]
fn deny_wins_over_allow_and_patterns_match() {
    let config = config(
        json!({"tools": {"allow": ["group:fs", "session_*"], "deny": ["Read", "*_navigate"]}}),
    );
    let outcome = run(&config, &target());
    assert_eq!(
        names(&outcome.tools),
        strings(&["write", "edit", "grep", "find", "ls", "session_branch"])
    );
    assert!(outcome.removed.contains(&removal("read", "tools.deny", 3)));
    assert!(
        outcome
            .removed
            .contains(&removal("session_navigate", "tools.deny", 3))
    );
    assert!(outcome.removed.contains(&removal("bash", "tools.allow", 3)));
}

#[test]
fn empty_allowlist_allows_everything() {
    let config = config(json!({"tools": {"allow": []}}));
    assert_eq!(names(&run(&config, &target()).tools), strings(&ALL));
}

#[test]
fn allowlist_of_unknown_entries_is_ignored_with_a_warning() {
    let config =
        config(json!({"tools": {"allow": ["my_plugin_tool", "group:nope"], "deny": ["bash"]}}));
    let outcome = run(&config, &target());
    // The allowlist is stripped, the denylist still applies.
    assert_eq!(outcome.tools.len(), ALL.len() - 1);
    assert_eq!(outcome.removed, vec![removal("bash", "tools.deny", 3)]);
    assert_eq!(outcome.warnings.len(), 1);
    assert!(outcome.warnings[0].contains("tools.allow"));
    assert!(outcome.warnings[0].contains("my_plugin_tool, group:nope"));
    assert!(outcome.warnings[0].contains("Ignoring the allowlist"));
}

#[test]
fn partly_unknown_allowlist_applies_and_warns() {
    let config = config(
        json!({"agents": {"coder": {"tools": {"allow": ["read", "typo"], "deny": ["nothing_*"]}}}}),
    );
    let outcome = run(&config, &target());
    assert_eq!(names(&outcome.tools), strings(&["read"]));
    assert_eq!(outcome.warnings.len(), 2, "{:?}", outcome.warnings);
    assert!(
        outcome.warnings[0].contains("agents.coder.tools.allow")
            && outcome.warnings[0].contains("typo")
    );
    assert!(
        outcome.warnings[1].contains("agents.coder.tools.deny")
            && outcome.warnings[1].contains("nothing_*")
    );
}

#[test]
fn unknown_profile_is_skipped_with_a_warning() {
    let config = config(json!({"tools": {"profile": "nope"}}));
    let outcome = run(&config, &target());
    assert_eq!(outcome.tools.len(), ALL.len());
    assert!(outcome.warnings[0].contains("unknown profile \"nope\""));
}

#[test]
fn profiles_are_never_stripped() {
    // `minimal` keeps only agent_interrupt; without it nothing is left.
    let config = config(json!({"tools": {"profile": "minimal"}}));
    let only_read: Vec<Arc<dyn AgentTool>> = vec![FakeTool::arc("read")];
    let outcome = apply_policy(
        only_read,
        &config,
        &target(),
        &ScopeTable::runtime_defaults(),
        &groups(),
    );
    assert!(outcome.tools.is_empty());
    assert_eq!(
        outcome.removed,
        vec![removal("read", "tools.profile (minimal)", 1)]
    );
}

#[test]
fn agent_profile_replaces_the_global_one_and_full_keeps_all() {
    let config = config(json!({
        "tools": {"profile": "minimal"},
        "agents": {"coder": {"tools": {"profile": "full"}}}
    }));
    assert_eq!(run(&config, &target()).tools.len(), ALL.len());
    let mut other = target();
    other.agent_id = Some("someone-else".into());
    assert_eq!(
        names(&run(&config, &other).tools),
        strings(&["agent_interrupt"])
    );
}

#[test]
fn messaging_profile_uses_the_channel_group_and_also_allow() {
    let config = config(json!({"tools": {"profile": "messaging", "alsoAllow": ["read"]}}));
    assert_eq!(
        names(&run(&config, &target()).tools),
        strings(&[
            "read",
            "session_branch",
            "session_navigate",
            "agent_interrupt",
            "discord_reply",
            "discord_react"
        ])
    );
}

#[test]
fn by_provider_entries_of_other_providers_do_not_apply() {
    let config = config(
        json!({"tools": {"byProvider": {"anthropic": {"deny": ["bash"]}, "openai/gpt-5": {"deny": ["read"]}}}}),
    );
    assert_eq!(run(&config, &target()).tools.len(), ALL.len());
    let mut claude = target();
    claude.provider = "Anthropic".into();
    claude.model_id = "claude-sonnet-4".into();
    let outcome = run(&config, &claude);
    assert_eq!(
        outcome.removed,
        vec![removal("bash", "tools.byProvider.anthropic.deny", 4)]
    );
}

#[test]
fn scopes_remove_runtime_tools_the_principal_may_not_use() {
    let mut t = target();
    t.scopes = vec![];
    let outcome = run(&ToolPolicyConfig::default(), &t);
    assert_eq!(
        outcome.removed,
        vec![
            removal("session_branch", "scopes (requires \"sessions\")", 0),
            removal("session_navigate", "scopes (requires \"sessions\")", 0),
            removal("gateway_reload", "scopes (requires \"admin\")", 0),
        ]
    );
    assert!(names(&outcome.tools).contains(&"agent_interrupt".to_owned()));

    t.scopes = strings(&["sessions"]);
    let mut table = ScopeTable::runtime_defaults();
    table.require("discord_react", "reactions");
    let outcome = apply_policy(tools(), &ToolPolicyConfig::default(), &t, &table, &groups());
    let removed: Vec<&str> = outcome.removed.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(removed, vec!["gateway_reload", "discord_react"]);
}

#[test]
fn a_tool_removed_by_scope_is_not_an_unknown_entry() {
    let mut t = target();
    t.scopes = vec![];
    let config = config(json!({"tools": {"allow": ["gateway_reload"]}}));
    let outcome = run(&config, &t);
    // The allowlist names a real tool (removed by scope), so it is not stripped.
    assert!(outcome.tools.is_empty());
    assert!(outcome.warnings.is_empty());
}
