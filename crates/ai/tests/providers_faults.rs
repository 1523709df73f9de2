//! Every injected fault ends in `stopReason: "error"` with a clear `errorMessage`: no panic,
//! no hang. Client-side retries honour `retry-after` up to `maxRetryDelayMs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{
    BOTH, Wire, assert_contract, collect, context, error_text, final_message, model, options,
    run_script, server,
};
use mock_llm::{Fault, Script};
use pi_ai::{AssistantMessage, StopReason, StreamOptions};

async fn run_fault(wire: Wire, script: Script, opts: StreamOptions) -> AssistantMessage {
    let server = server().await;
    run_script(&server, &model(&server, wire), &context("hi"), script, opts).await
}

#[tokio::test]
async fn http_error_statuses_become_error_messages() {
    for wire in BOTH {
        for status in [429u16, 500, 502, 503, 529, 400] {
            let message = run_fault(wire, Script::http_error(status), options()).await;
            let text = error_text(&message);
            // pi 1.6.0 quotes an OpenAI error's object after `<status>:`; Anthropic's SDK
            // message stays `<status> <body>`.
            let head = match wire {
                Wire::OpenAi => format!("{status}: {{"),
                Wire::Anthropic => format!("{status} "),
            };
            assert!(text.starts_with(&head), "{wire:?}: {text}");
            assert!(message.content.is_empty());
        }
    }
}

#[tokio::test]
async fn error_texts_follow_each_sdk() {
    let openai = run_fault(Wire::OpenAi, Script::http_error(429), options()).await;
    assert_eq!(
        error_text(&openai),
        r#"429: {"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}"#
    );
    let anthropic = run_fault(Wire::Anthropic, Script::http_error(529), options()).await;
    assert_eq!(
        error_text(&anthropic),
        r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
    );
}

#[tokio::test]
async fn retries_after_429_with_retry_after_then_succeeds() {
    for wire in BOTH {
        let server = server().await;
        server.push(Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("1".into()),
            retry_after_ms: None,
            body: None,
        }));
        server.push(Script::http_error(503));
        server.push(Script::text("finally"));
        let mut opts = options();
        opts.max_retries = Some(2);
        let started = std::time::Instant::now();
        let events = collect(&model(&server, wire), &context("hi"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).text(), "finally", "{wire:?}");
        assert_eq!(server.requests().len(), 3);
        // The server asked for one second; the client waited for it before the second try.
        assert!(started.elapsed() >= std::time::Duration::from_millis(950));
    }
}

#[tokio::test]
async fn without_max_retries_a_429_is_not_retried_and_retry_after_is_not_weighed() {
    // pi-ai 1.6's retryProviderRequest makes no retries by default and only reads
    // retry-after for a retry it would make: the status comes back at once, as it is.
    for wire in BOTH {
        let server = server().await;
        server.push(Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("120".into()),
            retry_after_ms: None,
            body: None,
        }));
        server.push(Script::text("never asked for"));
        let opts = StreamOptions {
            max_retries: None,
            ..options()
        };
        let events = collect(&model(&server, wire), &context("hi"), opts).await;
        assert_contract(&events);
        let text = error_text(final_message(&events));
        assert!(text.starts_with("429"), "{wire:?}: {text}");
        assert!(!text.contains("retry delay"), "{wire:?}: {text}");
        assert_eq!(server.requests().len(), 1, "{wire:?}");
    }
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once_naming_the_delay() {
    for wire in BOTH {
        let script = Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("120".into()),
            retry_after_ms: None,
            body: None,
        });
        let mut opts = options();
        opts.max_retries = Some(3);
        opts.max_retry_delay_ms = Some(5_000);
        let message = run_fault(wire, script, opts).await;
        let text = error_text(&message);
        assert!(
            text.starts_with("Server requested 120s retry delay (max: 5s). 429 "),
            "{text}"
        );
    }
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    for wire in BOTH {
        let script = Script::text("a fairly long answer that will be cut off")
            .with_chunk_size(3)
            .with_fault(Fault::drop_after(6));
        let message = run_fault(wire, script, options()).await;
        let text = error_text(&message);
        assert!(text.starts_with("Connection error"), "{wire:?}: {text}");
        assert!(!message.text().is_empty(), "partial text kept");
    }
}

#[tokio::test]
async fn malformed_chunk() {
    for wire in BOTH {
        let script = Script::text("hello there")
            .with_chunk_size(2)
            .with_fault(Fault::malformed_after(3));
        let message = run_fault(wire, script, options()).await;
        let text = error_text(&message);
        assert!(text.contains("Could not parse"), "{wire:?}: {text}");
    }
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    for wire in BOTH {
        let script = Script::text("slow")
            .with_chunk_size(1)
            .with_fault(Fault::stall(3, 10_000));
        let mut opts = options();
        opts.idle_timeout_ms = Some(300);
        let message = run_fault(wire, script, opts).await;
        let text = error_text(&message);
        assert!(
            text.contains("timed out") && text.contains("0.3s"),
            "{wire:?}: {text}"
        );
    }
}

#[tokio::test]
async fn stall_shorter_than_the_idle_timeout_is_tolerated() {
    for wire in BOTH {
        let script = Script::text("slow but fine").with_fault(Fault::stall(2, 300));
        let message = run_fault(wire, script, options()).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert_eq!(message.text(), "slow but fine");
    }
}

#[tokio::test]
async fn in_stream_error_event() {
    let openai = run_fault(
        Wire::OpenAi,
        Script::text("partial").with_fault(Fault::StreamError {
            after_events: 2,
            message: Some("upstream exploded".into()),
        }),
        options(),
    )
    .await;
    assert_eq!(error_text(&openai), "upstream exploded");
    let anthropic = run_fault(
        Wire::Anthropic,
        Script::text("partial").with_fault(Fault::StreamError {
            after_events: 3,
            message: Some("Overloaded".into()),
        }),
        options(),
    )
    .await;
    let text = error_text(&anthropic);
    assert!(
        text.contains("overloaded_error") && text.contains("Overloaded"),
        "{text}"
    );
}

#[tokio::test]
async fn unreachable_server_is_a_connection_error() {
    for wire in BOTH {
        let server = server().await;
        let mut m = model(&server, wire);
        server.shutdown().await;
        m.base_url = "http://127.0.0.1:9".into();
        let events = collect(&m, &context("hi"), options()).await;
        assert_contract(&events);
        assert_eq!(
            error_text(final_message(&events)),
            "Connection error.: connect ECONNREFUSED 127.0.0.1:9"
        );
    }
}

#[tokio::test]
async fn missing_api_key_is_reported_without_a_request() {
    for wire in BOTH {
        let server = server().await;
        let mut m = model(&server, wire);
        m.provider = "no-such-provider".into();
        let mut opts = options();
        opts.api_key = None;
        let events = collect(&m, &context("hi"), opts).await;
        assert_eq!(events.len(), 1);
        assert_eq!(
            error_text(final_message(&events)),
            "No API key for provider: no-such-provider"
        );
        assert!(server.requests().is_empty());
    }
}

#[tokio::test]
async fn unknown_api_is_reported() {
    let server = server().await;
    let mut m = model(&server, Wire::OpenAi);
    m.api = "no-such-api".into();
    let events = collect(&m, &context("hi"), options()).await;
    assert_eq!(
        error_text(final_message(&events)),
        "No API provider registered for api: no-such-api"
    );
}
