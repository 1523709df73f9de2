//! Rows "auth failure", "rate limit", "billing error", "timeout" and "all retries
//! exhausted": rotation through auth profiles, cooldowns, and the loop cap.

use std::time::{Duration, Instant};

use serde_json::json;

use mock_llm::{Fault, Script};
use pi_ai::ThinkingLevel;
use pi_gateway::runner::{FailureKind, RunnerConfig, run_embedded};

use super::*;

/// The mock's rate limit as pi-ai words it (pi 1.6.0): the status and the body's error.
const RATE_LIMITED: &str = r#"429: {"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_failure_rotates_to_the_next_profile_and_cools_the_first_down() {
    let env = Env::new(128_000, json!({})).await;
    env.server
        .push_all([Script::http_error(401), Script::text("Hello from B")]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "Hello from B");
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_B]);
    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::Auth)),
            (Some("b".into()), None)
        ]
    );
    assert_eq!(
        result.attempts[0].error_message.as_deref(),
        Some(
            r#"401: {"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}"#
        )
    );
    assert_eq!(result.meta.profile_id.as_deref(), Some("b"));
    let now = Instant::now();
    assert!(store.in_cooldown("a", now));
    assert_eq!(store.last_failure("a"), Some(FailureKind::Auth));
    assert!(!store.in_cooldown("b", now));
    assert_eq!(store.last_failure("b"), None);
    // The failed reply is not left in the context; the run's key is not left on the agent.
    assert_eq!(roles(&session), ["user", "assistant"]);
    assert_eq!(
        session.agent().stream_options().api_key.as_deref(),
        Some(SESSION_KEY)
    );
    assert_no_secrets(&result);

    // The next run starts with B: A is still cooling down.
    env.server.push(Script::text("again"));
    let again = run_embedded(params(&session, "more", &store, fast_config())).await;
    assert!(again.is_ok());
    assert_eq!(bearer_keys(&env.server.requests())[2], KEY_B);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_rotates_without_provider_retries() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        Script::default().with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("0".into()),
            retry_after_ms: None,
            body: None,
        }),
        Script::text("served by B"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let before = Instant::now();
    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "served by B");
    // One request per profile: the provider layer does not retry the 429 itself.
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_B]);
    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::RateLimit)),
            (Some("b".into()), None)
        ]
    );
    let until = store.cooldown_until("a").unwrap();
    assert!(until > before && until <= Instant::now() + Duration::from_secs(60));
    assert_eq!(store.last_failure("a"), Some(FailureKind::RateLimit));
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn billing_errors_rotate_and_end_in_the_billing_message() {
    let env = Env::new(128_000, json!({})).await;
    let session = env.session("mock-model", ThinkingLevel::Off);

    // 402 on A: rotation to B.
    env.server
        .push_all([Script::http_error(402), Script::text("paid by B")]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;
    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "paid by B");
    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::Billing)),
            (Some("b".into()), None)
        ]
    );
    assert_eq!(store.last_failure("a"), Some(FailureKind::Billing));
    assert!(store.in_cooldown("a", Instant::now()));

    // An insufficient_quota 429 on A, a 402 on B: both exhausted, the billing message.
    env.server.clear_requests();
    env.server.push_all([
        http_error(
            429,
            "You exceeded your current quota, please check your plan and billing details.",
        ),
        Script::http_error(402),
        Script::text("never sent"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let result = run_embedded(params(&session, "hi again", &store, fast_config())).await;
    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::Billing);
    assert_eq!(
        error.message,
        "All auth profiles for mock are exhausted; last failure (billing): The provider declined \
         the request for billing reasons (credits or quota used up). Check the account's billing \
         or add another auth profile. (402: {\"message\":\"Mock error\",\"type\":\"server_error\",\"param\":null,\"code\":null})"
    );
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_B]);
    assert_eq!(env.server.pending(), 1, "no third request");
    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::Billing)),
            (Some("b".into()), Some(FailureKind::Billing))
        ]
    );
    let now = Instant::now();
    assert!(store.in_cooldown("a", now) && store.in_cooldown("b", now));
    // The error is the last payload, flagged as an error.
    let last = result.payloads.last().unwrap();
    assert!(last.is_error);
    assert_eq!(last.text, error.message);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_rotates_without_cooling_the_profile_down() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        Script::text("slow answer").with_fault(Fault::stall(1, 3_000)),
        Script::text("quick answer"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);
    let config = RunnerConfig {
        idle_timeout_ms: Some(200),
        ..fast_config()
    };

    let started = Instant::now();
    let result = run_embedded(params(&session, "hi", &store, config.clone())).await;

    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "did not wait for the stall"
    );
    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "quick answer");
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_B]);
    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::Timeout)),
            (Some("b".into()), None)
        ]
    );
    let message = result.attempts[0].error_message.clone().unwrap();
    assert!(message.contains("timed out"), "{message}");
    // A timeout says nothing about the key: no cooldown, A is first again next run.
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_eq!(store.cooldown_until("a"), None);
    assert_eq!(store.last_failure("a"), Some(FailureKind::Timeout));
    env.server.push(Script::text("A is back"));
    let again = run_embedded(params(&session, "again", &store, config)).await;
    assert!(again.is_ok());
    assert_eq!(bearer_keys(&env.server.requests())[2], KEY_A);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_skips_a_profile_in_cooldown() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push(Script::text("from B"));
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    store.mark_failure("a", FailureKind::RateLimit, Instant::now());
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_B]);
    assert_eq!(attempt_log(&result), [(Some("b".into()), None)]);
    // B's success does not lift A's cooldown.
    assert!(store.in_cooldown("a", Instant::now()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_profiles_exhausted_names_the_exhaustion_and_the_last_failure() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        Script::http_error(401),
        Script::http_error(429),
        Script::text("never sent"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::RateLimit);
    assert_eq!(
        error.message,
        format!(
            "All auth profiles for mock are exhausted; last failure (rate_limit): {RATE_LIMITED}"
        )
    );
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_B]);
    assert_eq!(env.server.pending(), 1);
    assert_eq!(roles(&session), ["user"], "failed replies are not kept");
    assert_no_secrets(&result);

    // Every profile cooling down before the run: no request at all.
    env.server.clear_requests();
    let result = run_embedded(params(&session, "still there?", &store, fast_config())).await;
    let error = result.meta.error.clone().expect("the run fails");
    assert!(
        error
            .message
            .starts_with("All auth profiles for mock are exhausted")
            && error.message.contains("every profile is cooling down"),
        "{}",
        error.message
    );
    assert_eq!(error.kind, FailureKind::Auth, "A's last failure");
    assert!(env.server.requests().is_empty());
    assert!(result.attempts.is_empty());
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_cap_stops_a_run_that_keeps_failing() {
    let env = Env::new(128_000, json!({})).await;
    // Five profiles that would all be tried, but only three attempts are allowed.
    env.server.push_all((0..5).map(|_| Script::http_error(429)));
    let keys = ["k-1", "k-2", "k-3", "k-4", "k-5"];
    let list: Vec<(String, &str)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (format!("p{i}"), *k))
        .collect();
    let list: Vec<(&str, &str)> = list.iter().map(|(id, k)| (id.as_str(), *k)).collect();
    let store = profiles(&list);
    let session = env.session("mock-model", ThinkingLevel::Off);
    let config = RunnerConfig {
        max_run_loop_iterations: Some(3),
        ..fast_config()
    };

    let result = run_embedded(params(&session, "hi", &store, config)).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::RateLimit);
    assert_eq!(
        error.message,
        format!("Request failed after 3 attempts: {RATE_LIMITED}")
    );
    assert_eq!(bearer_keys(&env.server.requests()), ["k-1", "k-2", "k-3"]);
    assert_eq!(result.attempts.len(), 3);
    assert_eq!(env.server.pending(), 2);

    // A thinking model refusing every level: the cap ends the downgrades too.
    env.server.clear_queue();
    env.server.clear_requests();
    let refusal = "Reasoning effort is not supported for this model";
    env.server
        .push_all((0..5).map(|_| http_error(400, refusal)));
    let thinker = env.session("mock-thinker", ThinkingLevel::High);
    let config = RunnerConfig {
        max_run_loop_iterations: Some(2),
        ..fast_config()
    };
    let result = run_embedded(params(&thinker, "think", &profiles(&[]), config)).await;
    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::ThinkingUnsupported);
    assert_eq!(
        error.message,
        format!(
            "Request failed after 2 attempts: {}",
            http_error_text(400, refusal)
        )
    );
    assert_eq!(env.server.requests().len(), 2);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_echoed_by_the_provider_never_reach_results_or_errors() {
    let env = Env::new(128_000, json!({})).await;
    let echo = |key: &str| {
        format!(
            "Incorrect API key provided: {key}. You can find your API key at https://example.invalid."
        )
    };
    env.server.push_all([
        http_error(401, &echo(KEY_A)),
        http_error(402, &format!("Billing hard limit reached for key {KEY_B}")),
        Script::text("never sent"),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &store, fast_config())).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::Billing);
    assert_eq!(bearer_keys(&env.server.requests()), [KEY_A, KEY_B]);
    assert_eq!(
        result.attempts[0].error_message.as_deref(),
        Some(
            r#"401: {"message":"Incorrect API key provided: <redacted>. You can find your API key at https://example.invalid.","type":"invalid_request_error","param":null,"code":null}"#
        )
    );
    assert!(
        error.message.ends_with(&format!(
            "({})",
            http_error_text(402, "Billing hard limit reached for key <redacted>")
        )),
        "{}",
        error.message
    );
    assert_no_secrets(&result);

    // The session's own key (no profiles) is hidden the same way, in a non-retried error.
    env.server.clear_queue();
    env.server.push(http_error(
        400,
        &format!("Malformed request from {SESSION_KEY}"),
    ));
    let result = run_embedded(params(&session, "again", &profiles(&[]), fast_config())).await;
    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::Other);
    assert_eq!(
        error.message,
        http_error_text(400, "Malformed request from <redacted>")
    );
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_profiles_the_provider_retries_and_nothing_rotates() {
    let env = Env::new(128_000, json!({})).await;
    let limited = || {
        Script::default().with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("0".into()),
            retry_after_ms: None,
            body: None,
        })
    };
    env.server.push_all([limited(), Script::text("second try")]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &profiles(&[]), fast_config())).await;

    // The session's single key: the provider layer honours retry-after within one attempt.
    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "second try");
    assert_eq!(
        bearer_keys(&env.server.requests()),
        [SESSION_KEY, SESSION_KEY]
    );
    assert_eq!(attempt_log(&result), [(None, None)]);

    // Once the provider's retries are spent, a rate limit with no profile to rotate to is
    // final: one attempt, the provider's text.
    env.server.clear_requests();
    env.server
        .push_all([limited(), limited(), limited(), Script::text("never sent")]);
    let result = run_embedded(params(&session, "again", &profiles(&[]), fast_config())).await;
    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::RateLimit);
    assert_eq!(error.message, RATE_LIMITED);
    assert_eq!(
        env.server.requests().len(),
        3,
        "first try and two provider retries"
    );
    assert_eq!(attempt_log(&result), [(None, Some(FailureKind::RateLimit))]);
    assert_no_secrets(&result);
}
