//! A server's tool as a pi tool: named `mcp__<server>__<tool>`, labeled `server/tool`, its
//! schema an object schema, progress notifications as tool updates, an abort sent to the
//! server as a cancellation, and the result mapped as pi 1.5 maps it.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::{ImageContent, InputBlock, TextContent};
use pi_mcp::connection::{CallError, Connection};
use pi_mcp::content::{self, Block};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One MCP tool.
pub struct McpTool {
    connection: Arc<Connection>,
    /// The server's name of the tool.
    tool: String,
    name: String,
    label: String,
    description: String,
    parameters: Value,
    /// What a codemode script's call resolves to: the server's whole `CallToolResult`.
    output_schema: Value,
}

impl McpTool {
    pub fn new(connection: Arc<Connection>, tool: &rmcp::model::Tool, name: String) -> Self {
        let server = connection.name().to_owned();
        let title = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
        let description = tool
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_owned)
            .or(title)
            .unwrap_or_else(|| format!("MCP tool {} from server {server}", tool.name));
        Self {
            label: format!("{server}/{}", tool.name),
            tool: tool.name.to_string(),
            name,
            description,
            parameters: normalize_schema(&tool.input_schema),
            output_schema: result_schema(tool.output_schema.as_deref()),
            connection,
        }
    }
}

/// A `CallToolResult` as JSON Schema, its `structuredContent` as the tool declares it.
fn result_schema(structured: Option<&Map<String, Value>>) -> Value {
    json!({
        "type": "object",
        "properties": {
            "content": {"type": "array", "items": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}}},
            "structuredContent": structured.map_or(json!({}), |s| Value::Object(s.clone())),
            "isError": {"type": "boolean"}
        },
        "required": ["content"],
        "additionalProperties": true
    })
}

/// The input schema as an object schema: `type` defaults to `object`, `properties` to `{}`.
pub fn normalize_schema(schema: &Map<String, Value>) -> Value {
    let mut out = schema.clone();
    out.entry("type").or_insert_with(|| json!("object"));
    out.entry("properties").or_insert_with(|| json!({}));
    Value::Object(out)
}

impl AgentTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output_schema)
    }

    fn namespace(&self) -> Option<pi_agent_core::ToolNamespace> {
        let status = self.connection.status();
        Some(pi_agent_core::ToolNamespace {
            name: format!("mcp__{}", self.connection.name()),
            description: None,
            instructions: status.instructions.clone(),
        })
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let connection = self.connection.clone();
        let tool = self.tool.clone();
        Box::pin(async move {
            let server = connection.name().to_owned();
            let arguments = match args {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            let (progress, mut updates) = mpsc::unbounded_channel::<pi_mcp::connection::Progress>();
            let details = json!({"server": server, "tool": tool});
            let forward = {
                let details = details.clone();
                tokio::spawn(async move {
                    while let Some((done, total, message)) = updates.recv().await {
                        let text = message.unwrap_or_else(|| match total {
                            // `Display` prints whole floats as JavaScript does (`3`, not `3.0`).
                            Some(total) => format!("Progress {done}/{total}"),
                            None => format!("Progress {done}"),
                        });
                        on_update(AgentToolResult {
                            content: vec![InputBlock::text(text)],
                            details: Some(details.clone()),
                            terminate: None,
                            is_error: false,
                            structured_content: None,
                        });
                    }
                })
            };
            let outcome = connection
                .call_tool(&tool, arguments, cancel, progress)
                .await;
            let _ = forward.await;
            match outcome {
                Ok(result) => {
                    let readable = connection.status().has_resources;
                    Ok(convert(&server, &tool, &result, readable))
                }
                Err(CallError::Aborted) => Err(ToolError::new("Operation aborted")),
                Err(CallError::Connect(e) | CallError::Call(e)) => Err(ToolError::new(e)),
            }
        })
    }
}

/// The model's view of a result, as pi's `convertMcpResult` builds it.
pub fn convert(
    server: &str,
    tool: &str,
    result: &CallToolResult,
    readable: bool,
) -> AgentToolResult {
    let mut blocks: Vec<Block> = if result.content.is_empty() {
        content::to_blocks(result)
    } else {
        result
            .content
            .iter()
            .map(|block| model_block(server, block, readable))
            .collect()
    };
    let is_error = result.is_error == Some(true);
    let has_text = blocks
        .iter()
        .any(|b| matches!(b, Block::Text(t) if !t.is_empty()));
    if is_error && !has_text {
        blocks.push(Block::Text(format!(
            "MCP tool {server}/{tool} returned an error"
        )));
    }
    let (blocks, saved) = content::limit(blocks, save_text);
    let mut details = json!({"server": server, "tool": tool});
    if let Some(path) = saved {
        details["fullOutputPath"] = json!(path.display().to_string());
    }
    let mut whole = serde_json::to_value(result).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut whole {
        map.remove("_meta");
    }
    js_numbers(&mut whole);
    AgentToolResult {
        content: to_input_blocks(blocks),
        details: Some(details),
        terminate: None,
        is_error,
        structured_content: Some(Box::new(whole)),
    }
}

/// Whole numbers that went through an `f64` (an annotation's `priority`) written as
/// JavaScript writes them: `1`, not `1.0`.
pub(crate) fn js_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9_007_199_254_740_992.0
            {
                *value = json!(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(js_numbers),
        Value::Object(map) => map.values_mut().for_each(js_numbers),
        _ => {}
    }
}

/// Blocks as tool result content.
pub(crate) fn to_input_blocks(blocks: Vec<Block>) -> Vec<InputBlock> {
    blocks
        .into_iter()
        .map(|b| match b {
            Block::Text(text) => InputBlock::Text(TextContent::new(text)),
            Block::Image { data, mime_type } => {
                InputBlock::Image(ImageContent::new(data, mime_type))
            }
        })
        .collect()
}

/// One block: resource links name the resource (and how to read it), binary resources are
/// decoded when textual or saved to a file; the rest as `pi-mcp` maps it.
pub(crate) fn model_block(server: &str, block: &ContentBlock, readable: bool) -> Block {
    match block {
        ContentBlock::ResourceLink(link) => {
            let mut facts: Vec<String> = Vec::new();
            if let Some(mime) = &link.mime_type {
                facts.push(mime.clone());
            }
            if let Some(size) = link.size {
                facts.push(crate::tools::truncate::format_size(size as usize));
            }
            let facts = if facts.is_empty() {
                String::new()
            } else {
                format!(" ({})", facts.join(", "))
            };
            let description = link
                .description
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            let read = if readable {
                format!(". Read it with read_mcp_resource (server \"{server}\")")
            } else {
                String::new()
            };
            Block::Text(format!(
                "[Resource {} \"{}\"{facts}{description}{read}]",
                link.uri,
                link.title.as_deref().unwrap_or(&link.name)
            ))
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } if !mime_type
                .as_deref()
                .is_some_and(|m| m.starts_with("image/")) =>
            {
                binary_resource(uri, mime_type.as_deref(), blob)
            }
            _ => content::block(block),
        },
        _ => content::block(block),
    }
}

fn binary_resource(uri: &str, mime: Option<&str>, blob: &str) -> Block {
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .unwrap_or_default();
    let textual = mime.is_some_and(|m| {
        let m = m
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        m.starts_with("text/")
            || m == "application/json"
            || m.ends_with("+json")
            || m.ends_with("+xml")
    });
    if textual {
        return Block::Text(String::from_utf8_lossy(&data).into_owned());
    }
    let kind = format!(
        "{}, {}",
        mime.unwrap_or("unknown type"),
        crate::tools::truncate::format_size(data.len())
    );
    let extension = uri
        .rsplit('/')
        .next()
        .and_then(|last| last.rsplit_once('.'))
        .map(|(_, ext)| ext)
        .filter(|ext| {
            (1..=8).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric())
        })
        .map_or_else(|| ".bin".to_owned(), |ext| format!(".{ext}"));
    match save_bytes(&data, &extension) {
        Ok(path) => Block::Text(format!(
            "[Binary resource {uri} ({kind}) saved to {}]",
            path.display()
        )),
        Err(e) => Block::Text(format!(
            "[Binary resource {uri} ({kind}) could not be saved: {e}]"
        )),
    }
}

/// Saves a whole text that was cut for the model.
pub(crate) fn save_text(text: &str) -> std::io::Result<std::path::PathBuf> {
    save_bytes(text.as_bytes(), ".txt")
}

/// Writes bytes to a new file in the temp directory, kept after pi exits.
fn save_bytes(data: &[u8], extension: &str) -> std::io::Result<std::path::PathBuf> {
    let file = tempfile::Builder::new()
        .prefix("pi-mcp-")
        .suffix(extension)
        .tempfile()?;
    std::fs::write(file.path(), data)?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(path)
}
