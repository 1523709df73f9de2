//! The user's `!command` (interactive mode) and the RPC `bash` command with extensions: they
//! hear `user_bash` first, as in pi 1.6.0, and one may answer with its own result (recorded
//! as it is) or with its own operations (the command runs through them, e.g. over ssh or in
//! a sandbox). A handler error or an invalid answer fails the command without running it.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::bash::BashResult;
use super::{AgentSession, SessionOpError, lock};
use crate::extensions::UserBashAnswer;
use crate::tools::bash_process::ChunkFn;
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncate_tail};

impl AgentSession {
    /// Runs a `!command` typed by the user: through an extension when one answers
    /// `user_bash`, else as [`AgentSession::execute_bash`] does. An extension's own result
    /// is passed to `on_chunk` as well (the terminal UI shows it as the output).
    pub async fn execute_user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_chunk: Option<ChunkFn>,
    ) -> Result<BashResult, SessionOpError> {
        self.user_bash(command, exclude_from_context, on_chunk, true)
            .await
    }

    /// The RPC `bash` command: as [`Self::execute_user_bash`], but an extension's own
    /// result is only answered, not streamed as output (pi 1.6.0's RPC mode).
    pub async fn execute_rpc_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_chunk: Option<ChunkFn>,
    ) -> Result<BashResult, SessionOpError> {
        self.user_bash(command, exclude_from_context, on_chunk, false)
            .await
    }

    async fn user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_chunk: Option<ChunkFn>,
        echo_answer: bool,
    ) -> Result<BashResult, SessionOpError> {
        let runtime = self.extension_runtime().clone();
        if runtime.has_handlers("user_bash") {
            let cwd = self.cwd().display().to_string();
            let answer = runtime
                .emit_user_bash(
                    command,
                    exclude_from_context,
                    &cwd,
                    CancellationToken::new(),
                )
                .await
                .map_err(SessionOpError::new)?;
            match answer {
                Some(UserBashAnswer::Result(value)) => {
                    let result = bash_result(&value);
                    if let Some(on_chunk) = on_chunk.as_ref().filter(|_| echo_answer)
                        && !result.output.is_empty()
                    {
                        on_chunk(&result.output);
                    }
                    self.record_bash_result(command, &result, exclude_from_context);
                    return Ok(result);
                }
                Some(UserBashAnswer::Operations { backend, handle }) => {
                    let result = self
                        .run_through_operations(backend, handle, command, &cwd, on_chunk)
                        .await?;
                    self.record_bash_result(command, &result, exclude_from_context);
                    return Ok(result);
                }
                None => {}
            }
        }
        self.execute_bash(command, exclude_from_context, on_chunk)
            .await
    }

    /// `bash_exec` with the operations an extension returned; output streams to
    /// `on_chunk` and is kept (its tail, as pi's own bash keeps it).
    async fn run_through_operations(
        &self,
        backend: Arc<dyn crate::extensions::ExtensionBackend>,
        handle: Value,
        command: &str,
        cwd: &str,
        on_chunk: Option<ChunkFn>,
    ) -> Result<BashResult, SessionOpError> {
        let (key, cancel) = self.inner.bash_cancel.start();
        let output = Arc::new(Mutex::new(String::new()));
        let sink = {
            let output = output.clone();
            Arc::new(move |data: Value| {
                if let Value::String(text) = data {
                    if let Some(on_chunk) = &on_chunk {
                        on_chunk(&text);
                    }
                    lock(&output).push_str(&text);
                }
            })
        };
        let answer = backend
            .call_streaming(
                "bash_exec",
                json!({"handle": handle, "command": command, "cwd": cwd}),
                cancel.clone(),
                sink,
            )
            .await;
        self.inner.bash_cancel.done(key);
        let cancelled = cancel.is_cancelled();
        let answer = match answer {
            Ok(answer) => answer,
            Err(_) if cancelled => Value::Null,
            Err(error) => return Err(SessionOpError::new(error.0)),
        };
        let full = std::mem::take(&mut *lock(&output));
        let kept = truncate_tail(&full, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        Ok(BashResult {
            truncated: kept.truncated_by.is_some(),
            exit_code: if cancelled {
                None
            } else {
                answer
                    .get("exitCode")
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok())
            },
            cancelled,
            full_output_path: None,
            output: kept.content,
            ended_processes: 0,
        })
    }
}

/// A `BashResult` an extension returned (TypeScript field names).
fn bash_result(value: &Value) -> BashResult {
    BashResult {
        output: value
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        exit_code: value
            .get("exitCode")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok()),
        cancelled: value
            .get("cancelled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        truncated: value
            .get("truncated")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        full_output_path: value
            .get("fullOutputPath")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ended_processes: 0,
    }
}
