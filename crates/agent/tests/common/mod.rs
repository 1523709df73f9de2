//! A scripted in-process stream function and configurable tools for the loop tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::large_enum_variant,
    clippy::new_ret_no_self
)]

pub mod loop_run;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use pi_agent_core::{
    AgentEvent, AgentTool, AgentToolResult, StreamFn, ToolError, ToolExecutionMode, ToolUpdateFn,
};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Context,
    InputKind, Model, ModelCost, SimpleStreamOptions, StopReason, TextContent, ToolCall,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub fn model() -> Model {
    Model {
        id: "scripted".into(),
        name: "Scripted".into(),
        api: "scripted-api".into(),
        provider: "scripted".into(),
        base_url: String::new(),
        reasoning: false,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 100_000,
        max_tokens: 1000,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

/// One scripted LLM response.
#[derive(Clone)]
pub enum Reply {
    /// A complete assistant message (text and/or tool calls).
    Message(AssistantMessage),
    /// A provider failure with this text.
    Error(String),
    /// Streams some text, then waits until cancelled.
    Hang(String),
}

pub fn text(t: &str) -> Reply {
    let mut m = AssistantMessage::empty("scripted-api", "scripted", "scripted");
    m.content = vec![AssistantBlock::Text(TextContent::new(t))].into();
    Reply::Message(m)
}

/// Tool calls `(id, name, args)`.
pub fn tools(calls: &[(&str, &str, Value)]) -> Reply {
    let mut m = AssistantMessage::empty("scripted-api", "scripted", "scripted");
    m.content = calls
        .iter()
        .map(|(id, name, args)| {
            AssistantBlock::ToolCall(ToolCall::new(
                *id,
                *name,
                args.as_object().cloned().unwrap_or_default(),
            ))
        })
        .collect();
    m.stop_reason = StopReason::ToolUse;
    Reply::Message(m)
}

/// A stream function replaying replies in order and recording what each call saw.
#[derive(Clone, Default)]
pub struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    pub contexts: Arc<Mutex<Vec<Context>>>,
    pub options: Arc<Mutex<Vec<SimpleStreamOptions>>>,
}

impl Script {
    pub fn new(replies: Vec<Reply>) -> Self {
        Self {
            replies: Arc::new(Mutex::new(replies.into())),
            ..Self::default()
        }
    }

    pub fn calls(&self) -> usize {
        self.contexts.lock().unwrap().len()
    }

    pub fn context(&self, i: usize) -> Context {
        self.contexts.lock().unwrap()[i].clone()
    }

    pub fn stream_fn(&self) -> StreamFn {
        let script = self.clone();
        Arc::new(
            move |_model: &Model, context: &Context, options: SimpleStreamOptions| {
                script.contexts.lock().unwrap().push(context.clone());
                let cancel = options.stream.cancel.clone().unwrap_or_default();
                script.options.lock().unwrap().push(options);
                let reply = script
                    .replies
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or_else(|| text("(script exhausted)"));
                AssistantMessageEventStream::new(replay(reply, cancel))
            },
        )
    }
}

fn replay(
    reply: Reply,
    cancel: CancellationToken,
) -> impl futures_core::Stream<Item = AssistantMessageEvent> + Send {
    async_stream::stream! {
        match reply {
            Reply::Error(message) => {
                let mut m = AssistantMessage::empty("scripted-api", "scripted", "scripted");
                m.stop_reason = StopReason::Error;
                m.error_message = Some(message);
                yield AssistantMessageEvent::Error { reason: StopReason::Error, error: Arc::new(m) };
            }
            Reply::Hang(prefix) => {
                let mut m = AssistantMessage::empty("scripted-api", "scripted", "scripted");
                yield AssistantMessageEvent::Start { partial: Arc::new(m.clone()) };
                m.content.push(AssistantBlock::Text(TextContent::new("")));
                yield AssistantMessageEvent::TextStart { content_index: 0, partial: Arc::new(m.clone()) };
                if let Some(AssistantBlock::Text(t)) = m.content.get_mut(0) { t.text.push_str(&prefix); }
                yield AssistantMessageEvent::TextDelta { content_index: 0, delta: prefix.clone(), partial: Arc::new(m.clone()) };
                cancel.cancelled().await;
                m.stop_reason = StopReason::Aborted;
                m.error_message = Some("Request was aborted".into());
                yield AssistantMessageEvent::Error { reason: StopReason::Aborted, error: Arc::new(m) };
            }
            Reply::Message(full) => {
                let mut m = AssistantMessage::empty("scripted-api", "scripted", "scripted");
                yield AssistantMessageEvent::Start { partial: Arc::new(m.clone()) };
                for (i, block) in full.content.iter().enumerate() {
                    match block {
                        AssistantBlock::Text(t) => {
                            m.content.push(AssistantBlock::Text(TextContent::new("")));
                            yield AssistantMessageEvent::TextStart { content_index: i, partial: Arc::new(m.clone()) };
                            m.content[i] = block.clone();
                            yield AssistantMessageEvent::TextDelta { content_index: i, delta: t.text.to_string(), partial: Arc::new(m.clone()) };
                            yield AssistantMessageEvent::TextEnd { content_index: i, content: t.text.to_string(), partial: Arc::new(m.clone()) };
                        }
                        AssistantBlock::ToolCall(c) => {
                            m.content.push(block.clone());
                            yield AssistantMessageEvent::ToolcallStart { content_index: i, partial: Arc::new(m.clone()) };
                            yield AssistantMessageEvent::ToolcallDelta { content_index: i, delta: serde_json::to_string(&c.arguments).unwrap(), partial: Arc::new(m.clone()) };
                            yield AssistantMessageEvent::ToolcallEnd { content_index: i, tool_call: c.clone(), partial: Arc::new(m.clone()) };
                        }
                        AssistantBlock::Thinking(_) => m.content.push(block.clone()),
                    }
                }
                m.stop_reason = full.stop_reason;
                yield AssistantMessageEvent::Done { reason: m.stop_reason, message: Arc::new(m) };
            }
        }
    }
}

/// What a test tool does.
#[derive(Clone, Default)]
pub struct Behaviour {
    pub delay_ms: u64,
    pub fail: Option<String>,
    pub panic: bool,
    pub updates: usize,
    pub terminate: bool,
    pub mode: Option<ToolExecutionMode>,
    /// Waits for cancellation and reports whether it saw it.
    pub wait_for_cancel: bool,
}

/// A tool recording `start:<id>` / `end:<id>` into a shared log.
pub struct TestTool {
    pub name: String,
    pub behaviour: Behaviour,
    pub log: Arc<Mutex<Vec<String>>>,
    params: Value,
}

impl TestTool {
    pub fn new(
        name: &str,
        behaviour: Behaviour,
        log: &Arc<Mutex<Vec<String>>>,
    ) -> Arc<dyn AgentTool> {
        Arc::new(Self {
            name: name.to_owned(),
            behaviour,
            log: Arc::clone(log),
            params: json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}),
        })
    }
}

impl AgentTool for TestTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "A test tool"
    }

    fn parameters(&self) -> &Value {
        &self.params
    }

    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        self.behaviour.mode
    }

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let b = self.behaviour.clone();
        let log = Arc::clone(&self.log);
        let id = tool_call_id.to_owned();
        Box::pin(async move {
            log.lock().unwrap().push(format!("start:{id}"));
            for i in 0..b.updates {
                on_update(AgentToolResult::text(format!("progress {i}")));
            }
            if b.wait_for_cancel {
                cancel.cancelled().await;
                log.lock().unwrap().push(format!("cancelled:{id}"));
                return Err(ToolError::new("cancelled by abort"));
            }
            if b.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(b.delay_ms)).await;
            }
            log.lock().unwrap().push(format!("end:{id}"));
            assert!(!b.panic, "tool exploded");
            if let Some(message) = b.fail {
                return Err(ToolError::new(message));
            }
            let mut result =
                AgentToolResult::text(format!("ok {}", args["value"].as_str().unwrap_or("")));
            if b.terminate {
                result.terminate = Some(true);
            }
            Ok(result)
        })
    }
}

pub fn kinds(events: &[AgentEvent]) -> Vec<&'static str> {
    events.iter().map(AgentEvent::kind).collect()
}

/// Collects events with a shared vector (for Agent listeners).
pub fn recorder() -> (
    Arc<Mutex<Vec<AgentEvent>>>,
    impl Fn(&AgentEvent) + Send + Sync + 'static,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    (events, move |e: &AgentEvent| {
        sink.lock().unwrap().push(e.clone())
    })
}
