//! `bash` under `pi-sandbox`: pi's bash tool (streaming, truncation, timeout and
//! process-group kill) with `pi-sandbox <rules> -- <bash> -c` in place of the shell, so
//! name, schema and output stay the bash tool's and nothing is written to disk for it.
//! The configured timeout is the default timeout and caps what a call may ask for.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::tools::bash::{BashOptions, Launcher, bash_tool, resolve_shell};
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};

use super::exec::SandboxedExec;
use super::{SandboxConfig, SandboxError, confine};

/// Builds the `bash` tool whose commands run under `pi-sandbox`.
pub struct SandboxedBash {
    config: SandboxConfig,
    cwd: PathBuf,
    options: BashOptions,
}

impl SandboxedBash {
    /// A sandboxed bash running commands in `cwd` with default [`BashOptions`].
    pub fn new(config: SandboxConfig, cwd: impl Into<PathBuf>) -> Self {
        Self {
            config,
            cwd: cwd.into(),
            options: BashOptions::default(),
        }
    }

    /// The bash tool's settings (`shell` is the shell run inside the sandbox).
    pub fn options(mut self, options: BashOptions) -> Self {
        self.options = options;
        self
    }

    /// Checks Landlock, the launcher and the paths, and builds the tool.
    pub fn build(self) -> Result<Arc<dyn AgentTool>, SandboxError> {
        check_ready(&self.config, &self.cwd)?;
        let shell = resolve_shell(self.options.shell.as_deref())
            .map_err(|e| SandboxError::Setup(e.to_string()))?;
        let mut args = self.config.launcher_args(&self.cwd);
        args.push(shell.into_os_string());
        args.push("-c".into());
        let max = self.config.timeout;
        let inner = bash_tool(
            self.cwd,
            BashOptions {
                shell: None,
                launcher: Some(Launcher {
                    program: self.config.launcher.clone(),
                    args,
                }),
                default_timeout: default_timeout(self.options.default_timeout, max),
                command_prefix: self.options.command_prefix,
                keep_background: self.options.keep_background,
                session_env: self.options.session_env,
            },
        );
        Ok(Arc::new(ClampedBash { inner, max }))
    }
}

/// Replaces the tool named `bash` with [`SandboxedBash`] and `exec` with [`SandboxedExec`]
/// (both confined by `config`, running in `cwd`), and confines the file tools' paths;
/// other tools are kept as they are.
/// Fails with [`SandboxError::Unavailable`] when there is something to confine but no Landlock.
pub fn sandbox_tools(
    tools: Vec<Arc<dyn AgentTool>>,
    config: &SandboxConfig,
    cwd: &Path,
    bash: BashOptions,
) -> Result<Vec<Arc<dyn AgentTool>>, SandboxError> {
    let guard = super::paths::PathGuard::new(config, cwd);
    tools
        .into_iter()
        .map(|tool| match tool.name() {
            "bash" => SandboxedBash::new(config.clone(), cwd)
                .options(bash.clone())
                .build(),
            "exec" => SandboxedExec::new(config.clone(), cwd)
                .default_timeout(bash.default_timeout)
                .build(),
            _ => Ok(super::file_tools::confine(tool, &guard, cwd)),
        })
        .collect()
}

/// Fails fast when commands could never run: no Landlock, no launcher, a missing path.
pub(super) fn check_ready(config: &SandboxConfig, cwd: &Path) -> Result<(), SandboxError> {
    confine::landlock_available()?;
    if !config.launcher.is_file() {
        return Err(SandboxError::LauncherNotFound(
            config.launcher.display().to_string(),
        ));
    }
    for path in config
        .allowed_read_paths
        .iter()
        .chain(&config.allowed_write_paths)
    {
        confine::rule_path(path, cwd)?;
    }
    Ok(())
}

/// The smaller of the two timeouts, or whichever is set.
pub(super) fn default_timeout(
    requested: Option<Duration>,
    max: Option<Duration>,
) -> Option<Duration> {
    match (requested, max) {
        (Some(requested), Some(max)) => Some(requested.min(max)),
        (requested, max) => requested.or(max),
    }
}

/// `args` with a `timeout` above `max` (seconds) lowered to `max`.
pub(super) fn clamp_timeout(mut args: Value, max: Option<Duration>) -> Value {
    let Some(max) = max else { return args };
    let max_secs = max.as_secs_f64();
    if let Some(object) = args.as_object_mut() {
        let too_long = object
            .get("timeout")
            .and_then(Value::as_f64)
            .is_some_and(|secs| secs > max_secs);
        if too_long {
            object.insert("timeout".to_owned(), json!(max_secs));
        }
    }
    args
}

/// The bash tool under the launcher, with the timeout argument capped.
struct ClampedBash {
    inner: Arc<dyn AgentTool>,
    max: Option<Duration>,
}

impl AgentTool for ClampedBash {
    crate::delegate_tool_description!();

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        (self.inner).execute(
            tool_call_id,
            clamp_timeout(args, self.max),
            cancel,
            on_update,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_capped() {
        let max = Some(Duration::from_secs(10));
        let clamped = clamp_timeout(json!({"command": "x", "timeout": 600}), max);
        assert_eq!(clamped["timeout"].as_f64(), Some(10.0));
        let kept = clamp_timeout(json!({"command": "x", "timeout": 5}), max);
        assert_eq!(kept["timeout"], json!(5));
        let absent = clamp_timeout(json!({"command": "x"}), max);
        assert!(absent.get("timeout").is_none());
        let unbounded = clamp_timeout(json!({"command": "x", "timeout": 600}), None);
        assert_eq!(unbounded["timeout"], json!(600));

        let secs = |s| Some(Duration::from_secs(s));
        assert_eq!(default_timeout(None, secs(10)), secs(10));
        assert_eq!(default_timeout(secs(30), secs(10)), secs(10));
        assert_eq!(default_timeout(secs(5), secs(10)), secs(5));
        assert_eq!(default_timeout(secs(5), None), secs(5));
        assert_eq!(default_timeout(None, None), None);
    }
}
