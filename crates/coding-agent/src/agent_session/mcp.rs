//! MCP tools in a session: the declared tools of connected servers join the tool registry
//! and the active set when a prompt starts (the first prompt waits up to 10 s for servers
//! with declared tools), and follow servers that connect later or change their tool list.

use std::sync::{Arc, Weak};

use pi_agent_core::AgentTool;

use super::{AgentSession, Inner, lock};
use crate::mcp::runtime::{DECLARED_WAIT, McpRuntime};
use crate::mcp::tool_search::{SearchScope, TOOL_SEARCH, ToolSearch};
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
    /// Names of the MCP tools now in the registry (with `tool_search`).
    names: std::sync::Mutex<Vec<String>>,
    /// The `deferred` tools, which `tool_search` loads.
    deferred: std::sync::Mutex<Vec<Arc<dyn AgentTool>>>,
    /// Deferred tools `tool_search` loaded: they stay active.
    loaded: std::sync::Mutex<Vec<String>>,
}

/// What `tool_search` searches in a session, and how it activates what it found.
struct SessionScope {
    inner: Weak<Inner>,
}

impl SearchScope for SessionScope {
    fn candidates(&self) -> futures_util::future::BoxFuture<'_, Vec<Arc<dyn AgentTool>>> {
        Box::pin(async move {
            let Some(inner) = self.inner.upgrade() else {
                return Vec::new();
            };
            let session = AgentSession { inner };
            let Some(state) = lock(&session.inner.mcp).clone() else {
                return Vec::new();
            };
            // A search reaches every server (pi 1.6's `reachesTools: "all"`): wait for
            // those still connecting, then take up what they list.
            state.runtime.wait_for_all(DECLARED_WAIT).await;
            session.sync_mcp_tools().await;
            let active = session.active_tool_names();
            lock(&state.deferred)
                .iter()
                .filter(|t| !active.iter().any(|a| a == t.name()))
                .cloned()
                .collect()
        })
    }

    fn load(&self, names: &[String]) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        let session = AgentSession { inner };
        if let Some(state) = lock(&session.inner.mcp).clone() {
            lock(&state.loaded).extend(names.iter().cloned());
        }
        let mut active = session.active_tool_names();
        active.extend(names.iter().cloned());
        session.set_active_tools(&active);
    }
}

impl AgentSession {
    /// Gives the session its MCP servers (already started).
    pub fn attach_mcp(&self, runtime: Arc<McpRuntime>, filter: McpToolFilter) {
        *lock(&self.inner.mcp) = Some(Arc::new(McpState {
            runtime,
            filter,
            waited: std::sync::atomic::AtomicBool::new(false),
            names: std::sync::Mutex::new(Vec::new()),
            deferred: std::sync::Mutex::new(Vec::new()),
            loaded: std::sync::Mutex::new(Vec::new()),
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
        state.runtime.reconnect_signed_in().await;
        let previous = lock(&state.names).clone();
        let others: Vec<String> = self
            .all_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .filter(|n| !previous.contains(n))
            .collect();
        let tools = state.runtime.tools(&others);
        let search: Option<Arc<dyn AgentTool>> = tools.wants_search.then(|| {
            Arc::new(ToolSearch::new(Arc::new(SessionScope {
                inner: Arc::downgrade(&self.inner),
            }))) as Arc<dyn AgentTool>
        });
        let fresh: Vec<Arc<dyn AgentTool>> = tools
            .declared
            .iter()
            .chain(&tools.deferred)
            .chain(&search)
            .cloned()
            .collect();
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
        // Deferred tools a restored branch had loaded stay loaded.
        let restored = self.take_pending_tools(&fresh_names);
        lock(&state.loaded).extend(
            restored
                .iter()
                .filter(|n| tools.deferred.iter().any(|t| t.name() == n.as_str()))
                .cloned(),
        );
        let loaded = lock(&state.loaded).clone();
        let mut active: Vec<String> = self
            .active_tool_names()
            .into_iter()
            .filter(|n| !previous.contains(n))
            .collect();
        active.extend(
            tools
                .declared
                .iter()
                .chain(
                    tools
                        .deferred
                        .iter()
                        .filter(|t| loaded.iter().any(|l| l == t.name())),
                )
                .map(|t| t.name().to_owned())
                .filter(|n| state.filter.keeps(n)),
        );
        if search.is_some() && state.filter.keeps(TOOL_SEARCH) {
            active.push(TOOL_SEARCH.to_owned());
        }
        // Servers with `codemode` exposure turn codemode on (pi 1.6's autoEnableCodemode).
        if tools.wants_codemode
            && state.filter.keeps("codemode")
            && !active.iter().any(|n| n == "codemode")
            && self.all_tools().iter().any(|t| t.name() == "codemode")
        {
            active.push("codemode".to_owned());
        }
        for name in restored {
            if !active.contains(&name) {
                active.push(name);
            }
        }
        *lock(&state.deferred) = tools.deferred;
        *lock(&state.names) = fresh_names;
        self.set_active_tools(&active);
    }

    /// The MCP tools `tool_search` can load (deferred exposure).
    #[cfg(feature = "codemode")]
    pub(super) fn deferred_tools(&self, state: &McpState) -> Vec<Arc<dyn AgentTool>> {
        lock(&state.deferred).clone()
    }

    /// Whether `name` is a tool of the session's MCP servers (`tool_search` included).
    pub(super) fn is_mcp_tool(&self, name: &str) -> bool {
        lock(&self.inner.mcp)
            .as_ref()
            .is_some_and(|state| lock(&state.names).iter().any(|n| n == name))
    }

    /// The system prompt with the `<mcp_servers>` section last, when servers have tools the
    /// model must load with `tool_search` first.
    pub(super) fn with_mcp_section(&self, prompt: String) -> String {
        let section = lock(&self.inner.mcp)
            .as_ref()
            .and_then(|state| state.runtime.servers_section());
        match section {
            Some(section) => format!("{prompt}\n\n<mcp_servers>\n{section}\n</mcp_servers>"),
            None => prompt,
        }
    }

    /// Reads `mcp.json` again (`/reload`): the old servers close, the new ones start, and the
    /// next prompt declares the new tools. False when MCP is off.
    pub async fn reload_mcp(&self) -> bool {
        self.replace_mcp(|runtime| runtime.reloaded()).await
    }

    /// Connects the servers a client gave (ACP's `mcpServers`) beside `mcp.json`'s, in
    /// place of the ones it gave before. False when MCP is off.
    pub async fn set_client_mcp_servers(&self, servers: Vec<pi_mcp::config::ServerEntry>) -> bool {
        self.replace_mcp(move |runtime| runtime.with_client_servers(servers))
            .await
    }

    async fn replace_mcp(&self, next: impl FnOnce(&McpRuntime) -> McpRuntime) -> bool {
        let Some(state) = lock(&self.inner.mcp).clone() else {
            return false;
        };
        let fresh = Arc::new(next(&state.runtime));
        let old = Arc::clone(&state.runtime);
        *lock(&self.inner.mcp) = Some(Arc::new(McpState {
            runtime: Arc::clone(&fresh),
            filter: state.filter.clone(),
            waited: std::sync::atomic::AtomicBool::new(false),
            // The old servers' tools leave the registry at the next sync.
            names: std::sync::Mutex::new(lock(&state.names).clone()),
            deferred: std::sync::Mutex::new(Vec::new()),
            loaded: std::sync::Mutex::new(lock(&state.loaded).clone()),
        }));
        old.close().await;
        fresh.start();
        true
    }

    /// Closes the MCP servers (pi is exiting).
    pub async fn close_mcp(&self) {
        let state = lock(&self.inner.mcp).take();
        if let Some(state) = state {
            state.runtime.close().await;
        }
    }
}
