//! SSE framing (sse-stream, as `pi_ai::sse` drives it): an arbitrary body, whole and cut
//! into chunks, through the shared SSE driver with a decoder that records every event.
//! Properties: the driver's event stream keeps its contract, and chunk boundaries (a CRLF
//! or a UTF-8 character split across chunks) do not change the events.
#![no_main]

use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use pi_ai::assembler::Assembler;
use pi_ai::sse::{Flow, SseDecoder, replay};
use sse_stream::Sse;
use tokio_util::sync::CancellationToken;

/// An event as the decoder saw it.
type Seen = (Option<String>, Option<String>, Option<String>, Option<u64>);

/// Records every event; the text of events whose data is `[DONE]` ends the stream.
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl SseDecoder for Recorder {
    fn on_event(&mut self, event: &Sse, asm: &mut Assembler) -> Result<Flow, String> {
        if let Ok(mut seen) = self.0.lock() {
            seen.push((
                event.event.clone(),
                event.data.clone(),
                event.id.clone(),
                event.retry,
            ));
        }
        if let Some(data) = &event.data {
            let index = asm.begin_text();
            asm.push_text(index, data);
            asm.end_block(index);
        }
        Ok(if event.data.as_deref() == Some("[DONE]") {
            Flow::Stop
        } else {
            Flow::Continue
        })
    }

    fn finish(&mut self, _asm: &mut Assembler, _ended_by_provider: bool) -> Result<(), String> {
        Ok(())
    }
}

/// The events of `data` cut into chunks of `size`, and the final message.
fn decode(data: &[u8], size: usize) -> (Vec<Seen>, pi_ai::AssistantMessage) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = pi_fuzz::model(pi_ai::api::OPENAI_COMPLETIONS);
    let stream = replay(
        &model,
        pi_fuzz::body(data, size),
        CancellationToken::new(),
        Recorder(Arc::clone(&seen)),
    );
    let message = pi_fuzz::check_events(&pi_fuzz::collect(stream));
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    (seen, message)
}

fuzz_target!(|data: &[u8]| {
    let whole = decode(data, data.len());
    let chunked = decode(data, pi_fuzz::chunk_size(data));
    assert_eq!(whole, chunked, "chunk boundaries changed the events");
});
