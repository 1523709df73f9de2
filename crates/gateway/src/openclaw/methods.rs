//! The OpenClaw methods pi-gateway answers, with the shapes the real clients read
//! (`protocol-v4.md`): sessions, history, `chat.send` / `chat.abort`, `agent` (accepted,
//! then final, under one id) and `agent.wait`, and the lists the TUI asks for at startup.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::conn::OcConn;
use super::frames::{self, OcError, Req, need_str, now_ms};
use super::keys;
use super::runs::RunRecord;
use super::translate::{Ending, Finished, Track};
use super::{OpenClaw, Target, lock};
use crate::server::{LiveSession, SessionNode};

/// The methods answered (`hello-ok` lists exactly these).
pub const NAMES: &[&str] = &[
    "connect",
    "sessions.subscribe",
    "sessions.list",
    "sessions.describe",
    "agents.list",
    "chat.history",
    "chat.send",
    "chat.abort",
    "agent",
    "agent.wait",
    "question.list",
    "plugin.approval.list",
    "commands.list",
];

/// The events sent.
pub const EVENTS: &[&str] = &["connect.challenge", "tick", "chat", "agent"];

/// How long `agent` waits for its run when the client gives no `timeout`.
const AGENT_TIMEOUT: Duration = Duration::from_secs(600);

/// Answers one request.
pub async fn dispatch(oc: &Arc<OpenClaw>, conn: &Arc<OcConn>, request: Req) {
    let params = if request.params.is_null() {
        json!({})
    } else {
        request.params.clone()
    };
    let method = request.method.as_str();
    if !params.is_object() {
        let error = OcError::invalid(format!("invalid {method} params: must be object"));
        return conn.send(frames::res_err(&request.id, &error, None));
    }
    let result = match method {
        "sessions.subscribe" => Ok(json!({"subscribed": true})),
        "sessions.list" => Ok(sessions_list(oc, conn, &params)),
        "sessions.describe" => sessions_describe(oc, conn, &params),
        "agents.list" => Ok(agents_list(oc, conn)),
        "chat.history" => history(oc, conn, &params).await,
        "chat.send" => return chat_send(oc, conn, &request.id, &params).await,
        "chat.abort" => chat_abort(oc, conn, &params).await,
        "agent" => return agent(oc, conn, &request.id, &params).await,
        "agent.wait" => agent_wait(oc, &params).await,
        "question.list" => Ok(json!({"questions": []})),
        "plugin.approval.list" => Ok(json!([])),
        "commands.list" => Ok(json!({"commands": []})),
        "connect" => Err(OcError::invalid("connect was already sent")),
        other => super::control_methods::answer(oc, conn, other, &params)
            .await
            .unwrap_or_else(|| Err(OcError::invalid(format!("unknown method: {other}")))),
    };
    if std::env::var_os("PI_GATEWAY_TRACE_OPENCLAW").is_some() {
        match &result {
            Ok(_) => eprintln!("openclaw: {method} ok"),
            Err(error) => eprintln!("openclaw: {method} {}: {}", error.code, error.message),
        }
    }
    conn.send(match result {
        Ok(payload) => frames::res_ok(&request.id, &payload),
        Err(error) => frames::res_err(&request.id, &error, None),
    });
}

/// The one agent, `main`, with the model new sessions get (the Control UI needs it to
/// offer sending).
fn agents_list(oc: &OpenClaw, conn: &OcConn) -> Value {
    let model = oc
        .workspace(&conn.principal)
        .ok()
        .and_then(|cwd| oc.gateway.default_model_id(&cwd));
    let mut agent =
        json!({"id": keys::DEFAULT_AGENT, "kind": "agent", "name": keys::DEFAULT_AGENT});
    if let Some(model) = model {
        agent["model"] = json!({"primary": model});
    }
    json!({
        "defaultId": keys::DEFAULT_AGENT, "mainKey": "main", "scope": "per-sender",
        "ownership": "sole", "selectionRequired": false, "agents": [agent],
    })
}

/// A session row: `key` and `kind`, and what the TUI footer shows.
pub fn row(node: &SessionNode, key: Option<&str>) -> Value {
    let key = key.map_or_else(|| keys::for_session(&node.id), str::to_owned);
    let (provider, model) = node
        .model
        .split_once('/')
        .map_or(("", node.model.as_str()), |(p, m)| (p, m));
    json!({
        "key": key,
        "kind": "direct",
        "agentId": keys::agent_of(&key),
        "sessionId": node.id,
        "updatedAt": node.last_active_at,
        "displayName": key,
        "verboseLevel": "on",
        "modelProvider": provider,
        "model": model,
    })
}

fn defaults(row: Option<&Value>) -> Value {
    json!({
        "modelProvider": row.and_then(|r| r.get("modelProvider")).cloned().unwrap_or(json!("")),
        "model": row.and_then(|r| r.get("model")).cloned().unwrap_or(json!("")),
        "contextTokens": 128_000,
    })
}

fn session_key(params: &Value, name: &str, method: &str) -> Result<String, OcError> {
    let key = need_str(params, name, method)?;
    Ok(keys::canonical(
        Some(key),
        params.get("agentId").and_then(Value::as_str),
    ))
}

fn sessions_list(oc: &OpenClaw, conn: &OcConn, params: &Value) -> Value {
    let mut rows = oc.session_rows(&conn.principal);
    if let Some(agent) = params
        .get("agentId")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
    {
        rows.retain(|r| r["agentId"] == agent);
    }
    let total = rows.len();
    if let Some(limit) = params
        .get("limit")
        .and_then(Value::as_u64)
        .filter(|l| *l > 0)
    {
        rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    json!({
        "ts": now_ms(),
        "count": rows.len(),
        "totalCount": total,
        "hasMore": rows.len() < total,
        "defaults": defaults(rows.first()),
        "sessions": rows,
    })
}

fn session_row(oc: &OpenClaw, id: &str, key: &str) -> Value {
    oc.gateway.node(id).map_or_else(
        || json!({"key": key, "kind": "direct"}),
        |n| row(&n, Some(key)),
    )
}

fn sessions_describe(oc: &Arc<OpenClaw>, conn: &OcConn, params: &Value) -> Result<Value, OcError> {
    let key = session_key(params, "key", "sessions.describe")?;
    let (target, _) = oc.session_for(&conn.principal, &key)?;
    Ok(json!({"session": session_row(oc, &target.id, &key)}))
}

/// The current branch's messages as pi-ai messages, each with its entry id: read here, or
/// from the node running the session.
async fn branch_messages(oc: &OpenClaw, target: &Target) -> Result<Vec<Value>, OcError> {
    let keep = |role: &str| matches!(role, "user" | "assistant" | "toolResult");
    if let Some(live) = &target.live {
        return Ok(live.session.with_session(|s| {
            s.branch_entries()
                .iter()
                .filter_map(|entry| {
                    let message = entry.message()?;
                    if !keep(message.role()) {
                        return None;
                    }
                    let mut value = serde_json::to_value(message).ok()?;
                    value["__openclaw"] = json!({"id": entry.id});
                    Some(value)
                })
                .collect()
        }));
    }
    let cluster = oc.cluster()?;
    let history = cluster
        .route(
            &target.owner,
            "session.history",
            json!({"sessionId": target.id, "full": true}),
        )
        .await
        .map_err(|e| OcError::unavailable(e.message))?;
    let entries = history["entries"].as_array().cloned().unwrap_or_default();
    Ok(entries
        .into_iter()
        .filter_map(|mut entry| {
            let mut message = entry.get_mut("message")?.take();
            if !keep(message["role"].as_str()?) {
                return None;
            }
            message["__openclaw"] = json!({"id": entry["entryId"]});
            Some(message)
        })
        .collect())
}

/// `chat.history`: the current branch's messages as pi-ai messages.
pub async fn history(oc: &Arc<OpenClaw>, conn: &OcConn, params: &Value) -> Result<Value, OcError> {
    let key = session_key(params, "sessionKey", "chat.history")?;
    let (target, track) = oc.session_for(&conn.principal, &key)?;
    let mut messages = branch_messages(oc, &target).await?;
    for (i, message) in messages.iter_mut().enumerate() {
        message["__openclaw"]["seq"] = json!(i + 1);
    }
    let total = messages.len();
    if let Some(limit) = params
        .get("limit")
        .and_then(Value::as_u64)
        .filter(|l| *l > 0)
    {
        let keep = usize::try_from(limit).unwrap_or(usize::MAX).min(total);
        messages.drain(..total - keep);
    }
    let info = session_row(oc, &target.id, &key);
    let mut payload = json!({
        "sessionKey": key,
        "sessionId": target.id,
        "messages": messages,
        "hasMore": messages.len() < total,
        "totalMessages": total,
        "defaults": defaults(Some(&info)),
        "sessionInfo": info,
        "verboseLevel": "on",
    });
    if let Some((run_id, text)) = lock(&track).current() {
        payload["inFlightRun"] = json!({"runId": run_id, "text": text});
    }
    Ok(payload)
}

/// Holds a run back until the request that started it has been answered and the client
/// has read that answer (see [`OcConn::read_barrier`]); dropped, it lets the run go too.
pub(super) struct Gate(oneshot::Sender<()>);

impl Gate {
    fn new() -> (Self, oneshot::Receiver<()>) {
        let (open, wait) = oneshot::channel();
        (Self(open), wait)
    }

    /// Lets the run start.
    fn open(self) {
        let _ = self.0.send(());
    }
}

/// Starts a run under `run_id` (a known id gives its record): queued on the session's lane
/// here, or sent to the node running the session; it emits nothing before `gate` opens.
fn start_run(
    oc: &Arc<OpenClaw>,
    target: &Target,
    track: &Arc<Mutex<Track>>,
    run_id: &str,
    message: &str,
    gate: oneshot::Receiver<()>,
) -> Result<(Arc<RunRecord>, bool), OcError> {
    match &target.live {
        Some(live) => start_local_run(oc, live, track, run_id, message, gate),
        None => start_routed_run(oc, target, track, run_id, message, gate),
    }
}

/// Answers the request that started a run, then lets the run go once the client has read
/// the answer: its events never come before the acknowledgement.
async fn answer_then_run(conn: &OcConn, answer: String, gate: Gate) {
    conn.send(answer);
    conn.read_barrier().await;
    gate.open();
}

/// Says a run that never started failed: a `chat` error event and its record.
fn run_not_started(oc: &OpenClaw, owner: &str, track: &Mutex<Track>, run: &str, error: &str) {
    let (key, agent) = {
        let track = lock(track);
        (track.key.clone(), track.agent_id.clone())
    };
    let payload = json!({"runId": run, "sessionKey": key, "agentId": agent, "seq": 1,
                         "state": "error", "stopReason": "error", "errorMessage": error,
                         "errorKind": "unknown"});
    oc.broadcast(
        owner,
        &super::translate::Outgoing {
            event: "chat",
            payload,
            tool: false,
        },
    );
    oc.runs.fail(run, error);
}

/// A run on the node of a cluster that runs the session: the prompt goes there under the
/// run id as its command id (sent twice, it runs once); its events come from the stream.
fn start_routed_run(
    oc: &Arc<OpenClaw>,
    target: &Target,
    track: &Arc<Mutex<Track>>,
    run_id: &str,
    message: &str,
    gate: oneshot::Receiver<()>,
) -> Result<(Arc<RunRecord>, bool), OcError> {
    let cluster = Arc::clone(oc.cluster()?);
    let key = lock(track).key.clone();
    let (record, fresh) = oc.runs.begin(run_id, &key, &target.id);
    if !fresh {
        return Ok((record, false));
    }
    lock(track).expect_run(run_id);
    let following = lock(&oc.following).get(&target.id).cloned();
    let (oc, track, owner, run) = (
        Arc::clone(oc),
        Arc::clone(track),
        target.owner.clone(),
        run_id.to_owned(),
    );
    let prompt =
        json!({"sessionId": target.id, "text": message, "wait": true, "commandId": run_id});
    tokio::spawn(async move {
        let _ = gate.await;
        let reply = cluster.route(&owner, "session.prompt", prompt);
        // The run's first events must find this node following the session.
        if let Some(mut following) = following {
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                following.wait_for(|ready| *ready),
            )
            .await;
        }
        // A run that started ends through its events (they may come after this reply);
        // one that did not start ends here.
        let error = match reply.await {
            Ok(reply) if reply["duplicate"] == true => {
                Some("a run with this idempotency key was already sent".to_owned())
            }
            Ok(reply) if reply["terminationReason"] == "gateway_disconnected" => {
                let started = oc.runs.get(&run).is_some_and(|r| r.finished().is_some());
                (!started).then(|| {
                    reply["error"]
                        .as_str()
                        .unwrap_or("the node running the session stopped")
                        .to_owned()
                })
            }
            Ok(_) => None,
            Err(e) => Some(e.message),
        };
        if let Some(error) = error
            && oc.runs.get(&run).is_some_and(|r| r.finished().is_none())
        {
            lock(&track).clear_expected();
            run_not_started(&oc, &owner, &track, &run, &error);
        }
    });
    Ok((record, true))
}

/// Queues a run on the session's lane here under `run_id`; a known id gives its record.
fn start_local_run(
    oc: &Arc<OpenClaw>,
    live: &Arc<LiveSession>,
    track: &Arc<Mutex<Track>>,
    run_id: &str,
    message: &str,
    gate: oneshot::Receiver<()>,
) -> Result<(Arc<RunRecord>, bool), OcError> {
    let key = lock(track).key.clone();
    let (record, fresh) = oc.runs.begin(run_id, &key, &live.id);
    if !fresh {
        return Ok((record, false));
    }
    let (oc2, session, track2) = (Arc::clone(oc), Arc::clone(live), Arc::clone(track));
    let (run, text) = (run_id.to_owned(), message.to_owned());
    let queued = live.enqueue(async move {
        let _ = gate.await;
        lock(&track2).expect_run(&run);
        let outcome = session.run_prompt(text).await;
        lock(&track2).clear_expected();
        oc2.gateway.touch(&session.id, outcome.termination);
        let unstarted = oc2.runs.get(&run).is_some_and(|r| r.finished().is_none());
        if unstarted {
            // The run ended before the agent started (no model, no key): say so.
            let error = outcome
                .error
                .unwrap_or_else(|| "the run did not start".into());
            run_not_started(&oc2, &session.owner, &track2, &run, &error);
        }
    });
    if let Err(error) = queued {
        oc.runs.fail(run_id, &error.message);
        return Err(OcError::unavailable(error.message));
    }
    Ok((record, true))
}

/// `chat.send`: the acknowledgement (`status: "started"`), then the run.
async fn chat_send(oc: &Arc<OpenClaw>, conn: &OcConn, id: &str, params: &Value) {
    let (gate, wait) = Gate::new();
    match start_chat(oc, conn, params, wait) {
        Ok(payload) => answer_then_run(conn, frames::res_ok(id, &payload), gate).await,
        Err(error) => conn.send(frames::res_err(id, &error, None)),
    }
}

/// Starts the run of a `chat.send` (held back by `gate`); the acknowledgement's payload.
fn start_chat(
    oc: &Arc<OpenClaw>,
    conn: &OcConn,
    params: &Value,
    gate: oneshot::Receiver<()>,
) -> Result<Value, OcError> {
    let key = session_key(params, "sessionKey", "chat.send")?;
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            OcError::invalid("invalid chat.send params: must have required property 'message'")
        })?;
    let run_id = need_str(params, "idempotencyKey", "chat.send")?;
    if let Some(known) = oc.runs.get(run_id) {
        let status = if known.finished().is_some() {
            "ok"
        } else {
            "in_flight"
        };
        return Ok(json!({"runId": run_id, "status": status}));
    }
    let (target, track) = oc.session_for(&conn.principal, &key)?;
    start_run(oc, &target, &track, run_id, message, gate)?;
    Ok(json!({"runId": run_id, "status": "started"}))
}

async fn chat_abort(oc: &Arc<OpenClaw>, conn: &OcConn, params: &Value) -> Result<Value, OcError> {
    let key = session_key(params, "sessionKey", "chat.abort")?;
    let wanted = params.get("runId").and_then(Value::as_str);
    let (target, track) = oc.session_for(&conn.principal, &key)?;
    let current = lock(&track).current().map(|(id, _)| id);
    let hit = current.filter(|id| wanted.is_none_or(|w| w == id));
    let Some(run_id) = hit else {
        return Ok(json!({"ok": true, "aborted": false, "runIds": []}));
    };
    if target.live.is_some() {
        oc.gateway
            .interrupt(&conn.principal, &target.id)
            .map_err(|e| OcError::unavailable(e.message))?;
    } else {
        oc.cluster()?
            .route(
                &conn.principal,
                "session.interrupt",
                json!({"sessionId": target.id}),
            )
            .await
            .map_err(|e| OcError::unavailable(e.message))?;
    }
    Ok(json!({"ok": true, "aborted": true, "runIds": [run_id]}))
}

/// The final `agent` payload of a finished run.
fn agent_final(finished: &Finished, session_id: &str, model: &str) -> (Value, bool) {
    let (provider, model) = model.split_once('/').unwrap_or(("", model));
    match finished.ending {
        Ending::Ok => (
            json!({"runId": finished.run_id, "status": "ok", "summary": "completed",
                   "result": {"payloads": [{"text": finished.text}],
                              "meta": {"durationMs": finished.ended_at - finished.started_at,
                                       "agentMeta": {"sessionId": session_id, "provider": provider, "model": model}}}}),
            true,
        ),
        Ending::Aborted => (
            json!({"runId": finished.run_id, "status": "timeout", "summary": "aborted", "stopReason": "aborted"}),
            true,
        ),
        Ending::Error => (
            json!({"runId": finished.run_id, "status": "error",
                   "summary": finished.error.clone().unwrap_or_else(|| "failed".into()),
                   "stopReason": "error"}),
            false,
        ),
    }
}

async fn agent(oc: &Arc<OpenClaw>, conn: &OcConn, id: &str, params: &Value) {
    let answer = |result: Result<Value, OcError>| match result {
        Ok(payload) => frames::res_ok(id, &payload),
        Err(error) => frames::res_err(id, &error, None),
    };
    let Some(message) = params.get("message").and_then(Value::as_str) else {
        let error = OcError::invalid("invalid agent params: must have required property 'message'");
        return conn.send(answer(Err(error)));
    };
    let run_id = match need_str(params, "idempotencyKey", "agent") {
        Ok(run_id) => run_id.to_owned(),
        Err(error) => return conn.send(answer(Err(error))),
    };
    let agent_id = params
        .get("agentId")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .unwrap_or(keys::DEFAULT_AGENT)
        .to_ascii_lowercase();
    let key = keys::canonical(
        params.get("sessionKey").and_then(Value::as_str),
        Some(&agent_id),
    );
    let (gate, wait) = Gate::new();
    let record = match oc.runs.get(&run_id) {
        Some(record) => record,
        None => {
            let started = oc
                .session_for(&conn.principal, &key)
                .and_then(|(target, track)| start_run(oc, &target, &track, &run_id, message, wait));
            match started {
                Ok((record, _)) => record,
                Err(error) => return conn.send(answer(Err(error))),
            }
        }
    };
    let accepted = answer(Ok(json!({
        "runId": run_id, "sessionKey": record.session_key, "agentId": agent_id,
        "status": "accepted", "acceptedAt": now_ms(),
    })));
    answer_then_run(conn, accepted, gate).await;
    let limit = params
        .get("timeout")
        .and_then(Value::as_f64)
        .filter(|t| t.is_finite() && *t > 0.0)
        .map_or(AGENT_TIMEOUT, |t| Duration::from_secs_f64(t.min(86_400.0)));
    let Some(finished) = record.wait(limit).await else {
        return conn.send(answer(Ok(
            json!({"runId": run_id, "status": "timeout", "summary": "timed out"}),
        )));
    };
    let model = oc
        .gateway
        .node(&record.session_id)
        .map(|n| n.model)
        .unwrap_or_default();
    let (payload, ok) = agent_final(&finished, &record.session_id, &model);
    if ok {
        conn.send(frames::res_ok(id, &payload));
    } else {
        let error = OcError::unavailable(finished.error.clone().unwrap_or_else(|| "failed".into()));
        conn.send(frames::res_err(id, &error, Some(&payload)));
    }
}

async fn agent_wait(oc: &OpenClaw, params: &Value) -> Result<Value, OcError> {
    let run_id = need_str(params, "runId", "agent.wait")?;
    let limit = params
        .get("timeoutMs")
        .and_then(Value::as_f64)
        .filter(|t| t.is_finite() && *t >= 0.0)
        .map_or(Duration::from_secs(30), |t| {
            Duration::from_millis(t.min(86_400_000.0) as u64)
        });
    let Some(record) = oc.runs.get(run_id) else {
        return Ok(json!({"runId": run_id, "status": "timeout"}));
    };
    let Some(finished) = record.wait(limit).await else {
        return Ok(json!({"runId": run_id, "status": "timeout"}));
    };
    let mut out = json!({
        "runId": run_id,
        "status": if finished.ending == Ending::Ok { "ok" } else { "error" },
        "startedAt": finished.started_at,
        "endedAt": finished.ended_at,
        "stopReason": match finished.ending { Ending::Ok => "stop", Ending::Aborted => "aborted", Ending::Error => "error" },
    });
    if finished.ending != Ending::Ok {
        out["error"] = json!(finished.error.clone().unwrap_or_else(|| "aborted".into()));
    }
    Ok(out)
}
