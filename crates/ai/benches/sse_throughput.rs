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

criterion_group!(benches, bench);
criterion_main!(benches);
