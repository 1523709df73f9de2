//! Which scope a tool requires, and whether a principal holds it (layer 5a).

use std::collections::BTreeMap;

/// The scope a principal needs for the session-tree runtime tools.
pub const SCOPE_SESSIONS: &str = "sessions";
/// The scope a principal needs to reload the gateway.
pub const SCOPE_ADMIN: &str = "admin";
/// A principal scope granting every scope.
pub const SCOPE_ALL: &str = "*";

/// The required scope of the runtime tools; `agent_interrupt` needs none.
pub const RUNTIME_TOOL_SCOPES: &[(&str, &str)] = &[
    ("session_branch", SCOPE_SESSIONS),
    ("session_navigate", SCOPE_SESSIONS),
    ("gateway_reload", SCOPE_ADMIN),
];

/// Tool name → required scope. Tools not in the table need no scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeTable {
    required: BTreeMap<String, String>,
}

impl Default for ScopeTable {
    fn default() -> Self {
        Self::runtime_defaults()
    }
}

impl ScopeTable {
    /// A table requiring nothing.
    pub fn empty() -> Self {
        Self {
            required: BTreeMap::new(),
        }
    }

    /// The table of [`RUNTIME_TOOL_SCOPES`].
    pub fn runtime_defaults() -> Self {
        let mut table = Self::empty();
        for (tool, scope) in RUNTIME_TOOL_SCOPES {
            table.require(tool, scope);
        }
        table
    }

    /// Makes `tool` require `scope` (replacing an earlier requirement).
    pub fn require(&mut self, tool: &str, scope: &str) {
        self.required.insert(tool.to_owned(), scope.to_owned());
    }

    /// The scope `tool` requires, if any.
    pub fn required(&self, tool: &str) -> Option<&str> {
        self.required.get(tool).map(String::as_str)
    }
}

/// Whether a principal holding `scopes` may use something requiring `scope`
/// (`"*"` grants every scope).
pub fn has_scope(scopes: &[String], scope: &str) -> bool {
    scopes.iter().any(|s| s == SCOPE_ALL || s == scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_defaults_and_overrides() {
        let mut table = ScopeTable::runtime_defaults();
        assert_eq!(table.required("session_branch"), Some("sessions"));
        assert_eq!(table.required("session_navigate"), Some("sessions"));
        assert_eq!(table.required("gateway_reload"), Some("admin"));
        assert_eq!(table.required("agent_interrupt"), None);
        assert_eq!(table.required("read"), None);
        table.require("discord_send_file", "files");
        assert_eq!(table.required("discord_send_file"), Some("files"));
        assert_eq!(ScopeTable::empty().required("gateway_reload"), None);
    }

    #[test]
    fn star_grants_everything() {
        let star = vec!["*".to_owned()];
        let sessions = vec!["sessions".to_owned()];
        assert!(has_scope(&star, "admin"));
        assert!(has_scope(&sessions, "sessions"));
        assert!(!has_scope(&sessions, "admin"));
        assert!(!has_scope(&[], "sessions"));
    }
}
