//! The ways pi runs: interactive, print and JSON modes, RPC mode, ACP mode, `pi config`
//! and `pi auth`.

pub mod acp;
pub mod auth;
pub mod auth_login;
pub mod config;
pub mod context_files;
pub mod interactive;
pub mod rpc;
pub mod run;
pub mod signals;
pub mod system_prompt;
pub mod wire;
