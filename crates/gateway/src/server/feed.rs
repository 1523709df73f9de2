//! A session's event feed as one node serves it: the bounded replay log, the last `seq` and
//! `stateVersion`, and the connections subscribed. A single gateway fills it as its sessions
//! publish; a cluster node fills it from the cluster's event stream.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;

use super::outbox::Outbox;

/// A connection's outbound side, as registered with a session.
#[derive(Clone)]
pub struct Subscriber {
    pub conn: u64,
    pub outbox: Arc<Outbox>,
}

impl Subscriber {
    /// Sends or queues a frame; false when the connection is gone or lagging.
    pub fn offer(&self, frame: Utf8Bytes) -> bool {
        self.outbox.offer(frame)
    }
}

/// What a subscription found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscribeInfo {
    pub replayed: usize,
    /// Events after `fromSeq` were dropped from the log before this subscription.
    pub gap: bool,
    pub seq: u64,
    pub state_version: u64,
}

/// Builds the response to a subscription from what it found (queued before any replay).
pub type SubscribeResponse = Box<dyn FnOnce(SubscribeInfo) -> Utf8Bytes + Send>;

/// The feed of one session.
#[derive(Default)]
pub struct Feed {
    log: VecDeque<(u64, Utf8Bytes)>,
    /// The greatest `seq` of this session no longer in the log (0: none dropped).
    dropped: u64,
    last_seq: u64,
    state_version: u64,
    capacity: usize,
    subscribers: Vec<Subscriber>,
}

impl Feed {
    /// An empty feed keeping at most `capacity` events.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            state_version: 1,
            ..Self::default()
        }
    }

    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    pub fn state_version(&self) -> u64 {
        self.state_version
    }

    /// Notes events of the session before the first one this feed got (a cluster node
    /// joining late): replays from before `seq` report a gap.
    pub fn set_dropped(&mut self, seq: u64) {
        self.dropped = self.dropped.max(seq);
        self.last_seq = self.last_seq.max(seq);
    }

    /// Adds an event and sends it to every subscriber; `false` when it was not newer than
    /// the last one (delivered before).
    pub fn push(&mut self, seq: u64, state_version: u64, frame: Utf8Bytes) -> bool {
        if seq <= self.last_seq {
            return false;
        }
        self.last_seq = seq;
        self.state_version = self.state_version.max(state_version);
        self.log.push_back((seq, frame.clone()));
        while self.log.len() > self.capacity {
            if let Some((dropped, _)) = self.log.pop_front() {
                self.dropped = dropped;
            }
        }
        self.subscribers.retain(|s| s.offer(frame.clone()));
        true
    }

    /// Registers `sub`: queues the response built from what was found, replays the
    /// retained events after `from_seq`, then delivers live events, all in order.
    pub fn subscribe(
        &mut self,
        sub: Subscriber,
        from_seq: Option<u64>,
        state_version: u64,
        response: SubscribeResponse,
    ) {
        self.subscribers.retain(|s| s.conn != sub.conn);
        let replay: Vec<Utf8Bytes> = match from_seq {
            Some(from) => self
                .log
                .iter()
                .filter(|(seq, _)| *seq > from)
                .map(|(_, text)| text.clone())
                .collect(),
            None => Vec::new(),
        };
        let info = SubscribeInfo {
            replayed: replay.len(),
            gap: from_seq.is_some_and(|from| self.dropped > from),
            seq: self.last_seq,
            state_version,
        };
        if !sub.offer(response(info)) {
            return;
        }
        for frame in replay {
            if !sub.offer(frame) {
                return;
            }
        }
        self.subscribers.push(sub);
    }

    pub fn unsubscribe(&mut self, conn: u64) {
        self.subscribers.retain(|s| s.conn != conn);
    }

    pub fn subscriber_count(&self) -> usize {
        self.subscribers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u64) -> Utf8Bytes {
        Utf8Bytes::from(format!("{seq}"))
    }

    #[test]
    fn old_and_repeated_events_are_not_logged_again() {
        let mut feed = Feed::new(3);
        assert!(feed.push(5, 1, frame(5)));
        assert!(!feed.push(5, 1, frame(5)));
        assert!(!feed.push(4, 1, frame(4)));
        for seq in 6..=8 {
            assert!(feed.push(seq, 2, frame(seq)));
        }
        assert_eq!(feed.last_seq(), 8);
        assert_eq!(feed.dropped, 5);
        assert_eq!(feed.state_version(), 2);
    }

    #[test]
    fn a_late_feed_reports_a_gap_before_its_first_event() {
        let mut feed = Feed::new(10);
        feed.set_dropped(40);
        feed.push(41, 1, frame(41));
        assert_eq!(feed.dropped, 40);
        assert_eq!(feed.last_seq(), 41);
        assert!(!feed.push(30, 1, frame(30)));
    }
}
