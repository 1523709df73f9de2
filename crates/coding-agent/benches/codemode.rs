//! The cost of a codemode script inside one agent-loop turn: a no-op script, and scripts
//! making 100 `read` calls in parallel and one after another (each through the loop's own
//! tool path: validation, hooks, events). Per-call overhead = (100 calls − no-op) / 100.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::StreamExt;
use pi_agent_core::{AgentContext, AgentLoopConfig, AgentTool, agent_loop};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Model,
    StopReason, ToolCall, UserMessage,
};
use pi_coding_agent::codemode::{CodemodeHost, Link, codemode_tool};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// A session of one tool, `read`, and no store.
struct Host(Vec<Arc<dyn AgentTool>>);

impl CodemodeHost for Host {
    fn callable(&self) -> Vec<Arc<dyn AgentTool>> {
        self.0.clone()
    }
    fn guidelines(&self) -> HashMap<String, Vec<String>> {
        HashMap::new()
    }
    fn store(&self) -> Map<String, Value> {
        Map::new()
    }
    fn save_store(&self, _data: Value) {}
}

/// A model that calls codemode with `code` once, then answers.
fn config(code: &str) -> AgentLoopConfig {
    let code = code.to_owned();
    let model = Model {
        id: "bench".into(),
        name: "Bench".into(),
        api: "bench".into(),
        provider: "bench".into(),
        base_url: String::new(),
        reasoning: false,
        thinking_level_map: None,
        input: vec![pi_ai::InputKind::Text],
        cost: pi_ai::ModelCost::default(),
        context_window: 100_000,
        max_tokens: 1000,
        headers: None,
        compat: None,
        extras: Default::default(),
    };
    let mut config = AgentLoopConfig::new(model);
    config.stream_fn = Arc::new(move |_model, context, _options| {
        let mut message = AssistantMessage::empty("bench", "bench", "bench");
        let answered = context.messages.iter().any(|m| m.role() == "toolResult");
        if answered {
            message
                .content
                .push(AssistantBlock::Text(pi_ai::TextContent::new("done")));
            message.stop_reason = StopReason::Stop;
        } else {
            let mut arguments = Map::new();
            arguments.insert("code".into(), json!(code));
            message.content.push(AssistantBlock::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "codemode".into(),
                arguments,
                ..ToolCall::default()
            }));
            message.stop_reason = StopReason::ToolUse;
        }
        let done = AssistantMessageEvent::Done {
            reason: message.stop_reason,
            message: Arc::new(message),
        };
        AssistantMessageEventStream::new(futures_util::stream::iter([done]))
    });
    config
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap_or_else(|e| panic!("{e}"));
    let read = pi_coding_agent::tools::read::read_tool(dir.path().to_path_buf());
    let link = Link::default();
    link.bind(Arc::new(Host(vec![read.clone()])));
    let tools = vec![codemode_tool(link), read];
    let scripts = [
        ("noop", "return 1;".to_owned()),
        (
            "100_reads_parallel",
            "const all = await Promise.all(Array.from({ length: 100 }, () => tools.read({ path: \"a.txt\" })));\nreturn all.length;".to_owned(),
        ),
        (
            "100_reads_serial",
            "let n = 0;\nfor (let i = 0; i < 100; i++) { await tools.read({ path: \"a.txt\" }); n++; }\nreturn n;".to_owned(),
        ),
    ];
    let mut group = c.benchmark_group("codemode");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(10));
    for (name, code) in scripts {
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let context = AgentContext {
                        system_prompt: String::new(),
                        messages: Vec::new(),
                        tools: tools.clone(),
                    };
                    let mut events = agent_loop(
                        vec![UserMessage::text("go").into()],
                        context,
                        config(&code),
                        CancellationToken::new(),
                    );
                    while events.next().await.is_some() {}
                    events.result().await
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
