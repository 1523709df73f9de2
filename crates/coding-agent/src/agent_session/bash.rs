//! Bash run by the user (`!cmd`, `!!cmd`, the RPC `bash` command): the result becomes a
//! `bashExecution` message, held back while the agent streams so it never lands between a
//! tool call and its result.

use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentMessage, CustomMessage};

use super::bash_text;
use super::{AgentSession, Inner, SessionOpError, lock};
use crate::tools::bash_process::{ChunkFn, RunOptions, run_command, with_command_prefix};

/// A user's `!command` (into the context) or `!!command` (kept out of it): the command and
/// whether it is excluded; `None` for other text or an empty command.
pub fn parse_bash_input(text: &str) -> Option<(&str, bool)> {
    let (rest, exclude) = match text.strip_prefix("!!") {
        Some(rest) => (rest, true),
        None => (text.strip_prefix('!')?, false),
    };
    let command = rest.trim();
    (!command.is_empty()).then_some((command, exclude))
}

/// What a user bash command produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    pub output: String,
    /// `None` when the command was cancelled or killed by a signal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Processes the command left running that were ended with it (not in pi's shape;
    /// left out when none were).
    #[serde(skip_serializing_if = "is_zero")]
    pub ended_processes: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The cancel tokens of the user bash commands running now: several may run at once, and
/// an abort reaches every one of them (pi 0.83).
#[derive(Default)]
pub(super) struct BashCancels {
    next: std::sync::atomic::AtomicU64,
    running: std::sync::Mutex<Vec<(u64, CancellationToken)>>,
}

impl BashCancels {
    /// A token for a command starting now, and its key for [`Self::done`].
    pub(super) fn start(&self) -> (u64, CancellationToken) {
        let key = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cancel = CancellationToken::new();
        lock(&self.running).push((key, cancel.clone()));
        (key, cancel)
    }

    /// Forgets the command with this key.
    pub(super) fn done(&self, key: u64) {
        lock(&self.running).retain(|(k, _)| *k != key);
    }

    fn cancel_all(&self) {
        for (_, cancel) in lock(&self.running).iter() {
            cancel.cancel();
        }
    }

    fn any(&self) -> bool {
        !lock(&self.running).is_empty()
    }
}

impl AgentSession {
    /// Runs `command` in the session's directory (with the settings' shell and prefix) and
    /// records it; `exclude_from_context` (`!!`) keeps it out of what the model sees.
    pub async fn execute_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_chunk: Option<ChunkFn>,
    ) -> Result<BashResult, SessionOpError> {
        let settings = self.inner.settings.get();
        let (key, cancel) = self.inner.bash_cancel.start();
        let resolved = with_command_prefix(settings.shell_command_prefix.as_deref(), command);
        // Chunks reach the caller sanitized, as the recorded output is (pi 1.6.0).
        let (on_chunk, flush) = match on_chunk {
            Some(on_chunk) => {
                let (send, flush) = bash_text::sanitized_chunks(on_chunk);
                (Some(send), Some(flush))
            }
            None => (None, None),
        };
        let outcome = run_command(
            &resolved,
            self.cwd(),
            RunOptions {
                shell: settings.shell(),
                launcher: None,
                timeout: None,
                cancel: cancel.clone(),
                on_update: None,
                on_chunk,
                keep_background: settings
                    .bash
                    .as_ref()
                    .and_then(|b| b.keep_background_processes)
                    .unwrap_or(false),
                // `!` commands get no session variables, as in pi (only the bash tool).
                session_env: Vec::new(),
            },
        )
        .await;
        self.inner.bash_cancel.done(key);
        if let Some(flush) = flush {
            flush();
        }
        let output = outcome.map_err(|e| SessionOpError::new(e.0))?;
        let result = BashResult {
            truncated: output.truncated(),
            exit_code: if output.cancelled {
                None
            } else {
                output.exit_code
            },
            cancelled: output.cancelled,
            full_output_path: output
                .full_output_path
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned()),
            output: bash_text::sanitize(&output.output),
            ended_processes: output.ended_processes,
        };
        self.record_bash_result(command, &result, exclude_from_context);
        Ok(result)
    }

    /// Adds a `bashExecution` message for `result`: at once when idle, after the run when
    /// the agent streams.
    pub fn record_bash_result(&self, command: &str, result: &BashResult, exclude: bool) {
        let message = bash_message(command, result, exclude);
        if self.is_streaming() {
            lock(&self.inner.pending_bash).push(message);
        } else {
            self.inner.add_bash_message(message);
        }
    }

    /// Stops every running user bash command.
    pub fn abort_bash(&self) {
        self.inner.bash_cancel.cancel_all();
    }

    /// Whether a user bash command runs.
    pub fn is_bash_running(&self) -> bool {
        self.inner.bash_cancel.any()
    }
}

impl Inner {
    fn add_bash_message(&self, message: AgentMessage) {
        self.agent.append_message(message.clone());
        if let Err(e) = lock(&self.session).append_message(message) {
            eprintln!("Warning: {e}");
        }
    }

    /// Adds the bash messages held back during a run.
    pub(super) fn flush_pending_bash(&self) {
        let pending = std::mem::take(&mut *lock(&self.pending_bash));
        for message in pending {
            self.add_bash_message(message);
        }
    }
}

/// `{"role":"bashExecution","command","output","exitCode","cancelled","truncated",
/// "fullOutputPath"?,"timestamp","excludeFromContext"?}`.
fn bash_message(command: &str, result: &BashResult, exclude: bool) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("command".into(), command.into());
    fields.insert("output".into(), result.output.clone().into());
    if let Some(code) = result.exit_code {
        fields.insert("exitCode".into(), code.into());
    }
    fields.insert("cancelled".into(), result.cancelled.into());
    fields.insert("truncated".into(), result.truncated.into());
    if let Some(path) = &result.full_output_path {
        fields.insert("fullOutputPath".into(), path.clone().into());
    }
    fields.insert("timestamp".into(), Value::from(pi_ai::now_ms()));
    if exclude {
        fields.insert("excludeFromContext".into(), true.into());
    }
    AgentMessage::Custom(CustomMessage::new("bashExecution", fields))
}

#[cfg(test)]
mod tests {
    use super::parse_bash_input;

    #[test]
    fn bang_and_double_bang() {
        assert_eq!(parse_bash_input("!ls -la"), Some(("ls -la", false)));
        assert_eq!(
            parse_bash_input("!! git status "),
            Some(("git status", true))
        );
        assert_eq!(parse_bash_input("!  "), None);
        assert_eq!(parse_bash_input("hello !ls"), None);
    }
}
