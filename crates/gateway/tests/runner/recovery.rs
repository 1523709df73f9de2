//! Rows "thinking unsupported", "role ordering" and "image too large".

use std::time::Instant;

use serde_json::{Value, json};

use mock_llm::{RecordedRequest, Script};
use pi_ai::{ImageContent, ThinkingLevel};
use pi_gateway::runner::{FailureKind, run_embedded};

use super::*;

/// The `reasoning_effort` of each request (`None` when not sent).
fn efforts(requests: &[RecordedRequest]) -> Vec<Option<String>> {
    requests
        .iter()
        .map(|r| r.body["reasoning_effort"].as_str().map(str::to_owned))
        .collect()
}

fn refusal(level: &str) -> Script {
    http_error(
        400,
        &format!("Reasoning effort '{level}' is not supported for this model"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_unsupported_downgrades_one_level_at_a_time() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        refusal("high"),
        refusal("medium"),
        Script::thinking_then_text("hmm", "answered at low"),
    ]);
    let session = env.session("mock-thinker", ThinkingLevel::High);
    let store = profiles(&[("a", KEY_A)]);

    let result = run_embedded(params(&session, "think", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "answered at low");
    assert_eq!(
        efforts(&env.server.requests()),
        [
            Some("high".into()),
            Some("medium".into()),
            Some("low".into())
        ]
    );
    let levels: Vec<ThinkingLevel> = result.attempts.iter().map(|a| a.thinking_level).collect();
    assert_eq!(
        levels,
        [
            ThinkingLevel::High,
            ThinkingLevel::Medium,
            ThinkingLevel::Low
        ]
    );
    assert_eq!(
        attempt_log(&result)[..2],
        [
            (Some("a".into()), Some(FailureKind::ThinkingUnsupported)),
            (Some("a".into()), Some(FailureKind::ThinkingUnsupported))
        ]
    );
    assert_eq!(result.meta.thinking_level, ThinkingLevel::Low);
    // Same profile throughout, never cooled down; the session's level is put back.
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_A, KEY_A]);
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_eq!(session.thinking_level(), ThinkingLevel::High);
    assert_eq!(roles(&session), ["user", "assistant"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_fallback_jumps_to_a_listed_level() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        http_error(
            400,
            "Unsupported value: 'reasoning_effort' does not support 'high' with this model. \
             Supported values are: 'minimal' and 'low'.",
        ),
        Script::text("ok"),
    ]);
    let session = env.session("mock-thinker", ThinkingLevel::High);

    let result = run_embedded(params(&session, "think", &profiles(&[]), fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(
        efforts(&env.server.requests()),
        [Some("high".into()), Some("low".into())]
    );
    assert_eq!(result.meta.thinking_level, ThinkingLevel::Low);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_fallback_passes_over_levels_the_model_lacks() {
    // mock-picky maps `minimal` to null: after `low` is refused the next level is `off`
    // (asking for `minimal` would be clamped back up to the refused `low`).
    let env = Env::new(128_000, json!({})).await;
    env.server
        .push_all([refusal("low"), Script::text("answered without thinking")]);
    let session = env.session("mock-picky", ThinkingLevel::Low);

    let result = run_embedded(params(&session, "think", &profiles(&[]), fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(efforts(&env.server.requests()), [Some("low".into()), None]);
    let levels: Vec<ThinkingLevel> = result.attempts.iter().map(|a| a.thinking_level).collect();
    assert_eq!(levels, [ThinkingLevel::Low, ThinkingLevel::Off]);
    assert_eq!(result.meta.thinking_level, ThinkingLevel::Off);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_gives_up_after_every_lower_level() {
    let env = Env::new(128_000, json!({})).await;
    let last = "Thinking is not supported for this model";
    env.server.push_all([
        refusal("high"),
        refusal("medium"),
        refusal("low"),
        refusal("minimal"),
        http_error(400, last),
        Script::text("never sent"),
    ]);
    let session = env.session("mock-thinker", ThinkingLevel::High);

    let result = run_embedded(params(&session, "think", &profiles(&[]), fast_config())).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::ThinkingUnsupported);
    assert_eq!(error.message, http_error_text(400, last));
    assert_eq!(
        efforts(&env.server.requests()),
        [
            Some("high".into()),
            Some("medium".into()),
            Some("low".into()),
            Some("minimal".into()),
            None
        ]
    );
    assert_eq!(env.server.pending(), 1);
    assert_eq!(result.meta.thinking_level, ThinkingLevel::Off);
    assert_eq!(session.thinking_level(), ThinkingLevel::High);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn role_ordering_is_reported_without_a_retry() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        http_error(
            400,
            "messages: roles must alternate between \"user\" and \"assistant\"",
        ),
        Script::text("never sent"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::RoleOrdering);
    assert!(
        error
            .message
            .starts_with("The conversation history is out of order"),
        "{}",
        error.message
    );
    assert!(!error.message.contains("400"), "no raw provider text");
    assert_eq!(env.server.requests().len(), 1);
    assert_eq!(env.server.pending(), 1);
    assert_eq!(
        attempt_log(&result),
        [(Some("a".into()), Some(FailureKind::RoleOrdering))]
    );
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_no_secrets(&result);
}

/// A 1×1 PNG.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_too_large_is_reported_without_a_retry() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        http_error(
            400,
            "messages.0.content.1.image_url: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes",
        ),
        Script::text("never sent"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);
    let mut run = params(&session, "what is in this picture?", &store, fast_config());
    run.images = vec![ImageContent::new(PIXEL, "image/png")];

    let result = run_embedded(run).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::ImageTooLarge);
    assert!(
        error
            .message
            .starts_with("An image in this conversation is larger"),
        "{}",
        error.message
    );
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    let user = requests[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap_or(Value::Null);
    assert!(user.to_string().contains("image_url"), "{user}");
    assert_eq!(
        attempt_log(&result),
        [(Some("a".into()), Some(FailureKind::ImageTooLarge))]
    );
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_no_secrets(&result);
}
