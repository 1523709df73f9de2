//! Helpers shared by the integration tests.

pub mod rpc;
pub mod tmux;
