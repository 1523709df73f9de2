//! Session operations across nodes: a node sends each one to the owner of the session's
//! lane (or runs it, when it is the owner); with nobody owning the lane, it takes the lane
//! over and runs it. The owner accepts operations one at a time in arrival order, and
//! drops a repeated `commandId` (the retry of an operation already accepted).
//!
//! A request or its reply can be lost on its way between servers (a route that has just
//! healed stays half-open for a while), so the sender sends an operation again until it
//! hears back; each operation carries a delivery id, and the owner answers a repeat with
//! the first's outcome instead of running it again (`deliveries`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::deliveries::Arrival;
use super::engine::ClusterError;
use super::lane::LaneServer;
use super::node::ClusterNode;
use super::owned::Owned;
use crate::server::protocol::ApiError;
use crate::server::session_ops::{self, OpOutcome};

/// An operation sent to a lane's owner.
#[derive(Debug, Serialize, Deserialize)]
struct Command {
    principal: String,
    method: String,
    params: Value,
    /// The same in every send of one operation.
    #[serde(default)]
    delivery: Option<String>,
}

/// The owner's answer.
#[derive(Debug, Serialize, Deserialize)]
struct Reply {
    ok: bool,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ApiError>,
}

/// The owner of the session just lost its lane: the sender tries again.
const NOT_OWNER: &str = "not_owner";

/// The first pause before an operation not yet answered is sent again, doubling up to
/// [`RESEND_MOST`].
const RESEND_FIRST: Duration = Duration::from_secs(1);
const RESEND_MOST: Duration = Duration::from_secs(4);

type Work = BoxFuture<'static, Result<Value, ApiError>>;

fn encode(result: Result<Value, ApiError>) -> Bytes {
    let reply = match result {
        Ok(value) => Reply {
            ok: true,
            result: Some(value),
            error: None,
        },
        Err(e) => Reply {
            ok: false,
            result: None,
            error: Some(e),
        },
    };
    Bytes::from(serde_json::to_vec(&reply).unwrap_or_default())
}

impl ClusterNode {
    /// Runs `method` for `principal` wherever the session's lane is owned.
    pub(super) async fn route_command(
        self: &Arc<Self>,
        principal: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, ApiError> {
        let session = params["sessionId"]
            .as_str()
            .ok_or_else(|| ApiError::invalid("sessionId is required"))?
            .to_owned();
        self.check_access(principal, &session).await?;
        let waits = method == "session.prompt" && params["wait"].as_bool() == Some(true);
        // An operation whose owner dies is sent again: with a command id, the retry runs it
        // only if the dead owner had not accepted it.
        let mut params = params;
        let once = matches!(
            method,
            "session.prompt" | "session.steer" | "session.followUp"
        );
        if once && params.get("commandId").is_none() {
            params["commandId"] = json!(format!("route-{}", uuid::Uuid::new_v4().simple()));
        }
        let mut owner_lost = false;
        let timeout = if waits {
            self.settings.wait_limit
        } else {
            Duration::from_secs(30)
        };
        let command = Bytes::from(
            serde_json::to_vec(&Command {
                principal: principal.to_owned(),
                method: method.to_owned(),
                params,
                delivery: Some(format!("delivery-{}", uuid::Uuid::new_v4().simple())),
            })
            .unwrap_or_default(),
        );
        let deadline = Instant::now() + self.ttl() * 3 + Duration::from_secs(10);
        let mut pause = Duration::from_millis(20);
        loop {
            if let Some(owned) = self.owned(&session)
                && owned.wait_started().await
                && !owned.lost.is_cancelled()
            {
                let work = self.accept(&owned, command.clone()).await;
                return work.await;
            }
            // An owner that stopped renewing may still look subscribed from here (cut
            // off, its servers' routes not yet timed out): take the lane once its lease is
            // gone instead of waiting for an answer that will not come.
            if self.lease_lapsed(&session) {
                let taken = self.take_over(&session).await;
                super::trace!("{session}: lease lapsed, taking over: {taken:?}");
                match taken {
                    Ok(()) => continue,
                    Err(e) if e.code == NOT_OWNER || e.code == UNAVAILABLE => {}
                    Err(e) => return Err(e),
                }
            }
            let sending = Instant::now();
            let sent = self
                .send_and_watch(&session, command.clone(), timeout)
                .await;
            super::trace!(
                "{session}: {method} sent to the owner (through {}, {:?}): {}",
                self.engine.client.server_info().server_name,
                sending.elapsed(),
                match &sent {
                    Ok(Some(_)) => "answered".to_owned(),
                    Ok(None) => "no owner".to_owned(),
                    Err(e) => e.to_string(),
                }
            );
            match sent {
                Ok(Some(reply)) => {
                    let reply: Reply = serde_json::from_slice(&reply).map_err(|e| {
                        ApiError::failed(format!("a bad reply from the owner: {e}"))
                    })?;
                    match (reply.ok, reply.error) {
                        (true, _)
                            if owner_lost
                                && reply
                                    .result
                                    .as_ref()
                                    .is_some_and(|r| r["duplicate"] == true) =>
                        {
                            // The dead owner had accepted it: the run was lost with it.
                            return Ok(lost_run());
                        }
                        (true, _) => return Ok(reply.result.unwrap_or(Value::Null)),
                        (false, Some(e)) if e.code == NOT_OWNER => {}
                        (false, error) => {
                            return Err(error.unwrap_or_else(|| ApiError::failed("failed")));
                        }
                    }
                }
                Ok(None) => match self.take_over(&session).await.inspect_err(|e| {
                    super::trace!("{session}: taking over failed: {e:?}");
                }) {
                    Ok(()) => continue,
                    Err(e) if e.code == NOT_OWNER => {}
                    // The cluster is electing a leader somewhere: try again, within limits.
                    Err(e) if e.code == UNAVAILABLE && Instant::now() < deadline => {}
                    Err(e) => return Err(e),
                },
                Err(ClusterError::LaneTaken(_)) => owner_lost = true,
                Err(e) => {
                    if Instant::now() > deadline {
                        return Err(ApiError::failed(e.to_string()));
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(ApiError::failed(format!(
                    "no node could run session {session}"
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    /// Sends an operation to the lane's owner and waits for its answer (a waiting prompt's
    /// comes when the run ends), unless the owner dies or stops renewing its lease first
    /// (`LaneTaken`: send it again, or take the lane). While no answer has come, the
    /// operation is sent again now and then: the owner answers every send alike.
    async fn send_and_watch(
        self: &Arc<Self>,
        session: &str,
        command: Bytes,
        timeout: Duration,
    ) -> Result<Option<Bytes>, ClusterError> {
        let until = Instant::now() + timeout;
        let mut sends = FuturesUnordered::new();
        sends.push(self.engine.send_to_owner(session, command.clone(), timeout));
        let mut resend = RESEND_FIRST;
        let mut next_send = Instant::now() + resend;
        let mut owner_seen = false;
        let mut tried = Instant::now();
        loop {
            tokio::select! {
                Some(result) = sends.next() => match result {
                    Ok(Some(reply)) => return Ok(Some(reply)),
                    // Nobody answered the only send out: the lane may be unowned.
                    other if sends.is_empty() => return other,
                    // An earlier send failed while a later one may still be answered.
                    _ => {}
                },
                _ = tokio::time::sleep_until(next_send.into()), if next_send < until => {
                    super::trace!("{session}: no answer yet, sending again");
                    let left = until.saturating_duration_since(Instant::now());
                    sends.push(self.engine.send_to_owner(session, command.clone(), left));
                    resend = (resend * 2).min(RESEND_MOST);
                    next_send = Instant::now() + resend;
                }
                _ = tokio::time::sleep(Duration::from_millis(250)) => {
                    let held = self.held_elsewhere(session) || self.owned(session).is_some();
                    owner_seen |= held;
                    if owner_seen && !held {
                        return Err(ClusterError::LaneTaken(session.to_owned()));
                    }
                    if self.lease_lapsed(session) && tried.elapsed() >= Duration::from_millis(500) {
                        tried = Instant::now();
                        let taken = self.take_over(session).await;
                        super::trace!("{session}: lease lapsed while waiting, taking over: {taken:?}");
                        if taken.is_ok() {
                            return Err(ClusterError::LaneTaken(session.to_owned()));
                        }
                    }
                }
            }
        }
    }

    /// Refuses sessions that are not `principal`'s; a session created a moment ago on
    /// another node may take a moment to reach this node's index.
    pub(super) async fn check_access(
        &self,
        principal: &str,
        session: &str,
    ) -> Result<(), ApiError> {
        let gateway = self.gateway()?;
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if let Some(node) = gateway.node(session) {
                return if node.owner == principal {
                    Ok(())
                } else {
                    Err(ApiError::not_found(session))
                };
            }
            if Instant::now() > deadline {
                return Err(ApiError::not_found(session));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Accepts one operation on a lane this node owns (in arrival order); the work that
    /// gives its reply. A repeat of an operation already here gets the first's outcome.
    pub(super) async fn accept(&self, owned: &Arc<Owned>, command: Bytes) -> Work {
        let ready = |result: Result<Value, ApiError>| -> Work { Box::pin(async move { result }) };
        let command: Command = match serde_json::from_slice(&command) {
            Ok(command) => command,
            Err(e) => return ready(Err(ApiError::invalid(e.to_string()))),
        };
        if owned.lost.is_cancelled() {
            return ready(Err(ApiError::new(NOT_OWNER, "the lane moved")));
        }
        owned.touch();
        let recorder = match command
            .delivery
            .as_deref()
            .map(|id| owned.deliveries.arrive(id))
        {
            Some(Arrival::Repeat(outcome)) => {
                super::trace!("{}: a repeated send, answered alike", owned.session);
                return outcome;
            }
            Some(Arrival::First(recorder)) => recorder,
            None => return self.accept_first(owned, command).await,
        };
        let work = self.accept_first(owned, command).await;
        // Run to the end even if the first sender stops waiting: a repeat waits for it.
        let task = tokio::spawn(async move {
            let outcome = work.await;
            recorder.done(&outcome);
            outcome
        });
        Box::pin(async move {
            task.await
                .unwrap_or_else(|e| Err(ApiError::failed(format!("the operation stopped: {e}"))))
        })
    }

    /// Accepts an operation seen for the first time.
    async fn accept_first(&self, owned: &Arc<Owned>, command: Command) -> Work {
        let ready = |result: Result<Value, ApiError>| -> Work { Box::pin(async move { result }) };
        if let Some(id) = command.params["commandId"].as_str() {
            match self.engine.record_command(&owned.session, id).await {
                Ok(true) => {
                    super::trace!("{}: command {id} is a duplicate", owned.session);
                    return ready(Ok(json!({ "duplicate": true, "commandId": id })));
                }
                Ok(false) => {}
                Err(e) => return ready(Err(unavailable(e))),
            }
            // Recording may have waited out a leader election, and the lane may have gone
            // meanwhile: the command is recorded, so sending it again would only find it a
            // duplicate. It is reported lost, as a run cut off by its node's end is.
            if owned.lost.is_cancelled() {
                return ready(Ok(lost_run()));
            }
        }
        let gateway = match self.gateway() {
            Ok(gateway) => gateway,
            Err(e) => return ready(Err(e)),
        };
        match session_ops::run(
            &gateway,
            &command.principal,
            &command.method,
            &command.params,
        ) {
            OpOutcome::Ready(result) => ready(result),
            OpOutcome::Later(work) => {
                let owned = Arc::clone(owned);
                Box::pin(async move {
                    let result = work.await;
                    // The reply follows what it reports on: the run's events and its
                    // session entries are stored first (an export right after sees them).
                    owned.flush_events().await;
                    let _ =
                        tokio::time::timeout(Duration::from_secs(5), owned.writer.flush()).await;
                    result
                })
            }
        }
    }

    /// Answers the other nodes' operations on `owned`'s lane.
    pub(super) async fn serve(&self, owned: &Arc<Owned>) -> Result<LaneServer, ClusterError> {
        let node = self.self_ref.clone();
        let weak_owned = Arc::downgrade(owned);
        self.engine
            .serve_lane(
                &owned.session,
                Arc::new(move |command: Bytes| {
                    let node = node.upgrade();
                    let owned = weak_owned.upgrade();
                    Box::pin(accept_for_lane(node, owned, command))
                }),
            )
            .await
    }
}

/// Accepts an operation that came over the lane; the work giving its encoded reply.
async fn accept_for_lane(
    node: Option<Arc<ClusterNode>>,
    owned: Option<Arc<Owned>>,
    command: Bytes,
) -> BoxFuture<'static, Bytes> {
    let work: Work = match (node, owned) {
        (Some(node), Some(owned)) => node.accept(&owned, command).await,
        _ => Box::pin(async { Err(ApiError::new(NOT_OWNER, "the lane moved")) }),
    };
    Box::pin(async move { encode(work.await) })
}

/// The reply to an operation whose run was lost with the node that accepted it.
fn lost_run() -> Value {
    json!({
        "terminationReason": "gateway_disconnected",
        "error": "the node running the session stopped during the run",
    })
}

/// The error a refused claim gives (someone else owns the lane; try again).
pub(super) fn taken(session: &str) -> ApiError {
    ApiError::new(
        NOT_OWNER,
        format!("the lane of session {session} is owned by another node"),
    )
}

/// The code of an error the cluster gave (a leader being elected, a server away).
pub(super) const UNAVAILABLE: &str = "unavailable";

/// An error a client may see when the cluster cannot be reached.
pub(super) fn unavailable(e: ClusterError) -> ApiError {
    ApiError::new(UNAVAILABLE, e.to_string())
}
