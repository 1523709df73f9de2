//! The MCP servers an editor hands over with a session, as `mcp.json` entries of pi's own:
//! stdio servers and HTTP servers (SSE ones are refused, as pi's MCP client speaks
//! streamable HTTP), their tools declared to the model directly, as the editor expects.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::McpServer;
use pi_mcp::config::{Scope, ServerEntry, validate};
use serde_json::{Map, Value, json};

/// The servers as pi's entries; a server pi cannot use is an error naming it.
pub fn entries(servers: &[McpServer]) -> Result<Vec<ServerEntry>, String> {
    servers.iter().map(entry).collect()
}

fn entry(server: &McpServer) -> Result<ServerEntry, String> {
    let (name, raw) = match server {
        McpServer::Stdio(stdio) => {
            let env: Map<String, Value> = stdio
                .env
                .iter()
                .map(|v| (v.name.clone(), json!(v.value)))
                .collect();
            let raw = json!({
                "command": stdio.command.display().to_string(),
                "args": stdio.args,
                "env": env,
                "exposure": "direct",
            });
            (stdio.name.clone(), raw)
        }
        McpServer::Http(http) => {
            let headers: Map<String, Value> = http
                .headers
                .iter()
                .map(|h| (h.name.clone(), json!(h.value)))
                .collect();
            let raw =
                json!({"type": "http", "url": http.url, "headers": headers, "exposure": "direct"});
            (http.name.clone(), raw)
        }
        McpServer::Sse(sse) => {
            return Err(format!(
                "MCP server \"{}\": SSE servers are not supported, only stdio and HTTP",
                sse.name
            ));
        }
        _ => return Err("An MCP server of a kind pi does not know".to_owned()),
    };
    let config = validate(&name, &raw)?;
    Ok(ServerEntry {
        name,
        config,
        source: PathBuf::from("ACP client"),
        scope: Scope::Project,
        override_path: None,
    })
}
