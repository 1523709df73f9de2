//! AWS event-stream framing (Bedrock's binary body): arbitrary bytes, cut into chunks, through
//! the message decoder. Odd-length inputs get their checksums fixed first, so the header
//! parser sees more than checksum failures. Properties: chunk boundaries do not change
//! what is decoded, and every decoded message encodes to bytes that decode to it again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::providers::bedrock::eventstream::{CodecError, Message, MessageDecoder, crc32};

/// The messages of `data` fed in chunks of `size`, and how the stream ended.
fn decode(data: &[u8], size: usize) -> (Vec<Message>, Result<(), CodecError>) {
    let mut decoder = MessageDecoder::new();
    let mut messages = Vec::new();
    for chunk in data.chunks(size.max(1)) {
        decoder.push(chunk);
        loop {
            match decoder.next_message() {
                Ok(Some(message)) => messages.push(message),
                Ok(None) => break,
                Err(e) => return (messages, Err(e)),
            }
        }
    }
    let end = decoder.finish();
    (messages, end)
}

/// `data` with each frame's prelude and message checksums made right.
fn fix_checksums(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut at = 0;
    while at + 12 <= out.len() {
        let total = u32::from_be_bytes([out[at], out[at + 1], out[at + 2], out[at + 3]]) as usize;
        if total < 16 || total > out.len() - at {
            break;
        }
        let prelude = crc32(&out[at..at + 8]).to_be_bytes();
        out[at + 8..at + 12].copy_from_slice(&prelude);
        let end = at + total - 4;
        let message = crc32(&out[at..end]).to_be_bytes();
        out[end..end + 4].copy_from_slice(&message);
        at += total;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let data = if data.len() % 2 == 1 {
        fix_checksums(data)
    } else {
        data.to_vec()
    };
    let whole = decode(&data, data.len());
    let chunked = decode(&data, pi_fuzz::chunk_size(&data));
    assert_eq!(whole, chunked, "chunk boundaries changed the messages");
    for message in &whole.0 {
        let again = Message::decode(&message.encode());
        assert_eq!(
            again.as_ref(),
            Ok(message),
            "a message did not survive encoding"
        );
    }
});
