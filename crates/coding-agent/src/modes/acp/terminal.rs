//! The editor's terminals (`terminal/*`) as where `bash` runs, when the editor offers them:
//! the command shows live in the editor, and pi gets the output and exit status back. A
//! cancel or a timeout kills the command; the terminal is released once pi has its output.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, KillTerminalRequest, ReleaseTerminalRequest, TerminalOutputRequest,
    WaitForTerminalExitRequest,
};
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::link::Link;
use crate::tools::client_terminal::{ClientTerminal, TerminalRun};

/// How much output the editor keeps for pi (the model sees at most 50 KB of its tail).
const OUTPUT_BYTE_LIMIT: u64 = 1024 * 1024;

pub struct EditorTerminal {
    link: Arc<Link>,
}

impl EditorTerminal {
    pub fn new(link: Arc<Link>) -> Self {
        Self { link }
    }
}

impl ClientTerminal for EditorTerminal {
    fn run<'a>(
        &'a self,
        command: &'a str,
        cwd: &'a Path,
        timeout: Option<Duration>,
        cancel: CancellationToken,
        started: Box<dyn FnOnce(String) + Send + 'a>,
    ) -> BoxFuture<'a, Result<TerminalRun, String>> {
        Box::pin(async move {
            let connection = self
                .link
                .connection()
                .cloned()
                .ok_or("The editor is not connected")?;
            let session = self.link.session_id().ok_or("No session")?;
            let created = connection
                .send_request(
                    CreateTerminalRequest::new(session.clone(), "bash")
                        .args(vec!["-c".to_owned(), command.to_owned()])
                        .cwd(cwd.to_path_buf())
                        .output_byte_limit(OUTPUT_BYTE_LIMIT),
                )
                .block_task()
                .await
                .map_err(|e| e.message)?;
            let terminal = created.terminal_id;
            started(terminal.0.to_string());
            let waited = connection
                .send_request(WaitForTerminalExitRequest::new(
                    session.clone(),
                    terminal.clone(),
                ))
                .block_task();
            let deadline = async {
                match timeout {
                    Some(limit) => tokio::time::sleep(limit).await,
                    None => std::future::pending().await,
                }
            };
            let (cancelled, timed_out) = tokio::select! {
                _ = waited => (false, false),
                () = cancel.cancelled() => (true, false),
                () = deadline => (false, true),
            };
            if cancelled || timed_out {
                let _ = connection
                    .send_request(KillTerminalRequest::new(session.clone(), terminal.clone()))
                    .block_task()
                    .await;
            }
            let output = connection
                .send_request(TerminalOutputRequest::new(
                    session.clone(),
                    terminal.clone(),
                ))
                .block_task()
                .await
                .map_err(|e| e.message);
            let _ = connection
                .send_request(ReleaseTerminalRequest::new(session, terminal))
                .block_task()
                .await;
            let output = output?;
            let status = output.exit_status.unwrap_or_default();
            Ok(TerminalRun {
                output: output.output,
                exit_code: status.exit_code.and_then(|c| i32::try_from(c).ok()),
                signal: status.signal,
                cancelled,
                timed_out,
            })
        })
    }
}
