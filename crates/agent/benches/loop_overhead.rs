//! The loop's own overhead, with an instant stream function and instant tools: time per
//! turn (prompt → text reply → agent_end) and per tool call (a turn with N calls, minus a
//! plain turn, divided by N).

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::BoxFuture;
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AgentToolResult, EventSink,
    StreamFn, ToolError, ToolUpdateFn, run_agent_loop,
};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream,
    InputKind, Model, ModelCost, StopReason, TextContent, ToolCall, UserMessage,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn model() -> Model {
    Model {
        id: "instant".into(),
        name: "instant".into(),
        api: "instant".into(),
        provider: "instant".into(),
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

fn reply_events(calls: usize) -> Vec<AssistantMessageEvent> {
    let mut m = AssistantMessage::empty("instant", "instant", "instant");
    let mut events = vec![AssistantMessageEvent::Start {
        partial: Arc::new(m.clone()),
    }];
    if calls > 0 {
        for i in 0..calls {
            let mut args = serde_json::Map::new();
            args.insert("value".into(), json!(format!("v{i}")));
            let call = ToolCall::new(format!("call_{i}"), "noop", args);
            m.content.push(AssistantBlock::ToolCall(call.clone()));
            events.push(AssistantMessageEvent::ToolcallStart {
                content_index: i,
                partial: Arc::new(m.clone()),
            });
            events.push(AssistantMessageEvent::ToolcallEnd {
                content_index: i,
                tool_call: call,
                partial: Arc::new(m.clone()),
            });
        }
        m.stop_reason = StopReason::ToolUse;
    } else {
        m.content
            .push(AssistantBlock::Text(TextContent::new("done")));
        events.push(AssistantMessageEvent::TextStart {
            content_index: 0,
            partial: Arc::new(m.clone()),
        });
        events.push(AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: "done".into(),
            partial: Arc::new(m.clone()),
        });
        events.push(AssistantMessageEvent::TextEnd {
            content_index: 0,
            content: "done".into(),
            partial: Arc::new(m.clone()),
        });
    }
    events.push(AssistantMessageEvent::Done {
        reason: m.stop_reason,
        message: Arc::new(m),
    });
    events
}

/// Replies with `calls` tool calls when the last message is the user's, else with text.
/// The events are built once; each reply only clones `Arc`s, as a provider shares its
/// partial message.
fn instant_stream(calls: usize) -> StreamFn {
    let tool_reply = reply_events(calls);
    let text_reply = reply_events(0);
    Arc::new(move |_model, context, _options| {
        let wants_tools =
            calls > 0 && matches!(context.messages.last(), Some(pi_ai::Message::User(_)));
        let events = if wants_tools {
            tool_reply.clone()
        } else {
            text_reply.clone()
        };
        AssistantMessageEventStream::new(futures_util::stream::iter(events))
    })
}

struct Noop(Value);

impl AgentTool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    fn execute(
        &self,
        _id: &str,
        _args: Value,
        _c: CancellationToken,
        _u: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        Box::pin(async { Ok(AgentToolResult::text("ok")) })
    }
}

/// Counts events and drops them (what a minimal consumer costs).
struct CountingSink(std::sync::atomic::AtomicUsize);

impl EventSink for CountingSink {
    fn emit(&self, _event: AgentEvent) -> BoxFuture<'_, ()> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Box::pin(async {})
    }
}

fn bench(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("runtime: {e}"),
    };
    let tool: Arc<dyn AgentTool> = Arc::new(Noop(
        json!({"type": "object", "properties": {"value": {"type": "string"}}}),
    ));
    let mut group = c.benchmark_group("agent_loop");
    for calls in [0usize, 1, 10] {
        let mut config = AgentLoopConfig::new(model());
        config.stream_fn = instant_stream(calls);
        let context = AgentContext {
            system_prompt: "sys".into(),
            messages: Vec::new(),
            tools: vec![Arc::clone(&tool)],
        };
        let name = if calls == 0 {
            "turn_text_only".to_owned()
        } else {
            format!("turn_with_{calls}_tool_calls")
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let sink = CountingSink(Default::default());
                    let prompts: Vec<AgentMessage> = vec![UserMessage::text("go").into()];
                    let messages = run_agent_loop(
                        prompts,
                        context.clone(),
                        &config,
                        &sink,
                        &CancellationToken::new(),
                    )
                    .await;
                    assert!(!messages.is_empty());
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
