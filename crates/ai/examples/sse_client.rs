//! Side-by-side benchmark client (see `bench/sse_compare.sh`).
//!
//! `sse_client gen <dir>` writes the benchmark SSE bodies (`openai.sse`, `anthropic.sse`);
//! `sse_client run <api> <base-url> <runs>` performs that many complete() calls against a
//! server replaying them and prints one JSON line with the timings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/support/sse_bodies.rs"]
mod sse_bodies;

use std::time::Instant;

use pi_ai::{Context, Message, StreamOptions, UserMessage};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            let dir = std::path::Path::new(args.get(2).expect("gen <dir>"));
            std::fs::create_dir_all(dir).unwrap();
            let text = sse_bodies::text_fragments();
            let calls = sse_bodies::write_call_fragments();
            std::fs::write(
                dir.join("openai.sse"),
                sse_bodies::openai_body(&text, &calls),
            )
            .unwrap();
            std::fs::write(
                dir.join("anthropic.sse"),
                sse_bodies::anthropic_body(&text, &calls),
            )
            .unwrap();
            // Text only: no tool call, so no argument parsing in the mix.
            std::fs::write(
                dir.join("openai-text.sse"),
                sse_bodies::openai_body(&text, &[]),
            )
            .unwrap();
            std::fs::write(
                dir.join("anthropic-text.sse"),
                sse_bodies::anthropic_body(&text, &[]),
            )
            .unwrap();
        }
        Some("run") => {
            let api = args.get(2).expect("run <api> <base-url> <runs>");
            let base_url = args.get(3).expect("base url");
            let runs: usize = args.get(4).map_or(10, |n| n.parse().unwrap());
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(run(api, base_url, runs));
        }
        _ => eprintln!("usage: sse_client gen <dir> | run <api> <base-url> <runs>"),
    }
}

async fn run(api: &str, base_url: &str, runs: usize) {
    let model = sse_bodies::bench_model(api, base_url);
    let context = Context {
        system_prompt: Some("bench".into()),
        messages: vec![Message::User(UserMessage::text("go"))],
        tools: Vec::new(),
        ..Default::default()
    };
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let options = StreamOptions {
            api_key: Some("bench-key".into()),
            ..Default::default()
        };
        let started = Instant::now();
        let message = pi_ai::complete(&model, &context, options).await;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        assert!(
            !message.stop_reason.is_failure(),
            "{:?}",
            message.error_message
        );
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"impl\":\"rust\",\"api\":\"{api}\",\"runs\":{runs},\"median_ms\":{:.2},\"min_ms\":{:.2}}}",
        times[times.len() / 2],
        times[0]
    );
}
