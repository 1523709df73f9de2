//! MCP tools in a session: the declared tools of connected servers join the tool registry
//! and the active set when a prompt starts (the first prompt waits up to 10 s for servers
//! with declared tools), and follow servers that connect later or change their tool list.

use std::sync::Arc;

use pi_agent_core::AgentTool;

use super::{AgentSession, lock};
use crate::mcp::runtime::{DECLARED_WAIT, McpRuntime};
use crate::tool_selection::{ToolRequest, ToolsFlag, matches};

/// Which MCP tools the command line keeps: `--tools` removes them only when one of its
/// entries starts with `mcp__`; `--exclude-tools` and `-name` entries apply as to any tool.
#[derive(Debug, Clone, Default)]
pub struct McpToolFilter {
    allow: Option<Vec<String>>,
    remove: Vec<String>,
    none: bool,
}

impl McpToolFilter {
    pub fn from_request(request: &ToolRequest) -> Self {
        let mut filter = Self {
            none: request.no_tools,
            remove: request.exclude.clone(),
            ..Self::default()
        };
        match &request.tools {
            Some(ToolsFlag::Allow(entries)) if entries.iter().any(|e| e.starts_with("mcp__")) => {
                filter.allow = Some(entries.clone());
            }
            Some(ToolsFlag::Edit { remove, .. }) => filter.remove.extend(remove.iter().cloned()),
            _ => {}
        }
        filter
    }

    fn keeps(&self, name: &str) -> bool {
        !self.none
            && self
                .allow
                .as_ref()
                .is_none_or(|allow| allow.iter().any(|p| matches(p, name)))
            && !self.remove.iter().any(|p| matches(p, name))
    }
}

/// The session's MCP servers.
pub(super) struct McpState {
    pub(super) runtime: Arc<McpRuntime>,
    filter: McpToolFilter,
    waited: std::sync::atomic::AtomicBool,
    /// Names of the MCP tools now in the registry.
    names: std::sync::Mutex<Vec<String>>,
}

impl AgentSession {
    /// Gives the session its MCP servers (already started).
    pub fn attach_mcp(&self, runtime: Arc<McpRuntime>, filter: McpToolFilter) {
        *lock(&self.inner.mcp) = Some(Arc::new(McpState {
            runtime,
            filter,
            waited: std::sync::atomic::AtomicBool::new(false),
            names: std::sync::Mutex::new(Vec::new()),
        }));
    }

    /// The session's MCP servers, when MCP is on.
    pub fn mcp(&self) -> Option<Arc<McpRuntime>> {
        lock(&self.inner.mcp).as_ref().map(|m| m.runtime.clone())
    }

    /// Brings the MCP tools up to date (before a prompt).
    pub(super) async fn sync_mcp_tools(&self) {
        let Some(state) = lock(&self.inner.mcp).clone() else {
            return;
        };
        if !state.waited.swap(true, std::sync::atomic::Ordering::SeqCst) {
            state.runtime.wait_for_declared(DECLARED_WAIT).await;
        }
        let previous = lock(&state.names).clone();
        let others: Vec<String> = self
            .all_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .filter(|n| !previous.contains(n))
            .collect();
        let fresh: Vec<Arc<dyn AgentTool>> = state.runtime.tools(&others);
        let fresh_names: Vec<String> = fresh.iter().map(|t| t.name().to_owned()).collect();
        if fresh_names.is_empty() && previous.is_empty() {
            return;
        }
        {
            let mut registry = lock(&self.inner.ext.registry);
            if registry.is_empty() {
                *registry = self.inner.agent.tools();
            }
            registry.retain(|t| !previous.iter().any(|n| n == t.name()));
            registry.extend(fresh.iter().cloned());
        }
        let mut active: Vec<String> = self
            .active_tool_names()
            .into_iter()
            .filter(|n| !previous.contains(n))
            .collect();
        active.extend(
            fresh_names
                .iter()
                .filter(|n| state.filter.keeps(n))
                .cloned(),
        );
        *lock(&state.names) = fresh_names;
        self.set_active_tools(&active);
    }

    /// Closes the MCP servers (pi is exiting).
    pub async fn close_mcp(&self) {
        let state = lock(&self.inner.mcp).take();
        if let Some(state) = state {
            state.runtime.close().await;
        }
    }
}
