//! The `pi-sandbox` launcher: confines itself with [`confine::confine`] and then runs the
//! command, which inherits the confinement.
//!
//! ```text
//! pi-sandbox [--read <path>]... [--write <path>]... [--no-network] [--timeout-ms N] -- <program> <args>...
//! pi-sandbox [--read <path>]... [--write <path>]... [--no-network] [--timeout-ms N] --argv-json '["prog","arg"]'
//! ```
//!
//! `pi __sandbox <the same arguments>` is the same launcher, inside the `pi` binary.
//!
//! Without `--timeout-ms` the launcher `exec`s the program (same pid, same process group).
//! With it, the launcher spawns the program, waits, and on expiry SIGKILLs it (only the
//! program itself: its own children are left to whoever kills the launcher's process group),
//! prints `pi-sandbox: command timed out after N ms` and exits with 124. Otherwise it exits
//! with the program's code, or 128 + signal. The launcher's own failures print
//! `pi-sandbox: <message>` and exit with 126 (127 when the program does not exist).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitCode, ExitStatus};
use std::time::{Duration, Instant};

use super::{SandboxError, confine};

/// Exit code of a command stopped by `--timeout-ms` (as `timeout(1)` uses).
pub const EXIT_TIMEOUT: u8 = 124;
/// Exit code when the sandbox cannot be set up or the program cannot be run.
pub const EXIT_CANNOT_RUN: u8 = 126;
/// Exit code when the program does not exist.
pub const EXIT_NOT_FOUND: u8 = 127;

/// The launcher's usage line.
pub const USAGE: &str = "usage: pi-sandbox [--read <path>]... [--write <path>]... \
     [--no-network] [--timeout-ms N] (-- <program> <args>... | --argv-json <json array>)";

/// A parsed launcher command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchArgs {
    /// Paths readable and executable below (empty: all of `/`).
    pub read: Vec<PathBuf>,
    /// Paths fully writable below.
    pub write: Vec<PathBuf>,
    /// Whether TCP connections and listening sockets are allowed.
    pub network: bool,
    /// Kill the program after this long.
    pub timeout: Option<Duration>,
    /// The program and its arguments (never empty).
    pub command: Vec<OsString>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Print the usage.
    Help,
    /// Run a command confined.
    Launch(LaunchArgs),
}

/// Why the launcher did not run the command.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The command line is malformed.
    #[error("{0}\n{USAGE}")]
    Usage(String),
    /// The sandbox could not be entered.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The program could not be started.
    #[error("cannot run {program}: {source}")]
    Start {
        /// The program as given.
        program: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
}

impl LaunchError {
    /// The launcher's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Start { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                EXIT_NOT_FOUND
            }
            _ => EXIT_CANNOT_RUN,
        }
    }
}

/// Parses the launcher's arguments (without the program name).
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, LaunchError> {
    let usage = |message: String| LaunchError::Usage(message);
    let mut args = args.into_iter();
    let mut read = Vec::new();
    let mut write = Vec::new();
    let mut timeout = None;
    let mut network = true;
    let mut command = None;
    while let Some(arg) = args.next() {
        if arg == "--" {
            command = Some(args.by_ref().collect::<Vec<_>>());
            break;
        }
        if arg == "-h" || arg == "--help" {
            return Ok(Invocation::Help);
        }
        if arg == "--no-network" {
            network = false;
            continue;
        }
        let (name, inline) = split_option(&arg);
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| usage(format!("{name} needs a value")))
        };
        match name.as_str() {
            "--read" => read.push(PathBuf::from(value()?)),
            "--write" => write.push(PathBuf::from(value()?)),
            "--timeout-ms" => timeout = Some(parse_timeout(&value()?)?),
            "--argv-json" => {
                command = Some(parse_argv_json(&value()?)?);
                if let Some(extra) = args.next() {
                    return Err(usage(format!(
                        "unexpected argument after --argv-json: {}",
                        extra.to_string_lossy()
                    )));
                }
                break;
            }
            _ => return Err(usage(format!("unknown argument: {name}"))),
        }
    }
    let command = command
        .filter(|command| !command.is_empty())
        .ok_or_else(|| usage("no program given".to_owned()))?;
    Ok(Invocation::Launch(LaunchArgs {
        read,
        write,
        network,
        timeout,
        command,
    }))
}

/// `--name=value` as (`--name`, `value`); anything else as (it, none).
fn split_option(arg: &OsStr) -> (String, Option<OsString>) {
    let bytes = arg.as_bytes();
    match bytes.iter().position(|b| *b == b'=') {
        Some(eq) if bytes.starts_with(b"--") => (
            String::from_utf8_lossy(&bytes[..eq]).into_owned(),
            Some(OsStr::from_bytes(&bytes[eq + 1..]).to_os_string()),
        ),
        _ => (arg.to_string_lossy().into_owned(), None),
    }
}

fn parse_timeout(value: &OsStr) -> Result<Duration, LaunchError> {
    match value.to_str().and_then(|v| v.parse::<u64>().ok()) {
        Some(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err(LaunchError::Usage(format!(
            "--timeout-ms needs a positive whole number of milliseconds, got {}",
            value.to_string_lossy()
        ))),
    }
}

fn parse_argv_json(value: &OsStr) -> Result<Vec<OsString>, LaunchError> {
    let text = value
        .to_str()
        .ok_or_else(|| LaunchError::Usage("--argv-json is not UTF-8".to_owned()))?;
    let argv: Vec<String> = serde_json::from_str(text)
        .map_err(|e| LaunchError::Usage(format!("--argv-json needs an array of strings: {e}")))?;
    Ok(argv.into_iter().map(OsString::from).collect())
}

impl LaunchArgs {
    /// Confines this process, then runs the command: `exec` without a timeout (returns only
    /// on failure), spawn + wait with one. `Ok` carries the launcher's exit code.
    pub fn launch(&self) -> Result<u8, LaunchError> {
        confine::confine(&self.read, &self.write, self.network)?;
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| LaunchError::Usage("no program given".to_owned()))?;
        let mut command = Command::new(program);
        command.args(args);
        let start_error = |source| LaunchError::Start {
            program: program.to_string_lossy().into_owned(),
            source,
        };
        let Some(timeout) = self.timeout else {
            return Err(start_error(command.exec()));
        };
        let mut child = command.spawn().map_err(start_error)?;
        let deadline = Instant::now() + timeout;
        loop {
            let waited = child.try_wait().map_err(start_error)?;
            if let Some(status) = waited {
                return Ok(exit_code(status));
            }
            let now = Instant::now();
            if now >= deadline {
                // The program may have exited just now; killing a zombie is harmless.
                let _ = child.kill();
                let _ = child.wait();
                eprintln!(
                    "pi-sandbox: command timed out after {} ms",
                    timeout.as_millis()
                );
                return Ok(EXIT_TIMEOUT);
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(10)));
        }
    }
}

/// The shell convention: the exit code, or 128 + the signal that ended the process.
fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => (code & 0xff) as u8,
        (None, Some(signal)) => (128 + (signal & 0x7f)) as u8,
        (None, None) => EXIT_CANNOT_RUN,
    }
}

/// Runs the launcher on the given arguments (without the program name); the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> u8 {
    let result = parse_args(args).and_then(|invocation| match invocation {
        Invocation::Help => {
            println!("{USAGE}");
            Ok(0)
        }
        Invocation::Launch(launch) => launch.launch(),
    });
    result.unwrap_or_else(|e| {
        eprintln!("pi-sandbox: {e}");
        e.exit_code()
    })
}

/// The `pi-sandbox` binary's `main`.
pub fn main() -> ExitCode {
    ExitCode::from(run(std::env::args_os().skip(1)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::sandbox::SandboxConfig;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn launch(args: &[&str]) -> LaunchArgs {
        match parse_args(os(args)).unwrap() {
            Invocation::Launch(launch) => launch,
            Invocation::Help => panic!("help for {args:?}"),
        }
    }

    fn usage_error(args: &[&str]) -> String {
        match parse_args(os(args)) {
            Err(LaunchError::Usage(message)) => message,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    #[test]
    fn parses_paths_timeout_and_command() {
        let parsed = launch(&[
            "--read",
            "/usr",
            "--write=/w",
            "--write",
            "/x",
            "--timeout-ms",
            "1500",
            "--",
            "ls",
            "-l",
            "--read",
        ]);
        assert_eq!(parsed.read, vec![PathBuf::from("/usr")]);
        assert_eq!(parsed.write, vec![PathBuf::from("/w"), PathBuf::from("/x")]);
        assert_eq!(parsed.timeout, Some(Duration::from_millis(1500)));
        // Everything after `--` belongs to the command, option-like or not.
        assert_eq!(parsed.command, os(&["ls", "-l", "--read"]));
    }

    #[test]
    fn parses_argv_json() {
        let parsed = launch(&["--write", "/w", "--argv-json", r#"["echo","a b","--"]"#]);
        assert_eq!(parsed.command, os(&["echo", "a b", "--"]));
        assert!(parsed.read.is_empty());
        assert_eq!(parsed.timeout, None);
        assert!(usage_error(&["--argv-json", "[1]"]).contains("array of strings"));
        assert!(usage_error(&["--argv-json", "[]"]).contains("no program"));
        assert!(usage_error(&["--argv-json", r#"["a"]"#, "b"]).contains("unexpected"));
    }

    #[test]
    fn rejects_malformed_command_lines() {
        assert!(usage_error(&[]).contains("no program"));
        assert!(usage_error(&["--write", "/w"]).contains("no program"));
        assert!(usage_error(&["--write", "/w", "--"]).contains("no program"));
        assert!(usage_error(&["--read"]).contains("--read needs a value"));
        assert!(usage_error(&["--bogus", "--", "ls"]).contains("unknown argument: --bogus"));
        assert!(usage_error(&["ls"]).contains("unknown argument: ls"));
        for bad in ["0", "-5", "1.5", "soon"] {
            assert!(usage_error(&["--timeout-ms", bad, "--", "ls"]).contains("--timeout-ms"));
        }
        assert_eq!(parse_args(os(&["--help"])).unwrap(), Invocation::Help);
    }

    #[test]
    fn errors_map_to_exit_codes() {
        assert_eq!(usage_error_code(), EXIT_CANNOT_RUN);
        let unavailable = LaunchError::from(SandboxError::Unavailable("no".into()));
        assert_eq!(unavailable.exit_code(), EXIT_CANNOT_RUN);
        assert_eq!(
            unavailable.to_string(),
            "Landlock is not available on this kernel (no)"
        );
        let missing = LaunchError::Start {
            program: "nope".into(),
            source: std::io::ErrorKind::NotFound.into(),
        };
        assert_eq!(missing.exit_code(), EXIT_NOT_FOUND);
        let denied = LaunchError::Start {
            program: "nope".into(),
            source: std::io::ErrorKind::PermissionDenied.into(),
        };
        assert_eq!(denied.exit_code(), EXIT_CANNOT_RUN);
    }

    fn usage_error_code() -> u8 {
        LaunchError::Usage("x".into()).exit_code()
    }

    #[test]
    fn exit_status_follows_the_shell_convention() {
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 137);
    }

    #[test]
    fn config_launcher_args_round_trip() {
        let mut config = SandboxConfig::new("/opt/pi-sandbox");
        config.allowed_read_paths = vec![PathBuf::from("/usr"), PathBuf::from("lib")];
        config.allowed_write_paths = vec![PathBuf::from("work"), PathBuf::from("/tmp/x y")];
        let mut args = config.launcher_args(Path::new("/home/me"));
        assert_eq!(args.last(), Some(&OsString::from("--")));
        args.extend(os(&["bash", "-c", "true"]));
        let parsed = match parse_args(args).unwrap() {
            Invocation::Launch(launch) => launch,
            Invocation::Help => panic!("help"),
        };
        assert_eq!(
            parsed.read,
            vec![PathBuf::from("/usr"), PathBuf::from("/home/me/lib")]
        );
        assert_eq!(
            parsed.write,
            vec![PathBuf::from("/home/me/work"), PathBuf::from("/tmp/x y")]
        );
        assert_eq!(parsed.command, os(&["bash", "-c", "true"]));
    }
}
