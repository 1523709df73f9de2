//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

pub mod codex;
pub mod entries;
pub mod errors;
pub mod ext_host;
pub mod ext_tool;
pub mod git;
pub mod images;
pub mod mcp;
pub mod npm_registry;
pub mod oauth;
pub mod rpc;
pub mod session;
pub mod shapes;
pub mod tmux;
pub mod ts16;

/// The build's target folder (`CARGO_TARGET_DIR`, else `<repo>/target`), where the install
/// scripts put what the tests run (the TypeScript pis, pi-acp, the session readers).
#[allow(dead_code)]
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// Waits (at most 20 s) for a fixture server to write the port it listens on to
/// `port_file`; returns the port. `what` names the server in the failure.
#[allow(dead_code)]
pub fn wait_for_port_file(port_file: &Path, what: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Ok(port) = std::fs::read_to_string(port_file) {
            return port.trim().to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the {what} server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
