//! Running the programs packages are installed with (npm, git): their output goes to the
//! terminal as the TypeScript pi lets it, or to stderr when stdout carries pi's own
//! protocol (print, JSON and RPC modes).

use std::path::Path;
use std::process::{Command, Stdio};

/// A program that failed or could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CommandError(pub String);

/// How package commands are run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Runner {
    /// stdout carries pi's protocol: the programs' output goes to stderr.
    pub stdout_to_stderr: bool,
}

fn display(program: &str, args: &[String]) -> String {
    std::iter::once(program.to_owned())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn start_error(program: &str, e: &std::io::Error) -> CommandError {
    if e.kind() == std::io::ErrorKind::NotFound {
        CommandError(format!(
            "{program} was not found on PATH (it is needed to install this package)"
        ))
    } else {
        CommandError(format!("could not start {program}: {e}"))
    }
}

impl Runner {
    /// Runs a program with its output shown; fails on a non-zero exit.
    pub fn run(
        &self,
        program: &str,
        args: &[String],
        cwd: Option<&Path>,
    ) -> Result<(), CommandError> {
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::null());
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        if self.stdout_to_stderr {
            command.stdout(std::io::stderr());
        }
        let status = command.status().map_err(|e| start_error(program, &e))?;
        if status.success() {
            Ok(())
        } else {
            let code = status
                .code()
                .map_or_else(|| "a signal".to_owned(), |c| c.to_string());
            Err(CommandError(format!(
                "{} failed with code {code}",
                display(program, args)
            )))
        }
    }

    /// Runs a program and returns its trimmed stdout; fails with its stderr.
    pub fn capture(
        &self,
        program: &str,
        args: &[String],
        cwd: Option<&Path>,
    ) -> Result<String, CommandError> {
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::null());
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let output = command.output().map_err(|e| start_error(program, &e))?;
        let stdout = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if output.status.success() {
            Ok(stdout)
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let detail = if stderr.trim().is_empty() {
                stdout
            } else {
                stderr.trim().to_owned()
            };
            Err(CommandError(format!(
                "{} failed: {detail}",
                display(program, args)
            )))
        }
    }
}

/// `["install", ...]` as owned strings.
pub fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}
