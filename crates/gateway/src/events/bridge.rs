//! The bridge from pi's `AgentSessionEvent`s to the 11 lifecycle events (seed §9.5).

use pi_agent_core::{AgentEvent, AgentMessage, AgentToolResult};
use pi_ai::{AssistantBlock, AssistantMessageEvent, InputBlock, Message, StopReason};
use pi_coding_agent::session_event::{AgentSessionEvent, SessionOnlyEvent};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::*;

/// What `agent_start` reports about the session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    pub model: String,
    pub tools: Vec<String>,
    pub thinking_level: String,
}

/// Facts about the session the bridge cannot see in events, read at turn boundaries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BridgeContext {
    /// Messages in the context.
    pub message_count: usize,
    /// Steering or follow-up messages are waiting (the loop goes on).
    pub has_queued: bool,
}

/// A message that ended and will be stored as a session entry.
#[derive(Debug, Clone)]
pub struct EndedMessage {
    pub message_id: String,
    pub message: AgentMessage,
}

/// State of the run in progress.
#[derive(Debug)]
struct RunState {
    started: Instant,
    turns: u32,
    turn_id: Option<String>,
    tokens: u64,
    last_stop: Option<StopReason>,
    last_error: Option<String>,
    tool_starts: HashMap<String, Instant>,
}

/// Turns `AgentSessionEvent`s into lifecycle events: ids for turns and messages, indices,
/// character positions, durations, token totals and the termination reason.
#[derive(Debug)]
pub struct Bridge {
    session_id: String,
    info: RunInfo,
    resumed_from: Option<String>,
    run: Option<RunState>,
    message: Option<(String, usize)>,
    last_assistant: Option<String>,
    requested: Option<TerminationReason>,
    last_termination: Option<TerminationReason>,
    ended: Option<EndedMessage>,
}

fn new_id(prefix: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}_{}", &id[..12])
}

fn blocks_text(blocks: &[InputBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            InputBlock::Text(t) => Some(t.text.as_str()),
            InputBlock::Image(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn result_text(result: &AgentToolResult) -> String {
    blocks_text(&result.content)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Bridge {
    /// A bridge for one session.
    pub fn new(session_id: impl Into<String>, info: RunInfo) -> Self {
        Self {
            session_id: session_id.into(),
            info,
            resumed_from: None,
            run: None,
            message: None,
            last_assistant: None,
            requested: None,
            last_termination: None,
            ended: None,
        }
    }

    /// Marks the session as resumed: the next `agent_start` names the original session.
    pub fn set_resumed_from(&mut self, id: Option<String>) {
        self.resumed_from = id;
    }

    /// Replaces what `agent_start` reports.
    pub fn set_info(&mut self, info: RunInfo) {
        self.info = info;
    }

    pub fn info(&self) -> &RunInfo {
        &self.info
    }

    /// Records why the coming end of the run happens; the first request wins.
    pub fn request_termination(&mut self, reason: TerminationReason) -> bool {
        if self.requested.is_some() {
            return false;
        }
        self.requested = Some(reason);
        true
    }

    /// Forgets a requested reason (a new operation starts).
    pub fn clear_requested(&mut self) {
        self.requested = None;
    }

    pub fn requested(&self) -> Option<TerminationReason> {
        self.requested
    }

    /// Whether a run is between `agent_start` and `agent_end`.
    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    /// The reason the last run ended with.
    pub fn last_termination(&self) -> Option<TerminationReason> {
        self.last_termination
    }

    /// The message of the last `message_end`, until taken (to map its id to an entry).
    pub fn take_ended(&mut self) -> Option<EndedMessage> {
        self.ended.take()
    }

    /// The lifecycle events for one session event.
    pub fn translate(
        &mut self,
        event: &AgentSessionEvent,
        ctx: &BridgeContext,
    ) -> Vec<LifecycleEvent> {
        match event {
            AgentSessionEvent::Agent(event) => self.agent_event(event, ctx),
            AgentSessionEvent::Session(event) => self.session_event(event),
        }
    }

    fn agent_event(&mut self, event: &AgentEvent, ctx: &BridgeContext) -> Vec<LifecycleEvent> {
        match event {
            AgentEvent::AgentStart => {
                self.run = Some(RunState {
                    started: Instant::now(),
                    turns: 0,
                    turn_id: None,
                    tokens: 0,
                    last_stop: None,
                    last_error: None,
                    tool_starts: HashMap::new(),
                });
                vec![LifecycleEvent::AgentStart(AgentStart {
                    session_id: self.session_id.clone(),
                    model: self.info.model.clone(),
                    tools: self.info.tools.clone(),
                    thinking_level: self.info.thinking_level.clone(),
                    resumed_from: self.resumed_from.take(),
                    timestamp: pi_ai::now_ms(),
                })]
            }
            AgentEvent::TurnStart => {
                let run = self.run_state();
                let turn_id = new_id("turn");
                let turn_index = run.turns;
                run.turns += 1;
                run.turn_id = Some(turn_id.clone());
                vec![LifecycleEvent::TurnStart(TurnStart {
                    turn_id,
                    turn_index,
                    message_count: ctx.message_count,
                })]
            }
            AgentEvent::MessageStart { message } => {
                let message_id = new_id("msg");
                self.message = Some((message_id.clone(), 0));
                let assistant = message.as_assistant();
                if assistant.is_some() {
                    self.last_assistant = Some(message_id.clone());
                }
                vec![LifecycleEvent::MessageStart(MessageStart {
                    message_id,
                    role: message.role().to_owned(),
                    model: assistant.map(|a| a.model.clone()),
                    usage: assistant.map(|a| InputUsage {
                        input_tokens: a.usage.input,
                    }),
                })]
            }
            AgentEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
                ..
            } => {
                let (message_id, index) = self.current_message();
                if let Some((_, chars)) = self.message.as_mut() {
                    *chars += delta.chars().count();
                }
                vec![LifecycleEvent::TextDelta(TextDelta {
                    message_id,
                    delta: delta.clone(),
                    index,
                })]
            }
            AgentEvent::MessageUpdate { .. } => Vec::new(),
            AgentEvent::MessageEnd { message } => self.message_end(message),
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                ..
            } => {
                self.run_state()
                    .tool_starts
                    .insert(tool_call_id.clone(), Instant::now());
                vec![LifecycleEvent::ToolExecutionStart(ToolExecutionStart {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    input: args.clone(),
                    message_id: self.last_assistant.clone(),
                })]
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                partial_result,
                ..
            } => vec![LifecycleEvent::ToolExecutionUpdate(ToolExecutionUpdate {
                tool_call_id: tool_call_id.clone(),
                update_type: if tool_name == "bash" {
                    UpdateType::Stdout
                } else {
                    UpdateType::PartialResult
                },
                content: result_text(partial_result),
                progress_percent: None,
            })],
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => {
                let started = self.run_state().tool_starts.remove(tool_call_id);
                let output = result_text(result);
                vec![LifecycleEvent::ToolExecutionEnd(ToolExecutionEnd {
                    tool_call_id: tool_call_id.clone(),
                    success: !is_error,
                    duration_ms: started.map(|s| millis(s.elapsed())).unwrap_or(0),
                    error: is_error.then(|| ToolError {
                        code: "tool_error".into(),
                        message: output.clone(),
                    }),
                    output,
                })]
            }
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                let has_tool_calls = !tool_results.is_empty()
                    || message.as_assistant().is_some_and(|a| {
                        a.content
                            .iter()
                            .any(|b| matches!(b, AssistantBlock::ToolCall(_)))
                    });
                let stop = message.as_assistant().map(|a| a.stop_reason);
                let failed = stop.is_some_and(StopReason::is_failure);
                let should_continue =
                    !failed && self.requested.is_none() && (has_tool_calls || ctx.has_queued);
                let termination_reason = (!should_continue).then(|| self.resolve_reason(stop));
                let turn_id = self.run_state().turn_id.take().unwrap_or_default();
                vec![LifecycleEvent::TurnEnd(TurnEnd {
                    turn_id,
                    has_tool_calls,
                    should_continue,
                    termination_reason,
                })]
            }
            AgentEvent::AgentEnd { .. } => self.agent_end(),
        }
    }

    fn message_end(&mut self, message: &AgentMessage) -> Vec<LifecycleEvent> {
        let message_id = self.current_message().0;
        self.message = None;
        let stored = match message {
            AgentMessage::Llm(_) => true,
            AgentMessage::Custom(custom) => custom.role == "custom",
        };
        if stored {
            self.ended = Some(EndedMessage {
                message_id: message_id.clone(),
                message: message.clone(),
            });
        }
        let assistant = match message {
            AgentMessage::Llm(Message::Assistant(a)) => Some(a),
            _ => None,
        };
        if let Some(a) = assistant {
            let run = self.run_state();
            run.tokens += a.usage.total_tokens;
            run.last_stop = Some(a.stop_reason);
            run.last_error = a.error_message.clone();
        }
        vec![LifecycleEvent::MessageEnd(MessageEnd {
            message_id,
            role: message.role().to_owned(),
            stop_reason: assistant.map(|a| a.stop_reason.into()),
            usage: assistant.map(|a| MessageUsage {
                input_tokens: a.usage.input,
                output_tokens: a.usage.output,
                thinking_tokens: None,
                cache_read_tokens: (a.usage.cache_read > 0).then_some(a.usage.cache_read),
            }),
            error_message: assistant.and_then(|a| a.error_message.clone()),
        })]
    }

    fn agent_end(&mut self) -> Vec<LifecycleEvent> {
        let run = self.run.take();
        let stop = run.as_ref().and_then(|r| r.last_stop);
        let reason = self.resolve_reason(stop);
        self.requested = None;
        self.last_termination = Some(reason);
        self.message = None;
        let (turns, tokens, duration, last_error) = match run {
            Some(run) => (
                run.turns,
                run.tokens,
                millis(run.started.elapsed()),
                run.last_error,
            ),
            None => (0, 0, 0, None),
        };
        let mut events = vec![LifecycleEvent::AgentEnd(AgentEnd {
            session_id: self.session_id.clone(),
            total_turns: turns,
            total_tokens: tokens,
            duration_ms: duration,
            termination_reason: reason,
        })];
        let error = match reason {
            TerminationReason::Error => Some(ErrorEvent {
                code: "model_error".into(),
                message: last_error.unwrap_or_else(|| "the model call failed".into()),
                context: None,
                recoverable: true,
            }),
            TerminationReason::Timeout | TerminationReason::IdleTimeout => Some(ErrorEvent {
                code: reason.as_str().into(),
                message: match reason {
                    TerminationReason::Timeout => "the run passed its hard time limit".into(),
                    _ => "the model produced no token within the idle limit".into(),
                },
                context: None,
                recoverable: true,
            }),
            TerminationReason::GatewayDisconnected => Some(ErrorEvent {
                code: reason.as_str().into(),
                message: "the gateway shut down during the run; the session is saved".into(),
                context: None,
                recoverable: true,
            }),
            TerminationReason::NoToolCalls | TerminationReason::AbortSignal => None,
        };
        events.extend(error.map(LifecycleEvent::Error));
        events
    }

    fn session_event(&mut self, event: &SessionOnlyEvent) -> Vec<LifecycleEvent> {
        match event {
            SessionOnlyEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => vec![LifecycleEvent::Error(ErrorEvent {
                code: "provider_error".into(),
                message: error_message.clone(),
                context: Some(serde_json::json!({
                    "attempt": attempt,
                    "maxAttempts": max_attempts,
                    "delayMs": delay_ms,
                })),
                recoverable: true,
            })],
            SessionOnlyEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error,
            } => vec![LifecycleEvent::Error(ErrorEvent {
                code: "retries_exhausted".into(),
                message: final_error
                    .clone()
                    .unwrap_or_else(|| "the retries failed".into()),
                context: Some(serde_json::json!({ "attempt": attempt })),
                recoverable: false,
            })],
            _ => Vec::new(),
        }
    }

    /// The requested reason, else the one the last stop reason implies.
    fn resolve_reason(&self, stop: Option<StopReason>) -> TerminationReason {
        if let Some(reason) = self.requested {
            return reason;
        }
        match stop {
            Some(StopReason::Error) => TerminationReason::Error,
            Some(StopReason::Aborted) => TerminationReason::AbortSignal,
            _ => TerminationReason::NoToolCalls,
        }
    }

    fn current_message(&mut self) -> (String, usize) {
        match &self.message {
            Some((id, chars)) => (id.clone(), *chars),
            None => {
                let id = new_id("msg");
                self.message = Some((id.clone(), 0));
                (id, 0)
            }
        }
    }

    fn run_state(&mut self) -> &mut RunState {
        self.run.get_or_insert_with(|| RunState {
            started: Instant::now(),
            turns: 0,
            turn_id: None,
            tokens: 0,
            last_stop: None,
            last_error: None,
            tool_starts: HashMap::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bridge() -> Bridge {
        Bridge::new(
            "s1",
            RunInfo {
                model: "mock/m".into(),
                tools: vec!["read".into()],
                thinking_level: "off".into(),
            },
        )
    }

    fn agent(event: AgentEvent) -> AgentSessionEvent {
        AgentSessionEvent::Agent(event)
    }

    #[test]
    fn reasons_serialize_as_in_the_seed() {
        let names: Vec<String> = [
            TerminationReason::NoToolCalls,
            TerminationReason::Timeout,
            TerminationReason::IdleTimeout,
            TerminationReason::AbortSignal,
            TerminationReason::GatewayDisconnected,
            TerminationReason::Error,
        ]
        .iter()
        .map(|r| {
            serde_json::to_value(r)
                .map(|v| v.to_string())
                .unwrap_or_default()
        })
        .collect();
        assert_eq!(
            names,
            [
                "\"no_tool_calls\"",
                "\"timeout_48h\"",
                "\"idle_timeout_120s\"",
                "\"abort_signal\"",
                "\"gateway_disconnected\"",
                "\"error\""
            ]
        );
    }

    #[test]
    fn a_plain_run_ends_with_no_tool_calls() {
        let mut b = bridge();
        let ctx = BridgeContext::default();
        let start = b.translate(&agent(AgentEvent::AgentStart), &ctx);
        assert_eq!(start[0].name(), "agent_start");
        let turn = b.translate(&agent(AgentEvent::TurnStart), &ctx);
        assert!(matches!(&turn[0], LifecycleEvent::TurnStart(t) if t.turn_index == 0));
        let reply = pi_ai::AssistantMessage {
            content: vec![AssistantBlock::Text(pi_ai::TextContent {
                text: "hi".into(),
                ..Default::default()
            })]
            .into(),
            ..Default::default()
        };
        let message = AgentMessage::from(reply);
        b.translate(
            &agent(AgentEvent::MessageStart {
                message: message.clone(),
            }),
            &ctx,
        );
        b.translate(
            &agent(AgentEvent::MessageEnd {
                message: message.clone(),
            }),
            &ctx,
        );
        let end = b.translate(
            &agent(AgentEvent::TurnEnd {
                message,
                tool_results: Vec::new(),
            }),
            &ctx,
        );
        assert!(matches!(&end[0], LifecycleEvent::TurnEnd(t)
            if !t.should_continue && t.termination_reason == Some(TerminationReason::NoToolCalls)));
        let done = b.translate(
            &agent(AgentEvent::AgentEnd {
                messages: Vec::new(),
            }),
            &ctx,
        );
        assert!(matches!(&done[0], LifecycleEvent::AgentEnd(e)
            if e.total_turns == 1 && e.termination_reason == TerminationReason::NoToolCalls));
    }

    #[test]
    fn a_requested_reason_wins() {
        let mut b = bridge();
        let ctx = BridgeContext::default();
        b.translate(&agent(AgentEvent::AgentStart), &ctx);
        assert!(b.request_termination(TerminationReason::IdleTimeout));
        assert!(!b.request_termination(TerminationReason::AbortSignal));
        let done = b.translate(
            &agent(AgentEvent::AgentEnd {
                messages: Vec::new(),
            }),
            &ctx,
        );
        assert_eq!(done.len(), 2);
        assert!(matches!(&done[0], LifecycleEvent::AgentEnd(e)
            if e.termination_reason == TerminationReason::IdleTimeout));
        assert_eq!(done[1].name(), "error");
        assert_eq!(b.requested(), None);
    }

    #[tokio::test]
    async fn the_watcher_reports_idle_then_hard_limits() {
        let activity = Activity::default();
        activity.begin_run();
        let limits = Limits {
            hard: Duration::from_secs(10),
            idle: Duration::from_millis(30),
        };
        assert_eq!(
            watch(limits, &activity).await,
            TerminationReason::IdleTimeout
        );
        activity.begin_run();
        activity.end_run();
        let limits = Limits {
            hard: Duration::from_millis(40),
            idle: Duration::from_millis(10),
        };
        assert_eq!(watch(limits, &activity).await, TerminationReason::Timeout);
    }
}
