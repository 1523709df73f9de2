//! Google (Gemini's bare chunks, or Cloud Code Assist's wrapped ones, picked by the input's
//! length): an arbitrary SSE body through the real decoder; the stream keeps its contract.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::api;
use pi_ai::providers::google::decode_sse_bytes;
use tokio_util::sync::CancellationToken;

fuzz_target!(|data: &[u8]| {
    let flavor = [api::GOOGLE_GENERATIVE_AI, api::GOOGLE_GEMINI_CLI][data.len() % 2];
    let model = pi_fuzz::model(flavor);
    pi_fuzz::check_decoder(data, |body| {
        decode_sse_bytes(&model, body, CancellationToken::new())
    });
});
