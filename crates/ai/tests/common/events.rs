//! Running a stream and reading what it emitted: every event (with a liveness guard), their
//! kinds, the final message, the error text, and the stream contract every test checks.

use std::time::Duration;

use futures_util::StreamExt;
use mock_llm::{MockServer, Script};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Context, Model,
    StopReason, StreamOptions,
};

/// Every event of `stream`, failing the test if it does not end within 30 seconds.
pub async fn drain(stream: AssistantMessageEventStream) -> Vec<AssistantMessageEvent> {
    tokio::time::timeout(Duration::from_secs(30), stream.collect::<Vec<_>>())
        .await
        .expect("stream finished (no hang)")
}

/// Runs `pi_ai::stream` to its end and returns every event.
pub async fn collect(
    model: &Model,
    context: &Context,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    drain(pi_ai::stream(model, context, options)).await
}

/// Pushes `script` to `server`, runs one stream, checks the contract; the final message.
pub async fn run_script(
    server: &MockServer,
    model: &Model,
    context: &Context,
    script: Script,
    options: StreamOptions,
) -> AssistantMessage {
    server.push(script);
    let events = collect(model, context, options).await;
    assert_contract(&events);
    final_message(&events).clone()
}

/// The final message of an event list (the terminal event's).
pub fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    let last = events.last().expect("at least one event");
    assert!(last.is_terminal(), "last event is {}", last.kind());
    last.message()
}

pub fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(AssistantMessageEvent::kind).collect()
}

/// Asserts the stream contract: `start` first (unless it failed before any response),
/// exactly one terminal event, last.
pub fn assert_contract(events: &[AssistantMessageEvent]) {
    let terminal = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminal, 1, "exactly one done/error: {:?}", kinds(events));
    assert!(events.last().unwrap().is_terminal());
    if events.len() > 1 {
        assert_eq!(events[0].kind(), "start");
    }
}

/// The `errorMessage` of a message that must have failed.
pub fn error_text(message: &AssistantMessage) -> &str {
    assert_eq!(message.stop_reason, StopReason::Error, "{message:?}");
    message.error_message.as_deref().expect("errorMessage")
}
