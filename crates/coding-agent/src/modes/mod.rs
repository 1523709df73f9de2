//! The ways pi runs: interactive, print and JSON modes, and RPC mode.

pub mod interactive;
pub mod rpc;
pub mod run;
pub mod signals;
pub mod system_prompt;
