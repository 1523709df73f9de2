//! Tool calls of one assistant message: prepare → execute → finalize, in parallel or in
//! sequence, with the events and result messages of seed 003.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use pi_ai::{AssistantMessage, ToolCall, ToolResultMessage, now_ms};

use crate::config::{AgentContext, AgentLoopConfig};
use crate::event::AgentEvent;
use crate::hooks::{AfterToolCallContext, BeforeToolCallContext, BeforeToolCallResult};
use crate::message::AgentMessage;
use crate::nested::{NestedCaller, NestedOutcome, NestedRecord, NestedRequest, nested_calls};
use crate::sink::EventSink;
use crate::tool::{AgentTool, AgentToolResult, ToolExecutionMode};

/// Text of the result given to calls skipped because the user steered.
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";

/// What a batch produced.
pub(crate) struct BatchOutcome {
    /// Tool-result messages in source order.
    pub results: Vec<ToolResultMessage>,
    /// Every result asked to stop.
    pub terminate: bool,
    /// Steering messages taken between sequential calls (the rest were skipped).
    pub steering: Option<Vec<AgentMessage>>,
}

struct Finalized<'a> {
    call: &'a ToolCall,
    result: AgentToolResult,
    is_error: bool,
    /// How long the tool ran; `None` when it was never executed.
    duration_ms: Option<u64>,
    /// The calls the tool made itself (`nestedCalls`).
    nested_calls: Option<Value>,
}

/// What running a tool gave: its result, whether it failed, and how long it took.
struct Executed {
    result: AgentToolResult,
    is_error: bool,
    duration_ms: u64,
    nested_calls: Option<Value>,
}

struct Prepared<'a> {
    call: &'a ToolCall,
    tool: Arc<dyn AgentTool>,
    args: Value,
}

enum Preparation<'a> {
    Ready(Prepared<'a>),
    Immediate(Box<Finalized<'a>>),
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// The result of a call the run's abort reached before it started.
const ABORTED: &str = "Operation aborted";

fn immediate(call: &ToolCall, text: String) -> Preparation<'_> {
    Preparation::Immediate(Box::new(Finalized {
        call,
        result: AgentToolResult::error(text),
        is_error: true,
        duration_ms: None,
        nested_calls: None,
    }))
}

/// A call's tool and its validated arguments, or the error result it gets at once.
fn validate<'a>(
    context: &AgentContext,
    call: &'a ToolCall,
) -> Result<(Arc<dyn AgentTool>, Value), Preparation<'a>> {
    let Some(tool) = context.tool(&call.name).cloned() else {
        return Err(immediate(call, format!("Tool {} not found", call.name)));
    };
    let args = validate_for(&tool, call)?;
    Ok((tool, args))
}

/// `call`'s arguments checked against `tool`'s schema (after its `prepare_arguments`).
fn validate_for<'a>(
    tool: &Arc<dyn AgentTool>,
    call: &'a ToolCall,
) -> Result<Value, Preparation<'a>> {
    // Arguments that did not parse as a whole are refused with the text the model sent.
    if let Some(error) = &call.arguments_error {
        return Err(immediate(
            call,
            format!("Invalid arguments for tool \"{}\": {error}", call.name),
        ));
    }
    let reshaped =
        std::panic::catch_unwind(AssertUnwindSafe(|| tool.prepare_arguments(&call.arguments)));
    let validated = match &reshaped {
        Ok(Some(arguments)) => {
            pi_ai::validate_tool_call_arguments(&call.name, tool.parameters(), arguments)
        }
        Ok(None) => {
            pi_ai::validate_tool_call_arguments(&call.name, tool.parameters(), &call.arguments)
        }
        Err(panic) => {
            return Err(immediate(
                call,
                format!("Preparing arguments failed: {}", panic_text(&**panic)),
            ));
        }
    };
    validated.map_err(|error| immediate(call, error.message))
}

/// What the hook's verdict (or its panic) makes of a validated call.
fn apply_verdict<'a>(
    call: &'a ToolCall,
    tool: Arc<dyn AgentTool>,
    args: Value,
    verdict: Result<Option<BeforeToolCallResult>, String>,
) -> Preparation<'a> {
    match verdict {
        Ok(Some(verdict)) if verdict.block => {
            let reason = verdict
                .reason
                .unwrap_or_else(|| "Tool execution was blocked".to_owned());
            let mut blocked = immediate(call, reason);
            if verdict.terminate
                && let Preparation::Immediate(finalized) = &mut blocked
            {
                finalized.result.terminate = Some(true);
            }
            blocked
        }
        Ok(Some(verdict)) => Preparation::Ready(Prepared {
            call,
            tool,
            args: verdict.args.unwrap_or(args),
        }),
        Ok(None) => Preparation::Ready(Prepared { call, tool, args }),
        Err(panic) => immediate(call, panic),
    }
}

async fn prepare<'a>(
    context: &AgentContext,
    assistant: &AssistantMessage,
    call: &'a ToolCall,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
) -> Preparation<'a> {
    // A call not started before the run was aborted gets its result at once (pi 1.6.0).
    if cancel.is_cancelled() {
        return immediate(call, ABORTED.into());
    }
    let (tool, args) = match validate(context, call) {
        Ok(valid) => valid,
        Err(done) => return done,
    };
    let verdict = AssertUnwindSafe(config.hooks.before_tool_call(
        BeforeToolCallContext {
            assistant_message: assistant,
            tool_call: call,
            args: &args,
            messages: &context.messages,
            parent_tool_call_id: None,
        },
        cancel,
    ))
    .catch_unwind()
    .await
    .map_err(|panic| panic_text(&*panic));
    if cancel.is_cancelled() {
        return immediate(call, ABORTED.into());
    }
    apply_verdict(call, tool, args, verdict)
}

/// The preparations of calls run concurrently, when the hooks answer all their
/// `before_tool_call`s at once (`None`: ask one by one). Validation happens first, as it
/// would call by call; calls that fail it get no hook.
async fn prepare_together<'a>(
    context: &AgentContext,
    assistant: &AssistantMessage,
    calls: &[&'a ToolCall],
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
) -> Option<Vec<Preparation<'a>>> {
    if calls.len() < 2 || cancel.is_cancelled() {
        return None;
    }
    let validated: Vec<_> = calls.iter().map(|call| validate(context, call)).collect();
    let contexts: Vec<BeforeToolCallContext> = calls
        .iter()
        .zip(&validated)
        .filter_map(|(call, valid)| {
            valid.as_ref().ok().map(|(_, args)| BeforeToolCallContext {
                assistant_message: assistant,
                tool_call: call,
                args,
                messages: &context.messages,
                parent_tool_call_id: None,
            })
        })
        .collect();
    let asked = contexts.len();
    let verdicts = AssertUnwindSafe(config.hooks.before_tool_calls(contexts, cancel))
        .catch_unwind()
        .await
        .ok()
        .flatten()
        .filter(|v| v.len() == asked)?;
    if cancel.is_cancelled() {
        return Some(
            calls
                .iter()
                .map(|call| immediate(call, ABORTED.into()))
                .collect(),
        );
    }
    let mut verdicts = verdicts.into_iter();
    Some(
        calls
            .iter()
            .zip(validated)
            .map(|(call, valid)| match valid {
                Ok((tool, args)) => {
                    let verdict = verdicts.next().flatten();
                    apply_verdict(call, tool, args, Ok(verdict))
                }
                Err(done) => done,
            })
            .collect(),
    )
}

/// What a call runs within: the run's context, the assistant message that asked for the
/// call, and the loop's settings.
#[derive(Clone, Copy)]
struct Frame<'a> {
    context: &'a AgentContext,
    assistant: &'a AssistantMessage,
    config: &'a AgentLoopConfig,
}

/// Runs the tool, forwarding its partial results as `tool_execution_update` events and
/// running the calls it makes through [`NestedCaller`] as the loop runs the model's.
async fn execute(
    frame: Frame<'_>,
    prepared: &Prepared<'_>,
    parent: Option<&str>,
    cancel: &CancellationToken,
    sink: &dyn EventSink,
) -> Executed {
    let started = Instant::now();
    let (nested_tx, mut nested_rx) = mpsc::unbounded_channel::<NestedRequest>();
    let mut nested = FuturesUnordered::new();
    let mut running = Vec::new();
    let mut made = 0_usize;
    let mut records: Vec<NestedRecord> = Vec::new();
    let (tx, mut rx) = mpsc::unbounded_channel::<AgentToolResult>();
    let on_update = Arc::new(move |partial: AgentToolResult| {
        let _ = tx.send(partial);
    });
    let call = &prepared.call;
    let update = |partial_result| AgentEvent::ToolExecutionUpdate {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: Value::Object(call.arguments.clone()),
        partial_result,
        parent_tool_call_id: parent.map(str::to_owned),
    };
    let run = NestedCaller(nested_tx).scope(
        AssertUnwindSafe(prepared.tool.execute(
            &call.id,
            prepared.args.clone(),
            cancel.clone(),
            on_update,
        ))
        .catch_unwind(),
    );
    tokio::pin!(run);
    let outcome = loop {
        tokio::select! {
            biased;
            Some(partial) = rx.recv() => {
                // The calls the tool made keep running while the update is emitted: one
                // of them may hold the sink's order (an event being processed), and
                // waiting for it without polling it would never end.
                let emit = sink.emit(update(partial));
                tokio::pin!(emit);
                loop {
                    tokio::select! {
                        biased;
                        () = &mut emit => break,
                        Some(record) = nested.next(), if !nested.is_empty() => records.push(record),
                    }
                }
            }
            Some(mut request) = nested_rx.recv() => {
                made += 1;
                request.call.id = format!("{}/{made}", call.id);
                running.push(request.cancel.clone());
                nested.push(run_nested(frame, request, &call.id, sink));
            }
            Some(record) = nested.next(), if !nested.is_empty() => records.push(record),
            outcome = &mut run => break outcome,
        }
    };
    // Calls still running when the tool returned are cancelled, then let end.
    running.iter().for_each(CancellationToken::cancel);
    nested_rx.close();
    while let Ok(mut request) = nested_rx.try_recv() {
        made += 1;
        request.call.id = format!("{}/{made}", call.id);
        request.cancel.cancel();
        nested.push(run_nested(frame, request, &call.id, sink));
    }
    while let Some(mut record) = nested.next().await {
        record.status = "unfinished";
        records.push(record);
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    while let Ok(partial) = rx.try_recv() {
        sink.emit(update(partial)).await;
    }
    let (result, is_error) = match outcome {
        Ok(Ok(mut result)) => {
            let is_error = std::mem::take(&mut result.is_error);
            (result, is_error)
        }
        Ok(Err(error)) => (AgentToolResult::error(error.0), true),
        Err(panic) => (
            AgentToolResult::error(format!(
                "Tool {} failed: {}",
                call.name,
                panic_text(&*panic)
            )),
            true,
        ),
    };
    Executed {
        result,
        is_error,
        duration_ms,
        nested_calls: nested_calls(records),
    }
}

/// Runs one call a tool made: validated against the called tool's schema, through the
/// hooks, with its own start, update and end events; the outcome goes back to the caller.
async fn run_nested(
    frame: Frame<'_>,
    request: NestedRequest,
    parent: &str,
    sink: &dyn EventSink,
) -> NestedRecord {
    let NestedRequest {
        tool,
        call,
        cancel,
        reply,
    } = request;
    let number = call
        .id
        .rsplit('/')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    emit_start_of(&call, Some(parent), sink).await;
    let preparation = if cancel.is_cancelled() {
        immediate(&call, ABORTED.into())
    } else {
        let validated = validate_for(&tool, &call);
        match validated {
            Err(done) => done,
            Ok(args) => {
                let verdict = AssertUnwindSafe(frame.config.hooks.before_tool_call(
                    BeforeToolCallContext {
                        assistant_message: frame.assistant,
                        tool_call: &call,
                        args: &args,
                        messages: &frame.context.messages,
                        parent_tool_call_id: Some(parent),
                    },
                    &cancel,
                ))
                .catch_unwind()
                .await
                .map_err(|panic| panic_text(&*panic));
                apply_verdict(&call, tool, args, verdict)
            }
        }
    };
    let finalized = match preparation {
        Preparation::Immediate(done) => *done,
        Preparation::Ready(prepared) => {
            let executed = Box::pin(execute(frame, &prepared, Some(parent), &cancel, sink)).await;
            finalize(
                frame.context,
                frame.assistant,
                prepared,
                executed,
                frame.config,
                Some(parent),
                &cancel,
            )
            .await
        }
    };
    emit_end_of(&finalized, Some(parent), sink).await;
    let record = NestedRecord {
        number,
        id: call.id.clone(),
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        status: if finalized.is_error { "error" } else { "ok" },
        duration_ms: finalized.duration_ms,
        error: finalized.is_error.then(|| {
            finalized
                .result
                .content
                .iter()
                .filter_map(|b| b.as_text())
                .collect::<Vec<_>>()
                .join("\n")
        }),
    };
    let _ = reply.send(NestedOutcome {
        tool_call_id: finalized.call.id.clone(),
        result: finalized.result,
        is_error: finalized.is_error,
        duration_ms: finalized.duration_ms,
    });
    record
}

async fn finalize<'a>(
    context: &AgentContext,
    assistant: &AssistantMessage,
    prepared: Prepared<'a>,
    executed: Executed,
    config: &AgentLoopConfig,
    parent: Option<&str>,
    cancel: &CancellationToken,
) -> Finalized<'a> {
    let Executed {
        mut result,
        mut is_error,
        duration_ms,
        nested_calls,
    } = executed;
    let overrides = AssertUnwindSafe(config.hooks.after_tool_call(
        AfterToolCallContext {
            assistant_message: assistant,
            tool_call: prepared.call,
            args: &prepared.args,
            result: &result,
            is_error,
            messages: &context.messages,
            parent_tool_call_id: parent,
        },
        cancel,
    ))
    .catch_unwind()
    .await;
    match overrides {
        Ok(Some(o)) => {
            if let Some(content) = o.content {
                result.content = content;
            }
            if o.details.is_some() {
                result.details = o.details;
            }
            if o.terminate.is_some() {
                result.terminate = o.terminate;
            }
            if let Some(flag) = o.is_error {
                is_error = flag;
            }
        }
        Ok(None) => {}
        Err(panic) => {
            result = AgentToolResult::error(panic_text(&*panic));
            is_error = true;
        }
    }
    Finalized {
        call: prepared.call,
        result,
        is_error,
        duration_ms: Some(duration_ms),
        nested_calls,
    }
}

async fn emit_start(call: &ToolCall, sink: &dyn EventSink) {
    emit_start_of(call, None, sink).await;
}

async fn emit_start_of(call: &ToolCall, parent: Option<&str>, sink: &dyn EventSink) {
    sink.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: Value::Object(call.arguments.clone()),
        parent_tool_call_id: parent.map(str::to_owned),
    })
    .await;
}

async fn emit_end(finalized: &Finalized<'_>, sink: &dyn EventSink) {
    emit_end_of(finalized, None, sink).await;
}

async fn emit_end_of(finalized: &Finalized<'_>, parent: Option<&str>, sink: &dyn EventSink) {
    sink.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: finalized.call.id.clone(),
        tool_name: finalized.call.name.clone(),
        result: finalized.result.clone(),
        is_error: finalized.is_error,
        duration_ms: finalized.duration_ms,
        parent_tool_call_id: parent.map(str::to_owned),
    })
    .await;
}

async fn emit_result_message(finalized: &Finalized<'_>, sink: &dyn EventSink) -> ToolResultMessage {
    let message = ToolResultMessage {
        tool_call_id: finalized.call.id.clone(),
        tool_name: finalized.call.name.clone(),
        content: finalized.result.content.clone().into(),
        details: finalized.result.details.clone(),
        is_error: finalized.is_error,
        duration_ms: finalized.duration_ms,
        nested_calls: finalized.nested_calls.clone(),
        timestamp: now_ms(),
        ..Default::default()
    };
    sink.emit(AgentEvent::MessageStart {
        message: message.clone().into(),
    })
    .await;
    sink.emit(AgentEvent::MessageEnd {
        message: message.clone().into(),
    })
    .await;
    message
}

fn terminates(batch: &[Finalized<'_>]) -> bool {
    !batch.is_empty() && batch.iter().all(|f| f.result.terminate == Some(true))
}

/// Fails every tool call of a reply cut off at the output limit without running it (pi
/// 1.6): its arguments may be truncated, so each gets an error result asking for the call
/// again, and the run goes on so that the model can.
pub(crate) async fn fail_truncated_tool_calls(
    assistant: &AssistantMessage,
    sink: &dyn EventSink,
) -> BatchOutcome {
    let mut results = Vec::new();
    for call in assistant.tool_calls() {
        emit_start(call, sink).await;
        let finalized = Finalized {
            call,
            result: AgentToolResult::error(format!(
                "Tool call \"{}\" was not executed: the response hit the output token limit, \
so its arguments may be truncated. Re-issue the tool call with complete arguments.",
                call.name
            )),
            is_error: true,
            duration_ms: None,
            nested_calls: None,
        };
        emit_end(&finalized, sink).await;
        results.push(emit_result_message(&finalized, sink).await);
    }
    BatchOutcome {
        results,
        terminate: false,
        steering: None,
    }
}

/// Runs the tool calls of `assistant`: sequentially when the config says so or any called
/// tool is marked sequential, else prepared in order and executed concurrently.
pub(crate) async fn execute_tool_calls(
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn EventSink,
) -> BatchOutcome {
    let calls: Vec<&ToolCall> = assistant.tool_calls().collect();
    let sequential = config.tool_execution == ToolExecutionMode::Sequential
        || calls.iter().any(|c| {
            context.tool(&c.name).and_then(|t| t.execution_mode())
                == Some(ToolExecutionMode::Sequential)
        });
    if sequential {
        run_sequential(context, assistant, &calls, config, cancel, sink).await
    } else {
        run_parallel(context, assistant, &calls, config, cancel, sink).await
    }
}

async fn run_sequential(
    context: &AgentContext,
    assistant: &AssistantMessage,
    calls: &[&ToolCall],
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn EventSink,
) -> BatchOutcome {
    let frame = Frame {
        context,
        assistant,
        config,
    };
    let mut finalized_all = Vec::with_capacity(calls.len());
    let mut results = Vec::with_capacity(calls.len());
    let mut steering = None;
    for (index, call) in calls.iter().enumerate() {
        emit_start(call, sink).await;
        let finalized = match prepare(context, assistant, call, config, cancel).await {
            Preparation::Immediate(done) => *done,
            Preparation::Ready(prepared) => {
                let executed = execute(frame, &prepared, None, cancel, sink).await;
                finalize(context, assistant, prepared, executed, config, None, cancel).await
            }
        };
        emit_end(&finalized, sink).await;
        results.push(emit_result_message(&finalized, sink).await);
        finalized_all.push(finalized);

        // The user may have steered while this tool ran: skip what the model asked for next.
        let queued = config.queues.steering();
        if !queued.is_empty() {
            for skipped in &calls[index + 1..] {
                emit_start(skipped, sink).await;
                let done = Finalized {
                    call: skipped,
                    result: AgentToolResult::error(SKIPPED_FOR_STEERING),
                    is_error: true,
                    duration_ms: None,
                    nested_calls: None,
                };
                emit_end(&done, sink).await;
                results.push(emit_result_message(&done, sink).await);
                finalized_all.push(done);
            }
            steering = Some(queued);
            break;
        }
    }
    BatchOutcome {
        terminate: terminates(&finalized_all),
        results,
        steering,
    }
}

async fn run_parallel(
    context: &AgentContext,
    assistant: &AssistantMessage,
    calls: &[&ToolCall],
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn EventSink,
) -> BatchOutcome {
    let frame = Frame {
        context,
        assistant,
        config,
    };
    enum Slot<'a> {
        Done(Finalized<'a>),
        Pending(Prepared<'a>),
    }
    let mut slots = Vec::with_capacity(calls.len());
    let mut together = prepare_together(context, assistant, calls, config, cancel)
        .await
        .map(Vec::into_iter);
    for call in calls {
        emit_start(call, sink).await;
        let preparation = match together.as_mut().and_then(Iterator::next) {
            Some(preparation) => preparation,
            None => prepare(context, assistant, call, config, cancel).await,
        };
        match preparation {
            Preparation::Immediate(done) => {
                emit_end(&done, sink).await;
                slots.push(Slot::Done(*done));
            }
            Preparation::Ready(prepared) => slots.push(Slot::Pending(prepared)),
        }
    }
    // Execute concurrently; each call emits its end as soon as it is finalized, so ends
    // arrive in completion order while results keep source order.
    let finalized: Vec<Finalized> = join_all(slots.into_iter().map(|slot| async move {
        match slot {
            Slot::Done(done) => done,
            Slot::Pending(prepared) if cancel.is_cancelled() => {
                let done = Finalized {
                    call: prepared.call,
                    result: AgentToolResult::error(ABORTED),
                    is_error: true,
                    duration_ms: None,
                    nested_calls: None,
                };
                emit_end(&done, sink).await;
                done
            }
            Slot::Pending(prepared) => {
                let executed = execute(frame, &prepared, None, cancel, sink).await;
                let done =
                    finalize(context, assistant, prepared, executed, config, None, cancel).await;
                emit_end(&done, sink).await;
                done
            }
        }
    }))
    .await;
    let mut results = Vec::with_capacity(finalized.len());
    for done in &finalized {
        results.push(emit_result_message(done, sink).await);
    }
    BatchOutcome {
        terminate: terminates(&finalized),
        results,
        steering: None,
    }
}
