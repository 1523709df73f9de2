//! MCP for pi: `mcp.json` (global and trusted project files), one client per server over
//! stdio or streamable HTTP (on rmcp, the official Rust SDK), pi's tool naming and
//! exposures, and tool results mapped to what the model reads.

pub mod config;
pub mod connection;
pub mod content;
pub mod edit;
pub mod exposure;
pub mod json_lines;
pub mod log;
pub mod naming;
pub mod oauth;
pub mod stdio;
