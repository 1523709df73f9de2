//! Routing a request made with a virtual model (pi 1.6's `prepareRequest` for virtual
//! models): the extension's `route()` picks the physical model and level, a new router
//! state is kept on the branch, and the request goes out with the routed model's key.

use pi_agent_core::RoutedRequest;
use pi_ai::{AssistantMessage, Message, Model, SimpleStreamOptions, ThinkingLevel};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Inner, lock};
use crate::extensions::ExtensionRuntime;
use crate::model_registry::RequestAuth;
use crate::session::EntryKind;
use crate::virtual_models::{RouteReason, STATE_ENTRY, branch_state, latest_response, loop_reason};

/// The host's answer to `route_model`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RouteAnswer {
    provider: String,
    id: String,
    #[serde(default)]
    thinking_level: Option<String>,
    /// Whether `route()` returned new state (anything but `undefined` or the state it got).
    #[serde(default)]
    state_changed: bool,
    #[serde(default)]
    state: Value,
}

fn level_name(options: &SimpleStreamOptions) -> &'static str {
    options.reasoning.unwrap_or(ThinkingLevel::Off).as_str()
}

impl Inner {
    /// Routes one loop request for the virtual `model`; the error ends the turn with it.
    pub(super) async fn route_loop_request(
        &self,
        runtime: &ExtensionRuntime,
        model: &Model,
        view: &[(Option<Message>, Value)],
        options: &SimpleStreamOptions,
        cancel: &CancellationToken,
    ) -> Result<RoutedRequest, String> {
        let failed = lock(&self.failed_response).take();
        let llm: Vec<Message> = view.iter().filter_map(|(m, _)| m.clone()).collect();
        let messages: Vec<&Value> = view.iter().map(|(_, v)| v).collect();
        let reason = loop_reason(&llm, failed.is_some());
        let state = {
            let session = lock(&self.session);
            branch_state(&session.branch_entries(), &model.provider, &model.id)
        };
        let answer = self
            .ask_router(
                runtime,
                model,
                (&llm, &messages),
                level_name(options),
                reason,
                failed.as_ref(),
                state.as_ref(),
                cancel,
            )
            .await?;
        let (target, level) = self.checked_target(model, &answer)?;
        if answer.state_changed {
            let data =
                json!({"provider": model.provider, "modelId": model.id, "state": answer.state});
            // A session that cannot be written keeps routing; the state is then lost.
            let _ = self.append_announced(EntryKind::Custom {
                custom_type: STATE_ENTRY.into(),
                data: Some(data),
            });
        }
        Ok(self.routed_options(target, level, options))
    }

    /// The model, level and credentials of a request made outside the agent loop (a
    /// compaction or branch summary): a virtual model is routed with reason `direct`, no
    /// state, the session's messages; anything else goes as it is.
    pub(super) async fn direct_target(
        &self,
        model: Model,
        level: ThinkingLevel,
        cancel: &CancellationToken,
    ) -> Result<(Model, ThinkingLevel, RequestAuth), String> {
        if !crate::virtual_models::is_virtual(&model) {
            let auth = self.request_auth(&model).map_err(|e| e.0)?;
            return Ok((model, level, auth));
        }
        let llm = self.agent.with_messages(crate::messages::convert_to_llm);
        let values: Vec<Value> = llm
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect();
        let messages: Vec<&Value> = values.iter().collect();
        let runtime = self.ext.runtime.clone();
        let answer = self
            .ask_router(
                &runtime,
                &model,
                (&llm, &messages),
                level.as_str(),
                RouteReason::Direct,
                None,
                None,
                cancel,
            )
            .await?;
        let (target, level) = self.checked_target(&model, &answer)?;
        let auth = self.request_auth(&target).map_err(|e| e.0)?;
        Ok((target, level, auth))
    }

    /// The request to the extension's `route()` and its answer.
    #[allow(clippy::too_many_arguments)]
    async fn ask_router(
        &self,
        runtime: &ExtensionRuntime,
        model: &Model,
        (llm, messages): (&[Message], &[&Value]),
        level: &str,
        reason: RouteReason,
        failed: Option<&AssistantMessage>,
        state: Option<&Value>,
        cancel: &CancellationToken,
    ) -> Result<RouteAnswer, String> {
        let registry = self.registry.current();
        let physical = |provider: &str, id: &str| registry.find_physical(provider, id).cloned();
        let mut request = json!({
            "model": model,
            "thinkingLevel": level,
            "reason": reason,
            "messages": messages,
        });
        if let Some(latest) = latest_response(llm)
            && let Some(found) = physical(&latest.provider, &latest.model)
        {
            request["previous"] = json!({"model": found, "thinkingLevel": latest.thinking_level});
        }
        if let Some(failed) = failed
            && let Some(found) = physical(&failed.provider, &failed.model)
        {
            request["failed"] =
                json!({"model": found, "thinkingLevel": failed.thinking_level, "message": failed});
        }
        if let Some(state) = state {
            request["state"] = state.clone();
        }
        let fields = json!({"provider": model.provider, "modelId": model.id, "request": request});
        let answer = runtime.route_model(fields, cancel.clone()).await?;
        serde_json::from_value(answer).map_err(|e| format!("bad route_model answer: {e}"))
    }

    /// The routed model, checked as pi 1.6.0 checks it, and its clamped level.
    fn checked_target(
        &self,
        model: &Model,
        answer: &RouteAnswer,
    ) -> Result<(Model, ThinkingLevel), String> {
        let registry = self.registry.current();
        let routed = format!(
            "Virtual model {}/{} routed to {}/{}",
            model.provider, model.id, answer.provider, answer.id
        );
        let Some(target) = registry
            .find_physical(&answer.provider, &answer.id)
            .cloned()
        else {
            return Err(format!("{routed}, which is not a physical model."));
        };
        if !registry.has_auth(&target.provider) {
            return Err(format!("{routed}, which has no credentials."));
        }
        let level = answer
            .thinking_level
            .as_deref()
            .and_then(ThinkingLevel::parse)
            .unwrap_or(ThinkingLevel::Off);
        let level = pi_ai::clamp_thinking_level(&target, level);
        Ok((target, level))
    }

    /// The request's options for the routed model: its level, key, headers and settings.
    fn routed_options(
        &self,
        target: Model,
        level: ThinkingLevel,
        options: &SimpleStreamOptions,
    ) -> RoutedRequest {
        let mut options = options.clone();
        options.reasoning = Some(level).filter(|l| *l != ThinkingLevel::Off);
        let auth = self.request_auth(&target).unwrap_or_default();
        options.stream.api_key = auth.api_key;
        options.stream.headers = auth.headers;
        options.stream.env = auth.env;
        RoutedRequest {
            model: target,
            options,
            compacted: false,
        }
    }
}

impl super::AgentSession {
    /// With a virtual model selected: the physical model and level of the latest
    /// successful response (pi 1.6.0's `routedModel`), shown in the footer.
    pub fn routed_model(&self) -> Option<(Model, Option<ThinkingLevel>)> {
        let model = self.model();
        if !crate::virtual_models::is_virtual(&model) {
            return None;
        }
        let (provider, id, level) = self.inner.agent.with_messages(|messages| {
            messages.iter().rev().find_map(|m| {
                let reply = m.as_assistant()?;
                (!matches!(
                    reply.stop_reason,
                    pi_ai::StopReason::Error | pi_ai::StopReason::Aborted
                ))
                .then(|| {
                    (
                        reply.provider.clone(),
                        reply.model.clone(),
                        reply.thinking_level,
                    )
                })
            })
        })?;
        let found = self.registry().find_physical(&provider, &id).cloned()?;
        Some((found, level))
    }

    /// The model whose limits count now: the routed one, else the selected one.
    pub(super) fn limits_model(&self) -> Model {
        self.routed_model()
            .map_or_else(|| self.model(), |(model, _)| model)
    }

    /// The model that produced `message`, when it is the selected model or (a virtual
    /// model selected) any physical one (pi 1.6.0's `_modelForMessage`).
    pub(super) fn model_for_message(&self, message: &AssistantMessage) -> Option<Model> {
        let model = self.model();
        if crate::virtual_models::is_virtual(&model) {
            return self
                .registry()
                .find_physical(&message.provider, &message.model)
                .cloned();
        }
        (model.provider == message.provider && model.id == message.model).then_some(model)
    }
}
