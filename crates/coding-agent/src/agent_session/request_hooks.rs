//! The per-request extension hooks of pi 1.6.0 as the agent loop calls them: `context`
//! keeps the system messages of the transcript, `context_with_system` may rewrite the whole
//! request, `before_provider_headers` edits its headers and `provider_stream_event` sees
//! each parsed provider event.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::{Context, Model, StreamOptions};

use super::system_message::{SystemState, current_system_message};
use crate::extensions::ExtensionRuntime;

/// `context`: the handlers see the conversation without system messages. An unchanged list
/// keeps the transcript as it is; a changed one gets the current system state as one
/// leading system message (pi 1.6.0's `restoreSystemMessages`). `None`: unchanged.
pub(super) async fn run_context(
    runtime: &ExtensionRuntime,
    messages: &[AgentMessage],
    cancel: &CancellationToken,
) -> Option<Vec<AgentMessage>> {
    let visible: Vec<AgentMessage> = messages
        .iter()
        .filter(|m| m.role() != "system")
        .cloned()
        .collect();
    let returned = runtime.emit_context(&visible, cancel.clone()).await?;
    if returned == visible {
        return None;
    }
    Some(
        current_system_message(messages)
            .into_iter()
            .chain(returned)
            .collect(),
    )
}

/// `context_with_system`: the handlers get the full transcript; what they return is the
/// request. The prompt and tools follow its system messages where those changed (a prompt
/// forced by `before_agent_start` stays otherwise); a transcript without any system message
/// has neither prompt nor tools. `None` when no handler changed anything.
pub(super) async fn run_context_with_system(
    runtime: &ExtensionRuntime,
    messages: &[AgentMessage],
    request: &Context,
    cancel: &CancellationToken,
) -> Option<Context> {
    let returned = runtime
        .emit_context_with_system(messages, cancel.clone())
        .await?;
    if returned == messages {
        return None;
    }
    let before = SystemState::replay(messages);
    let after = SystemState::replay(&returned);
    let (system_prompt, tools) = match (&before, &after) {
        (_, None) => (None, Vec::new()),
        (Some(before), Some(after)) => {
            let prompt = if before.same_sections(after) {
                request.system_prompt.clone()
            } else {
                Some(after.prompt()).filter(|p| !p.is_empty())
            };
            let tools = if before.same_tools(after) {
                request.tools.clone()
            } else {
                declared_tools(after, &request.tools)
            };
            (prompt, tools)
        }
        (None, Some(after)) => (
            Some(after.prompt()).filter(|p| !p.is_empty()),
            declared_tools(after, &request.tools),
        ),
    };
    Some(Context {
        system_prompt,
        messages: crate::messages::convert_to_llm(&returned),
        tools,
        system_messages: crate::messages::system_messages(&returned),
    })
}

/// The tools a system state declares; a tool the request already declares the same way
/// keeps its own definition (its constrained-sampling choice).
fn declared_tools(state: &SystemState, current: &[pi_ai::Tool]) -> Vec<pi_ai::Tool> {
    state
        .tool_definitions()
        .into_iter()
        .map(|declared| {
            current
                .iter()
                .find(|tool| {
                    tool.name == declared.name
                        && tool.description == declared.description
                        && tool.parameters == declared.parameters
                })
                .cloned()
                .unwrap_or(declared)
        })
        .collect()
}

/// `before_provider_headers`: the model's and the request's extra headers, edited by the
/// handlers; a removed header is also left out of what the provider itself adds.
pub(super) async fn run_before_provider_headers(
    runtime: &ExtensionRuntime,
    model: &Model,
    options: &mut StreamOptions,
) {
    let mut headers: BTreeMap<String, String> = model.headers.clone().unwrap_or_default();
    headers.extend(options.headers.clone());
    if let Some(edits) = runtime.emit_before_provider_headers(&headers).await {
        options.headers = edits.headers;
        options.removed_headers = edits.removed;
    }
}

/// Adds the `provider_stream_event` hook to stream options.
pub(super) fn with_stream_event_hook(
    mut options: StreamOptions,
    runtime: &Arc<ExtensionRuntime>,
) -> StreamOptions {
    {
        let runtime = runtime.clone();
        options.stream_events_wanted = Some(Arc::new(move || {
            runtime.has_handlers("provider_stream_event")
        }));
    }
    let runtime = runtime.clone();
    options.on_stream_event = Some(Arc::new(move |model: &Model, data| {
        let runtime = runtime.clone();
        let model = model.clone();
        Box::pin(async move { runtime.emit_provider_stream_event(&model, data).await })
    }));
    options
}
