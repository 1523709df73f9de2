//! `read`, `write`, `edit`, `ls`, `grep` and `find` under the sandbox: the path a call
//! names is checked by the [`PathGuard`] before the tool runs, and the tool is given the
//! resolved real path, so it touches the file that was checked. A refusal is the call's
//! error. (Landlock confines `bash`; these tools run in the gateway's own threads, which
//! Landlock cannot confine per session, so the check is made here, in one place.)

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tools::path::{resolve_read_path, resolve_to_cwd};
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};

use super::paths::{Access, PathGuard};

/// The access a file tool needs to its `path`, and whether `path` may be left out (the cwd).
fn access_of(tool: &str) -> Option<(Access, bool)> {
    match tool {
        "read" => Some((Access::Read, false)),
        "write" | "edit" => Some((Access::Write, false)),
        "ls" | "grep" | "find" => Some((Access::Read, true)),
        _ => None,
    }
}

/// Wraps `tool` when it is a file tool; other tools come back as they are.
pub fn confine(tool: Arc<dyn AgentTool>, guard: &PathGuard, cwd: &Path) -> Arc<dyn AgentTool> {
    match access_of(tool.name()) {
        Some((access, optional)) => Arc::new(ConfinedFileTool {
            inner: tool,
            guard: guard.clone(),
            cwd: cwd.to_path_buf(),
            access,
            optional,
        }),
        None => tool,
    }
}

struct ConfinedFileTool {
    inner: Arc<dyn AgentTool>,
    guard: PathGuard,
    cwd: std::path::PathBuf,
    access: Access,
    optional: bool,
}

impl ConfinedFileTool {
    /// The arguments with `path` replaced by the real path it names, or the refusal.
    fn checked(&self, mut args: Value) -> Result<Value, String> {
        let given = args.get("path").and_then(Value::as_str).map(str::to_owned);
        let path = match (&given, self.optional) {
            (Some(path), _) => match self.access {
                Access::Read => resolve_read_path(path, &self.cwd),
                Access::Write => resolve_to_cwd(path, &self.cwd),
            },
            (None, true) => self.cwd.clone(),
            // The tool reports the missing argument itself.
            (None, false) => return Ok(args),
        };
        let real = self.guard.check(&path, self.access)?;
        if given.is_some()
            && let Some(object) = args.as_object_mut()
        {
            object.insert(
                "path".to_owned(),
                Value::String(real.to_string_lossy().into_owned()),
            );
        }
        Ok(args)
    }
}

impl AgentTool for ConfinedFileTool {
    crate::delegate_tool_description!();

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        match self.checked(args) {
            Ok(args) => self.inner.execute(tool_call_id, args, cancel, on_update),
            Err(refusal) => Box::pin(async move { Err(ToolError::new(refusal)) }),
        }
    }
}
