//! What the fuzz targets share: a model to decode for, one tokio runtime for the stream
//! decoders, and the checks every decoded event stream must pass.

use std::convert::Infallible;
use std::sync::LazyLock;

use bytes::Bytes;
use futures_util::StreamExt;
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, InputKind, Model,
    ModelCost, StopReason,
};

/// A response body cut into chunks, as the HTTP client hands it over.
pub type Body = futures_util::stream::Iter<std::vec::IntoIter<Result<Bytes, Infallible>>>;

/// A model of `api` with costs set, so usage and cost arithmetic run too.
pub fn model(api: &str) -> Model {
    Model {
        id: "fuzz-model".into(),
        name: "fuzz model".into(),
        api: api.into(),
        provider: "fuzz".into(),
        base_url: "http://127.0.0.1:1".into(),
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            ..ModelCost::default()
        },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

/// One current-thread runtime for the whole process: the decoders need a timer (the idle
/// timeout), and building a runtime per input would cost more than decoding it.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
        match tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => panic!("no tokio runtime: {e}"),
        }
    });
    &RUNTIME
}

/// `data` as a body of chunks of at most `size` bytes (no chunk at all for empty data).
pub fn body(data: &[u8], size: usize) -> Body {
    let pieces: Vec<Result<Bytes, Infallible>> = data
        .chunks(size.max(1))
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    futures_util::stream::iter(pieces)
}

/// A chunk size derived from the input itself, so a crashing input replays as it is.
pub fn chunk_size(data: &[u8]) -> usize {
    1 + data.len() % 13
}

/// Every event of `stream`.
pub fn collect(stream: AssistantMessageEventStream) -> Vec<AssistantMessageEvent> {
    runtime().block_on(stream.collect::<Vec<_>>())
}

/// Checks the event-stream contract and returns the final message (timestamp cleared, so
/// two decodes of the same body compare equal):
/// - it starts with `start` and ends with exactly one `done` or `error`, nothing after;
/// - every block event's `content_index` is a block of the message it carries;
/// - `done` has a success reason and no error; `error` a failure reason and a message;
/// - the final message survives a trip through its JSON form (what sessions store).
pub fn check_events(events: &[AssistantMessageEvent]) -> AssistantMessage {
    assert!(
        matches!(events.first(), Some(AssistantMessageEvent::Start { .. })),
        "the stream must start with `start`"
    );
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "exactly one terminal event");
    let Some(last) = events.last() else {
        panic!("no events")
    };
    assert!(last.is_terminal(), "the terminal event must come last");
    for event in events {
        let index = match event {
            AssistantMessageEvent::TextStart { content_index, .. }
            | AssistantMessageEvent::TextDelta { content_index, .. }
            | AssistantMessageEvent::TextEnd { content_index, .. }
            | AssistantMessageEvent::ThinkingStart { content_index, .. }
            | AssistantMessageEvent::ThinkingDelta { content_index, .. }
            | AssistantMessageEvent::ThinkingEnd { content_index, .. }
            | AssistantMessageEvent::ToolcallStart { content_index, .. }
            | AssistantMessageEvent::ToolcallDelta { content_index, .. }
            | AssistantMessageEvent::ToolcallEnd { content_index, .. } => *content_index,
            _ => continue,
        };
        let blocks = event.message().content.len();
        assert!(
            index < blocks,
            "{} names block {index} of {blocks}",
            event.kind()
        );
    }
    match last {
        AssistantMessageEvent::Done { reason, message } => {
            assert!(
                matches!(
                    reason,
                    StopReason::Stop | StopReason::Length | StopReason::ToolUse
                ),
                "done with {reason:?}"
            );
            assert_eq!(message.stop_reason, *reason);
        }
        AssistantMessageEvent::Error { reason, error } => {
            assert!(
                matches!(reason, StopReason::Error | StopReason::Aborted),
                "error with {reason:?}"
            );
            assert!(error.error_message.is_some(), "an error without a message");
        }
        _ => {}
    }
    let mut message = AssistantMessage::clone(last.message());
    // Times of the decode (the clock, the call's duration) differ from run to run.
    message.timestamp = 0;
    message.duration_ms = None;
    let text = match serde_json::to_string(&message) {
        Ok(text) => text,
        Err(e) => panic!("the final message does not serialize: {e}"),
    };
    match serde_json::from_str::<AssistantMessage>(&text) {
        Ok(back) => assert_eq!(back, message, "the final message changed through JSON"),
        Err(e) => panic!("the final message does not parse back: {e}: {text}"),
    }
    message
}

/// Decodes `data` whole and in chunks with `decode`, checks both event streams and that
/// they end in the same message (chunk boundaries must not matter).
pub fn check_decoder(data: &[u8], decode: impl Fn(Body) -> AssistantMessageEventStream) {
    let whole = check_events(&collect(decode(body(data, data.len()))));
    let chunked = check_events(&collect(decode(body(data, chunk_size(data)))));
    assert_eq!(
        comparable(&whole),
        comparable(&chunked),
        "chunk boundaries changed the message"
    );
}

/// `message` as JSON without tool-call ids: a provider that sends none gets generated ones
/// (a clock and a counter), different on every decode.
fn comparable(message: &AssistantMessage) -> serde_json::Value {
    let mut value = match serde_json::to_value(message) {
        Ok(value) => value,
        Err(e) => panic!("the final message does not serialize: {e}"),
    };
    if let Some(blocks) = value.get_mut("content").and_then(|c| c.as_array_mut()) {
        for block in blocks {
            if block.get("type").and_then(|t| t.as_str()) == Some("toolCall") {
                block["id"] = serde_json::Value::Null;
            }
        }
    }
    value
}
