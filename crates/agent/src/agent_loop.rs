//! The loop: `agent_loop` and `agent_loop_continue` (seed 003). An inner loop runs turns
//! while there are tool calls or steering messages; an outer loop takes follow-ups when
//! the agent would otherwise stop.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use pi_ai::{AssistantMessage, StopReason, TextContent, Usage, now_ms};

use crate::config::{AgentContext, AgentLoopConfig};
use crate::event::AgentEvent;
use crate::hooks::TurnContext;
use crate::message::AgentMessage;
use crate::sink::{AgentEventStream, ChannelSink, EventSink, LoopError};
use crate::stream_response::stream_assistant_response;
use crate::tool_exec::{execute_tool_calls, fail_truncated_tool_calls};

/// Starts a run with new prompt messages; returns its events. Spawns onto the current
/// tokio runtime.
pub fn agent_loop(
    prompts: Vec<AgentMessage>,
    context: AgentContext,
    config: AgentLoopConfig,
    cancel: CancellationToken,
) -> AgentEventStream {
    spawn_run(
        move |sink| async move { run_agent_loop(prompts, context, &config, &sink, &cancel).await },
    )
}

/// Continues from the context as it is (retries, queued tool results). Refuses an empty
/// context and one ending in an assistant message.
pub fn agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    cancel: CancellationToken,
) -> Result<AgentEventStream, LoopError> {
    check_continuable(&context)?;
    Ok(spawn_run(move |sink| async move {
        run_agent_loop_continue(context, &config, &sink, &cancel)
            .await
            .unwrap_or_default()
    }))
}

fn spawn_run<F, Fut>(run: F) -> AgentEventStream
where
    F: FnOnce(ChannelSink) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Vec<AgentMessage>> + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let (done_tx, done_rx) = oneshot::channel();
    tokio::spawn(async move {
        let messages = run(ChannelSink(tx)).await;
        let _ = done_tx.send(messages);
    });
    AgentEventStream::new(rx, done_rx)
}

fn check_continuable(context: &AgentContext) -> Result<(), LoopError> {
    match context.messages.last() {
        None => Err(LoopError::NoMessages),
        Some(last) if last.is_assistant() => Err(LoopError::ContinueFromAssistant),
        Some(_) => Ok(()),
    }
}

/// Runs to `agent_end` with new prompts; returns the new messages (prompts included).
pub async fn run_agent_loop(
    prompts: Vec<AgentMessage>,
    mut context: AgentContext,
    config: &AgentLoopConfig,
    sink: &dyn EventSink,
    cancel: &CancellationToken,
) -> Vec<AgentMessage> {
    // New messages are the transcript's tail from here on: no second copy is kept.
    let base = context.messages.len();
    sink.emit(AgentEvent::AgentStart).await;
    sink.emit(AgentEvent::TurnStart).await;
    for prompt in prompts {
        sink.emit(AgentEvent::MessageStart {
            message: prompt.clone(),
        })
        .await;
        sink.emit(AgentEvent::MessageEnd {
            message: prompt.clone(),
        })
        .await;
        context.messages.push(prompt);
    }
    guarded_run(&mut context, base, config, sink, cancel).await;
    context.messages.split_off(base)
}

/// Runs to `agent_end` from the context as it is; returns only the new messages.
pub async fn run_agent_loop_continue(
    mut context: AgentContext,
    config: &AgentLoopConfig,
    sink: &dyn EventSink,
    cancel: &CancellationToken,
) -> Result<Vec<AgentMessage>, LoopError> {
    check_continuable(&context)?;
    let base = context.messages.len();
    sink.emit(AgentEvent::AgentStart).await;
    sink.emit(AgentEvent::TurnStart).await;
    guarded_run(&mut context, base, config, sink, cancel).await;
    Ok(context.messages.split_off(base))
}

/// An assistant message standing for a failure inside the loop itself.
pub fn failure_message(config: &AgentLoopConfig, aborted: bool, text: String) -> AssistantMessage {
    let mut message =
        AssistantMessage::empty(&config.model.api, &config.model.provider, &config.model.id);
    message.content = vec![pi_ai::AssistantBlock::Text(TextContent::new(""))].into();
    message.usage = Usage::default();
    message.stop_reason = if aborted {
        StopReason::Aborted
    } else {
        StopReason::Error
    };
    message.error_message = Some(text);
    message.timestamp = now_ms();
    message
}

/// Runs the loop; a panic in a hook becomes a synthetic error message and `agent_end` is
/// still emitted.
async fn guarded_run(
    context: &mut AgentContext,
    base: usize,
    config: &AgentLoopConfig,
    sink: &dyn EventSink,
    cancel: &CancellationToken,
) {
    let outcome = AssertUnwindSafe(run_loop(context, base, config, sink, cancel))
        .catch_unwind()
        .await;
    if let Err(panic) = outcome {
        let text = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "The agent loop failed".to_owned());
        let failure = AgentMessage::from(failure_message(config, cancel.is_cancelled(), text));
        context.messages.push(failure.clone());
        // The failure is a message of the transcript like any other, then the run ends.
        sink.emit(AgentEvent::MessageStart {
            message: failure.clone(),
        })
        .await;
        sink.emit(AgentEvent::MessageEnd {
            message: failure.clone(),
        })
        .await;
        sink.emit(AgentEvent::AgentEnd {
            messages: vec![failure],
        })
        .await;
    }
}

async fn end_run(context: &AgentContext, base: usize, sink: &dyn EventSink) {
    sink.emit(AgentEvent::AgentEnd {
        messages: context.messages[base..].to_vec(),
    })
    .await;
}

async fn run_loop(
    context: &mut AgentContext,
    base: usize,
    config: &AgentLoopConfig,
    sink: &dyn EventSink,
    cancel: &CancellationToken,
) {
    let mut first_turn = true;
    // The user may have typed while the run was starting.
    let mut pending = config.queues.steering();
    loop {
        let mut more_tool_calls = true;
        while more_tool_calls || !pending.is_empty() {
            if first_turn {
                first_turn = false;
            } else {
                config.hooks.before_next_turn(cancel).await;
                sink.emit(AgentEvent::TurnStart).await;
                if let Some(source) = &config.tools_source {
                    context.tools = source();
                }
            }
            for message in std::mem::take(&mut pending) {
                sink.emit(AgentEvent::MessageStart {
                    message: message.clone(),
                })
                .await;
                sink.emit(AgentEvent::MessageEnd {
                    message: message.clone(),
                })
                .await;
                context.messages.push(message);
            }

            let reply = stream_assistant_response(context, config, cancel, sink).await;
            let reply_index = context.messages.len();
            context.messages.push(AgentMessage::from(reply));
            let reply = match context.messages[reply_index].as_assistant() {
                Some(reply) => reply.clone(),
                None => continue,
            };
            if reply.stop_reason.is_failure() {
                sink.emit(AgentEvent::TurnEnd {
                    message: reply.into(),
                    tool_results: Vec::new(),
                })
                .await;
                end_run(context, base, sink).await;
                return;
            }

            more_tool_calls = false;
            let mut tool_results = Vec::new();
            let mut steering_taken = None;
            if reply.tool_calls().next().is_some() {
                let batch = if reply.stop_reason == pi_ai::StopReason::Length {
                    fail_truncated_tool_calls(&reply, sink).await
                } else {
                    execute_tool_calls(context, &reply, config, cancel, sink).await
                };
                more_tool_calls = !batch.terminate;
                context
                    .messages
                    .extend(batch.results.iter().cloned().map(AgentMessage::from));
                tool_results = batch.results;
                steering_taken = batch.steering;
            }
            sink.emit(AgentEvent::TurnEnd {
                message: AgentMessage::from(reply.clone()),
                tool_results: tool_results.clone(),
            })
            .await;
            context.messages.extend(config.queues.recorded());
            // After turn_end, as in the TypeScript pi: the hook sees the finished turn.
            let stop = config
                .hooks
                .should_stop_after_turn(TurnContext {
                    message: &reply,
                    tool_results: &tool_results,
                    messages: &context.messages,
                    new_messages: &context.messages[base..],
                })
                .await;
            if stop {
                if let Some(taken) = steering_taken {
                    config.queues.restore_steering(taken);
                }
                end_run(context, base, sink).await;
                return;
            }
            if config.hooks.continue_after_turn().await {
                more_tool_calls = true;
            }
            pending = steering_taken.unwrap_or_else(|| config.queues.steering());
        }
        let follow_ups = config.queues.follow_ups();
        if follow_ups.is_empty() {
            break;
        }
        pending = follow_ups;
    }
    end_run(context, base, sink).await;
}
