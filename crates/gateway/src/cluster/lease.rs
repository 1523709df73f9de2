//! A lane lease: a key of `pi_lanes` created by the owner and kept alive by renewals that
//! name the revision they hold. Created only when absent (or expired), so one node owns a
//! lane at a time; a renewal after someone else took the key fails, and the owner stops.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::json;

use async_nats::jetstream::kv::UpdateErrorKind;

use super::engine::{ClusterError, Engine, LANES, kv_removed, while_stream_unknown};

/// A held lease.
#[derive(Debug, Clone)]
pub struct Lease {
    pub session: String,
    /// The KV revision this node wrote last: the lane's epoch.
    pub revision: u64,
    /// When it was last written, on the monotonic clock (for self-fencing).
    pub renewed: Instant,
    /// Names this lease in every value it writes, so a write of its own whose
    /// acknowledgement was lost is told apart from another node's claim.
    pub token: String,
}

/// The last message of a lane key, read from the bucket's leader.
struct LastWrite {
    revision: u64,
    deleted: bool,
    token: Option<String>,
}

/// How a write over a revision that is no longer the last one is to be taken.
enum Conflict {
    /// The key holds this lease's own later write (its acknowledgement was lost).
    Ours(u64),
    /// The key holds this lease's write at the expected revision: the server still had
    /// a write of it in flight when it refused. Transient.
    InFlight(u64),
    /// The key was released or expired; it may be written over this revision.
    Free(u64),
    /// Another node holds it.
    Taken,
}

impl Lease {
    /// What the key holds: the owning node, whether a run is in progress (a node that
    /// sees such a lease expire takes the lane over to record the lost turn), and the
    /// lease's token.
    fn value(engine: &Engine, running: bool, token: &str) -> Bytes {
        Bytes::from(
            json!({"node": engine.config.node_id, "running": running, "lease": token}).to_string(),
        )
    }

    /// Writes the key over `revision` (0: only if it has no message), trying again while
    /// the server this node talks to has not yet learned of the bucket's stream.
    async fn write(
        engine: &Engine,
        session: &str,
        running: bool,
        token: &str,
        revision: u64,
    ) -> Result<u64, async_nats::jetstream::kv::UpdateError> {
        let value = Self::value(engine, running, token);
        while_stream_unknown(|| engine.lanes.update(session, value.clone(), revision)).await
    }

    /// The key's last message as the bucket's leader has it (a replica may lag); `None`
    /// when it has none.
    async fn last_write(engine: &Engine, session: &str) -> Result<Option<LastWrite>, ClusterError> {
        let last = engine
            .last_message(&format!("KV_{LANES}"), &format!("$KV.{LANES}.{session}"))
            .await?;
        let Some(last) = last else { return Ok(None) };
        let deleted = kv_removed(&last);
        let token = serde_json::from_slice::<serde_json::Value>(&last.payload)
            .ok()
            .and_then(|v| v["lease"].as_str().map(str::to_owned));
        Ok(Some(LastWrite {
            revision: last.sequence,
            deleted,
            token,
        }))
    }

    /// Reads what a write over `expected` ran into.
    async fn conflict(
        engine: &Engine,
        session: &str,
        token: &str,
        expected: u64,
    ) -> Result<Conflict, ClusterError> {
        Ok(match Self::last_write(engine, session).await? {
            None => Conflict::Free(0),
            Some(last) if last.deleted => Conflict::Free(last.revision),
            Some(last) if last.token.as_deref() == Some(token) => {
                if last.revision == expected {
                    Conflict::InFlight(last.revision)
                } else {
                    Conflict::Ours(last.revision)
                }
            }
            Some(_) => Conflict::Taken,
        })
    }

    /// A new token for a lease about to be claimed.
    pub fn new_token() -> String {
        uuid::Uuid::new_v4().simple().to_string()
    }

    /// Claims the lane of `session`; `LaneTaken` while another node holds it. Whether the
    /// key is free is read from the bucket's leader (a replica may lag), so a lane just
    /// released or expired can be claimed at once and a held one never twice.
    pub async fn claim(engine: &Engine, session: &str) -> Result<Self, ClusterError> {
        Self::claim_as(engine, session, &Self::new_token(), Instant::now()).await
    }

    /// [`Lease::claim`] under `token`, first tried at `since`: claiming again with the
    /// token of a claim whose acknowledgement was lost finds that claim, and holds it (as
    /// renewed at `since`, the earliest it can have been stored).
    pub async fn claim_as(
        engine: &Engine,
        session: &str,
        token: &str,
        since: Instant,
    ) -> Result<Self, ClusterError> {
        let lease = |revision| Self {
            session: session.to_owned(),
            revision,
            renewed: Instant::now(),
            token: token.to_owned(),
        };
        // Created if the key has no message at all (never used, or expired); written over
        // its last message when that is a deletion (a released lane).
        let mut over = 0;
        for _ in 0..3 {
            match Self::write(engine, session, false, token, over).await {
                Ok(revision) => return Ok(lease(revision)),
                Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => {}
                Err(e) => return Err(ClusterError::JetStream(e.to_string())),
            }
            match Self::conflict(engine, session, token, over).await? {
                Conflict::Free(revision) => over = revision,
                // Its own claim was stored, the acknowledgement lost. Renewals (over this
                // revision) then write the running flag as usual.
                Conflict::Ours(revision) | Conflict::InFlight(revision) => {
                    return Ok(Self {
                        renewed: since,
                        ..lease(revision)
                    });
                }
                Conflict::Taken => return Err(ClusterError::LaneTaken(session.to_owned())),
            }
        }
        Err(ClusterError::JetStream(format!(
            "the lane of {session} kept changing while it was claimed"
        )))
    }

    /// Claims the lane of `session` as [`Lease::claim`] does, trying again for up to `wait`
    /// while the cluster answers with a transient error (a request timed out, a leader being
    /// elected): the answer is then a lease or `LaneTaken`, unless the cluster stays down.
    /// Every try names the same lease, so one whose acknowledgement was lost is found.
    pub async fn claim_within(
        engine: &Engine,
        session: &str,
        wait: Duration,
    ) -> Result<Self, ClusterError> {
        let token = Self::new_token();
        let since = Instant::now();
        let deadline = since + wait;
        loop {
            match Self::claim_as(engine, session, &token, since).await {
                Err(ClusterError::JetStream(e)) if Instant::now() < deadline => {
                    super::trace!("{session}: claiming the lane failed ({e}); trying again");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                settled => return settled,
            }
        }
    }

    /// Renews the lease, saying whether a run is in progress; `LaneTaken` when another
    /// node holds it now (this node must stop). A renewal of its own that was stored
    /// although its acknowledgement was lost (a request timed out under load, a leader
    /// elected meanwhile) is taken as the revision to write over, not as another owner.
    pub async fn renew(&mut self, engine: &Engine, running: bool) -> Result<(), ClusterError> {
        for _ in 0..3 {
            match Self::write(engine, &self.session, running, &self.token, self.revision).await {
                Ok(revision) => {
                    self.revision = revision;
                    self.renewed = Instant::now();
                    return Ok(());
                }
                Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => {}
                Err(e) => return Err(ClusterError::JetStream(e.to_string())),
            }
            match Self::conflict(engine, &self.session, &self.token, self.revision).await? {
                Conflict::Ours(revision) => self.revision = revision,
                Conflict::InFlight(_) => {
                    return Err(ClusterError::JetStream(format!(
                        "a renewal of the lane of {} is still in flight",
                        self.session
                    )));
                }
                Conflict::Free(_) | Conflict::Taken => {
                    return Err(ClusterError::LaneTaken(self.session.clone()));
                }
            }
        }
        Err(ClusterError::JetStream(format!(
            "the lane of {} kept changing while it was renewed",
            self.session
        )))
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
