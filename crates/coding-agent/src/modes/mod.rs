//! The ways pi runs without a terminal UI: print and JSON modes, and RPC mode.

pub mod rpc;
pub mod run;
pub mod signals;
pub mod system_prompt;
