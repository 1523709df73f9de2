//! Runs one shell command: `<shell> -c <command>` in its own process group, stdin from
//! `/dev/null`, stdout and stderr on one pipe (so they interleave exactly as written), with
//! a timeout, cancellation that takes down the whole group, and no hang when a background
//! process keeps the pipe open after the shell has exited. When the shell exits, whatever
//! it left running is ended too (see [`bash_reap`](crate::tools::bash_reap)), unless the
//! caller asks to keep background processes.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::tools::bash_output::{OutputAccumulator, OutputSnapshot};
pub use crate::tools::bash_reap::group_alive;
use crate::tools::bash_reap::{RUN_MARKER_ENV, RunScope};
use crate::tools::truncate::Truncation;

/// Minimum spacing of streamed snapshots.
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(100);
/// How long to keep reading after the shell exited while something still holds the pipe
/// and writes nothing (each new chunk starts the wait again, as pi 1.6.0's
/// `waitForChildProcess`).
pub const EXIT_DRAIN: Duration = Duration::from_millis(100);
/// Time between SIGTERM and SIGKILL when a command is stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// Receives a snapshot of the output so far.
pub type SnapshotFn = Arc<dyn Fn(&OutputSnapshot) + Send + Sync>;
/// Receives each piece of decoded output text as it arrives.
pub type ChunkFn = Arc<dyn Fn(&str) + Send + Sync>;

/// A program that takes the command in place of the shell: `<program> <args>… <command>`.
/// The sandbox runs `pi-sandbox <rules> -- bash -c` and `pi-sandbox <rules> --argv-json`
/// this way, so no wrapper script has to exist on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launcher {
    /// The program to start.
    pub program: PathBuf,
    /// The words before the command.
    pub args: Vec<std::ffi::OsString>,
}

/// How to run a command.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// The shell to use; `None` picks `/bin/bash`, then `bash` on `PATH`, then `sh`.
    pub shell: Option<PathBuf>,
    /// Runs the command instead of `<shell> -c` when set (`shell` is then unused).
    pub launcher: Option<Launcher>,
    /// Stop the command after this long.
    pub timeout: Option<Duration>,
    /// Stops the command when fired.
    pub cancel: CancellationToken,
    /// Throttled snapshots of the accumulated output (at most one per [`UPDATE_INTERVAL`]).
    pub on_update: Option<SnapshotFn>,
    /// Every decoded chunk, unthrottled.
    pub on_chunk: Option<ChunkFn>,
    /// Leave processes the command started in the background running after the shell
    /// exits (settings `bash.keepBackgroundProcesses`); a timeout or abort still ends them.
    pub keep_background: bool,
    /// The session's variables for this command (the bash tool's; see `bash_env`).
    pub session_env: Vec<(&'static str, String)>,
}

/// What a finished (or stopped) command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// The tail of the combined output (the whole output when it was not cut).
    pub output: String,
    /// The exit code; `None` when the shell was ended by a signal.
    pub exit_code: Option<i32>,
    /// The signal that ended the shell, if one did.
    pub signal: Option<i32>,
    /// The cancel token stopped the command.
    pub cancelled: bool,
    /// The timeout stopped the command.
    pub timed_out: bool,
    /// How the output was cut (totals cover the whole output).
    pub truncation: Truncation,
    /// The temp file with the full output, when the output was over the limits.
    pub full_output_path: Option<PathBuf>,
    /// Bytes of the last output line (for the partial-line notice).
    pub last_line_bytes: usize,
    /// Processes other than the shell that were still running and were ended.
    pub ended_processes: usize,
    /// When the timeout stopped a command whose shell had already exited (its background
    /// processes kept writing to the pipe): the shell's exit code and how long it ran.
    pub shell_exit_before_timeout: Option<(i32, Duration)>,
}

impl CommandOutput {
    /// Whether the output was cut.
    pub fn truncated(&self) -> bool {
        self.truncation.truncated()
    }
}

/// A command that could not be run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RunError(pub String);

/// `command` preceded by the configured prefix on its own line, if there is one.
pub fn with_command_prefix(prefix: Option<&str>, command: &str) -> String {
    match prefix {
        Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
        _ => command.to_owned(),
    }
}

/// The shell to run commands with: the configured one (which must exist), else `/bin/bash`,
/// else `bash` on `PATH`, else `sh`.
pub fn resolve_shell(custom: Option<&Path>) -> Result<PathBuf, RunError> {
    if let Some(custom) = custom {
        if custom.exists() {
            return Ok(custom.to_path_buf());
        }
        return Err(RunError(format!(
            "Custom shell path not found: {}",
            custom.display()
        )));
    }
    let bin_bash = Path::new("/bin/bash");
    if bin_bash.exists() {
        return Ok(bin_bash.to_path_buf());
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("bash"))
            .find(|candidate| candidate.is_file())
    });
    Ok(on_path.unwrap_or_else(|| PathBuf::from("sh")))
}

/// `PATH` with pi's own bin directory in front (unless already present).
fn shell_path_var() -> std::ffi::OsString {
    let bin = crate::config::paths::agent_dir().join("bin");
    let current = std::env::var_os("PATH").unwrap_or_default();
    let mut entries: Vec<PathBuf> = std::env::split_paths(&current).collect();
    if !entries.contains(&bin) {
        entries.insert(0, bin);
    }
    std::env::join_paths(entries).unwrap_or(current)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    TimedOut,
}

/// Runs `command` in `cwd` until it exits or is stopped, streaming its output.
pub async fn run_command(
    command: &str,
    cwd: &Path,
    options: RunOptions,
) -> Result<CommandOutput, RunError> {
    let (program, leading) = match &options.launcher {
        Some(launcher) => (launcher.program.clone(), launcher.args.clone()),
        None => (
            resolve_shell(options.shell.as_deref())?,
            vec![std::ffi::OsString::from("-c")],
        ),
    };
    if !cwd.is_dir() {
        return Err(RunError(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            cwd.display()
        )));
    }
    let mut output = OutputAccumulator::default();
    if options.cancel.is_cancelled() {
        return Ok(finish(output, None, Some(Stop::Cancelled)));
    }

    let mut scope = RunScope::new();
    let pipe_error = |e: std::io::Error| RunError(format!("Failed to create output pipe: {e}"));
    let (writer, mut pipe) = pipe::pipe().map_err(pipe_error)?;
    // The child writes with ordinary blocking I/O; stdout and stderr share the pipe.
    let writer = writer.into_blocking_fd().map_err(pipe_error)?;
    let writer_err = writer.try_clone().map_err(pipe_error)?;
    let mut std_command = std::process::Command::new(&program);
    std_command
        .args(&leading)
        .arg(command)
        .current_dir(cwd)
        .env("PATH", shell_path_var())
        .env(RUN_MARKER_ENV, scope.marker())
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_err))
        .process_group(0);
    super::bash_env::apply(&mut std_command, &options.session_env);
    let mut tokio_command = tokio::process::Command::from(std_command);
    let spawned = tokio_command.spawn();
    // Our copies of the pipe's write end go with the command, so EOF can be seen.
    drop(tokio_command);
    let mut child = spawned
        .map_err(|e| RunError(format!("Failed to start shell {}: {e}", program.display())))?;
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    scope.set_group(group);
    let mut abandon_guard = ScopeGuard(Some(scope.clone()));

    let started = Instant::now();
    let timeout_at = options
        .timeout
        .and_then(|timeout| started.checked_add(timeout));
    let mut status: Option<ExitStatus> = None;
    let mut exited_after: Option<Duration> = None;
    let mut exit_before_timeout: Option<(ExitStatus, Duration)> = None;
    // `eof`: reading stops; `closed`: the pipe really ended (every writer is gone).
    let mut eof = false;
    let mut closed = false;
    let mut drain_until: Option<Instant> = None;
    let mut stop: Option<Stop> = None;
    let mut kill_at: Option<Instant> = None;
    let mut last_update: Option<Instant> = None;
    let mut update_at: Option<Instant> = None;
    let mut dirty = false;
    let mut buf = vec![0u8; 64 * 1024];

    while !(eof && status.is_some()) {
        tokio::select! {
            read = pipe.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => {
                    eof = true;
                    closed = true;
                }
                Ok(n) => {
                    // Background processes still writing after the shell exited are read
                    // until they fall quiet (only kept ones: the others are ended at once).
                    if status.is_some() && options.keep_background && stop.is_none() {
                        drain_until = Some(Instant::now() + EXIT_DRAIN);
                    }
                    let text = output.append(&buf[..n]);
                    if let Some(on_chunk) = &options.on_chunk && !text.is_empty() {
                        on_chunk(&text);
                    }
                    if options.on_update.is_some() {
                        dirty = true;
                        let due = last_update.map_or_else(Instant::now, |t| t + UPDATE_INTERVAL);
                        if due <= Instant::now() {
                            emit(&mut output, &options, &mut dirty);
                            last_update = Some(Instant::now());
                            update_at = None;
                        } else if update_at.is_none() {
                            update_at = Some(due);
                        }
                    }
                }
            },
            waited = child.wait(), if status.is_none() => match waited {
                Ok(exit) => {
                    status = Some(exit);
                    exited_after = Some(started.elapsed());
                    // Leftovers about to be ended need no time to write: what they wrote
                    // is read after they are gone.
                    let drain = if options.keep_background { EXIT_DRAIN } else { Duration::ZERO };
                    drain_until = Some(Instant::now() + drain);
                }
                // The guard kills the group on this early return.
                Err(e) => return Err(RunError(format!("Failed to wait for the shell: {e}"))),
            },
            () = sleep_opt(drain_until), if status.is_some() && !eof => eof = true,
            () = sleep_opt(timeout_at), if stop.is_none() && timeout_at.is_some() => {
                stop = Some(Stop::TimedOut);
                exit_before_timeout = status.zip(exited_after);
                scope.signal(Signal::SIGTERM);
                kill_at = Some(Instant::now() + KILL_GRACE);
            },
            () = options.cancel.cancelled(), if stop.is_none() => {
                stop = Some(Stop::Cancelled);
                scope.signal(Signal::SIGTERM);
                kill_at = Some(Instant::now() + KILL_GRACE);
            },
            () = sleep_opt(kill_at), if kill_at.is_some() => {
                scope.signal(Signal::SIGKILL);
                kill_at = None;
            },
            () = sleep_opt(update_at), if update_at.is_some() => {
                emit(&mut output, &options, &mut dirty);
                last_update = Some(Instant::now());
                update_at = None;
            },
        }
    }
    let ended = if stop.is_some() {
        // What SIGTERM has not ended by the grace period's end gets SIGKILL.
        let grace = kill_at.map_or(Duration::ZERO, |at| {
            at.saturating_duration_since(Instant::now())
        });
        scope.end_all(grace, group).await
    } else if options.keep_background {
        0
    } else {
        scope.end_all(KILL_GRACE, group).await
    };
    abandon_guard.0 = None;
    // What the pipe still holds: written before the processes were ended.
    let until = Instant::now() + EXIT_DRAIN;
    while !closed {
        match tokio::time::timeout_at(until, pipe.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                let text = output.append(&buf[..n]);
                if let Some(on_chunk) = &options.on_chunk
                    && !text.is_empty()
                {
                    on_chunk(&text);
                }
                dirty |= options.on_update.is_some();
            }
            _ => closed = true,
        }
    }
    drop(pipe);
    output.finish();
    emit(&mut output, &options, &mut dirty);
    let mut result = finish(output, status, stop);
    result.ended_processes = ended;
    result.shell_exit_before_timeout = exit_before_timeout.map(|(exit, after)| {
        // A signal-killed shell reports 128 + the signal, as pi does.
        let code = exit
            .code()
            .or_else(|| exit.signal().map(|signal| 128 + signal))
            .unwrap_or(1);
        (code, after)
    });
    Ok(result)
}

fn finish(
    mut output: OutputAccumulator,
    status: Option<ExitStatus>,
    stop: Option<Stop>,
) -> CommandOutput {
    output.finish();
    let snapshot = output.snapshot(true);
    output.close_temp_file();
    CommandOutput {
        output: snapshot.content,
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        cancelled: stop == Some(Stop::Cancelled),
        timed_out: stop == Some(Stop::TimedOut),
        truncation: snapshot.truncation,
        full_output_path: snapshot.full_output_path,
        last_line_bytes: output.last_line_bytes(),
        ended_processes: 0,
        shell_exit_before_timeout: None,
    }
}

/// Sends a snapshot when output arrived since the last one.
fn emit(output: &mut OutputAccumulator, options: &RunOptions, dirty: &mut bool) {
    if !*dirty {
        return;
    }
    *dirty = false;
    if let Some(on_update) = &options.on_update {
        on_update(&output.snapshot(true));
    }
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Kills every process of the command when a run is abandoned midway (its future dropped).
struct ScopeGuard(Option<RunScope>);

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        if let Some(scope) = &self.0 {
            scope.signal(Signal::SIGKILL);
        }
    }
}
