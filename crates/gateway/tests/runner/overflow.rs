//! Row "context overflow": compaction and retry (at most three times in a run), then one
//! truncation of oversized tool results, then a clear error — with one compaction counter
//! for the whole run that no tier resets.

use std::time::Instant;

use serde_json::json;

use mock_llm::{RecordedRequest, Script};
use pi_ai::ThinkingLevel;
use pi_gateway::runner::{CONTEXT_OVERFLOW_ERROR, FailureKind, RunnerConfig, run_embedded};

use super::*;

/// The provider's answer to a prompt beyond the window (OpenAI's wording).
fn overflow() -> Script {
    http_error(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted \
         in 131072 tokens. Please reduce the length of the messages.",
    )
}

fn summary_flags(requests: &[RecordedRequest]) -> Vec<bool> {
    requests.iter().map(is_summary_request).collect()
}

/// Tool messages of a request with the length of their content.
fn tool_contents(request: &RecordedRequest) -> Vec<String> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// One earlier exchange: a short question and a 2000-character (500-token) answer.
async fn with_history(env: &Env, session: &AgentSession, store: &AuthProfileStore) {
    env.server
        .push(Script::text(format!("history answer {}", big_text(2_000))));
    let first = run_embedded(params(session, "first question", store, fast_config())).await;
    assert!(first.is_ok(), "{:?}", first.meta.error);
    env.server.clear_requests();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_compacts_the_session_and_retries() {
    let env = Env::new(128_000, json!({"compaction": {"keepRecentTokens": 300}})).await;
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);
    with_history(&env, &session, &store).await;
    env.server.push_all([
        overflow(),
        Script::text("SUMMARY-ONE"),
        Script::text("answer after compaction"),
    ]);

    let result = run_embedded(params(&session, "second question", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "answer after compaction");
    let requests = env.server.requests();
    assert_eq!(summary_flags(&requests), [false, true, false]);
    // The summary is written with the run's profile key.
    assert_eq!(bearer_keys(&requests), [KEY_A, KEY_A, KEY_A]);
    let summary_request = requests[1].body.to_string();
    assert!(summary_request.contains("first question"));
    assert!(
        !summary_request.contains("second question"),
        "kept, not summarized"
    );
    let retry = requests[2].body.to_string();
    assert!(retry.contains("SUMMARY-ONE") && retry.contains("second question"));
    assert!(!retry.contains("first question"));

    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::ContextOverflow)),
            (Some("a".into()), None)
        ]
    );
    let error = result.attempts[0].error_message.as_deref().unwrap();
    assert!(
        error.starts_with("400: ") && error.contains("This model's maximum context length"),
        "{error}"
    );
    assert_eq!(result.auto_compaction_count, 1);
    assert_eq!(result.overflow_compaction_attempts, 1);
    assert_eq!(result.truncated_tool_results, 0);
    assert_eq!(compaction_entries(&session), 1);
    assert_eq!(
        roles(&session),
        ["compactionSummary", "assistant", "user", "assistant"]
    );
    // An overflow is not the key's fault.
    assert!(!store.in_cooldown("a", Instant::now()));
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_compactions_then_one_truncation_then_a_clear_error() {
    // Keep about one tool call with its 5000-character (1250-token) result per compaction.
    let env = Env::new(128_000, json!({"compaction": {"keepRecentTokens": 1300}})).await;
    let store = profiles(&[("a", KEY_A)]);
    let session = env.session("mock-model", ThinkingLevel::Off);
    with_history(&env, &session, &store).await;
    let call = || Script::tool_call("big", json!({"size": 5_000}));
    env.server.push_all([
        call(),
        overflow(),
        Script::text("SUMMARY-1"),
        call(),
        overflow(),
        Script::text("SUMMARY-2"),
        call(),
        overflow(),
        Script::text("SUMMARY-3"),
        call(),
        overflow(),
        overflow(),
        Script::text("never sent"),
    ]);
    let config = RunnerConfig {
        tool_result_max_chars: Some(1_000),
        ..fast_config()
    };

    let result = run_embedded(params(&session, "keep working", &store, config)).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::ContextOverflow);
    assert!(
        error.message.starts_with(CONTEXT_OVERFLOW_ERROR),
        "{}",
        error.message
    );
    let requests = env.server.requests();
    let flags = summary_flags(&requests);
    assert_eq!(
        flags,
        [
            false, false, true, false, false, true, false, false, true, false, false, false
        ]
    );
    assert_eq!(env.server.pending(), 1);
    // The counter went to 3 and stayed there: no fourth compaction after the truncation.
    assert_eq!(result.overflow_compaction_attempts, 3);
    assert_eq!(result.auto_compaction_count, 3);
    assert_eq!(compaction_entries(&session), 3);
    assert_eq!(result.attempts.len(), 5);
    assert!(
        result
            .attempts
            .iter()
            .all(|a| a.failure == Some(FailureKind::ContextOverflow))
    );
    // Each compaction carried the previous summary forward.
    let second_summary = requests[5].body.to_string();
    assert!(second_summary.contains("SUMMARY-1"));
    assert!(requests[8].body.to_string().contains("SUMMARY-2"));

    // Before the truncation the kept tool results went out whole, after it cut.
    let before = tool_contents(&requests[10]);
    assert_eq!(before.len(), 2);
    assert!(before.iter().all(|t| t.chars().count() == 5_000));
    let after = tool_contents(&requests[11]);
    assert_eq!(after.len(), 2);
    for text in &after {
        assert!(text.chars().count() <= 1_000, "{}", text.len());
        assert!(text.contains("characters of this tool result were removed"));
        assert!(text.starts_with("0123456789"));
    }
    assert_eq!(result.truncated_tool_results, 2);
    let kept: Vec<String> = session
        .messages()
        .iter()
        .filter_map(tool_result_text)
        .collect();
    assert_eq!(kept.len(), 2);
    assert!(kept.iter().all(|t| t.chars().count() <= 1_000));
    assert_eq!(session.messages()[0].role(), "compactionSummary");
    assert_ne!(
        roles(&session).last().map(String::as_str),
        Some("assistant")
    );

    // Tool-result details never reach any request.
    assert!(
        requests
            .iter()
            .all(|r| !r.body.to_string().contains(DETAILS_MARKER))
    );
    let last = result.payloads.last().unwrap();
    assert!(last.is_error && last.text == error.message);
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncation_recovers_when_there_is_nothing_to_compact() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        Script::tool_call("big", json!({"size": 5_000})),
        overflow(),
        Script::text("fits now"),
    ]);
    let session = env.session("mock-model", ThinkingLevel::Off);
    let config = RunnerConfig {
        tool_result_max_chars: Some(1_000),
        ..fast_config()
    };

    let result = run_embedded(params(&session, "look", &profiles(&[]), config)).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "fits now");
    let requests = env.server.requests();
    assert_eq!(summary_flags(&requests), [false, false, false]);
    // The compaction tier was entered (and counted) but had nothing to summarize.
    assert_eq!(result.overflow_compaction_attempts, 1);
    assert_eq!(result.auto_compaction_count, 0);
    assert_eq!(compaction_entries(&session), 0);
    assert_eq!(result.truncated_tool_results, 1);
    assert_eq!(tool_contents(&requests[1])[0].chars().count(), 5_000);
    let retried = &tool_contents(&requests[2])[0];
    assert!(retried.chars().count() <= 1_000);
    assert_eq!(
        roles(&session),
        ["user", "assistant", "toolResult", "assistant"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_with_nothing_to_recover_fails_at_once() {
    let env = Env::new(128_000, json!({})).await;
    env.server
        .push_all([overflow(), Script::text("never sent")]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &profiles(&[]), fast_config())).await;

    let error = result.meta.error.clone().expect("the run fails");
    assert_eq!(error.kind, FailureKind::ContextOverflow);
    assert_eq!(
        error.message,
        format!(
            "{CONTEXT_OVERFLOW_ERROR}. Start a new session or switch to a model with a larger \
             context window."
        )
    );
    assert_eq!(env.server.requests().len(), 1);
    assert_eq!(env.server.pending(), 1);
    assert_eq!(result.overflow_compaction_attempts, 1);
    assert_eq!(result.auto_compaction_count, 0);
    assert_eq!(result.truncated_tool_results, 0);
    assert_eq!(roles(&session), ["user"]);
}
