//! A lane lease: a key of `pi_lanes` created by the owner and kept alive by renewals that
//! name the revision they hold. Created only when absent (or expired), so one node owns a
//! lane at a time; a renewal after someone else took the key fails, and the owner stops.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::json;

use async_nats::jetstream::kv::UpdateErrorKind;

use super::engine::{ClusterError, Engine, LANES, while_stream_unknown};

/// A held lease.
#[derive(Debug, Clone)]
pub struct Lease {
    pub session: String,
    /// The KV revision this node wrote last: the lane's epoch.
    pub revision: u64,
    /// When it was last written, on the monotonic clock (for self-fencing).
    pub renewed: Instant,
}

impl Lease {
    /// What the key holds: the owning node, and whether a run is in progress (a node
    /// that sees such a lease expire takes the lane over to record the lost turn).
    fn value(engine: &Engine, running: bool) -> Bytes {
        Bytes::from(json!({"node": engine.config.node_id, "running": running}).to_string())
    }

    /// Writes the key over `revision` (0: only if it has no message), trying again while
    /// the server this node talks to has not yet learned of the bucket's stream.
    async fn write(
        engine: &Engine,
        session: &str,
        running: bool,
        revision: u64,
    ) -> Result<u64, async_nats::jetstream::kv::UpdateError> {
        let value = Self::value(engine, running);
        while_stream_unknown(|| engine.lanes.update(session, value.clone(), revision)).await
    }

    /// Claims the lane of `session`; `LaneTaken` while another node holds it. Whether the
    /// key is free is read from the bucket's leader (a replica may lag), so a lane just
    /// released or expired can be claimed at once and a held one never twice.
    pub async fn claim(engine: &Engine, session: &str) -> Result<Self, ClusterError> {
        let lease = |revision| Self {
            session: session.to_owned(),
            revision,
            renewed: Instant::now(),
        };
        // Created if the key has no message at all (never used, or expired).
        match Self::write(engine, session, false, 0).await {
            Ok(revision) => return Ok(lease(revision)),
            Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => {}
            Err(e) => return Err(ClusterError::JetStream(e.to_string())),
        }
        // It has one: free only when that is a deletion (a released lane).
        let stream = engine
            .jetstream
            .get_stream(format!("KV_{LANES}"))
            .await
            .map_err(|e| ClusterError::JetStream(e.to_string()))?;
        let Ok(last) = stream
            .get_last_raw_message_by_subject(&format!("$KV.{LANES}.{session}"))
            .await
        else {
            return Err(ClusterError::LaneTaken(session.to_owned()));
        };
        let deleted = last
            .headers
            .get("KV-Operation")
            .is_some_and(|op| matches!(op.as_str(), "DEL" | "PURGE"));
        if !deleted {
            return Err(ClusterError::LaneTaken(session.to_owned()));
        }
        match Self::write(engine, session, false, last.sequence).await {
            Ok(revision) => Ok(lease(revision)),
            Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => {
                Err(ClusterError::LaneTaken(session.to_owned()))
            }
            Err(e) => Err(ClusterError::JetStream(e.to_string())),
        }
    }

    /// Claims the lane of `session` as [`Lease::claim`] does, trying again for up to `wait`
    /// while the cluster answers with a transient error (a request timed out, a leader being
    /// elected): the answer is then a lease or `LaneTaken`, unless the cluster stays down.
    pub async fn claim_within(
        engine: &Engine,
        session: &str,
        wait: Duration,
    ) -> Result<Self, ClusterError> {
        let deadline = Instant::now() + wait;
        loop {
            match Self::claim(engine, session).await {
                Err(ClusterError::JetStream(e)) if Instant::now() < deadline => {
                    super::trace!("{session}: claiming the lane failed ({e}); trying again");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                settled => return settled,
            }
        }
    }

    /// Renews the lease, saying whether a run is in progress; `LaneTaken` when another
    /// node holds it now (this node must stop).
    pub async fn renew(&mut self, engine: &Engine, running: bool) -> Result<(), ClusterError> {
        match Self::write(engine, &self.session, running, self.revision).await {
            Ok(revision) => {
                self.revision = revision;
                self.renewed = Instant::now();
                Ok(())
            }
            Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => {
                Err(ClusterError::LaneTaken(self.session.clone()))
            }
            Err(e) => Err(ClusterError::JetStream(e.to_string())),
        }
    }

    /// Whether this node must consider the lease lost without asking: it could not renew
    /// for longer than the TTL minus `margin`.
    pub fn expired(&self, ttl: Duration, margin: Duration) -> bool {
        self.renewed.elapsed() + margin >= ttl
    }

    /// Gives the lane up (an idle lane), unless someone else holds it already.
    pub async fn release(self, engine: &Engine) -> Result<(), ClusterError> {
        while_stream_unknown(|| {
            engine
                .lanes
                .delete_expect_revision(&self.session, Some(self.revision))
        })
        .await
        .map_err(|e| ClusterError::JetStream(e.to_string()))
    }
}
