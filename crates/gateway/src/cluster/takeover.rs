//! Taking a lane over: a node claims the lease of a session nobody owns, reads its entries
//! back from `PI_SESS` into a local copy of its file, opens it, and answers its lane. When
//! the previous owner died in the middle of a run, the run is recorded as interrupted
//! (`agent_end` with `gateway_disconnected`, and a `custom` entry in the session file);
//! it is never run again, since its tools may have acted already.
//!
//! Workspaces: a session's working directory is on its workspace node's disk. While that
//! node is alive, only it takes the lane (others ask it to); when it is gone, another node
//! takes the lane: with the directory there (a shared disk) it goes on as before,
//! otherwise it goes on in an empty directory of the same path, and clients are told the
//! workspace was lost while the conversation is intact.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::engine::ClusterError;
use super::feeds::decode;
use super::lease::Lease;
use super::node::{ClusterNode, Opening, lock};
use super::publisher::event_seq;
use super::route::{taken, unavailable};
use crate::events::{AgentEnd, ErrorEvent, LifecycleEvent, TerminationReason};
use crate::server::protocol::ApiError;

/// The `customType` of the entry recording a turn lost with its node.
pub const INTERRUPTED_ENTRY: &str = "gateway_turn_interrupted";

/// A session read back for a takeover, not yet opened.
struct Taken {
    gateway: Arc<crate::server::Gateway>,
    record: crate::server::tree::SessionNode,
    file: std::path::PathBuf,
    entries_last: u64,
    events_prev: u64,
    was_running: bool,
    workspace_lost: bool,
}

/// Releases the `taking` mark when a takeover ends.
struct Taking<'a> {
    node: &'a ClusterNode,
    session: String,
}

impl Drop for Taking<'_> {
    fn drop(&mut self) {
        lock(&self.node.taking).remove(&self.session);
    }
}

impl ClusterNode {
    /// Takes the lane of `session` over; `not_owner` when another node holds it (or is
    /// asked to take it): send the operation again.
    pub(super) async fn take_over(self: &Arc<Self>, session: &str) -> Result<(), ApiError> {
        if self.owned(session).is_some() {
            return Ok(());
        }
        if !lock(&self.taking).insert(session.to_owned()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
            return Err(taken(session));
        }
        let _taking = Taking {
            node: self,
            session: session.to_owned(),
        };
        let gateway = self.gateway()?;
        let record = gateway
            .node(session)
            .ok_or_else(|| ApiError::not_found(session))?;
        super::trace!("{session}: taking over");
        if let Some(home) = record.workspace_node.as_deref()
            && home != self.node_id()
            && self.node_alive(home).await.map_err(|e| {
                super::trace!("{session}: reading whether {home} is alive failed: {e}");
                unavailable(e)
            })?
        {
            // Its workspace node is alive: it takes the lane, this node sends again.
            super::trace!("{session}: its workspace node {home} is alive: asked to take it");
            // A live node answers at once; one cut off from here would keep this waiting.
            let _ = tokio::time::timeout(
                self.ttl().min(Duration::from_secs(2)),
                self.engine.client.request(
                    format!("pi.node.{home}.take"),
                    bytes::Bytes::from(session.to_owned()),
                ),
            )
            .await;
            return Err(taken(session));
        }
        let lease = match Lease::claim(&self.engine, session).await {
            Ok(lease) => lease,
            Err(ClusterError::LaneTaken(_)) => return Err(taken(session)),
            Err(e) => {
                super::trace!("{session}: claiming the lease failed: {e}");
                return Err(unavailable(e));
            }
        };
        super::trace!("{session}: lease claimed (revision {})", lease.revision);
        match self.open_taken(session, lease).await {
            Ok(()) => Ok(()),
            Err(e) => {
                lock(&self.opening).remove(session);
                Err(e)
            }
        }
    }

    async fn open_taken(self: &Arc<Self>, session: &str, lease: Lease) -> Result<(), ApiError> {
        let taken = match self.read_taken(session).await {
            Ok(taken) => taken,
            Err(e) => {
                // Nothing was opened: the lease goes back at once, so the next node to try
                // need not wait a TTL for it to lapse.
                if let Err(released) = lease.release(&self.engine).await {
                    super::trace!("{session}: giving the lease back failed: {released}");
                }
                return Err(e);
            }
        };
        let Taken {
            gateway,
            record,
            file,
            entries_last,
            events_prev,
            was_running,
            workspace_lost,
        } = taken;
        let cwd = std::path::Path::new(&record.cwd);
        gateway.set_node_file(session, &file);
        lock(&self.opening).insert(
            session.to_owned(),
            Opening {
                lease: Some(lease),
                entries_last,
                events_prev,
                writer: None,
            },
        );
        let live = gateway.resume(&record.owner, session)?;
        let owned = self
            .owned(session)
            .ok_or_else(|| ApiError::failed("the session closed while it was opened"))?;
        if !owned.wait_started().await {
            return Err(ApiError::failed(format!(
                "could not take the lane of session {session} over"
            )));
        }
        let previous = record.workspace_node.clone().unwrap_or_default();
        if was_running {
            live.publish_own(LifecycleEvent::AgentEnd(AgentEnd {
                session_id: session.to_owned(),
                total_turns: 0,
                total_tokens: 0,
                duration_ms: 0,
                termination_reason: TerminationReason::GatewayDisconnected,
            }));
            if let Err(e) = live.session.append_custom_entry(
                INTERRUPTED_ENTRY,
                Some(json!({ "reason": "gateway_disconnected", "takenOverBy": self.node_id() })),
            ) {
                eprintln!("pi-gateway: could not record the lost turn of {session}: {e}");
            }
            gateway.touch(session, Some(TerminationReason::GatewayDisconnected));
        }
        if workspace_lost {
            // The workspace node's disk is gone with it: its last snapshot, if any, brings
            // the files back as they were at the end of the last run.
            let restored = self.engine.restore_workspace(session, cwd).await;
            let (code, message) = match restored {
                Ok(Some(snapshot)) => (
                    "workspace_restored",
                    format!(
                        "the workspace {} was on node {previous}, which is gone; node {} \
                         restored it as it was at the end of the last run ({}), and the \
                         conversation goes on there (changes made after that are lost)",
                        record.cwd,
                        self.node_id(),
                        pi_coding_agent::session::time::iso_from_millis(snapshot.taken_at)
                    ),
                ),
                Ok(None) | Err(_) => (
                    "workspace_lost",
                    format!(
                        "the workspace {} was on node {previous}, which is gone{}; the \
                         conversation goes on in an empty folder on node {}",
                        record.cwd,
                        match &restored {
                            Err(e) => format!(", and its snapshot could not be restored ({e})"),
                            _ => String::new(),
                        },
                        self.node_id()
                    ),
                ),
            };
            live.publish_own(LifecycleEvent::Error(ErrorEvent {
                code: code.into(),
                message,
                context: None,
                recoverable: true,
            }));
        }
        if previous != self.node_id() {
            let mut node = record;
            node.workspace_node = Some(self.node_id().to_owned());
            node.file = None;
            gateway.merge_node(node.clone());
            self.share(&node);
        }
        Ok(())
    }

    /// Reads a session being taken over back from the streams into its local file.
    async fn read_taken(&self, session: &str) -> Result<Taken, ApiError> {
        let gateway = self.gateway()?;
        let record = gateway
            .node(session)
            .ok_or_else(|| ApiError::not_found(session))?;
        let failed = |what: &str, e: ClusterError| {
            super::trace!("{session}: reading its {what} failed: {e}");
            unavailable(e)
        };
        let (lines, entries_last) = self
            .engine
            .load_entries(session)
            .await
            .map_err(|e| failed("entries", e))?;
        let last_event = self
            .engine
            .last_event(session)
            .await
            .map_err(|e| failed("last event", e))?;
        let (events_prev, was_running) = match &last_event {
            Some((seq, payload)) => match decode(*seq, payload).last() {
                Some(event) => (event.seq, event.running),
                None => (event_seq(*seq, 0), false),
            },
            None => (0, false),
        };
        let file = self.local_file(session)?;
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ApiError::failed(e.to_string()))?;
        }
        if lines.is_empty() {
            let _ = std::fs::remove_file(&file);
        } else {
            let mut text = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
            for line in &lines {
                text.extend_from_slice(line);
                text.push(b'\n');
            }
            std::fs::write(&file, text).map_err(|e| ApiError::failed(e.to_string()))?;
        }
        let cwd = std::path::Path::new(&record.cwd);
        let workspace_lost = !cwd.is_dir();
        if workspace_lost {
            std::fs::create_dir_all(cwd).map_err(|e| {
                ApiError::failed(format!("cannot recreate the workspace {}: {e}", record.cwd))
            })?;
        }
        Ok(Taken {
            gateway,
            record,
            file,
            entries_last,
            events_prev,
            was_running,
            workspace_lost,
        })
    }

    fn share(&self, node: &crate::server::tree::SessionNode) {
        crate::server::cluster_hooks::ClusterHooks::save_record(self, node);
    }
}
