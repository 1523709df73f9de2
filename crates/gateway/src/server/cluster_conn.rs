//! How a cluster node answers a connection's session requests: operations go to the node
//! owning the session's lane, subscriptions are served here from the cluster's event
//! stream, and sessions created here are owned here. Requests that touch no session
//! (`auth`, lists, `tool.result`) are answered as by a single gateway.

use std::sync::Arc;

use serde_json::{Value, json};

use super::cluster_hooks::ClusterHooks;
use super::conn::{Conn, Outcome, dispatch as single_dispatch, subscribed_response};
use super::gateway::Gateway;
use super::protocol::{
    ApiError, BranchParams, CreateParams, Request, ResumeParams, SessionParams, SubscribeParams,
    params,
};
use super::session_ops;

/// Answers one request of `conn` on a cluster node.
pub(super) fn dispatch(
    gateway: &Arc<Gateway>,
    cluster: &Arc<dyn ClusterHooks>,
    conn: &Arc<Conn>,
    request: Request,
) -> Outcome {
    let principal = conn.principal.clone();
    let p = request.params.clone();
    match request.method.as_str() {
        "session.create" => match params::<CreateParams>(&p) {
            Ok(create) if create.session_id.is_some() => {
                let id = create.session_id.clone().unwrap_or_default();
                opened_remote(cluster, conn, request.id, &principal, &id, create.subscribe)
            }
            Ok(create) => {
                let session = Arc::new(std::sync::OnceLock::new());
                let channel = conn.binding.tools(&create.channel_tools, &session);
                match gateway.create(&principal, &create, channel) {
                    Ok(live) => {
                        let _ = session.set(live.id.clone());
                        let base = gateway.describe(&live);
                        if create.subscribe {
                            subscribe(cluster, conn, request.id, &live.id, None, base)
                        } else {
                            Outcome::Reply(Ok(base))
                        }
                    }
                    Err(e) => Outcome::Reply(Err(e)),
                }
            }
            Err(e) => Outcome::Reply(Err(e)),
        },
        "session.resume" => match params::<ResumeParams>(&p) {
            Ok(resume) => opened_remote(
                cluster,
                conn,
                request.id,
                &principal,
                &resume.session_id,
                resume.subscribe,
            ),
            Err(e) => Outcome::Reply(Err(e)),
        },
        "session.branch" => match params::<BranchParams>(&p) {
            Ok(branch) => {
                let described = cluster.route(&principal, "session.branch", p);
                let cluster = Arc::clone(cluster);
                let conn = Arc::clone(conn);
                Outcome::Spawned(Box::pin(async move {
                    match described.await {
                        Ok(base) if branch.subscribe => {
                            let id = base["sessionId"].as_str().unwrap_or_default().to_owned();
                            if let Outcome::Spawned(work) =
                                subscribe(&cluster, &conn, request.id, &id, None, base)
                            {
                                work.await;
                            }
                        }
                        result => conn.respond(request.id, result),
                    }
                }))
            }
            Err(e) => Outcome::Reply(Err(e)),
        },
        "session.subscribe" => match params::<SubscribeParams>(&p) {
            Ok(s) => {
                let allowed = cluster.check_access(&principal, &s.session_id);
                let cluster = Arc::clone(cluster);
                let conn = Arc::clone(conn);
                Outcome::Spawned(Box::pin(async move {
                    if let Err(e) = allowed.await {
                        conn.respond(request.id, Err(e));
                        return;
                    }
                    let base = json!({ "sessionId": s.session_id });
                    if let Outcome::Spawned(work) =
                        subscribe(&cluster, &conn, request.id, &s.session_id, s.from_seq, base)
                    {
                        work.await;
                    }
                }))
            }
            Err(e) => Outcome::Reply(Err(e)),
        },
        "session.unsubscribe" => {
            let result = params::<SessionParams>(&p).and_then(|s| {
                owned_by(gateway, &principal, &s.session_id)?;
                Ok(s.session_id)
            });
            Outcome::Reply(result.map(|id| {
                cluster.unsubscribe(&id, conn.id);
                if let Ok(mut subscriptions) = conn.subscriptions.lock() {
                    subscriptions.remove(&id);
                }
                json!({})
            }))
        }
        method if session_ops::is_session_op(method) => {
            Outcome::Later(cluster.route(&principal, method, p))
        }
        _ => single_dispatch(gateway, conn, request),
    }
}

/// Refuses sessions that are not `principal`'s, as a single gateway does.
fn owned_by(gateway: &Gateway, principal: &str, id: &str) -> Result<(), ApiError> {
    gateway
        .node(id)
        .filter(|n| n.owner == principal)
        .map(|_| ())
        .ok_or_else(|| ApiError::not_found(id))
}

/// A session resumed wherever its lane is owned: described, and subscribed to here.
fn opened_remote(
    cluster: &Arc<dyn ClusterHooks>,
    conn: &Arc<Conn>,
    request_id: Value,
    principal: &str,
    id: &str,
    subscribe_to: bool,
) -> Outcome {
    let described = cluster.route(principal, "session.describe", json!({ "sessionId": id }));
    let cluster = Arc::clone(cluster);
    let conn = Arc::clone(conn);
    let id = id.to_owned();
    Outcome::Spawned(Box::pin(async move {
        match described.await {
            Ok(base) if subscribe_to => {
                if let Outcome::Spawned(work) =
                    subscribe(&cluster, &conn, request_id, &id, None, base)
                {
                    work.await;
                }
            }
            result => conn.respond(request_id, result),
        }
    }))
}

/// Subscribes `conn` to session `id` through the cluster, the response (built from
/// `base`) preceding any replay.
fn subscribe(
    cluster: &Arc<dyn ClusterHooks>,
    conn: &Arc<Conn>,
    request_id: Value,
    id: &str,
    from_seq: Option<u64>,
    base: Value,
) -> Outcome {
    if let Ok(mut subscriptions) = conn.subscriptions.lock() {
        subscriptions.insert(id.to_owned());
    }
    let response = Box::new(subscribed_response(request_id, base));
    Outcome::Spawned(cluster.subscribe(id, conn.subscriber(), from_seq, response))
}
