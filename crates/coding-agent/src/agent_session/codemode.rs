//! What a codemode script reaches of its session: the tools it may call, the values its
//! earlier scripts stored on this branch, and where new writes are recorded.

use std::collections::HashMap;
use std::sync::Arc;

use pi_agent_core::AgentTool;
use serde_json::{Map, Value};

use super::{AgentSession, WeakAgentSession, lock};
use crate::codemode::{CODEMODE, CodemodeHost, Link, STORE_ENTRY, replay_store};
use crate::session::EntryKind;

/// A session as codemode's host; it does not keep the session alive.
struct SessionHost(WeakAgentSession);

impl CodemodeHost for SessionHost {
    fn models_of_type(&self, kind: &str, provider: Option<&str>, available: bool) -> Vec<Value> {
        let Some(session) = self.0.upgrade() else {
            return Vec::new();
        };
        let registry = session.registry();
        let list = if available {
            registry.available()
        } else {
            registry.all().iter().collect()
        };
        let mut models: Vec<Value> = list
            .into_iter()
            .filter(|m| m.extras.model_type.as_deref().unwrap_or("chat") == kind)
            .filter(|m| provider.is_none_or(|p| m.provider == p))
            .filter_map(|m| serde_json::to_value(m).ok())
            .collect();
        if kind == "classifier" {
            models.extend(
                registry
                    .classifiers(available)
                    .into_iter()
                    .filter(|m| provider.is_none_or(|p| m["provider"] == p)),
            );
        }
        models
    }

    fn classifier_key(&self, provider: &str) -> Option<String> {
        let session = self.0.upgrade()?;
        session.registry().classifier_key(provider)
    }

    /// The active tools and the MCP tools `tool_search` has not loaded (pi 1.6's callable
    /// set: direct tools that are active, and deferred ones), codemode itself left out.
    fn callable(&self) -> Vec<Arc<dyn AgentTool>> {
        let Some(session) = self.0.upgrade() else {
            return Vec::new();
        };
        // The tools as registered: the declared ones carry codemode's note.
        let registered = session.all_tools();
        let mut tools: Vec<Arc<dyn AgentTool>> = session
            .inner
            .agent
            .tools()
            .into_iter()
            .filter(|t| t.name() != CODEMODE)
            .map(|t| {
                registered
                    .iter()
                    .find(|r| r.name() == t.name())
                    .cloned()
                    .unwrap_or(t)
            })
            .collect();
        if let Some(state) = lock(&session.inner.mcp).clone() {
            for tool in session.deferred_tools(&state) {
                if !tools.iter().any(|t| t.name() == tool.name()) {
                    tools.push(tool);
                }
            }
        }
        tools
    }

    fn guidelines(&self) -> HashMap<String, Vec<String>> {
        HashMap::new()
    }

    fn store(&self) -> Map<String, Value> {
        let Some(session) = self.0.upgrade() else {
            return Map::new();
        };
        session.with_session(|manager| {
            let entries = manager.branch_entries();
            replay_store(entries.iter().filter_map(|entry| match &entry.kind {
                EntryKind::Custom {
                    custom_type,
                    data: Some(data),
                } if custom_type == STORE_ENTRY => Some(data),
                _ => None,
            }))
        })
    }

    fn save_store(&self, data: Value) {
        if let Some(session) = self.0.upgrade() {
            // A session that cannot be written keeps working; the values are lost.
            let _ = session.append_custom_entry(STORE_ENTRY, Some(data));
        }
    }
}

impl AgentSession {
    /// Binds a codemode tool to this session.
    pub fn bind_codemode(&self, link: &Link) {
        link.bind(Arc::new(SessionHost(self.downgrade())));
    }
}
