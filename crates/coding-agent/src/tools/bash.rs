//! The `bash` tool: runs a shell command in the session cwd, streams its combined output as
//! tool updates, keeps the tail of long output (the rest goes to a temp file) and reports a
//! failing exit code, a timeout or an abort as an error result.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::InputBlock;

use crate::tools::bash_output::{OutputSnapshot, format_output, update_details};
use crate::tools::bash_process::{CommandOutput, RunOptions, run_command, with_command_prefix};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

pub use crate::tools::bash_process::{Launcher, RunError, resolve_shell};

/// Settings of the `bash` tool.
#[derive(Clone, Default)]
pub struct BashOptions {
    /// The shell (settings `shellPath`); `None` uses `/bin/bash`, `bash` on `PATH`, or `sh`.
    pub shell: Option<PathBuf>,
    /// Runs each command instead of `<shell> -c` (the sandbox's launcher).
    pub launcher: Option<Launcher>,
    /// The timeout of calls that give none; `None` means no timeout.
    pub default_timeout: Option<Duration>,
    /// Lines run before every command (settings `shellCommandPrefix`).
    pub command_prefix: Option<String>,
    /// Leave background processes running after the command (settings
    /// `bash.keepBackgroundProcesses`); by default they are ended with the shell.
    pub keep_background: bool,
    /// The session's variables (`PI_SESSION_ID`, …) each command gets.
    pub session_env: crate::tools::bash_env::SessionEnv,
}

impl BashOptions {
    /// The options as settings give them: `shellPath`, `shellCommandPrefix`, a default
    /// timeout of 10 minutes unless `bash.timeoutSeconds` says otherwise (0 means none),
    /// and `bash.keepBackgroundProcesses`.
    pub fn from_settings(settings: &crate::config::settings::Settings) -> Self {
        let bash = settings.bash.clone().unwrap_or_default();
        let seconds = bash.timeout_seconds.unwrap_or(600);
        Self {
            shell: settings.shell(),
            launcher: None,
            default_timeout: (seconds > 0).then(|| Duration::from_secs(seconds)),
            command_prefix: settings.shell_command_prefix.clone(),
            keep_background: bash.keep_background_processes.unwrap_or(false),
            session_env: Default::default(),
        }
    }
}

/// The `bash` tool running commands in `cwd`.
pub fn bash_tool(cwd: PathBuf, options: BashOptions) -> Arc<dyn AgentTool> {
    let description = format!(
        "Run a bash command in the current working directory and get back its stdout and \
         stderr together. Only the last {DEFAULT_MAX_LINES} lines or {}KB of output are \
         returned, whichever limit is reached first; when output is cut, the complete output \
         is saved to a temp file. A timeout in seconds may be given.",
        DEFAULT_MAX_BYTES / 1024
    );
    let timeout_doc = match options.default_timeout {
        None => "Timeout in seconds (optional, no default timeout)".to_owned(),
        Some(default) => format!(
            "Timeout in seconds (optional, default {})",
            seconds_label(default.as_secs_f64())
        ),
    };
    let parameters = json!({
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": { "type": "string", "description": "Bash command to execute" },
            "timeout": { "type": "number", "description": timeout_doc },
        },
    });
    Arc::new(BashTool {
        cwd,
        options,
        description,
        parameters,
        output_schema: super::bash_structured::schema(),
    })
}

struct BashTool {
    cwd: PathBuf,
    options: BashOptions,
    description: String,
    parameters: Value,
    output_schema: Value,
}

impl AgentTool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// Strict JSON-schema sampling where the model's API has it, as pi 1.6's built-ins ask.
    fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
        Some(super::STRICT_IF_POSSIBLE)
    }

    /// What a codemode script's call resolves to: the whole output (up to 1 MiB), the
    /// exit code and the time it took, also when the command failed.
    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output_schema)
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let parsed = parse_args(&args, self.options.default_timeout);
        let cwd = self.cwd.clone();
        let options = self.options.clone();
        Box::pin(async move {
            let (command, timeout) = parsed?;
            let command = with_command_prefix(options.command_prefix.as_deref(), &command);
            on_update(AgentToolResult::default());
            if let Some(client) = super::client_terminal::get() {
                let started = std::time::Instant::now();
                let shown = Arc::clone(&on_update);
                let run = client
                    .run(
                        &command,
                        &cwd,
                        timeout.as_ref().map(|(duration, _)| *duration),
                        cancel,
                        Box::new(move |terminal_id: String| {
                            shown(AgentToolResult {
                                details: Some(json!({ "terminalId": terminal_id })),
                                ..AgentToolResult::default()
                            });
                        }),
                    )
                    .await
                    .map_err(ToolError::new)?;
                let output = from_terminal(run);
                let mut result = tool_result(&output, timeout.map(|(_, label)| label))?;
                result.structured_content = Some(Box::new(super::bash_structured::value(
                    &output,
                    started.elapsed(),
                )));
                return Ok(result);
            }
            let updates = Arc::clone(&on_update);
            let run = RunOptions {
                shell: options.shell,
                launcher: options.launcher,
                timeout: timeout.as_ref().map(|(duration, _)| *duration),
                cancel,
                on_update: Some(Arc::new(move |snapshot: &OutputSnapshot| {
                    updates(update_result(snapshot));
                })),
                on_chunk: None,
                keep_background: options.keep_background,
                session_env: options.session_env.vars(),
            };
            let started = std::time::Instant::now();
            let output = run_command(&command, &cwd, run)
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            let mut result = tool_result(&output, timeout.map(|(_, label)| label))?;
            result.structured_content = Some(Box::new(super::bash_structured::value(
                &output,
                started.elapsed(),
            )));
            Ok(result)
        })
    }
}

/// The command, and the timeout with its label for messages.
type ParsedArgs = (String, Option<(Duration, String)>);

fn parse_args(args: &Value, default: Option<Duration>) -> Result<ParsedArgs, ToolError> {
    let command = args
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new("The bash tool needs a string `command` argument"))?
        .to_owned();
    let requested = match args.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(_) => return Err(ToolError::new(INVALID_TIMEOUT)),
    };
    let timeout = match requested {
        Some(secs) => Some((checked_timeout(secs)?, seconds_label(secs))),
        None => default.map(|duration| (duration, seconds_label(duration.as_secs_f64()))),
    };
    Ok((command, timeout))
}

const INVALID_TIMEOUT: &str = "Invalid timeout: must be a finite number of seconds";

/// The longest timeout, as pi's: the largest delay a JavaScript timer takes (ms).
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// A requested timeout, refused as pi 1.6.0 refuses it (dist/core/tools/bash.js
/// `resolveTimeoutMs`) when it is not a positive finite number or is over the maximum.
fn checked_timeout(secs: f64) -> Result<Duration, ToolError> {
    if !secs.is_finite() || secs <= 0.0 {
        return Err(ToolError::new(INVALID_TIMEOUT));
    }
    if secs * 1000.0 > MAX_TIMEOUT_MS {
        return Err(ToolError::new(format!(
            "Invalid timeout: maximum is {} seconds",
            seconds_label(MAX_TIMEOUT_MS / 1000.0)
        )));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| ToolError::new(INVALID_TIMEOUT))
}

/// Seconds as a JavaScript number prints: `5`, `0.5`.
fn seconds_label(secs: f64) -> String {
    format!("{secs}")
}

fn update_result(snapshot: &OutputSnapshot) -> AgentToolResult {
    AgentToolResult {
        content: vec![InputBlock::text(snapshot.content.clone())],
        details: Some(update_details(snapshot)),
        terminate: None,
        is_error: false,
        structured_content: None,
    }
}

/// The notice telling the model that what its command left running was ended.
pub fn ended_notice(count: usize) -> String {
    let what = if count == 1 {
        "1 process".to_owned()
    } else {
        format!("{count} processes")
    };
    format!(
        "[Ended {what} left running in the background: processes a command starts do not \
         outlive it]"
    )
}

/// `text`, a blank line, then `status` (just `status` when there is no text).
fn with_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_owned()
    } else {
        format!("{text}\n\n{status}")
    }
}

/// A command the client's terminal ran, as pi's own runs end: the output cut to the tail
/// the model sees.
fn from_terminal(run: super::client_terminal::TerminalRun) -> CommandOutput {
    let truncation = super::truncate::truncate_tail(
        &run.output,
        super::truncate::DEFAULT_MAX_LINES,
        super::truncate::DEFAULT_MAX_BYTES,
    );
    let last_line_bytes = run.output.rsplit('\n').next().map_or(0, str::len);
    CommandOutput {
        output: truncation.content.clone(),
        exit_code: run.exit_code,
        signal: run
            .signal
            .as_deref()
            .and_then(super::client_terminal::signal_number),
        cancelled: run.cancelled,
        timed_out: run.timed_out,
        truncation,
        full_output_path: None,
        last_line_bytes,
        ended_processes: 0,
        shell_exit_before_timeout: None,
    }
}

fn snapshot_of(output: &CommandOutput) -> OutputSnapshot {
    OutputSnapshot {
        content: output.output.clone(),
        truncation: output.truncation.clone(),
        full_output_path: output.full_output_path.clone(),
    }
}

/// The tool result of a command that ran: success for exit code 0, otherwise an error
/// carrying the output and what went wrong.
fn tool_result(
    output: &CommandOutput,
    timeout_label: Option<String>,
) -> Result<AgentToolResult, ToolError> {
    let snapshot = snapshot_of(output);
    if output.cancelled || output.timed_out {
        let (text, _) = format_output(&snapshot, output.last_line_bytes, "");
        let status = if output.cancelled {
            "Command aborted".to_owned()
        } else {
            let mut status = format!(
                "Command timed out after {} seconds",
                timeout_label.unwrap_or_default()
            );
            // As pi 1.6.0 words it (tenths of a second, as JavaScript prints them).
            if let Some((code, after)) = output.shell_exit_before_timeout {
                let tenths = (after.as_secs_f64() * 1000.0 / 100.0).round() / 10.0;
                status.push_str(&format!(
                    ". The shell exited with code {code} after {} seconds, but background \
                     processes it started kept writing output until the timeout.",
                    seconds_label(tenths)
                ));
            }
            status
        };
        return Err(ToolError::new(with_status(&text, &status)));
    }
    let (mut text, mut details) = format_output(&snapshot, output.last_line_bytes, "(no output)");
    if output.ended_processes > 0 {
        text = with_status(&text, &ended_notice(output.ended_processes));
        let mut map = match details {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        map.insert("endedProcesses".to_owned(), json!(output.ended_processes));
        details = Some(Value::Object(map));
    }
    // A shell killed by a signal exits with 128 + its number, as pi reports it.
    let code = match (output.exit_code, output.signal) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    // A failing command is an error result that keeps its details (pi 1.6.0).
    let (text, is_error) = if code == 0 {
        (text, false)
    } else {
        (
            with_status(&text, &format!("Command exited with code {code}")),
            true,
        )
    };
    Ok(AgentToolResult {
        content: vec![InputBlock::text(text)],
        details,
        terminate: None,
        is_error,
        structured_content: None,
    })
}
