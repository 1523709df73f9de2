//! Decoding + event assembly throughput (MB/s of SSE) per provider, without the network:
//! a recorded-shape SSE body is fed in 16 KiB network chunks through the provider's decoder
//! and every event is consumed, as the agent loop would.

use std::convert::Infallible;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use pi_ai::api;
use tokio_util::sync::CancellationToken;

#[path = "support/sse_bodies.rs"]
mod sse_bodies;
use sse_bodies::{anthropic_body, bench_model, openai_body, text_fragments, write_call_fragments};

const NETWORK_CHUNK: usize = 16 * 1024;

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
    let text = text_fragments();
    let args = write_call_fragments();

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
        let m = bench_model(api, "http://127.0.0.1:1");
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

/// The same long turn (64 KB of text in 12-character deltas, then a `write` call with a
/// 48 KB file) in every provider's wire format, rendered by mock-llm, decoded by pi-ai.
fn bench_all_providers(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("tokio runtime: {e}"),
    };
    let text: String = text_fragments().concat();
    let file: String = write_call_fragments().concat();
    let script = mock_llm::Script::new(vec![
        mock_llm::Item::text(text),
        mock_llm::Item::tool_call(
            "write",
            serde_json::json!({"path": "src/big.rs", "content": file}),
        ),
    ])
    .with_chunk_size(12);
    let mut group = c.benchmark_group("decode_all_providers");
    for api in [
        api::OPENAI_COMPLETIONS,
        api::ANTHROPIC_MESSAGES,
        api::OPENAI_RESPONSES,
        api::GOOGLE_GENERATIVE_AI,
        api::GOOGLE_GEMINI_CLI,
        api::BEDROCK_CONVERSE_STREAM,
        api::MISTRAL_CONVERSATIONS,
    ] {
        let Some(body) = mock_llm::render_body(api, &script) else {
            panic!("no wire format for {api}");
        };
        let m = bench_model(api, "http://127.0.0.1:1");
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(api, |b| {
            b.iter(|| {
                let input = futures_util::stream::iter(chunks(&body));
                let cancel = CancellationToken::new();
                use pi_ai::providers as p;
                let stream = match api {
                    api::OPENAI_COMPLETIONS => {
                        p::openai_completions::decode_sse_bytes(&m, input, cancel)
                    }
                    api::ANTHROPIC_MESSAGES => {
                        p::anthropic_messages::decode_sse_bytes(&m, input, cancel)
                    }
                    api::OPENAI_RESPONSES => {
                        p::openai_responses::decode_sse_bytes(&m, input, cancel)
                    }
                    api::GOOGLE_GENERATIVE_AI | api::GOOGLE_GEMINI_CLI => {
                        p::google::decode_sse_bytes(&m, input, cancel)
                    }
                    api::BEDROCK_CONVERSE_STREAM => p::bedrock::decode_bytes(&m, input, cancel),
                    _ => p::mistral::decode_sse_bytes(&m, input, cancel),
                };
                runtime.block_on(async {
                    let mut stream = stream;
                    let mut last = "";
                    while let Some(event) = stream.next().await {
                        last = event.kind();
                    }
                    assert_eq!(last, "done", "{api}: bench stream failed");
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_all_providers);
criterion_main!(benches);
