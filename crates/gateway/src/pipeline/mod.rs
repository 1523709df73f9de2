//! The 7-layer tool pipeline (seed 000 §9.3), built once per session — when the gateway
//! creates, resumes or branches it — not per call:
//!
//! 1. [`base`]: pi's built-in tools by name, plus custom tools (a custom tool overrides the
//!    built-in of the same name).
//! 2. [`sandbox_layer`]: `bash`/`exec` replaced through a [`ToolSandbox`].
//! 3. [`runtime_tools`](mod@runtime_tools): `session_branch`, `session_navigate`, `gateway_reload`,
//!    `agent_interrupt`, acting through a [`RuntimeHost`].
//! 4. [`channel`]: tools of the client binding, appended as given.
//! 5. [`policy`]: the principal's scopes, then OpenClaw's 7-step allow/deny cascade.
//! 6. [`schema_layer`]: schemas normalized for the model's API.
//! 7. [`cancel`]: every call tied to the session's lifecycle token.
//!
//! Each layer is a function usable on its own; [`build_pipeline`] runs them all and reports
//! the tool names after each layer, what the policy removed and where, and warnings.

pub mod base;
pub mod cancel;
pub mod channel;
pub mod error;
pub mod policy;
pub mod policy_config;
pub mod runtime_tools;
pub mod sandbox_layer;
pub mod schema;
mod schema_google;
pub mod schema_layer;
pub mod scopes;
pub mod tool_groups;

#[cfg(test)]
mod test_support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::AgentTool;
use pi_coding_agent::tools::DEFAULT_TOOLS;
use pi_coding_agent::tools::bash::BashOptions;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use base::{append_unique, base_tools};
pub use cancel::{ABORTED_BEFORE_START, CancellableTool, wrap_cancellation};
pub use channel::{ChannelTool, append_channel_tools};
pub use error::PipelineError;
pub use policy::{
    PolicyOutcome, PolicyRemoval, PolicyStep, PolicyTarget, apply_policy, policy_steps,
};
pub use policy_config::{
    AgentPolicy, AllowDeny, GroupPolicy, ProviderPolicy, ToolPolicyConfig, ToolsPolicy,
    load_policy_config,
};
pub use runtime_tools::{RUNTIME_TOOL_NAMES, RuntimeHost, runtime_tools};
pub use sandbox_layer::{SandboxOutcome, ToolSandbox, apply_sandbox};
pub use schema::{SchemaFamily, normalize_schema};
pub use schema_layer::{NormalizedTool, normalize_tools};
pub use scopes::ScopeTable;
pub use tool_groups::{CHANNEL_GROUP, CUSTOM_GROUP, ToolGroups};

/// The layers, in order, as named in [`PipelineReport::layers`].
pub const LAYERS: [&str; 7] = [
    "base", "sandbox", "runtime", "channel", "policy", "schema", "cancel",
];

/// The runtime tools of a session: the host they act through and the session they act on.
#[derive(Clone)]
pub struct RuntimeToolsInput {
    /// The gateway side of the runtime tools.
    pub host: Arc<dyn RuntimeHost>,
    /// The session the tools belong to.
    pub session_id: String,
}

/// Everything the pipeline of one session is built from.
pub struct PipelineInput {
    /// Working directory of the built-in tools.
    pub cwd: PathBuf,
    /// Built-in tool names (layer 1), e.g. `pi_coding_agent::tools::DEFAULT_TOOLS`.
    pub builtin_tools: Vec<String>,
    /// Settings of the built-in `bash` tool.
    pub bash: BashOptions,
    /// Custom tools of the embedding code (layer 1); they override built-ins by name.
    pub custom_tools: Vec<Arc<dyn AgentTool>>,
    /// Scopes required by custom tools, by tool name (layer 5).
    pub custom_tool_scopes: BTreeMap<String, String>,
    /// The sandbox replacing `bash`/`exec` (layer 2); `None`: no sandbox.
    pub sandbox: Option<Arc<dyn ToolSandbox>>,
    /// The runtime tools (layer 3); `None`: none.
    pub runtime: Option<RuntimeToolsInput>,
    /// Tools of the channel binding (layer 4).
    pub channel_tools: Vec<ChannelTool>,
    /// The tool policy (layer 5), e.g. from [`load_policy_config`].
    pub policy: ToolPolicyConfig,
    /// Provider, model, agent, group and scopes the policy is applied for (layer 5).
    pub target: PolicyTarget,
    /// The model's API (`pi_ai::Model::api`), selecting the schema dialect (layer 6).
    pub api: String,
    /// The session's lifecycle token (layer 7).
    pub lifecycle: CancellationToken,
}

impl PipelineInput {
    /// An input for `model` in `cwd`: pi's default built-in tools, no custom, runtime or
    /// channel tools, no sandbox, no policy, no scopes.
    pub fn new(
        cwd: impl Into<PathBuf>,
        model: &pi_ai::Model,
        lifecycle: CancellationToken,
    ) -> Self {
        Self {
            cwd: cwd.into(),
            builtin_tools: DEFAULT_TOOLS.iter().map(|t| (*t).to_owned()).collect(),
            bash: BashOptions::default(),
            custom_tools: Vec::new(),
            custom_tool_scopes: BTreeMap::new(),
            sandbox: None,
            runtime: None,
            channel_tools: Vec::new(),
            policy: ToolPolicyConfig::default(),
            target: PolicyTarget::for_model(model),
            api: model.api.clone(),
            lifecycle,
        }
    }
}

/// The tool names after one layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerReport {
    /// One of [`LAYERS`].
    pub layer: String,
    /// The tool names, in order.
    pub tools: Vec<String>,
}

/// What the pipeline did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineReport {
    /// The tool names after each layer, in layer order.
    pub layers: Vec<LayerReport>,
    /// Tools the sandbox replaced.
    pub sandboxed: Vec<String>,
    /// Tools the policy removed, with the rule that removed them.
    pub removed: Vec<PolicyRemoval>,
    /// Tools whose schema was rewritten for the provider.
    pub normalized: Vec<String>,
    /// Overrides, unknown profiles and policy entries that match no tool.
    pub warnings: Vec<String>,
}

impl PipelineReport {
    /// The tool names after `layer`, if it ran.
    pub fn tools_after(&self, layer: &str) -> Option<&[String]> {
        self.layers
            .iter()
            .find(|l| l.layer == layer)
            .map(|l| l.tools.as_slice())
    }

    fn record(&mut self, layer: &str, tools: &[Arc<dyn AgentTool>]) {
        self.layers.push(LayerReport {
            layer: layer.to_owned(),
            tools: tools.iter().map(|t| t.name().to_owned()).collect(),
        });
    }
}

/// The final tools of a session (handed to the agent) and the report of how they came about.
pub struct Pipeline {
    /// The tools, in order.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// What each layer did.
    pub report: PipelineReport,
}

/// Runs the seven layers. Fails on unknown built-in names, duplicate tool names across
/// layers, and sandbox failures; policy problems are warnings in the report.
pub fn build_pipeline(input: PipelineInput) -> Result<Pipeline, PipelineError> {
    let mut report = PipelineReport::default();
    let custom_names: Vec<String> = input
        .custom_tools
        .iter()
        .map(|t| t.name().to_owned())
        .collect();

    let tools = base_tools(
        &input.builtin_tools,
        &input.cwd,
        input.bash,
        input.custom_tools,
        &mut report.warnings,
    )?;
    report.record(LAYERS[0], &tools);

    let SandboxOutcome { tools, substituted } = apply_sandbox(tools, input.sandbox.as_deref())?;
    report.sandboxed = substituted;
    report.record(LAYERS[1], &tools);

    let runtime = input
        .runtime
        .map(|r| runtime_tools(r.host, &r.session_id))
        .unwrap_or_default();
    let tools = append_unique(tools, runtime, "runtime")?;
    report.record(LAYERS[2], &tools);

    let mut scopes = ScopeTable::runtime_defaults();
    for (tool, scope) in &input.custom_tool_scopes {
        scopes.require(tool, scope);
    }
    let tools = append_channel_tools(tools, &input.channel_tools, &mut scopes)?;
    report.record(LAYERS[3], &tools);

    let channel_names = input.channel_tools.iter().map(|c| c.tool.name().to_owned());
    let groups = ToolGroups::builtin()
        .with_group(CHANNEL_GROUP, channel_names)
        .with_group(CUSTOM_GROUP, custom_names);
    let outcome = apply_policy(tools, &input.policy, &input.target, &scopes, &groups);
    report.removed = outcome.removed;
    report.warnings.extend(outcome.warnings);
    report.record(LAYERS[4], &outcome.tools);

    let (tools, normalized) = normalize_tools(outcome.tools, &input.api);
    report.normalized = normalized;
    report.record(LAYERS[5], &tools);

    let tools = wrap_cancellation(tools, &input.lifecycle);
    report.record(LAYERS[6], &tools);

    Ok(Pipeline { tools, report })
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
