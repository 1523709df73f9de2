//! The methods OpenClaw's web Control UI calls at startup beyond what its CLI and TUI need:
//! `chat.startup` (history plus how the session key was resolved), `chat.metadata` and
//! `models.list` (the models it offers), `agent.identity.get`, and the message
//! subscriptions (events reach every connection of the principal anyway).

use std::sync::Arc;

use serde_json::{Value, json};

use super::OpenClaw;
use super::conn::OcConn;
use super::frames::OcError;
use super::keys;

/// Answers a Control UI method; `None` when `method` is not one of them.
pub async fn answer(
    oc: &Arc<OpenClaw>,
    conn: &OcConn,
    method: &str,
    params: &Value,
) -> Option<Result<Value, OcError>> {
    Some(match method {
        "chat.startup" => chat_startup(oc, conn, params).await,
        "chat.metadata" => Ok(json!({"swarmEnabled": false, "commands": [], "models": models(oc)})),
        "models.list" => Ok(json!({"models": models(oc)})),
        "agent.identity.get" => {
            let agent = agent_of(params);
            Ok(json!({"agentId": agent, "name": agent}))
        }
        "sessions.messages.subscribe" | "sessions.messages.unsubscribe" => {
            Ok(json!({"subscribed": method.ends_with(".subscribe")}))
        }
        _ => return None,
    })
}

/// The names of the methods above, for `hello-ok`.
pub const NAMES: &[&str] = &[
    "chat.startup",
    "chat.metadata",
    "models.list",
    "agent.identity.get",
    "sessions.messages.subscribe",
    "sessions.messages.unsubscribe",
];

fn agent_of(params: &Value) -> String {
    params
        .get("agentId")
        .and_then(Value::as_str)
        .filter(|a| !a.trim().is_empty())
        .unwrap_or(keys::DEFAULT_AGENT)
        .to_ascii_lowercase()
}

/// `chat.startup`: the history of the session named by `sessionKey`, or of the agent's
/// main session, with the resolution the UI reads.
async fn chat_startup(oc: &Arc<OpenClaw>, conn: &OcConn, params: &Value) -> Result<Value, OcError> {
    let agent = agent_of(params);
    let key = match params.get("sessionKey").and_then(Value::as_str) {
        Some(key) => keys::canonical(Some(key), Some(&agent)),
        None => keys::canonical(None, Some(&agent)),
    };
    let mut history_params = json!({"sessionKey": key});
    if let Some(limit) = params.get("limit") {
        history_params["limit"] = limit.clone();
    }
    let mut payload = super::methods::history(oc, conn, &history_params).await?;
    payload["resolution"] = json!({"ok": true, "key": key, "agentId": keys::agent_of(&key)});
    Ok(payload)
}

/// The models sessions can use, as OpenClaw's model choices.
fn models(oc: &OpenClaw) -> Vec<Value> {
    oc.gateway
        .registry()
        .available()
        .iter()
        .map(|m| {
            json!({
                "id": m.id, "name": m.name, "provider": m.provider, "available": true,
                "contextWindow": m.context_window, "reasoning": m.reasoning,
                "supportsTools": true,
                "input": if m.supports_images() { json!(["text", "image"]) } else { json!(["text"]) },
            })
        })
        .collect()
}
