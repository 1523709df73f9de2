//! Rows "thinking unsupported", "role ordering" and "image too large": a refused reasoning
//! level is lowered and retried until none is left; provider rejections of the transcript
//! or an image end the run at once with a user-friendly error.

use std::time::Instant;

use serde_json::json;

use mock_llm::{RecordedRequest, Script};
use pi_ai::{ImageContent, ThinkingLevel};
use pi_gateway::runner::{FailureKind, run_embedded};

use super::*;

/// The `reasoning_effort` of a request (absent when thinking is off).
fn effort(request: &RecordedRequest) -> Option<String> {
    request.body["reasoning_effort"].as_str().map(str::to_owned)
}

fn efforts(env: &Env) -> Vec<Option<String>> {
    env.server.requests().iter().map(effort).collect()
}

fn levels(result: &EmbeddedRunResult) -> Vec<ThinkingLevel> {
    result.attempts.iter().map(|a| a.thinking_level).collect()
}

fn some(values: &[&str]) -> Vec<Option<String>> {
    values.iter().map(|v| Some((*v).to_owned())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_thinking_level_is_lowered_one_step_and_retried() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        http_error(
            400,
            "Reasoning effort 'high' is not supported for this model",
        ),
        http_error(
            400,
            "Reasoning effort 'medium' is not supported for this model",
        ),
        Script::text("thought less"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-thinker", ThinkingLevel::High);

    let result = run_embedded(params(&session, "think", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "thought less");
    assert_eq!(efforts(&env), some(&["high", "medium", "low"]));
    // A refused level says nothing about the key: same profile, no cooldown.
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_A, KEY_A]);
    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::ThinkingUnsupported)),
            (Some("a".into()), Some(FailureKind::ThinkingUnsupported)),
            (Some("a".into()), None)
        ]
    );
    use ThinkingLevel::*;
    assert_eq!(levels(&result), [High, Medium, Low]);
    assert_eq!(result.meta.thinking_level, Low);
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_eq!(store.last_failure("a"), None);
    assert_eq!(roles(&session), ["user", "assistant"]);
    // The downgrade lasts for the run only.
    assert_eq!(session.agent().thinking_level(), High);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_listing_the_supported_levels_jumps_to_the_best_of_them() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        http_error(
            400,
            "Unsupported value: 'reasoning_effort' does not support 'high' with this model. \
             Supported values are: 'low'.",
        ),
        Script::text("low effort"),
    ]);
    let session = env.session("mock-thinker", ThinkingLevel::High);

    let result = run_embedded(params(&session, "think", &profiles(&[]), fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(efforts(&env), some(&["high", "low"]));
    assert_eq!(levels(&result), [ThinkingLevel::High, ThinkingLevel::Low]);
    // Without profiles the session's own key is used.
    assert_eq!(
        bearer_keys(&env.server.requests()),
        [SESSION_KEY, SESSION_KEY]
    );
    assert_eq!(attempt_log(&result)[0].0, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_lower_level_is_tried_before_giving_up() {
    let env = Env::new(128_000, json!({})).await;
    let refusal = "Reasoning is not supported for this model";
    env.server
        .push_all((0..5).map(|_| http_error(400, refusal)));
    env.server.push(Script::text("never sent"));
    let store = profiles(&[("a", KEY_A)]);
    let session = env.session("mock-thinker", ThinkingLevel::High);

    let result = run_embedded(params(&session, "think", &store, fast_config())).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::ThinkingUnsupported);
    assert_eq!(error.message, format!("400 {refusal}"));
    // high, medium, low, minimal, then off (no reasoning_effort at all): nothing is left.
    let mut expected = some(&["high", "medium", "low", "minimal"]);
    expected.push(None);
    assert_eq!(efforts(&env), expected);
    use ThinkingLevel::*;
    assert_eq!(levels(&result), [High, Medium, Low, Minimal, Off]);
    assert!(
        result
            .attempts
            .iter()
            .all(|a| a.failure == Some(FailureKind::ThinkingUnsupported))
    );
    assert_eq!(env.server.pending(), 1);
    assert_eq!(result.meta.thinking_level, Off);
    assert_eq!(session.agent().thinking_level(), High);
    assert_eq!(roles(&session), ["user"]);
    assert!(!store.in_cooldown("a", Instant::now()));
    let last = result.payloads.last().unwrap();
    assert!(last.is_error && last.text == error.message);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_downgrade_skips_levels_the_model_does_not_support() {
    let env = Env::new(128_000, json!({})).await;
    // mock-picky maps `minimal` to null: below `low` it only has `off`.
    env.server.push_all([
        http_error(
            400,
            "Reasoning effort 'low' is not supported for this model",
        ),
        Script::text("no thinking then"),
    ]);
    let session = env.session("mock-picky", ThinkingLevel::Low);

    let result = run_embedded(params(&session, "think", &profiles(&[]), fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(efforts(&env), [Some("low".to_owned()), None]);
    assert_eq!(levels(&result), [ThinkingLevel::Low, ThinkingLevel::Off]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn role_ordering_errors_are_reported_in_plain_words_without_retry() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        http_error(
            400,
            "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row",
        ),
        Script::text("never sent"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::RoleOrdering);
    assert_eq!(
        error.message,
        "The conversation history is out of order for this provider (its messages must \
         alternate between user and assistant). Please try again; if it keeps happening, start \
         a new session."
    );
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A]);
    assert_eq!(env.server.pending(), 1, "no retry, no rotation");
    assert_eq!(
        attempt_log(&result),
        [(Some("a".into()), Some(FailureKind::RoleOrdering))]
    );
    assert!(
        result.attempts[0]
            .error_message
            .as_deref()
            .unwrap()
            .contains("roles must alternate")
    );
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_eq!(roles(&session), ["user"]);
    assert_eq!(result.payloads.len(), 1);
    assert!(result.payloads[0].is_error);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_too_large_is_reported_in_plain_words_without_retry() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        http_error(
            400,
            "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes",
        ),
        Script::text("never sent"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);
    let mut params = params(&session, "what is this?", &store, fast_config());
    params.images = vec![ImageContent::new("aGVsbG8=", "image/png")];

    let result = run_embedded(params).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::ImageTooLarge);
    assert_eq!(
        error.message,
        "An image in this conversation is larger than the model accepts. Send a smaller or \
         downscaled image and try again."
    );
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].body.to_string().contains("aGVsbG8="),
        "the image was sent"
    );
    assert_eq!(env.server.pending(), 1);
    assert_eq!(
        attempt_log(&result),
        [(Some("a".into()), Some(FailureKind::ImageTooLarge))]
    );
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_no_secrets(&result);
}
