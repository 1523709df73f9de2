//! What a gateway asks of the cluster it is a node of (`--cluster`): where a session's
//! operations run, where its events and entries go, and what the other nodes know. The
//! cluster module implements it; a single gateway has none.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use pi_coding_agent::session::line_sink::LineSink;

use super::feed::{SubscribeResponse, Subscriber};
use super::protocol::ApiError;
use super::session::LiveSession;
use super::tree::SessionNode;

/// A reply to come.
pub type Pending<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The cluster, as a gateway node sees it.
pub trait ClusterHooks: Send + Sync {
    /// This node's id.
    fn node_id(&self) -> &str;

    /// Runs a session operation (see [`super::session_ops`]) on the node owning the
    /// session's lane, taking the lane over when nobody owns it.
    fn route(
        &self,
        principal: &str,
        method: &str,
        params: Value,
    ) -> Pending<Result<Value, ApiError>>;

    /// Subscribes a connection of this node to a session's events, from the cluster's
    /// stream; the response goes first, then the replay after `from_seq`, then live events.
    fn subscribe(
        &self,
        session: &str,
        sub: Subscriber,
        from_seq: Option<u64>,
        response: SubscribeResponse,
    ) -> Pending<()>;

    fn unsubscribe(&self, session: &str, conn: u64);

    /// Refuses a session that is not `principal`'s (`not_found`); a session created a
    /// moment ago on another node is waited for briefly.
    fn check_access(&self, principal: &str, session: &str) -> Pending<Result<(), ApiError>>;

    /// Whether this node may open session `id` now: it holds (or is taking) its lane.
    fn may_open(&self, session: &str) -> bool;

    /// The sink that appends the entries of a session this node is opening.
    fn line_sink(&self, session: &str) -> Option<LineSink>;

    /// A session this node opened and now runs: its events go to the cluster, and its
    /// lane answers the other nodes.
    fn opened(&self, live: &Arc<LiveSession>);

    /// A session node was created or changed here: every node learns it.
    fn save_record(&self, node: &SessionNode);

    /// Whether session `id` has a run in progress on any node.
    fn is_running(&self, session: &str) -> bool;
}
