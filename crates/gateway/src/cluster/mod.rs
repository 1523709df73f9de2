//! pi-gateway on several nodes over NATS JetStream (`--cluster`, cargo feature `cluster`),
//! after `../shared/design/gateway-cluster.md`:
//! - `PI_EV`, one stream of every session's events (`pi.ev.<session>`): its sequence is the
//!   gateway-wide `seq`, and every node serves subscriptions and replays from it;
//! - `PI_SESS`, one stream of session entries (`pi.sess.<session>`), each message one JSONL
//!   line, every append fenced by the subject's expected last sequence;
//! - `pi_lanes`, a KV bucket of lane leases: whoever created a session's key owns its lane
//!   until it stops renewing (the bucket's max age is the lease TTL); the revision is the
//!   lane's epoch, and a renewal names the revision it holds, so a stale owner is refused;
//! - `pi_sessions`, a KV bucket of session records (the tree's nodes) every node watches;
//! - `pi_blobs`, an object store of workspace snapshots taken at the end of each run.

mod deliveries;
pub mod engine;
pub mod entries;
pub mod feeds;
pub mod firehose;
pub mod index;
pub mod lane;
pub mod lease;
pub mod node;
pub mod ordered;
mod owned;
pub mod publisher;
mod route;
pub mod snapshots;
mod takeover;

pub use engine::{ClusterConfig, ClusterError, Engine};
pub use entries::EntryWriter;
pub use firehose::{Delivered, ReplayStart};
pub use index::IndexView;
pub use lane::{Handler, LaneServer};
pub use lease::Lease;
pub use node::{ClusterNode, NodeSettings};
pub use takeover::INTERRUPTED_ENTRY;

/// Whether `PI_GATEWAY_TRACE_CLUSTER` asks for a line on stderr for each routing decision
/// (sent to the owner, taken over, refused), to see what a node does when parts fail.
pub(crate) fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PI_GATEWAY_TRACE_CLUSTER").is_some_and(|v| v != "0"))
}

/// Prints a routing decision when [`tracing`] is on.
macro_rules! trace {
    ($($arg:tt)*) => {
        if $crate::cluster::tracing() {
            eprintln!("pi-gateway cluster: {}", format_args!($($arg)*));
        }
    };
}
pub(crate) use trace;
