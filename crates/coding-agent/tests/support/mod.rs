//! Helpers shared by the integration tests.

pub mod ext_host;
pub mod git;
pub mod mcp;
pub mod rpc;
pub mod tmux;
pub mod ts16;
