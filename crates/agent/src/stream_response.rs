//! One LLM call: transform and convert the transcript, stream the response, emit
//! `message_start` / `message_update` / `message_end`.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use pi_ai::{AssistantMessage, AssistantMessageEvent, Context, ThinkingLevel};

use crate::config::{AgentContext, AgentLoopConfig};
use crate::event::AgentEvent;
use crate::message::AgentMessage;
use crate::sink::EventSink;

fn take(message: Arc<AssistantMessage>) -> AssistantMessage {
    Arc::try_unwrap(message).unwrap_or_else(|shared| (*shared).clone())
}

/// The level this call asked for, as pi 1.6 stamps it on the final message (`off` for none).
fn requested_level(config: &AgentLoopConfig) -> ThinkingLevel {
    config.options.reasoning.unwrap_or(ThinkingLevel::Off)
}

/// Ends the turn with an empty assistant message (aborted, or a key that could not be had)
/// without sending a request: its start and end are emitted as for a reply.
async fn end_without_request(
    config: &AgentLoopConfig,
    sink: &dyn EventSink,
    stop_reason: pi_ai::StopReason,
    error: String,
    thinking_level: Option<ThinkingLevel>,
) -> AssistantMessage {
    let mut message =
        AssistantMessage::empty(&config.model.api, &config.model.provider, &config.model.id);
    message.thinking_level = thinking_level;
    message.stop_reason = stop_reason;
    message.error_message = Some(error);
    sink.emit(AgentEvent::MessageStart {
        message: AgentMessage::from(message.clone()),
    })
    .await;
    sink.emit(AgentEvent::MessageEnd {
        message: AgentMessage::from(message.clone()),
    })
    .await;
    message
}

/// Streams the assistant's answer to `context` and returns the final message (which may
/// have `stopReason` `error` or `aborted`).
pub(crate) async fn stream_assistant_response(
    context: &AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn EventSink,
) -> AssistantMessage {
    if cancel.is_cancelled() {
        // Aborted between turns (e.g. while tools ran): no new request is made.
        return end_without_request(
            config,
            sink,
            pi_ai::StopReason::Aborted,
            "Request was aborted".into(),
            None,
        )
        .await;
    }
    let transformed = config
        .hooks
        .transform_context(&context.messages, cancel)
        .await;
    let messages = transformed.as_deref().unwrap_or(&context.messages);
    // A virtual model's request goes to the physical model its router picks; the rest of
    // the call (key, events, the message's model) is the routed model's. A session that
    // compacted for the routed model's window is read again.
    let routed;
    let retransformed;
    let (config, messages) = match config
        .hooks
        .route_model(&config.model, messages, &config.options, cancel)
        .await
    {
        None => (config, messages),
        Some(Ok(route)) => {
            routed = AgentLoopConfig {
                model: route.model,
                options: route.options,
                ..config.clone()
            };
            if route.compacted {
                retransformed = config
                    .hooks
                    .transform_context(&context.messages, cancel)
                    .await;
                (
                    &routed,
                    retransformed.as_deref().unwrap_or(&context.messages),
                )
            } else {
                (&routed, messages)
            }
        }
        Some(Err(error)) => {
            let level = Some(requested_level(config));
            return end_without_request(config, sink, pi_ai::StopReason::Error, error, level).await;
        }
    };
    let llm_messages = config.hooks.convert_to_llm(messages);
    let mut llm_context = Context {
        system_prompt: Some(context.system_prompt.clone()).filter(|s| !s.is_empty()),
        messages: llm_messages,
        tools: context
            .tools
            .iter()
            .filter(|t| t.declared())
            .map(|t| t.definition())
            .collect(),
        system_messages: config.hooks.system_messages(messages),
    };
    // A transcript with system messages gives the prompt they add up to (pi-ai 1.6 folds
    // them for a model that takes none mid-conversation; the others start from the first).
    if let Some(prompt) = pi_ai::transcript::folded_prompt(&llm_context.system_messages) {
        llm_context.system_prompt = Some(prompt).filter(|p| !p.is_empty());
    }
    if let Some(rewritten) = config
        .hooks
        .transform_request(messages, &llm_context, cancel)
        .await
    {
        llm_context = rewritten;
    }
    let mut options = config.options.clone();
    // Cancelling while the key is awaited (a refresh waiting for the auth.json lock) drops
    // that wait: nothing it would have done happens later.
    let key = tokio::select! {
        key = config.hooks.get_api_key(&config.model.provider) => key,
        () = cancel.cancelled() => {
            return end_without_request(
                config,
                sink,
                pi_ai::StopReason::Aborted,
                "Request was aborted".into(),
                None,
            )
            .await;
        }
    };
    match key {
        Ok(Some(key)) => options.stream.api_key = Some(key),
        Ok(None) => {}
        Err(error) => {
            let level = Some(requested_level(config));
            return end_without_request(config, sink, pi_ai::StopReason::Error, error, level).await;
        }
    }
    config
        .hooks
        .prepare_options(&config.model, &mut options.stream)
        .await;
    options.stream.cancel = Some(cancel.clone());

    let mut stream = (config.stream_fn)(&config.model, &llm_context, options);
    let mut started = false;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Start { partial } => {
                started = true;
                let message = AgentMessage::from((*partial).clone());
                sink.emit(AgentEvent::MessageStart { message }).await;
            }
            AssistantMessageEvent::Done { message, .. }
            | AssistantMessageEvent::Error { error: message, .. } => {
                let mut message = take(message);
                message.thinking_level = Some(requested_level(config));
                if !started {
                    sink.emit(AgentEvent::MessageStart {
                        message: AgentMessage::from(message.clone()),
                    })
                    .await;
                }
                sink.emit(AgentEvent::MessageEnd {
                    message: AgentMessage::from(message.clone()),
                })
                .await;
                return message;
            }
            update => {
                if started {
                    let message = Arc::clone(update.message());
                    sink.emit(AgentEvent::MessageUpdate {
                        message,
                        assistant_message_event: update,
                    })
                    .await;
                }
            }
        }
    }
    // The event stream guarantees a terminal event; this is only reached if a custom
    // stream function broke that contract.
    let mut message =
        AssistantMessage::empty(&config.model.api, &config.model.provider, &config.model.id);
    message.stop_reason = pi_ai::StopReason::Error;
    message.error_message = Some("Stream ended without a final event".into());
    if !started {
        sink.emit(AgentEvent::MessageStart {
            message: AgentMessage::from(message.clone()),
        })
        .await;
    }
    sink.emit(AgentEvent::MessageEnd {
        message: AgentMessage::from(message.clone()),
    })
    .await;
    message
}
