//! The agent hooks of a session: message conversion, API keys of subscription logins, and
//! the extension hooks the loop calls (`context`, `context_with_system`, the provider
//! request hooks, `tool_call`, `tool_result`, and the `turn_end` continuation).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use pi_agent_core::{
    AfterToolCallContext, AfterToolCallResult, AgentHooks, AgentMessage, BeforeToolCallContext,
    BeforeToolCallResult,
};
use pi_ai::{Message, StreamOptions};

use super::{Inner, lock};
use crate::extensions::tool::block_on_host;
use crate::extensions::{ExtensionEvent, ExtensionRuntime};

/// The agent hooks of a session: message conversion, plus the extension hooks.
pub(super) fn hooks(
    runtime: &Arc<ExtensionRuntime>,
    oauth: Option<OAuthKeys>,
    inner: Weak<Inner>,
) -> Arc<dyn AgentHooks> {
    Arc::new(SessionHooks {
        runtime: runtime.clone(),
        oauth,
        inner,
    })
}

/// Where the session reads subscription logins before each request (refreshing them).
pub(super) struct OAuthKeys {
    pub auth_path: std::path::PathBuf,
    /// The provider `--api-key` was given for: its key wins over any login.
    pub cli_key_provider: Option<String>,
}

/// Adds the `before_provider_request` and `after_provider_response` hooks to stream
/// options when an extension handles them.
pub(super) fn with_payload_hook(
    mut options: StreamOptions,
    runtime: &Arc<ExtensionRuntime>,
) -> StreamOptions {
    if runtime.is_empty() {
        return options;
    }
    options = super::request_hooks::with_stream_event_hook(options, runtime);
    {
        let runtime = runtime.clone();
        options.payload_wanted = Some(Arc::new(move || {
            runtime.has_handlers("before_provider_request")
        }));
    }
    {
        let runtime = runtime.clone();
        options.on_payload = Some(Arc::new(move |_model, payload: &mut Value| {
            if !runtime.has_handlers("before_provider_request") {
                return;
            }
            let runtime = runtime.clone();
            let current = payload.clone();
            let changed = block_on_host(async move {
                runtime
                    .emit_before_provider_request(&current, CancellationToken::new())
                    .await
            })
            .flatten();
            if let Some(changed) = changed {
                *payload = changed;
            }
        }));
    }
    {
        let runtime = runtime.clone();
        options.on_response = Some(Arc::new(move |status, headers| {
            if !runtime.has_handlers("after_provider_response") {
                return;
            }
            let runtime = runtime.clone();
            let event = ExtensionEvent::AfterProviderResponse {
                status,
                headers: headers.clone(),
            };
            block_on_host(async move { runtime.emit(&event, CancellationToken::new()).await });
        }));
    }
    options
}

struct SessionHooks {
    runtime: Arc<ExtensionRuntime>,
    oauth: Option<OAuthKeys>,
    /// The session, for what boundaries decided (set once the session exists).
    inner: Weak<Inner>,
}

impl SessionHooks {
    /// The session's projection, when boundary entries made the loop's transcript stale.
    fn reprojected(&self) -> Option<Vec<AgentMessage>> {
        let inner = self.inner.upgrade()?;
        if !inner.ext.reproject.load(Ordering::SeqCst) {
            return None;
        }
        let messages = lock(&inner.session).build_context().messages;
        Some(messages)
    }
}

impl SessionHooks {
    /// The transcript as a router sees it (pi 1.6's `convertToLlm`): the LLM messages with
    /// the system messages in their places, as they are recorded.
    fn router_view(&self, messages: &[AgentMessage]) -> Vec<(Option<Message>, Value)> {
        messages
            .iter()
            .flat_map(|m| {
                if m.role() == "system" {
                    let value = serde_json::to_value(m).unwrap_or(Value::Null);
                    return vec![(None, value)];
                }
                self.convert_to_llm(std::slice::from_ref(m))
                    .into_iter()
                    .map(|llm| {
                        let value = serde_json::to_value(&llm).unwrap_or(Value::Null);
                        (Some(llm), value)
                    })
                    .collect()
            })
            .collect()
    }
}

impl AgentHooks for SessionHooks {
    fn get_api_key<'a>(
        &'a self,
        provider: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            crate::timing::mark("request: key");
            let Some(oauth) = &self.oauth else {
                return Ok(None);
            };
            if oauth.cli_key_provider.as_deref() == Some(provider) {
                return Ok(None);
            }
            crate::config::oauth_refresh::fresh_oauth_key(
                &oauth.auth_path,
                provider,
                crate::config::oauth_refresh::MIN_VALIDITY_MS,
            )
            .await
            .map_err(|e| e.0)
        })
    }

    fn convert_to_llm(&self, messages: &[AgentMessage]) -> Vec<Message> {
        crate::timing::mark("request: converting the context");
        let mut converted = crate::messages::convert_to_llm(messages);
        crate::timing::mark("request: context converted");
        // Read at each request, so a change made while the session runs applies.
        let blocked = self.inner.upgrade().is_some_and(|inner| {
            inner
                .settings
                .get()
                .images
                .and_then(|images| images.block_images)
                .unwrap_or(false)
        });
        if blocked {
            crate::images::blocking::block_images(&mut converted);
        }
        converted
    }

    fn system_messages(&self, messages: &[AgentMessage]) -> Vec<pi_ai::SystemMessage> {
        crate::messages::system_messages(messages)
    }

    fn transform_context<'a>(
        &'a self,
        messages: &'a [AgentMessage],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<AgentMessage>>> {
        Box::pin(async move {
            let projected = self.reprojected();
            if !self.runtime.has_handlers("context") {
                return projected;
            }
            let messages = projected.as_deref().unwrap_or(messages);
            super::request_hooks::run_context(&self.runtime, messages, cancel)
                .await
                .or(projected)
        })
    }

    fn before_next_turn<'a>(&'a self, _cancel: &'a CancellationToken) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(inner) = self.inner.upgrade() {
                super::AgentSession { inner }
                    .compact_before_next_turn()
                    .await;
            }
        })
    }

    fn continue_after_turn(&self) -> BoxFuture<'_, bool> {
        let asked = self
            .inner
            .upgrade()
            .is_some_and(|inner| inner.ext.boundary_continue.swap(false, Ordering::SeqCst));
        Box::pin(async move { asked })
    }

    fn transform_request<'a>(
        &'a self,
        messages: &'a [AgentMessage],
        request: &'a pi_ai::Context,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<pi_ai::Context>> {
        Box::pin(async move {
            if !self.runtime.has_handlers("context_with_system") {
                return None;
            }
            super::request_hooks::run_context_with_system(&self.runtime, messages, request, cancel)
                .await
        })
    }

    fn route_model<'a>(
        &'a self,
        model: &'a pi_ai::Model,
        messages: &'a [AgentMessage],
        options: &'a pi_ai::SimpleStreamOptions,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Result<pi_agent_core::RoutedRequest, String>>> {
        Box::pin(async move {
            if !crate::virtual_models::is_virtual(model) {
                return None;
            }
            let Some(inner) = self.inner.upgrade() else {
                return Some(Err("The session has ended".into()));
            };
            let routed = inner
                .route_loop_request(
                    &self.runtime,
                    model,
                    &self.router_view(messages),
                    options,
                    cancel,
                )
                .await;
            // pi 1.6.0: a conversation past the routed model's threshold is compacted
            // before the request; the route stays as the router chose it.
            let routed = match routed {
                Ok(mut route) => {
                    route.compacted = super::AgentSession { inner }
                        .compact_for_window(&route.model)
                        .await;
                    Ok(route)
                }
                Err(error) => Err(error),
            };
            Some(routed)
        })
    }

    fn prepare_options<'a>(
        &'a self,
        model: &'a pi_ai::Model,
        options: &'a mut StreamOptions,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // The `read` tool resizes images to the profile of the model that asked for it.
            if let Some(inner) = self.inner.upgrade() {
                crate::images::limits::set_active(inner.image_policy_for(model));
            }
            if self.runtime.has_handlers("before_provider_headers") {
                super::request_hooks::run_before_provider_headers(&self.runtime, model, options)
                    .await;
            }
        })
    }

    fn before_tool_call<'a>(
        &'a self,
        context: BeforeToolCallContext<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>> {
        Box::pin(async move {
            if !self.runtime.has_handlers("tool_call") {
                return None;
            }
            let outcome = self
                .runtime
                .emit_tool_call(
                    &context.tool_call.name,
                    &context.tool_call.id,
                    context.parent_tool_call_id,
                    context.args.clone(),
                    cancel.clone(),
                )
                .await;
            verdict(outcome, context.args)
        })
    }

    fn before_tool_calls<'a>(
        &'a self,
        contexts: Vec<BeforeToolCallContext<'a>>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<Option<BeforeToolCallResult>>>> {
        Box::pin(async move {
            if !self.runtime.has_handlers("tool_call") {
                return None;
            }
            let calls = contexts
                .iter()
                .map(|c| {
                    (
                        c.tool_call.name.clone(),
                        c.tool_call.id.clone(),
                        c.args.clone(),
                    )
                })
                .collect();
            let outcomes = self
                .runtime
                .emit_tool_calls_together(calls, cancel.clone())
                .await?;
            Some(
                outcomes
                    .into_iter()
                    .zip(&contexts)
                    .map(|(outcome, context)| verdict(outcome, context.args))
                    .collect(),
            )
        })
    }

    fn after_tool_call<'a>(
        &'a self,
        context: AfterToolCallContext<'a>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<AfterToolCallResult>> {
        Box::pin(async move {
            let patch = if self.runtime.has_handlers("tool_result") {
                self.runtime
                    .emit_tool_result(
                        &context.tool_call.name,
                        &context.tool_call.id,
                        context.parent_tool_call_id,
                        context.args,
                        context.result.content.clone(),
                        context.result.details.clone().unwrap_or(Value::Null),
                        context.is_error,
                        cancel.clone(),
                    )
                    .await
            } else {
                None
            };
            // After the extensions, so images they add or replace are resized too (pi 0.84).
            let content = patch
                .as_ref()
                .and_then(|p| p.content.as_deref())
                .unwrap_or(&context.result.content);
            let resized = self.inner.upgrade().and_then(|inner| {
                crate::images::normalize_tool_result_images(content, &inner.image_policy())
            });
            if patch.is_none() && resized.is_none() {
                return None;
            }
            let patch = patch.unwrap_or_default();
            Some(AfterToolCallResult {
                content: resized.or(patch.content),
                details: patch.details,
                is_error: patch.is_error,
                terminate: None,
            })
        })
    }
}

/// A `tool_call` outcome as the loop's verdict: blocked, or run with the changed input.
fn verdict(
    outcome: crate::extensions::ToolCallOutcome,
    args: &Value,
) -> Option<BeforeToolCallResult> {
    if outcome.block {
        return Some(BeforeToolCallResult {
            block: true,
            reason: outcome.reason,
            args: None,
            terminate: outcome.terminate,
        });
    }
    (outcome.input != *args).then_some(BeforeToolCallResult {
        block: false,
        reason: None,
        args: Some(outcome.input),
        terminate: false,
    })
}
