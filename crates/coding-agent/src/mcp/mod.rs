//! MCP in pi: the servers of `mcp.json` connected for a session, their tools as pi tools, and
//! the `pi mcp` commands. The protocol, configuration and naming live in `pi-mcp`.

pub mod command;
pub mod login;
pub mod resources;
pub mod runtime;
pub mod slash;
pub mod tool;
pub mod tool_search;

use std::path::Path;
use std::sync::Arc;

use pi_mcp::connection::ResolveValue;

use crate::config::values::{referenced_variables, resolve_config_value};

/// The `mcp` command as RPC `get_commands` lists it: in pi 1.6.0 it belongs to the built-in
/// MCP extension (dist/extensions/mcp/index.js), so it is an extension command whose source
/// is `builtin:mcp`.
pub fn command_entry() -> serde_json::Value {
    serde_json::json!({
        "name": "mcp",
        "description": "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
        "source": "extension",
        "sourceInfo": {
            "path": "builtin:mcp",
            "source": "builtin",
            "scope": "temporary",
            "origin": "top-level",
        },
    })
}

/// Resolves `env` and `headers` values as pi does; the error says what could not be read.
pub fn value_resolver() -> ResolveValue {
    Arc::new(|value: &str, what: &str| {
        resolve_config_value(value).ok_or_else(|| {
            let missing: Vec<String> = referenced_variables(value)
                .into_iter()
                .filter(|name| std::env::var(name).map_or(true, |v| v.is_empty()))
                .collect();
            if value.starts_with('!') {
                format!("Failed to resolve {what} from command")
            } else {
                format!(
                    "Failed to resolve {what} from environment variable: {}",
                    missing.join(", ")
                )
            }
        })
    })
}

/// The log every server writes to: `<agentDir>/mcp.log`.
pub fn server_log(agent_dir: &Path) -> Arc<pi_mcp::log::ServerLog> {
    Arc::new(pi_mcp::log::ServerLog::new(
        agent_dir.join("mcp.log"),
        crate::session::time::iso_now,
    ))
}

/// A provider's key for servers with `auth.provider`: its `/login` token (refreshed when it
/// expires within a minute), else its stored or environment API key.
pub fn provider_token(agent_dir: &Path) -> pi_mcp::connection::ProviderToken {
    let auth_path = agent_dir.join("auth.json");
    Arc::new(move |provider: String| {
        let auth_path = auth_path.clone();
        Box::pin(async move {
            if let Ok(Some(token)) =
                crate::config::oauth_refresh::fresh_oauth_key(&auth_path, &provider, 60_000).await
            {
                return Some(token);
            }
            crate::config::auth::AuthStorage::load(&auth_path)
                .api_key(&provider)
                .or_else(|| pi_ai::env_keys::get_env_api_key(&provider))
        })
    })
}
