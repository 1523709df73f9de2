//! pi-gateway: the OpenClaw runtime around pi — many AgentSessions behind one WebSocket
//! server, each with its own lane, the 7-layer tool pipeline, lifecycle events with `seq`
//! and `stateVersion`, auth profile rotation and context-overflow recovery.

#[cfg(feature = "cluster")]
pub mod cluster;
pub mod compaction_chunks;
pub mod config_file;
pub mod create;
pub mod events;
pub mod openclaw;
pub mod pipeline;
pub mod runner;
/// The Landlock sandbox lives with the tools it confines; re-exported for the gateway's users.
pub use pi_coding_agent::sandbox;
pub mod server;
