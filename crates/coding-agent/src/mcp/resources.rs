//! The resource tools of pi 1.5 (Codex's and opencode's): `list_mcp_resources`,
//! `list_mcp_resource_templates` and `read_mcp_resource`, over every connected server that
//! offers resources and is not hidden. Listings are JSON: `{server?, resources, nextCursor?}`
//! for one server's page, every page of every server without one.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_mcp::connection::{Connection, State};
use pi_mcp::content::Block;
use pi_mcp::exposure::Exposure;
use rmcp::model::{ContentBlock, EmbeddedResource};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub const LIST_RESOURCES: &str = "list_mcp_resources";
pub const LIST_TEMPLATES: &str = "list_mcp_resource_templates";
pub const READ_RESOURCE: &str = "read_mcp_resource";

/// Which of the three tools.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Resources,
    Templates,
    Read,
}

/// One resource tool over the servers of a session.
pub struct ResourceTool {
    kind: Kind,
    connections: Vec<Arc<Connection>>,
    parameters: Value,
}

/// The three tools, when a connected, not hidden server offers resources and one such
/// server's exposure declares tools.
pub fn tools(connections: &[Arc<Connection>]) -> Vec<Arc<dyn AgentTool>> {
    let offering: Vec<&Arc<Connection>> =
        connections.iter().filter(|c| offers_resources(c)).collect();
    if !offering
        .iter()
        .any(|c| c.entry.config.exposure().declared())
    {
        return Vec::new();
    }
    [Kind::Resources, Kind::Templates, Kind::Read]
        .into_iter()
        .map(|kind| {
            Arc::new(ResourceTool {
                kind,
                connections: connections.to_vec(),
                parameters: parameters(kind),
            }) as Arc<dyn AgentTool>
        })
        .collect()
}

fn offers_resources(connection: &Connection) -> bool {
    let status = connection.status();
    status.state == State::Connected
        && status.has_resources
        && connection.entry.config.exposure() != Exposure::Hidden
}

fn parameters(kind: Kind) -> Value {
    if kind == Kind::Read {
        return json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources."},
                "uri": {"type": "string", "description": "Resource URI to read. Must be one of the URIs returned by list_mcp_resources."}
            },
            "required": ["server", "uri"],
            "additionalProperties": false
        });
    }
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "MCP server name. Omit to list every server with resources."},
            "cursor": {"type": "string", "description": "Opaque cursor from a previous call with the same server; omit for the first page."}
        },
        "additionalProperties": false
    })
}

impl AgentTool for ResourceTool {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Resources => LIST_RESOURCES,
            Kind::Templates => LIST_TEMPLATES,
            Kind::Read => READ_RESOURCE,
        }
    }

    fn description(&self) -> &str {
        match self.kind {
            Kind::Resources => {
                "Lists resources provided by MCP servers. Resources allow servers to share data that provides context to language models, such as files, database schemas, or application-specific information. Prefer resources over web search when possible."
            }
            Kind::Templates => {
                "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to share data that takes parameters and provides context to language models, such as files, database schemas, or application-specific information. Prefer resource templates over web search when possible."
            }
            Kind::Read => {
                "Read a specific resource from an MCP server given the server name and resource URI."
            }
        }
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let kind = self.kind;
        let servers: Vec<Arc<Connection>> = self
            .connections
            .iter()
            .filter(|c| offers_resources(c))
            .cloned()
            .collect();
        let name = self.name().to_owned();
        Box::pin(async move {
            let run = async {
                match kind {
                    Kind::Read => read(&servers, &args).await,
                    _ => list(kind, &servers, &args, &name).await,
                }
            };
            tokio::select! {
                result = run => result.map_err(ToolError::new),
                () = cancel.cancelled() => Err(ToolError::new("Operation aborted")),
            }
        })
    }
}

fn argument(args: &Value, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

fn find<'a>(servers: &'a [Arc<Connection>], name: &str) -> Result<&'a Arc<Connection>, String> {
    servers.iter().find(|c| c.name() == name).ok_or_else(|| {
        let available: Vec<&str> = servers.iter().map(|c| c.name()).collect();
        let listed = if available.is_empty() {
            String::new()
        } else {
            format!(". Servers with resources: {}", available.join(", "))
        };
        format!("MCP server \"{name}\" has no resources{listed}")
    })
}

/// A listed item without `_meta` and icons, tagged with its server; MCP App interfaces are
/// left out.
fn listed(server: &str, item: &Value) -> Option<Value> {
    let Value::Object(map) = item else {
        return None;
    };
    let uri = map
        .get("uri")
        .or_else(|| map.get("uriTemplate"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mime = map
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mime = mime.to_ascii_lowercase().replace([' ', '"'], "");
    let app = uri.starts_with("ui://") || mime.contains(";profile=mcp-app");
    if app {
        return None;
    }
    let mut out = Map::new();
    out.insert("server".into(), json!(server));
    for (k, v) in map {
        if k != "_meta" && k != "icons" {
            out.insert(k.clone(), v.clone());
        }
    }
    Some(Value::Object(out))
}

async fn list(
    kind: Kind,
    servers: &[Arc<Connection>],
    args: &Value,
    tool: &str,
) -> Result<AgentToolResult, String> {
    let key = if kind == Kind::Resources {
        "resources"
    } else {
        "resourceTemplates"
    };
    let server = argument(args, "server")?;
    let cursor = argument(args, "cursor")?;
    let payload = if let Some(name) = &server {
        let connection = find(servers, name)?;
        let (items, next) = if kind == Kind::Resources {
            connection.resources_page(cursor).await?
        } else {
            connection.templates_page(cursor).await?
        };
        let mut payload = Map::new();
        payload.insert("server".into(), json!(connection.name()));
        payload.insert(
            key.into(),
            Value::Array(
                items
                    .iter()
                    .filter_map(|i| listed(connection.name(), i))
                    .collect(),
            ),
        );
        if let Some(next) = next {
            payload.insert("nextCursor".into(), json!(next));
        }
        Value::Object(payload)
    } else {
        if cursor.is_some() {
            return Err("cursor can only be used when a server is specified".into());
        }
        let mut sorted: Vec<&Arc<Connection>> = servers.iter().collect();
        sorted.sort_by(|a, b| a.name().cmp(b.name()));
        let results = futures_util::future::join_all(sorted.iter().map(|c| async move {
            if kind == Kind::Resources {
                c.all_resources().await
            } else {
                c.all_templates().await
            }
        }))
        .await;
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for (connection, result) in sorted.iter().zip(results) {
            match result {
                Ok(found) => {
                    items.extend(found.iter().filter_map(|i| listed(connection.name(), i)))
                }
                Err(error) => errors.push(json!({"server": connection.name(), "error": error})),
            }
        }
        let mut payload = Map::new();
        payload.insert(key.into(), Value::Array(items));
        if !errors.is_empty() {
            payload.insert("errors".into(), Value::Array(errors));
        }
        Value::Object(payload)
    };
    Ok(json_result(tool, server.as_deref(), &payload))
}

fn json_result(tool: &str, server: Option<&str>, payload: &Value) -> AgentToolResult {
    let (blocks, saved) = pi_mcp::content::limit(vec![Block::Text(payload.to_string())], |text| {
        super::tool::save_text(text)
    });
    let mut details = json!({"server": server.unwrap_or(""), "tool": tool});
    if let Some(path) = saved {
        details["fullOutputPath"] = json!(path.display().to_string());
    }
    AgentToolResult {
        content: super::tool::to_input_blocks(blocks),
        details: Some(details),
        terminate: None,
        is_error: false,
        structured_content: Some(Box::new(payload.clone())),
    }
}

async fn read(servers: &[Arc<Connection>], args: &Value) -> Result<AgentToolResult, String> {
    let server = argument(args, "server")?.ok_or("server must be provided")?;
    let uri = argument(args, "uri")?.ok_or("uri must be provided")?;
    let connection = find(servers, &server)?;
    let contents = connection.read_resource(&uri).await?;
    let listed_contents: Vec<Value> = contents
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .map(|mut c| {
            if let Value::Object(map) = &mut c {
                map.remove("_meta");
            }
            c
        })
        .collect();
    let several = contents.len() > 1;
    let mut blocks = Vec::new();
    for item in contents {
        if several {
            let item_uri = serde_json::to_value(&item)
                .ok()
                .and_then(|v| v["uri"].as_str().map(str::to_owned))
                .unwrap_or_default();
            blocks.push(Block::Text(format!("{item_uri}:")));
        }
        let block = ContentBlock::Resource(EmbeddedResource::new(item));
        blocks.push(super::tool::model_block(connection.name(), &block, true));
    }
    if blocks.is_empty() {
        blocks.push(Block::Text(format!("Resource {uri} is empty.")));
    }
    let (blocks, saved) = pi_mcp::content::limit(blocks, super::tool::save_text);
    let mut details = json!({"server": connection.name(), "tool": READ_RESOURCE});
    if let Some(path) = saved {
        details["fullOutputPath"] = json!(path.display().to_string());
    }
    Ok(AgentToolResult {
        content: super::tool::to_input_blocks(blocks),
        details: Some(details),
        terminate: None,
        is_error: false,
        structured_content: Some(Box::new(
            json!({"server": connection.name(), "uri": uri, "contents": listed_contents}),
        )),
    })
}
