//! Helpers shared by the integration tests.

use std::path::PathBuf;

pub mod entries;
pub mod errors;
pub mod ext_host;
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
