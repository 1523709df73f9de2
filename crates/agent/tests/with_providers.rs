//! The agent end to end through real providers (mock-llm on 127.0.0.1), through the stream
//! proxy, and the event JSON against the TypeScript pi's traces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mock_llm::{Fault, MockServer, Script};
use pi_agent_core::proxy::server::{ProxyServerConfig, router};
use pi_agent_core::proxy::{ProxyStreamOptions, proxy_stream_fn, stream_proxy};
use pi_agent_core::{
    Agent, AgentEvent, AgentOptions, AgentTool, AgentToolResult, ToolError, ToolUpdateFn,
};
use pi_ai::{InputKind, Model, ModelCost, StreamOptions, api};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The reference run's tool: `read` returning the anchor file.
struct ReadTool(Value);

impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "Read a file"
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    fn execute(
        &self,
        _id: &str,
        args: Value,
        _c: CancellationToken,
        _u: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            match args["path"].as_str() {
                Some("hello.txt") => Ok(AgentToolResult::text(
                    "Hello from the anchor test file!\nSecond line.\n",
                )),
                other => Err(ToolError::new(format!("ENOENT: no such file {other:?}"))),
            }
        })
    }
}

fn read_tool() -> Arc<dyn AgentTool> {
    Arc::new(ReadTool(
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ))
}

fn model(server: &MockServer, api: &str) -> Model {
    Model {
        id: "mock-model".into(),
        name: "Mock".into(),
        api: api.into(),
        provider: "mock".into(),
        base_url: if api == api::ANTHROPIC_MESSAGES {
            server.anthropic_base_url()
        } else {
            server.openai_base_url()
        },
        reasoning: false,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

fn agent(model: Model, stream_fn: Option<pi_agent_core::StreamFn>) -> Arc<Agent> {
    let mut options = AgentOptions {
        system_prompt: "You are a test.".into(),
        model: Some(model),
        tools: vec![read_tool()],
        stream_options: StreamOptions {
            api_key: Some("mock-key".into()),
            max_retries: Some(0),
            ..Default::default()
        },
        ..AgentOptions::default()
    };
    if let Some(f) = stream_fn {
        options.stream_fn = f;
    }
    Arc::new(Agent::new(options))
}

/// Event kinds with runs of `message_update` collapsed (chunking differs between servers).
fn shape(kinds: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in kinds {
        if k == "message_update" && out.last().is_some_and(|l| l == "message_update") {
            continue;
        }
        out.push(k.clone());
    }
    out
}

const JSON_MODE: &str = include_str!("../../ai/tests/fixtures/pi-ts-json-mode.jsonl");

fn reference_shape() -> Vec<String> {
    let kinds: Vec<String> = JSON_MODE
        .lines()
        .skip(1)
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    shape(&kinds)
}

async fn run_read_hello(agent: &Agent) -> (Vec<AgentEvent>, Vec<String>) {
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    agent.subscribe_fn(move |e| sink.lock().unwrap().push(e.clone()));
    agent.prompt("read hello.txt").await.unwrap();
    let events = events.lock().unwrap().clone();
    let kinds = events
        .iter()
        .map(|e| e.kind().to_owned())
        .collect::<Vec<_>>();
    (events, kinds)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_hello_through_each_provider_has_the_reference_event_shape() {
    for api_id in [api::OPENAI_COMPLETIONS, api::ANTHROPIC_MESSAGES] {
        let server = MockServer::start().await.unwrap();
        let agent = agent(model(&server, api_id), None);
        let (_, kinds) = run_read_hello(&agent).await;
        assert_eq!(shape(&kinds), reference_shape(), "{api_id}");
        let last = agent
            .messages()
            .last()
            .unwrap()
            .as_assistant()
            .unwrap()
            .text();
        assert_eq!(last, "done: Hello from the ancho", "{api_id}");
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_failure_ends_the_run_with_the_error() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::http_error(503));
    let agent = agent(model(&server, api::OPENAI_COMPLETIONS), None);
    let (_, kinds) = run_read_hello(&agent).await;
    assert_eq!(
        kinds[kinds.len() - 2..],
        ["turn_end".to_owned(), "agent_end".to_owned()]
    );
    let error = agent.state().error_message.unwrap();
    assert!(error.starts_with("503: {"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_while_a_real_stream_stalls() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Script::text("a long answer")
            .with_chunk_size(2)
            .with_fault(Fault::stall(4, 30_000)),
    );
    let agent = agent(model(&server, api::ANTHROPIC_MESSAGES), None);
    let run = {
        let agent = Arc::clone(&agent);
        tokio::spawn(async move { agent.prompt("go").await })
    };
    while agent
        .state()
        .streaming_message
        .as_ref()
        .and_then(|m| m.as_assistant())
        .is_none_or(|m| m.text().is_empty())
    {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    agent.abort();
    tokio::time::timeout(std::time::Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let last = agent
        .messages()
        .last()
        .unwrap()
        .as_assistant()
        .unwrap()
        .clone();
    assert_eq!(last.stop_reason, pi_ai::StopReason::Aborted);
    assert!(!last.text().is_empty(), "partial text kept");
}

async fn start_proxy(token: &str) -> String {
    let config = ProxyServerConfig {
        auth_token: token.into(),
        keys: Arc::new(|_| Some("mock-key".into())),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router(config)).await;
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_rebuilds_the_message_from_delta_events() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Script::new(vec![
            mock_llm::Item::Thinking {
                text: "hmm".into(),
                signature: Some("sig".into()),
            },
            mock_llm::Item::text("héllo there"),
            mock_llm::Item::tool_call("read", json!({"path": "a.txt", "n": 3})),
        ])
        .with_chunk_size(2)
        .with_usage(12, 34),
    );
    let url = start_proxy("secret").await;
    let m = model(&server, api::ANTHROPIC_MESSAGES);
    let context = pi_ai::Context {
        system_prompt: Some("sys".into()),
        messages: vec![pi_ai::UserMessage::text("hi").into()],
        tools: vec![],
        ..Default::default()
    };
    let proxy = ProxyStreamOptions {
        proxy_url: url,
        auth_token: "secret".into(),
    };
    let events: Vec<_> = {
        use futures_util::StreamExt;
        stream_proxy(&m, &context, Default::default(), &proxy)
            .collect()
            .await
    };
    let direct_kinds: Vec<&str> = events.iter().map(|e| e.kind()).collect();
    assert_eq!(direct_kinds.first(), Some(&"start"));
    assert_eq!(direct_kinds.last(), Some(&"done"));
    let message = events.last().unwrap().message();
    let pi_ai::AssistantBlock::Thinking(t) = &message.content[0] else {
        panic!("{message:?}")
    };
    assert_eq!(
        (t.thinking.as_str(), t.thinking_signature.as_deref()),
        ("hmm", Some("sig"))
    );
    assert_eq!(message.content[1].as_text(), Some("héllo there"));
    let call = message.tool_calls().next().unwrap();
    assert_eq!(
        serde_json::Value::Object(call.arguments.clone()),
        json!({"path": "a.txt", "n": 3})
    );
    assert_eq!((message.usage.input, message.usage.output), (12, 34));
    assert_eq!(message.stop_reason, pi_ai::StopReason::ToolUse);
    // The server used its own key against the provider.
    assert_eq!(server.requests()[0].headers["x-api-key"], "mock-key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_runs_a_tool_round_trip_through_the_proxy() {
    let server = MockServer::start().await.unwrap();
    let url = start_proxy("secret").await;
    let proxy = ProxyStreamOptions {
        proxy_url: url,
        auth_token: "secret".into(),
    };
    let agent = agent(
        model(&server, api::OPENAI_COMPLETIONS),
        Some(proxy_stream_fn(proxy)),
    );
    let (_, kinds) = run_read_hello(&agent).await;
    assert_eq!(shape(&kinds), reference_shape());
    assert_eq!(
        agent
            .messages()
            .last()
            .unwrap()
            .as_assistant()
            .unwrap()
            .text(),
        "done: Hello from the ancho"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_rejects_a_bad_token_and_reports_provider_errors() {
    let server = MockServer::start().await.unwrap();
    let url = start_proxy("secret").await;
    let m = model(&server, api::OPENAI_COMPLETIONS);
    let context = pi_ai::Context {
        system_prompt: None,
        messages: vec![pi_ai::UserMessage::text("hi").into()],
        tools: vec![],
        ..Default::default()
    };
    let bad = ProxyStreamOptions {
        proxy_url: url.clone(),
        auth_token: "wrong".into(),
    };
    let result = stream_proxy(&m, &context, Default::default(), &bad)
        .result()
        .await;
    assert_eq!(
        result.error_message.as_deref(),
        Some("Proxy error: Unauthorized")
    );
    // The server retries like the SDKs do (twice), so it takes three failures.
    for _ in 0..3 {
        server.push(Script::http_error(429));
    }
    let good = ProxyStreamOptions {
        proxy_url: url,
        auth_token: "secret".into(),
    };
    let mut options = pi_ai::SimpleStreamOptions::default();
    options.stream.max_retries = Some(0);
    let result = stream_proxy(&m, &context, options, &good).result().await;
    assert_eq!(result.stop_reason, pi_ai::StopReason::Error);
    let error = result.error_message.unwrap();
    assert!(error.starts_with("429: {"), "{error}");
}

/// The TypeScript pi leaks streaming scratch fields into serialized partials.
fn without_scratch(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "partialArgs" && *k != "streamIndex")
                .map(|(k, v)| (k.clone(), without_scratch(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_scratch).collect()),
        other => other.clone(),
    }
}

#[test]
fn every_agent_event_of_the_reference_traces_round_trips() {
    let traces = [
        JSON_MODE,
        include_str!("../../ai/tests/fixtures/pi-ts-json-mode-connection-error.jsonl"),
    ];
    let mut count = 0;
    for trace in traces {
        for line in trace.lines().skip(1) {
            let original = without_scratch(&serde_json::from_str::<Value>(line).unwrap());
            let kind = original["type"].as_str().unwrap();
            if kind.starts_with("auto_retry") {
                continue; // AgentSession events (issue 5)
            }
            let event: AgentEvent = serde_json::from_value(original.clone())
                .unwrap_or_else(|e| panic!("{e}: {original}"));
            assert_eq!(serde_json::to_value(&event).unwrap(), original);
            count += 1;
        }
    }
    assert!(count >= 40, "{count}");
}
