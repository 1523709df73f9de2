//! Finds the extension host: installed with the binary (`scripts/install.sh` puts the
//! host and its npm packages in `<prefix>/lib/pi-rs/extension-host`, so no network is
//! ever needed), or else put in its folder from the JavaScript embedded in the binary,
//! with its pinned npm packages installed there on first use.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/host_files.rs"));
}

/// Why the host cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    #[error("could not write the extension host to {path}: {message}")]
    Write { path: String, message: String },
    #[error(
        "npm is needed once to install the extension host's packages (into {dir}); install Node.js 20 or newer, which includes npm"
    )]
    NoNpm { dir: String },
    #[error("installing the extension host's packages into {dir} failed: {message}")]
    Npm { dir: String, message: String },
}

/// The host's folder: `PI_EXTENSION_HOST_DIR`, else `<agentDir>/extension-host`.
pub fn host_dir(agent_dir: &Path) -> PathBuf {
    match std::env::var_os("PI_EXTENSION_HOST_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => agent_dir.join("extension-host"),
    }
}

/// Where the host runs from, and where its transform cache goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPlace {
    /// The entry file (`host.mjs`).
    pub entry: PathBuf,
    /// The jiti cache folder (`PI_EXT_HOST_CACHE`) when the host's own folder is not
    /// pi's to write (an installed host).
    pub cache: Option<PathBuf>,
}

/// The host to run for `agent_dir`: `PI_EXTENSION_HOST_DIR` (prepared there), else the one
/// installed with the binary when it is this build's, else `<agentDir>/extension-host`
/// (prepared there, with npm on first use).
pub fn prepare(agent_dir: &Path) -> Result<HostPlace, InstallError> {
    let overridden = std::env::var_os("PI_EXTENSION_HOST_DIR").is_some_and(|d| !d.is_empty());
    if !overridden
        && let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|exe| installed_host(&exe))
    {
        return Ok(HostPlace {
            entry: dir.join("host.mjs"),
            cache: Some(agent_dir.join("extension-host-cache").join("jiti")),
        });
    }
    Ok(HostPlace {
        entry: ensure_installed(&host_dir(agent_dir))?,
        cache: None,
    })
}

/// The host installed beside the binary `exe` (`<exe>/../lib/pi-rs/extension-host`), if
/// it holds exactly this build's host files and its packages are installed.
pub fn installed_host(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?.parent()?.join("lib/pi-rs/extension-host");
    let ready = dir.join("node_modules").join(".pi-host-deps").is_file();
    let same = embedded::FILES
        .iter()
        .all(|(name, bytes)| std::fs::read(dir.join(name)).ok().as_deref() == Some(*bytes));
    (ready && same && has_embedded_host()).then_some(dir)
}

/// A short fingerprint of some bytes (FNV-1a), to notice changed files.
fn fingerprint<'a>(parts: impl Iterator<Item = &'a [u8]>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash ^= 0xff;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let fail = |e: std::io::Error| InstallError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    std::fs::write(path, bytes).map_err(fail)
}

/// Makes `dir` hold this build's host files and its npm packages; returns the entry file.
/// Writes only when the files changed, and runs npm only when the package list changed.
pub fn ensure_installed(dir: &Path) -> Result<PathBuf, InstallError> {
    // Several pi processes may start at once (tests, sub-agents): one installs, the others
    // wait for it.
    std::fs::create_dir_all(dir).map_err(|e| InstallError::Write {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".pi-host-lock"))
        .and_then(|file| file.lock().map(|()| file))
        .map_err(|e| InstallError::Write {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
    let installed = install_locked(dir);
    drop(lock);
    installed
}

fn install_locked(dir: &Path) -> Result<PathBuf, InstallError> {
    let files_stamp = fingerprint(
        embedded::FILES
            .iter()
            .flat_map(|(name, bytes)| [name.as_bytes(), *bytes]),
    );
    let stamp_path = dir.join(".pi-host-files");
    if std::fs::read_to_string(&stamp_path).ok().as_deref() != Some(files_stamp.as_str()) {
        for (name, bytes) in embedded::FILES {
            write(&dir.join(name), bytes)?;
        }
        write(&stamp_path, files_stamp.as_bytes())?;
    }
    let deps_stamp = fingerprint(
        embedded::FILES
            .iter()
            .filter(|(name, _)| {
                matches!(*name, "package.json" | "package-lock.json" | "optimize.mjs")
            })
            .map(|(_, bytes)| *bytes),
    );
    let deps_path = dir.join("node_modules").join(".pi-host-deps");
    if std::fs::read_to_string(&deps_path).ok().as_deref() != Some(deps_stamp.as_str()) {
        npm_install(dir)?;
        optimize(dir);
        write(&deps_path, deps_stamp.as_bytes())?;
        eprintln!("Extension host ready.");
    }
    Ok(dir.join("host.mjs"))
}

/// `npm ci` (or `npm install` without a lock file), with a progress line on stderr.
fn npm_install(dir: &Path) -> Result<(), InstallError> {
    let shown = dir.display().to_string();
    eprintln!("Installing the extension host's packages into {shown} (first use; needs npm)…");
    let command = if dir.join("package-lock.json").exists() {
        "ci"
    } else {
        "install"
    };
    let mut command_line = Command::new(std::env::var_os("PI_NPM").unwrap_or_else(|| "npm".into()));
    command_line.args([
        command,
        "--omit=dev",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]);
    let output = run_quietly(command_line, dir);
    match output {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(InstallError::NoNpm { dir: shown })
        }
        Err(e) => Err(InstallError::Npm {
            dir: shown,
            message: e.to_string(),
        }),
        Ok(out) if !out.status.success() => Err(InstallError::Npm {
            dir: shown,
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        }),
        Ok(_) => Ok(()),
    }
}

/// Bundles the packages whose many small files slow node's startup (`optimize.mjs`). A
/// failure only costs speed, so it is reported and installation goes on.
fn optimize(dir: &Path) {
    let mut command = Command::new(std::env::var_os("PI_NODE").unwrap_or_else(|| "node".into()));
    command.arg("optimize.mjs");
    let output = run_quietly(command, dir);
    match output {
        Ok(out) if out.status.success() => {
            let warnings = String::from_utf8_lossy(&out.stderr);
            if !warnings.trim().is_empty() {
                eprintln!("{}", warnings.trim());
            }
        }
        Ok(out) => eprintln!(
            "pi extension host: optimize.mjs failed (extensions still load, more slowly): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => eprintln!("pi extension host: could not run optimize.mjs: {e}"),
    }
}

/// Runs `command` in `dir` with no input, its stdout dropped and its stderr kept.
fn run_quietly(mut command: Command, dir: &Path) -> std::io::Result<std::process::Output> {
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
}

/// Whether the embedded host has files (a build without `extension-host/` has none).
pub fn has_embedded_host() -> bool {
    embedded::FILES.iter().any(|(name, _)| *name == "host.mjs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_differ_by_content_and_split() {
        let a = fingerprint([b"ab".as_slice(), b"c".as_slice()].into_iter());
        let b = fingerprint([b"a".as_slice(), b"bc".as_slice()].into_iter());
        assert_ne!(a, b);
        assert_eq!(
            a,
            fingerprint([b"ab".as_slice(), b"c".as_slice()].into_iter())
        );
    }
}
