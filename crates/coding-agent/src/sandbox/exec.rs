//! `exec` under `pi-sandbox`: a program and its arguments, run without a shell. The bash tool
//! runs `pi-sandbox <rules> --argv-json <command>` in place of its shell, with the argument
//! array as a JSON string for the command, so output handling, timeouts and cancellation are
//! exactly the bash tool's while the array never passes through a shell.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::tools::bash::{BashOptions, Launcher, bash_tool};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};

use super::bash::{check_ready, clamp_timeout, default_timeout};
use super::{SandboxConfig, SandboxError};

/// Builds the `exec` tool: a program and its arguments run under `pi-sandbox`, no shell.
pub struct SandboxedExec {
    config: SandboxConfig,
    cwd: PathBuf,
    default_timeout: Option<Duration>,
}

impl SandboxedExec {
    /// A sandboxed exec running programs in `cwd`.
    pub fn new(config: SandboxConfig, cwd: impl Into<PathBuf>) -> Self {
        Self {
            config,
            cwd: cwd.into(),
            default_timeout: None,
        }
    }

    /// The timeout of calls that give none (capped by the config's timeout).
    pub fn default_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Checks Landlock, the launcher and the paths, and builds the tool.
    pub fn build(self) -> Result<Arc<dyn AgentTool>, SandboxError> {
        check_ready(&self.config, &self.cwd)?;
        let mut args = self.config.launcher_args(&self.cwd);
        // `--argv-json` takes the place of `-- <program> <args>`.
        if args.last().is_some_and(|last| last == "--") {
            args.pop();
        }
        // The bash tool's command, the JSON array, follows.
        args.push("--argv-json".into());
        let max = self.config.timeout;
        let default = default_timeout(self.default_timeout, max);
        let inner = bash_tool(
            self.cwd,
            BashOptions {
                shell: None,
                launcher: Some(Launcher {
                    program: self.config.launcher.clone(),
                    args,
                }),
                default_timeout: default,
                command_prefix: None,
                keep_background: false,
                session_env: Default::default(),
            },
        );
        Ok(Arc::new(ExecTool {
            inner,
            max,
            description: exec_description(),
            parameters: exec_parameters(default),
        }))
    }
}

/// The `exec` tool: its own name and schema over the bash tool under the launcher.
struct ExecTool {
    inner: Arc<dyn AgentTool>,
    max: Option<Duration>,
    description: String,
    parameters: Value,
}

fn exec_description() -> String {
    format!(
        "Run a program directly (no shell: no pipes, redirections or globbing) in the current \
         working directory and get back its stdout and stderr together. `command` is the \
         program followed by its arguments. Only the last {DEFAULT_MAX_LINES} lines or {}KB \
         of output are returned; when output is cut, the complete output is saved to a temp \
         file. A timeout in seconds may be given.",
        DEFAULT_MAX_BYTES / 1024
    )
}

fn exec_parameters(default: Option<Duration>) -> Value {
    let timeout_doc = match default {
        None => "Timeout in seconds (optional, no default timeout)".to_owned(),
        Some(default) => format!(
            "Timeout in seconds (optional, default {})",
            default.as_secs_f64()
        ),
    };
    json!({
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": {
                "type": "array",
                "items": { "type": "string" },
                "minItems": 1,
                "description": "The program and its arguments",
            },
            "timeout": { "type": "number", "description": timeout_doc },
        },
    })
}

/// The exec call as a call of the inner bash tool: the argv as a JSON string command.
fn exec_to_bash_args(args: &Value) -> Result<Value, ToolError> {
    let argv = args
        .get("command")
        .and_then(Value::as_array)
        .filter(|argv| !argv.is_empty() && argv.iter().all(Value::is_string))
        .ok_or_else(|| {
            ToolError::new("The exec tool needs `command`: a non-empty array of strings")
        })?;
    let mut bash_args = Map::new();
    bash_args.insert(
        "command".to_owned(),
        Value::String(Value::from(argv.clone()).to_string()),
    );
    if let Some(timeout) = args.get("timeout") {
        bash_args.insert("timeout".to_owned(), timeout.clone());
    }
    Ok(Value::Object(bash_args))
}

impl AgentTool for ExecTool {
    fn name(&self) -> &str {
        "exec"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let bash_args = match exec_to_bash_args(&args) {
            Ok(bash_args) => clamp_timeout(bash_args, self.max),
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        self.inner
            .execute(tool_call_id, bash_args, cancel, on_update)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_arguments_become_a_json_command() {
        let args =
            exec_to_bash_args(&json!({"command": ["echo", "a b", "$HOME"], "timeout": 3})).unwrap();
        assert_eq!(args["command"], json!(r#"["echo","a b","$HOME"]"#));
        assert_eq!(args["timeout"], json!(3));
        for bad in [
            json!({}),
            json!({"command": []}),
            json!({"command": ["a", 1]}),
        ] {
            assert!(exec_to_bash_args(&bad).is_err(), "{bad}");
        }
    }
}
