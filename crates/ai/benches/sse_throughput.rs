//! Decoding + event assembly throughput (MB/s of SSE) per provider, without the network:
//! a recorded-shape SSE body is fed in 16 KiB network chunks through the provider's decoder
//! and every event is consumed, as the agent loop would.

use std::convert::Infallible;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use pi_ai::{InputKind, Model, ModelCost, api};
use tokio_util::sync::CancellationToken;

const NETWORK_CHUNK: usize = 16 * 1024;

fn model(api: &str) -> Model {
    Model {
        id: "bench-model".into(),
        name: "Bench".into(),
        api: api.into(),
        provider: "bench".into(),
        base_url: "http://127.0.0.1:1".into(),
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 32_000,
        headers: None,
        compat: None,
    }
}

/// Deterministic prose split into `piece`-byte deltas (on char boundaries).
fn pieces(total: usize, piece: usize) -> Vec<String> {
    let words = [
        "stream ", "token ", "delta ", "agent ", "über ", "naïve ", "tool ", "model ",
    ];
    let mut text = String::new();
    let mut i = 0;
    while text.len() < total {
        text.push_str(words[i % words.len()]);
        i += 1;
    }
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if current.len() >= piece {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// An OpenAI Chat Completions body: text deltas, then one tool call with large arguments.
fn openai_body(text: &[String], args: &[String]) -> Vec<u8> {
    let mut out = String::new();
    let head = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"bench-model","choices":["#;
    out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n"));
    for piece in text {
        out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"content\":{}}},\"finish_reason\":null}}]}}\n\n", json_str(piece)));
    }
    out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{{\"name\":\"write\",\"arguments\":\"\"}}}}]}},\"finish_reason\":null}}]}}\n\n"));
    for piece in args {
        out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":{}}}}}]}},\"finish_reason\":null}}]}}\n\n", json_str(piece)));
    }
    out.push_str(&format!(
        "data: {head}{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"
    ));
    out.push_str("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":5000,\"total_tokens\":6000}}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

/// An Anthropic Messages body with the same content.
fn anthropic_body(text: &[String], args: &[String]) -> Vec<u8> {
    let mut out = String::new();
    let mut event =
        |name: &str, data: String| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    event("message_start", r#"{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}"#.into());
    event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .into(),
    );
    for piece in text {
        event(
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{}}}}}"#,
                json_str(piece)
            ),
        );
    }
    event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    );
    event("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}"#.into());
    for piece in args {
        event(
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
                json_str(piece)
            ),
        );
    }
    event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":1}"#.into(),
    );
    event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5000}}"#.into());
    event("message_stop", r#"{"type":"message_stop"}"#.into());
    out.into_bytes()
}

fn chunks(body: &[u8]) -> Vec<Result<Bytes, Infallible>> {
    body.chunks(NETWORK_CHUNK)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect()
}

fn bench(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("tokio runtime: {e}"),
    };
    // ~64 KB of text in ~12-byte deltas, then a `write` call carrying a 48 KB file in
    // ~8-byte argument fragments: a long, realistic assistant turn.
    let text = pieces(64 * 1024, 12);
    let content = pieces(48 * 1024, 40).concat();
    let args_json = serde_json::json!({"path": "src/generated.rs", "content": content}).to_string();
    let mut args = Vec::new();
    let mut current = String::new();
    for ch in args_json.chars() {
        current.push(ch);
        if current.len() >= 8 {
            args.push(std::mem::take(&mut current));
        }
    }
    args.push(current);

    let mut group = c.benchmark_group("sse_decode_assemble");
    for (name, api, body) in [
        (
            "openai-completions",
            api::OPENAI_COMPLETIONS,
            openai_body(&text, &args),
        ),
        (
            "anthropic-messages",
            api::ANTHROPIC_MESSAGES,
            anthropic_body(&text, &args),
        ),
    ] {
        let m = model(api);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let input = futures_util::stream::iter(chunks(&body));
                let stream = if api == api::OPENAI_COMPLETIONS {
                    pi_ai::providers::openai_completions::decode_sse_bytes(
                        &m,
                        input,
                        CancellationToken::new(),
                    )
                } else {
                    pi_ai::providers::anthropic_messages::decode_sse_bytes(
                        &m,
                        input,
                        CancellationToken::new(),
                    )
                };
                runtime.block_on(async {
                    let mut events = 0usize;
                    let mut stream = stream;
                    let mut last = "";
                    // Drop each event before asking for the next, as a streaming consumer does.
                    while let Some(event) = stream.next().await {
                        events += 1;
                        last = event.kind();
                    }
                    assert_eq!(last, "done", "bench stream failed");
                    events
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
