//! A stdio server's process: started in its own process group (so servers started through
//! `npx` or `uvx` stop with their wrapper), stderr kept as a tail for errors and written to
//! the log, stopped by closing stdin, then SIGTERM, then SIGKILL to the whole group; what a
//! server leaves running in its group is killed when it exits.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::log::ServerLog;

/// Characters of stderr kept for error messages.
const STDERR_TAIL_CHARS: usize = 2_000;
/// How long a server gets to exit after stdin closes, and again after SIGTERM.
const STOP_GRACE: Duration = Duration::from_millis(1_500);

/// What starts a stdio server.
pub struct Launch<'a> {
    pub server: &'a str,
    pub command: &'a str,
    pub args: &'a [String],
    pub env: Vec<(String, String)>,
    pub cwd: &'a Path,
}

/// A running server process. A task owns the child and waits for it: when the server's
/// main process exits, whatever it left in its group is killed at once, so a background
/// process holding its stdout cannot keep the connection waiting (pi 1.6.0).
pub struct ServerProcess {
    exit: watch::Receiver<Option<ExitStatus>>,
    group: Option<Pid>,
    stderr: Arc<Mutex<String>>,
    /// Set when the server's output stopped at a line that is not JSON.
    pub invalid: crate::json_lines::Invalid,
}

impl ServerProcess {
    /// Starts the server; returns it and its stdout and stdin for the transport.
    pub fn spawn(
        launch: &Launch<'_>,
        log: Arc<ServerLog>,
    ) -> std::io::Result<(Self, ChildStdout, ChildStdin)> {
        let mut child = Command::new(launch.command)
            .args(launch.args)
            // pi's children know they run under it (pi 0.84: AI_AGENT, PI_CODING_AGENT).
            .env("PI_CODING_AGENT", "true")
            .env("AI_AGENT", "pi")
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other(
                "the server's stdio could not be opened",
            ));
        };
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(pipe) = child.stderr.take() {
            let tail = stderr.clone();
            let server = launch.server.to_owned();
            tokio::spawn(async move {
                let mut lines = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    log.stderr(&server, &line);
                    if let Ok(mut tail) = tail.lock() {
                        if !tail.is_empty() {
                            tail.push('\n');
                        }
                        tail.push_str(&line);
                        keep_tail(&mut tail, STDERR_TAIL_CHARS * 2);
                    }
                }
            });
        }
        let (report, exit) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await;
            if let Some(group) = group {
                let _ = killpg(group, Signal::SIGKILL);
            }
            if let Ok(status) = status {
                let _ = report.send(Some(status));
            }
        });
        Ok((
            Self {
                exit,
                group,
                stderr,
                invalid: crate::json_lines::Invalid::default(),
            },
            stdout,
            stdin,
        ))
    }

    /// The last stderr the server wrote (at most 2,000 characters), trimmed.
    pub fn stderr_tail(&self) -> Option<String> {
        let tail = self.stderr.lock().ok()?.trim().to_owned();
        let mut tail = tail;
        keep_tail(&mut tail, STDERR_TAIL_CHARS);
        (!tail.is_empty()).then_some(tail)
    }

    /// Why the server's output was cut off, when it sent something that is not JSON.
    pub fn invalid_output(&self) -> Option<String> {
        self.invalid.lock().ok()?.clone()
    }

    /// How the server ended, when it did: `exited with code 3`, `was killed by SIGKILL`.
    pub fn ended(&mut self) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        let status = (*self.exit.borrow())?;
        Some(match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => match Signal::try_from(signal) {
                Ok(signal) => format!("was killed by {}", signal.as_str()),
                Err(_) => format!("was killed by signal {signal}"),
            },
            (None, None) => "exited".to_owned(),
        })
    }

    /// Stops the server: the caller closed stdin (by dropping the transport); then SIGTERM
    /// and SIGKILL to the group for whatever is still running.
    pub async fn stop(mut self) {
        if tokio::time::timeout(STOP_GRACE, self.exited())
            .await
            .is_err()
        {
            self.signal(Signal::SIGTERM);
            if tokio::time::timeout(STOP_GRACE, self.exited())
                .await
                .is_err()
            {
                self.signal(Signal::SIGKILL);
                self.exited().await;
            }
        }
        // What the server left in its group was killed when it exited (the watching task).
    }

    /// Waits until the server's main process exited.
    async fn exited(&mut self) {
        let _ = self.exit.wait_for(Option::is_some).await;
    }

    /// Signals the group while its leader runs; after that the group is gone (killed when
    /// the leader exited) and its id may name another group.
    fn signal(&self, signal: Signal) {
        if let Some(group) = self.group
            && self.exit.borrow().is_none()
        {
            let _ = killpg(group, signal);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // pi is going away without stopping the server: take its whole group down.
        self.signal(Signal::SIGKILL);
    }
}

/// Keeps the last `max` characters of `text`.
fn keep_tail(text: &mut String, max: usize) {
    let count = text.chars().count();
    if count > max {
        let cut = text.char_indices().nth(count - max).map_or(0, |(i, _)| i);
        text.drain(..cut);
    }
}

/// `~` and `~/…` name the home directory, as in a shell.
pub fn expand_home(value: &str, home: Option<&Path>) -> String {
    match (value, home) {
        ("~", Some(home)) => home.display().to_string(),
        (v, Some(home)) if v.starts_with("~/") => home.join(&v[2..]).display().to_string(),
        (v, _) => v.to_owned(),
    }
}
