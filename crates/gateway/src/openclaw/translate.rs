//! From a session's lifecycle events to OpenClaw's `agent` and `chat` events: per-run
//! `seq` (one counter per run, shared by every stream; a `chat` event reuses the `seq` of
//! the `agent` event that caused it), the cumulative assistant text, tool streams, and the
//! run's end as `final`, `aborted` or `error`.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::frames::now_ms;
use crate::events::{LifecycleEvent, MessageStopReason, TerminationReason};

/// An OpenClaw event to deliver.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// `agent` or `chat`.
    pub event: &'static str,
    pub payload: Value,
    /// A `tool`-stream event: only for connections that asked for tool events.
    pub tool: bool,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Ok,
    Aborted,
    Error,
}

/// A run that ended, for `agent` and `agent.wait`.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub run_id: String,
    pub ending: Ending,
    pub text: String,
    pub started_at: i64,
    pub ended_at: i64,
    pub error: Option<String>,
}

/// The run in progress.
#[derive(Debug)]
struct Run {
    id: String,
    seq: u64,
    started_at: i64,
    /// The current assistant message's text so far.
    text: String,
    /// The text of the last assistant message that had any.
    last_text: String,
    tools: HashMap<String, String>,
    error: Option<String>,
}

/// One session as OpenClaw clients know it.
#[derive(Debug)]
pub struct Track {
    pub key: String,
    pub agent_id: String,
    pub session_id: String,
    /// The id the next run takes (the idempotency key of `chat.send` / `agent`).
    next_run: Option<String>,
    run: Option<Run>,
}

impl Track {
    pub fn new(key: &str, session_id: &str) -> Self {
        Self {
            key: key.to_owned(),
            agent_id: super::keys::agent_of(key).to_owned(),
            session_id: session_id.to_owned(),
            next_run: None,
            run: None,
        }
    }

    /// The id the next run of the session takes.
    pub fn expect_run(&mut self, run_id: &str) {
        self.next_run = Some(run_id.to_owned());
    }

    /// Forgets an expected run id that no run took (its prompt never started).
    pub fn clear_expected(&mut self) {
        self.next_run = None;
    }

    /// The run in progress and its text so far.
    pub fn current(&self) -> Option<(String, String)> {
        self.run.as_ref().map(|r| (r.id.clone(), r.text.clone()))
    }

    fn agent(&mut self, stream: &str, data: Value) -> (u64, Outgoing) {
        let run = self.run.as_mut();
        let (run_id, seq) = match run {
            Some(run) => {
                run.seq += 1;
                (run.id.clone(), run.seq)
            }
            None => (String::new(), 0),
        };
        let mut payload = json!({
            "runId": run_id,
            "seq": seq,
            "stream": stream,
            "ts": now_ms(),
            "sessionKey": self.key,
            "sessionId": self.session_id,
            "agentId": self.agent_id,
            "data": data,
        });
        if stream != "lifecycle"
            && stream != "tool"
            && let Some(object) = payload.as_object_mut()
        {
            object.remove("sessionId");
        }
        (
            seq,
            Outgoing {
                event: "agent",
                payload,
                tool: stream == "tool",
            },
        )
    }

    fn chat(&self, seq: u64, state: &str, fields: Value) -> Outgoing {
        let mut payload = json!({
            "runId": self.run.as_ref().map(|r| r.id.clone()).unwrap_or_default(),
            "sessionKey": self.key,
            "agentId": self.agent_id,
            "seq": seq,
            "state": state,
        });
        if let (Some(target), Value::Object(extra)) = (payload.as_object_mut(), fields) {
            target.extend(extra);
        }
        Outgoing {
            event: "chat",
            payload,
            tool: false,
        }
    }

    /// The events one lifecycle event becomes, and the run's end when it ended.
    pub fn translate(&mut self, event: &LifecycleEvent) -> (Vec<Outgoing>, Option<Finished>) {
        let mut out = Vec::new();
        match event {
            LifecycleEvent::AgentStart(start) => {
                let id = self
                    .next_run
                    .take()
                    .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
                let started_at = start.timestamp;
                self.run = Some(Run {
                    id,
                    seq: 0,
                    started_at,
                    text: String::new(),
                    last_text: String::new(),
                    tools: HashMap::new(),
                    error: None,
                });
                out.push(
                    self.agent(
                        "lifecycle",
                        json!({"phase": "start", "startedAt": started_at}),
                    )
                    .1,
                );
                let model = start
                    .model
                    .split_once('/')
                    .map_or((String::new(), start.model.clone()), |(p, m)| {
                        (p.to_owned(), m.to_owned())
                    });
                out.push(
                    self.agent(
                        "lifecycle",
                        json!({"phase": "model", "provider": model.0, "model": model.1}),
                    )
                    .1,
                );
            }
            LifecycleEvent::MessageStart(start) if start.role == "assistant" => {
                if let Some(run) = self.run.as_mut() {
                    run.text.clear();
                }
            }
            LifecycleEvent::TextDelta(delta) => {
                let Some(run) = self.run.as_mut() else {
                    return (out, None);
                };
                run.text.push_str(&delta.delta);
                let text = run.text.clone();
                let (seq, agent) =
                    self.agent("assistant", json!({"text": text, "delta": delta.delta}));
                out.push(agent);
                out.push(self.chat(
                    seq,
                    "delta",
                    json!({"deltaText": delta.delta, "message": assistant_message(&text)}),
                ));
            }
            LifecycleEvent::ToolExecutionStart(start) => {
                if let Some(run) = self.run.as_mut() {
                    run.tools
                        .insert(start.tool_call_id.clone(), start.tool_name.clone());
                }
                out.push(
                    self.agent(
                        "tool",
                        json!({"phase": "start", "name": start.tool_name, "toolCallId": start.tool_call_id, "args": start.input}),
                    )
                    .1,
                );
            }
            LifecycleEvent::ToolExecutionUpdate(update) => {
                let name = self.tool_name(&update.tool_call_id);
                out.push(
                    self.agent(
                        "tool",
                        json!({"phase": "update", "name": name, "toolCallId": update.tool_call_id,
                               "partialResult": {"content": [{"type": "text", "text": update.content}], "details": {}}}),
                    )
                    .1,
                );
            }
            LifecycleEvent::ToolExecutionEnd(end) => {
                let name = self.tool_name(&end.tool_call_id);
                out.push(
                    self.agent(
                        "tool",
                        json!({"phase": "result", "name": name, "toolCallId": end.tool_call_id,
                               "isError": !end.success,
                               "result": {"content": [{"type": "text", "text": end.output}], "details": {}}}),
                    )
                    .1,
                );
            }
            LifecycleEvent::MessageEnd(end) if end.role == "assistant" => {
                if let Some(run) = self.run.as_mut() {
                    if !run.text.is_empty() {
                        run.last_text = run.text.clone();
                    }
                    if end.stop_reason == Some(MessageStopReason::Error) {
                        run.error = end.error_message.clone().or(Some("unknown error".into()));
                    }
                }
            }
            LifecycleEvent::Error(error) => {
                if let Some(run) = self.run.as_mut() {
                    run.error = Some(error.message.clone());
                }
            }
            LifecycleEvent::AgentEnd(end) => return self.end(end.termination_reason),
            _ => {}
        }
        (out, None)
    }

    fn tool_name(&self, call: &str) -> String {
        self.run
            .as_ref()
            .and_then(|r| r.tools.get(call).cloned())
            .unwrap_or_else(|| "tool".into())
    }

    fn end(&mut self, reason: TerminationReason) -> (Vec<Outgoing>, Option<Finished>) {
        let Some(started_at) = self.run.as_ref().map(|r| r.started_at) else {
            return (Vec::new(), None);
        };
        let ended_at = now_ms();
        let error = self.run.as_ref().and_then(|r| r.error.clone());
        let ending = match reason {
            TerminationReason::AbortSignal | TerminationReason::GatewayDisconnected => {
                Ending::Aborted
            }
            TerminationReason::Error
            | TerminationReason::Timeout
            | TerminationReason::IdleTimeout => Ending::Error,
            TerminationReason::NoToolCalls if error.is_some() => Ending::Error,
            TerminationReason::NoToolCalls => Ending::Ok,
        };
        let text = self
            .run
            .as_ref()
            .map(|r| {
                if r.text.is_empty() {
                    r.last_text.clone()
                } else {
                    r.text.clone()
                }
            })
            .unwrap_or_default();
        let mut out = Vec::new();
        let (seq, lifecycle) = match ending {
            Ending::Error => {
                let message = error.clone().unwrap_or_else(|| reason.as_str().to_owned());
                self.agent(
                    "lifecycle",
                    json!({"phase": "error", "startedAt": started_at, "endedAt": ended_at, "error": message}),
                )
            }
            _ => {
                let stop = if ending == Ending::Aborted {
                    "aborted"
                } else {
                    "stop"
                };
                self.agent(
                    "lifecycle",
                    json!({"phase": "end", "startedAt": started_at, "endedAt": ended_at,
                           "stopReason": stop, "aborted": ending == Ending::Aborted}),
                )
            }
        };
        out.push(lifecycle);
        out.push(match ending {
            Ending::Ok => self.chat(
                seq,
                "final",
                json!({"stopReason": "stop", "message": assistant_message(&text)}),
            ),
            Ending::Aborted => {
                let mut fields = json!({"stopReason": "aborted"});
                if !text.is_empty() {
                    fields["message"] = assistant_message(&text);
                }
                self.chat(seq, "aborted", fields)
            }
            Ending::Error => {
                let kind = match reason {
                    TerminationReason::Timeout | TerminationReason::IdleTimeout => "timeout",
                    _ => "unknown",
                };
                self.chat(
                    seq,
                    "error",
                    json!({"stopReason": "error",
                           "errorMessage": error.clone().unwrap_or_else(|| reason.as_str().to_owned()),
                           "errorKind": kind}),
                )
            }
        });
        let run_id = self.run.take().map(|r| r.id).unwrap_or_default();
        (
            out,
            Some(Finished {
                run_id,
                ending,
                text,
                started_at,
                ended_at,
                error,
            }),
        )
    }
}

/// An assistant message with one text block, as the clients render it.
pub fn assistant_message(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": now_ms()})
}
