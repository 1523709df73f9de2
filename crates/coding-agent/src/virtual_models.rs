//! Virtual models (pi 1.6's `pi.registerVirtualModel`): selectable catalog entries whose
//! extension-side router picks a physical model for every request. The selection is what
//! `model_change` records; each assistant message names the physical model that answered.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use pi_ai::{InputKind, Model, ModelCost, ThinkingLevel, ThinkingLevelMap};

use crate::session::{EntryKind, SessionEntry};

/// The `api` of a virtual model's catalog entry (pi 1.6's `VIRTUAL_MODEL_API`).
pub const VIRTUAL_API: &str = "pi-virtual";

/// The custom entry that keeps a router's state on the session branch.
pub const STATE_ENTRY: &str = "pi.virtual-model-state";

/// A virtual model as an extension registered it, without its `route` function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualModelDef {
    pub provider: String,
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub thinking_levels: Option<Vec<String>>,
    #[serde(default)]
    pub context_window: Option<u64>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub input: Option<Vec<InputKind>>,
    #[serde(default)]
    pub extension_path: String,
}

impl VirtualModelDef {
    /// Rejects what pi 1.6.0 rejects at registration.
    pub fn validate(&self) -> Result<(), String> {
        if self.provider.trim().is_empty() || self.id.trim().is_empty() {
            return Err("Virtual model provider and id must not be empty.".into());
        }
        Ok(())
    }

    /// The catalog entry, as pi 1.6.0's `createVirtualModel` builds it: the offered levels
    /// mapped to themselves, the others unsupported; no cost; unknown limits are 0.
    pub fn to_model(&self) -> Model {
        let levels = self
            .thinking_levels
            .clone()
            .unwrap_or_else(|| vec!["off".into()]);
        let mut map = ThinkingLevelMap::new();
        for level in ThinkingLevel::ALL {
            let name = level.as_str();
            let offered = levels.iter().any(|l| l == name);
            map.insert(level, offered.then(|| name.to_owned()));
        }
        Model {
            id: self.id.clone(),
            name: self.name.clone().unwrap_or_else(|| self.id.clone()),
            api: VIRTUAL_API.into(),
            provider: self.provider.clone(),
            base_url: String::new(),
            reasoning: levels.iter().any(|l| l != "off"),
            thinking_level_map: Some(map),
            input: self
                .input
                .clone()
                .unwrap_or_else(|| vec![InputKind::Text, InputKind::Image]),
            cost: ModelCost::default(),
            context_window: self.context_window.unwrap_or(0),
            max_tokens: self.max_tokens.unwrap_or(0),
            headers: None,
            compat: None,
            extras: Default::default(),
        }
    }
}

/// Whether a catalog entry (or a message's `api`) is a virtual model.
pub fn is_virtual(model: &Model) -> bool {
    model.api == VIRTUAL_API
}

/// Why a request is made, as the router sees it (`request.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RouteReason {
    User,
    Continuation,
    Retry,
    Direct,
}

/// The router state last stored on `branch` for `provider/id`, if any.
pub fn branch_state(branch: &[&SessionEntry], provider: &str, id: &str) -> Option<Value> {
    branch.iter().rev().find_map(|entry| match &entry.kind {
        EntryKind::Custom {
            custom_type,
            data: Some(data),
        } if custom_type == STATE_ENTRY
            && data.get("provider").and_then(Value::as_str) == Some(provider)
            && data.get("modelId").and_then(Value::as_str) == Some(id) =>
        {
            Some(data.get("state").cloned().unwrap_or(Value::Null))
        }
        _ => None,
    })
}

/// The reason of a loop request: a retry when one failed just before, `user` when a user
/// message came after the last assistant message, else a continuation.
pub fn loop_reason(messages: &[pi_ai::Message], retrying: bool) -> RouteReason {
    if retrying {
        return RouteReason::Retry;
    }
    let last_reply = messages
        .iter()
        .rposition(|m| matches!(m, pi_ai::Message::Assistant(_)));
    let after = last_reply.map_or(0, |at| at + 1);
    if messages[after..]
        .iter()
        .any(|m| matches!(m, pi_ai::Message::User(_)))
    {
        RouteReason::User
    } else {
        RouteReason::Continuation
    }
}

/// The latest successful response among `messages` (`request.previous`'s source).
pub fn latest_response(messages: &[pi_ai::Message]) -> Option<&pi_ai::AssistantMessage> {
    messages.iter().rev().find_map(|m| match m {
        pi_ai::Message::Assistant(a)
            if !matches!(
                a.stop_reason,
                pi_ai::StopReason::Error | pi_ai::StopReason::Aborted
            ) =>
        {
            Some(&**a)
        }
        _ => None,
    })
}

/// The model a branch selected (pi 1.6.0's `getBranchSelection`): its latest
/// `model_change`, or the physical model of a later response, unless that response was
/// routed for a virtual model `find` still knows (then the virtual model stays selected).
pub fn branch_selection(
    branch: &[&SessionEntry],
    find: impl Fn(&str, &str) -> Option<Model>,
) -> Option<(String, String)> {
    let change_before = |end: usize| {
        branch[..end].iter().rev().find_map(|e| match &e.kind {
            EntryKind::ModelChange { provider, model_id } => {
                Some((provider.clone(), model_id.clone()))
            }
            _ => None,
        })
    };
    for (at, entry) in branch.iter().enumerate().rev() {
        match &entry.kind {
            EntryKind::ModelChange { provider, model_id } => {
                return Some((provider.clone(), model_id.clone()));
            }
            EntryKind::Message { message } => {
                let Some(reply) = message.as_assistant() else {
                    continue;
                };
                if reply.api == VIRTUAL_API {
                    continue;
                }
                let response = (reply.provider.clone(), reply.model.clone());
                let selected = change_before(at).filter(|(provider, id)| {
                    find(provider, id).is_some_and(|model| is_virtual(&model))
                });
                return Some(selected.unwrap_or(response));
            }
            _ => {}
        }
    }
    None
}
