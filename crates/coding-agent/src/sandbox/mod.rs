//! Landlock file-access confinement for `bash`/`exec` (seed 000 §9.3, layer 2), and the
//! same allowed paths checked for the file tools (`read`, `write`, `edit`, `ls`, `grep`,
//! `find`) in [`file_tools`].
//!
//! `unsafe` is forbidden in this workspace, so the gateway never calls `landlock_restrict_self`
//! on itself: a tiny launcher binary, `pi-sandbox`, restricts *itself* with the landlock
//! crate's safe API and then `exec`s the command, which inherits the restriction:
//!
//! ```text
//! pi-sandbox [--read <path>]... [--write <path>]... [--timeout-ms N] -- <program> <args>...
//! ```
//!
//! Access granted (see [`confine`]): read + execute everywhere below the `--read` paths (all of
//! `/` when none is given), read + write below the `--write` paths, and read + write + ioctl on
//! the terminal/null devices (`/dev/null`, `/dev/zero`, `/dev/full`, `/dev/tty`, `/dev/ptmx`,
//! `/dev/pts`) so ordinary redirections keep working. Everything else is read-only or hidden.
//! Without Landlock (or with an ABI older than v3, which cannot restrict `truncate(2)`), the
//! launcher refuses to run the command and exits with 126: it never runs unconfined.

mod bash;
pub mod cli;
pub mod confine;
mod exec;
pub mod file_tools;
pub mod launcher;
pub mod paths;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use bash::{SandboxedBash, sandbox_tools};
pub use confine::landlock_available;
pub use exec::SandboxedExec;

/// Environment variable naming the launcher binary (overrides the search).
pub const LAUNCHER_ENV: &str = "PI_SANDBOX_BIN";
/// File name of the launcher binary.
pub const LAUNCHER_NAME: &str = "pi-sandbox";

/// A sandbox that could not be set up or entered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot confine the command (no Landlock, or too old an ABI).
    #[error("Landlock is not available on this kernel ({0})")]
    Unavailable(String),
    /// A `--read`/`--write` path cannot be used for a rule.
    #[error("sandbox path {path}: {reason}")]
    BadPath {
        /// The path as given.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// Building or applying the Landlock ruleset failed.
    #[error("Landlock ruleset could not be applied: {0}")]
    Ruleset(String),
    /// The `pi-sandbox` launcher binary was not found.
    #[error("sandbox launcher `pi-sandbox` not found (looked at: {0}); set PI_SANDBOX_BIN")]
    LauncherNotFound(String),
    /// Preparing the sandboxed shell failed (e.g. the configured shell is missing).
    #[error("sandbox setup failed: {0}")]
    Setup(String),
}

/// How `bash`/`exec` commands are confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Directories (or files) the command may create, modify and delete entries beneath.
    pub allowed_write_paths: Vec<PathBuf>,
    /// Directories the command may read and execute beneath; empty means all of `/`.
    pub allowed_read_paths: Vec<PathBuf>,
    /// Upper bound on one command's run time (also its default when the call gives none).
    pub timeout: Option<Duration>,
    /// The `pi-sandbox` binary (or `pi`, with [`launcher_prefix`](Self::launcher_prefix)).
    pub launcher: PathBuf,
    /// Arguments put before the launcher's own (`__sandbox` when the launcher is `pi`).
    pub launcher_prefix: Vec<std::ffi::OsString>,
    /// Whether commands may open TCP connections and listen (Landlock ABI v4 to turn off).
    pub network: bool,
}

impl SandboxConfig {
    /// A config with no write access and the given launcher.
    pub fn new(launcher: impl Into<PathBuf>) -> Self {
        Self {
            allowed_write_paths: Vec::new(),
            allowed_read_paths: Vec::new(),
            timeout: None,
            launcher: launcher.into(),
            launcher_prefix: Vec::new(),
            network: true,
        }
    }

    /// Write access to `workspace` only, read access everywhere, the located launcher.
    pub fn for_workspace(workspace: impl Into<PathBuf>) -> Result<Self, SandboxError> {
        let mut config = Self::new(locate_launcher()?);
        config.allowed_write_paths.push(workspace.into());
        Ok(config)
    }

    /// The launcher's arguments up to and including `--`; relative paths resolve against `cwd`.
    pub fn launcher_args(&self, cwd: &Path) -> Vec<std::ffi::OsString> {
        let mut args = self.launcher_prefix.clone();
        if !self.network {
            args.push("--no-network".into());
        }
        for path in &self.allowed_read_paths {
            args.push("--read".into());
            args.push(cwd.join(path).into_os_string());
        }
        for path in &self.allowed_write_paths {
            args.push("--write".into());
            args.push(cwd.join(path).into_os_string());
        }
        args.push("--".into());
        args
    }
}

/// Finds the launcher: `$PI_SANDBOX_BIN`, else next to the running executable, else one
/// directory up (the cargo target dir when the running executable is a test in `deps/`).
pub fn locate_launcher() -> Result<PathBuf, SandboxError> {
    if let Some(path) = std::env::var_os(LAUNCHER_ENV).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(SandboxError::LauncherNotFound(format!(
                "{} (from {LAUNCHER_ENV})",
                path.display()
            )))
        };
    }
    let mut searched = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        let mut dir = exe.parent();
        for _ in 0..2 {
            let Some(current) = dir else { break };
            let candidate = current.join(LAUNCHER_NAME);
            if candidate.is_file() {
                return Ok(candidate);
            }
            searched.push(candidate.display().to_string());
            dir = current.parent();
        }
    }
    Err(SandboxError::LauncherNotFound(searched.join(", ")))
}
