//! OpenAI Chat Completions: an arbitrary SSE body through the real decoder (SSE framing,
//! chunk mapping, tool-call argument streaming); the event stream keeps its contract.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::api;
use pi_ai::providers::openai_completions::decode_sse_bytes;
use tokio_util::sync::CancellationToken;

fuzz_target!(|data: &[u8]| {
    let model = pi_fuzz::model(api::OPENAI_COMPLETIONS);
    pi_fuzz::check_decoder(data, |body| {
        decode_sse_bytes(&model, body, CancellationToken::new())
    });
});
