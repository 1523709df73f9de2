//! pi-agent-core: the agent loop over [`pi_ai`]. The loop, tools and queues arrive with the
//! agent-core issue; this crate exists now so the workspace has its final shape.

pub use pi_ai;
