//! The `write` tool: creates or overwrites a file, creating missing parent directories.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::mutation::with_file_lock;
use super::path::resolve_to_cwd;
use super::read::{blocking, cancellable, fs_error_text, normalize_path, string_arg};

/// The `write` tool; see [`write_tool`].
pub struct WriteTool {
    cwd: PathBuf,
    parameters: Value,
}

/// The `write` tool, resolving relative paths against `cwd`.
pub fn write_tool(cwd: PathBuf) -> Arc<dyn AgentTool> {
    let parameters = json!({
        "type": "object",
        "required": ["path", "content"],
        "properties": {
            "path": {"type": "string", "description": "File to write, absolute or relative to the working directory"},
            "content": {"type": "string", "description": "The complete new contents of the file"}
        }
    });
    Arc::new(WriteTool { cwd, parameters })
}

impl AgentTool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        "Writes content to a file: a missing file is created, an existing one is replaced \
         entirely. Any missing parent directories are created as well."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// Strict JSON-schema sampling where the model's API has it, as pi 1.6's built-ins ask.
    fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
        Some(super::STRICT_IF_POSSIBLE)
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let cwd = self.cwd.clone();
        Box::pin(async move {
            let path = string_arg(&args, "path")?;
            let content = string_arg(&args, "content")?;
            let absolute = normalize_path(&resolve_to_cwd(&path, &cwd));
            if let Some(client) = super::client_files::get()
                && let Some(writing) = client.write_text(&absolute, &content)
            {
                with_file_lock(
                    &absolute,
                    cancellable(&cancel, async { writing.await.map_err(ToolError::new) }),
                )
                .await?;
                return Ok(AgentToolResult::text(format!(
                    "Successfully wrote to {path}"
                )));
            }
            let target = absolute.clone();
            let work = blocking(move || {
                if let Some(dir) = target.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| ToolError::new(fs_error_text(&e, "mkdir", Some(dir))))?;
                }
                super::atomic_write::write_atomically(&target, content.as_bytes())
                    .map_err(|e| ToolError::new(fs_error_text(&e, "open", Some(&target))))
            });
            with_file_lock(&absolute, cancellable(&cancel, work)).await?;
            // pi 1.6.0's words (dist/core/tools/write.js): no byte count.
            Ok(AgentToolResult::text(format!(
                "Successfully wrote to {path}"
            )))
        })
    }
}
