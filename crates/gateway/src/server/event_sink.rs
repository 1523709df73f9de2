//! Where a session's events go instead of its own feed: in a cluster, to the replicated
//! event stream, from which every node (this one included) delivers them.

/// One event as its session emits it, before it has a `seq`.
#[derive(Debug, Clone)]
pub struct OutgoingEvent {
    /// The event name (`agent_start`, `text_delta`, …).
    pub name: &'static str,
    /// The payload's JSON.
    pub payload: String,
    pub state_version: u64,
    /// Server time of emission, Unix microseconds.
    pub ts: u64,
    /// Whether a run is still in progress after this event.
    pub running: bool,
}

/// Takes a session's events in order.
pub trait EventSink: Send + Sync {
    fn send(&self, event: OutgoingEvent);
    /// The `seq` of the last event known to be stored.
    fn last_seq(&self) -> u64;
}
