//! pi-coding-agent: the `pi` binary's library — configuration, the model registry with API
//! key resolution, and the CLI modes.

pub mod agent_session;
pub mod auth_guidance;
pub mod bug_report;
pub mod builtins;
pub mod changelog;
pub mod classifiers;
pub mod cli;
pub mod client_identity;
#[cfg(feature = "codemode")]
pub mod codemode;
pub mod compaction;
pub mod config;
pub mod export;
pub mod extension_host;
pub mod extension_loader;
pub mod extensions;
pub mod file_args;
pub mod images;
pub mod launch;
pub mod list_models;
pub mod llama;
pub mod mcp;
pub mod messages;
pub mod model_registry;
pub mod model_resolver;
pub mod modes;
pub mod output;
pub mod packages;
pub mod resources;
pub mod retry;
pub mod sandbox;
pub mod scope;
pub mod session;
pub mod session_event;
pub mod session_resources;
pub mod temp_files;
pub mod text_file;
pub mod timing;
pub mod tool_selection;
pub mod tools;
pub mod trust;
pub mod uri_component;
pub mod virtual_models;

/// The upstream pi release this build matches: `pi --version` prints it, the interactive
/// header and MCP's client info carry it (tools such as pi-acp compare it with npm's pi).
pub const PI_VERSION: &str = "1.6.0";
