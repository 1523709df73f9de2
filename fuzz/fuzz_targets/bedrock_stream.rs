//! Bedrock ConverseStream: event-stream messages built from the input through the real
//! decoder (framing, the event mapping, the assembler); the event stream keeps its contract.
//!
//! The input is records separated by 0x1E; a record's fields are separated by 0x1F: headers
//! `name=value` (string headers), then the payload. Each record is framed with valid
//! checksums, so the fuzzer works on the events rather than on CRCs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::api;
use pi_ai::providers::bedrock::decode_bytes;
use pi_ai::providers::bedrock::eventstream::Message;
use tokio_util::sync::CancellationToken;

/// The event-stream bytes of the records in `data`.
fn frames(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for record in data.split(|b| *b == 0x1E) {
        let mut fields: Vec<&[u8]> = record.split(|b| *b == 0x1F).collect();
        let payload = fields.pop().unwrap_or_default();
        let headers: Vec<(String, String)> = fields
            .iter()
            .map(|field| {
                let text = String::from_utf8_lossy(field);
                match text.split_once('=') {
                    Some((name, value)) => (name.to_owned(), value.to_owned()),
                    None => (text.into_owned(), String::new()),
                }
            })
            .collect();
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        out.extend(Message::new(&headers, payload.to_vec()).encode());
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let body = frames(data);
    let model = pi_fuzz::model(api::BEDROCK_CONVERSE_STREAM);
    pi_fuzz::check_decoder(&body, |chunks| {
        decode_bytes(&model, chunks, CancellationToken::new())
    });
});
