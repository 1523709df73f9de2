//! Shared helpers of the provider tests: a mock server, models that point at it, contexts,
//! and running and reading streams; one module per provider for what only its tests share.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod bedrock;
pub mod events;
pub mod fixtures;
pub mod google;
pub mod mistral;
pub mod responses;
pub mod wire;

// Each test binary uses some of these.
#[allow(unused_imports)]
pub use events::{assert_contract, collect, drain, error_text, final_message, kinds, run_script};
#[allow(unused_imports)]
pub use fixtures::{
    args, chunked, context, context_with, keys, mock_model, read_call, read_tool, send_simple,
    server, simple, tool_result, tool_use_turn,
};
#[allow(unused_imports)]
pub use wire::{BOTH, Wire, model, options};
