//! The extension host for tests: its source folder, with the pinned npm packages installed
//! once (under a file lock, so parallel tests share one install), and the TypeScript pi's
//! example extensions when `scripts/ts-compat.sh` installed them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The host folder ready to run, or `None` (with a notice) when node or npm is missing.
pub fn host_dir() -> Option<PathBuf> {
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("skipped: node is not installed");
        return None;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("extension-host");
    match pi_coding_agent::extension_host::install::ensure_installed(&dir) {
        Ok(_) => Some(dir),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The installed TypeScript pi package (`target/ts-pi/...`), if there.
pub fn ts_package() -> Option<PathBuf> {
    let package = super::target_dir().join("ts-pi/node_modules/@mariozechner/pi-coding-agent");
    if package.join("package.json").exists() {
        Some(package)
    } else {
        eprintln!("note: the TypeScript pi is not installed (scripts/ts-compat.sh installs it)");
        None
    }
}

/// An example extension of the TypeScript pi package.
pub fn example(name: &str) -> Option<PathBuf> {
    ts_package().map(|p| p.join("examples/extensions").join(name))
}
