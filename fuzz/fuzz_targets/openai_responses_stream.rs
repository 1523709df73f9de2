//! OpenAI Responses (plain, Azure and Codex flavors, picked by the input's length): an
//! arbitrary SSE body through the real decoder; the event stream keeps its contract.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::api;
use pi_ai::providers::openai_responses::decode_sse_bytes;
use tokio_util::sync::CancellationToken;

fuzz_target!(|data: &[u8]| {
    let flavor = [
        api::OPENAI_RESPONSES,
        api::AZURE_OPENAI_RESPONSES,
        api::OPENAI_CODEX_RESPONSES,
    ][data.len() % 3];
    let model = pi_fuzz::model(flavor);
    pi_fuzz::check_decoder(data, |body| {
        decode_sse_bytes(&model, body, CancellationToken::new())
    });
});
