//! Anthropic Messages: an arbitrary SSE body through the real decoder (SSE framing, the
//! event mapping, the assembler); the event stream keeps its contract whatever the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::api;
use pi_ai::providers::anthropic_messages::decode_sse_bytes;
use tokio_util::sync::CancellationToken;

fuzz_target!(|data: &[u8]| {
    let model = pi_fuzz::model(api::ANTHROPIC_MESSAGES);
    pi_fuzz::check_decoder(data, |body| {
        decode_sse_bytes(&model, body, CancellationToken::new())
    });
});
