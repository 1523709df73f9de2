//! Seed 004 §3, chunked compaction: a history too big for one summary call is split by
//! token share and the partial summaries are merged; chunk sizes follow the 40% base
//! ratio, the adaptive 15% minimum and the 1.2 safety margin; failed summaries fall back
//! to leaving oversized messages out, then to a placeholder.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use mock_llm::{RecordedRequest, Script};
use pi_ai::{ThinkingLevel, UserMessage};
use pi_coding_agent::compaction::Summarizer;
use pi_coding_agent::model_registry::RequestAuth;
use pi_gateway::compaction_chunks::{
    ChunkedSummaryError, ChunkedSummaryParams, MERGE_SUMMARIES_INSTRUCTIONS, summarize_in_stages,
};
use pi_gateway::runner::run_embedded;

use super::*;

const WINDOW: u64 = 20_000;

/// The user message text of a request (a summary call has exactly one).
fn request_text(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["text"].as_str())
                .collect(),
        })
        .collect()
}

/// A user message of about `chars` characters starting with `marker`.
fn user(marker: &str, chars: usize) -> AgentMessage {
    let filler = big_text(chars.saturating_sub(marker.len() + 1));
    AgentMessage::from(UserMessage::text(format!("{marker} {filler}")))
}

/// A failure the provider layer does not retry by itself.
fn refused() -> Script {
    http_error(400, "Bad request: the summarizer is unavailable")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_too_big_for_one_summary_is_split_and_merged() {
    let env = Env::new(
        WINDOW,
        json!({"compaction": {"keepRecentTokens": 500, "reserveTokens": 2000}}),
    )
    .await;
    let store = profiles(&[("a", KEY_A)]);
    let session = env.session("mock-model", ThinkingLevel::Off);
    // Five exchanges of about 1000 + 1000 tokens.
    for i in 1..=5 {
        let reply = format!("reply-{i} {}", big_text(3_990));
        env.server.push(Script::text(reply));
        let prompt = format!("marker-{i} {}", big_text(3_990));
        let result = run_embedded(params(&session, &prompt, &store, fast_config())).await;
        assert!(result.is_ok(), "{:?}", result.meta.error);
        assert_eq!(result.auto_compaction_count, 0);
    }
    env.server.clear_requests();
    env.server.push_all([
        http_error(400, "This model's maximum context length is 20000 tokens."),
        Script::text("PARTIAL-ONE"),
        Script::text("PARTIAL-TWO"),
        Script::text("MERGED-SUMMARY"),
        Script::text("answer after merge"),
    ]);

    let result = run_embedded(params(&session, "final question", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "answer after merge");
    let requests = env.server.requests();
    let flags: Vec<bool> = requests.iter().map(is_summary_request).collect();
    assert_eq!(flags, [false, true, true, true, false]);
    assert_eq!(bearer_keys(&requests), [KEY_A; 5]);
    // ~9000 tokens to summarize (exchanges 1–4 and the start of the split turn 5) exceed a
    // chunk (20000 × 0.4 / 1.2 ≈ 6666): two parts by token share.
    let first = request_text(&requests[1]);
    let second = request_text(&requests[2]);
    for marker in ["marker-1", "reply-1", "marker-2", "reply-2"] {
        assert!(
            first.contains(marker) && !second.contains(marker),
            "{marker}"
        );
    }
    for marker in ["marker-3", "reply-4", "marker-5"] {
        assert!(
            second.contains(marker) && !first.contains(marker),
            "{marker}"
        );
    }
    assert!(
        !first.contains("reply-5") && !second.contains("reply-5"),
        "kept"
    );
    let merge = request_text(&requests[3]);
    assert!(
        merge.contains("Partial summary 1 of 2:\n\nPARTIAL-ONE"),
        "{merge}"
    );
    assert!(merge.contains("Partial summary 2 of 2:\n\nPARTIAL-TWO"));
    assert!(merge.contains(MERGE_SUMMARIES_INSTRUCTIONS));
    assert!(!merge.contains("marker-1"));
    // The merged summary replaces the history.
    let retry = requests[4].body.to_string();
    assert!(retry.contains("MERGED-SUMMARY") && !retry.contains("PARTIAL-ONE"));
    assert!(!retry.contains("marker-1") && retry.contains("reply-5"));
    assert_eq!(result.auto_compaction_count, 1);
    assert_eq!(compaction_entries(&session), 1);
    let summary = session.with_session(|s| {
        s.branch_entries().iter().find_map(|e| match &e.kind {
            EntryKind::Compaction { summary, .. } => Some(summary.clone()),
            _ => None,
        })
    });
    assert!(summary.unwrap().starts_with("MERGED-SUMMARY"));
    assert_eq!(
        roles(&session),
        ["compactionSummary", "assistant", "user", "assistant"]
    );
}

/// Runs `summarize_in_stages` on `messages` against the mock with fast retries.
async fn summarize(
    env: &Env,
    messages: &[AgentMessage],
    parts: usize,
    cancel: CancellationToken,
) -> Result<String, ChunkedSummaryError> {
    let registry = env.registry();
    let model = registry.find("mock", "mock-model").unwrap().clone();
    let auth: RequestAuth = registry.request_auth(&model, None).unwrap();
    let params = ChunkedSummaryParams {
        summarizer: Summarizer {
            model: &model,
            auth: &auth,
            thinking_level: None,
            cancel,
            retry: None,
        },
        context_window: WINDOW,
        reserve_tokens: 2_000,
        parts,
        custom_instructions: None,
        previous_summary: None,
        retry_delay: Duration::from_millis(1),
    };
    summarize_in_stages(messages, &params).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_keep_the_safety_margin_and_shrink_for_big_messages() {
    let env = Env::new(WINDOW, json!({})).await;
    let go = CancellationToken::new;

    // Seven 1000-token messages: 7000 would fit 40% of the window (8000), but not after the
    // 1.2 margin (6666): six go into the first call, the last into a second one.
    let small: Vec<_> = (0..7).map(|i| user(&format!("m{i}"), 4_000)).collect();
    env.server
        .push_all([Script::text("S-A"), Script::text("S-B")]);
    let summary = summarize(&env, &small, 1, go()).await.unwrap();
    assert_eq!(summary, "S-B");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(is_summary_request));
    let (first, second) = (request_text(&requests[0]), request_text(&requests[1]));
    assert!(first.contains("m5 ") && !first.contains("m6 "));
    assert!(second.contains("m6 ") && !second.contains("m5 "));
    // The second call updates the first call's summary.
    assert!(second.contains("<previous-summary>\nS-A\n</previous-summary>"));

    // Four 2400-token messages: the average fills 14% of the window (with the margin), so
    // the ratio drops to the 15% minimum (2500 tokens): one call per message.
    env.server.clear_requests();
    let big: Vec<_> = (0..4).map(|i| user(&format!("b{i}"), 9_600)).collect();
    env.server
        .push_all((1..=4).map(|i| Script::text(format!("S-{i}"))));
    assert_eq!(summarize(&env, &big, 1, go()).await.unwrap(), "S-4");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 4);
    for (i, request) in requests.iter().enumerate() {
        let text = request_text(request);
        assert!(text.contains(&format!("b{i} ")), "{i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_messages_are_left_out_when_summarizing_them_fails() {
    let env = Env::new(WINDOW, json!({})).await;
    // 12.5k tokens × 1.2 is more than half the window: oversized.
    let messages = vec![user("alpha", 400), user("HUGE", 50_000), user("omega", 400)];
    env.server.push_all([
        Script::text("S-ALPHA"),
        refused(),
        refused(),
        refused(),
        Script::text("S-REST"),
    ]);

    let summary = summarize(&env, &messages, 1, CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(
        summary,
        "S-REST\n\n[A user message of about 13K tokens was too large to summarize and is left out.]"
    );
    let requests = env.server.requests();
    assert_eq!(
        requests.len(),
        5,
        "one call, three tries of the big one, one retry"
    );
    let texts: Vec<String> = requests.iter().map(request_text).collect();
    assert!(texts[0].contains("alpha") && !texts[0].contains("HUGE"));
    for text in &texts[1..4] {
        assert!(text.contains("HUGE") && text.contains("S-ALPHA"));
    }
    assert!(texts[4].contains("alpha") && texts[4].contains("omega"));
    assert!(!texts[4].contains("HUGE") && !texts[4].contains("S-ALPHA"));
    assert_eq!(env.server.pending(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_any_summary_a_placeholder_stands_in() {
    let env = Env::new(WINDOW, json!({})).await;
    let go = CancellationToken::new;

    // Nothing oversized to leave out: three tries, then the placeholder.
    env.server.push_all((0..3).map(|_| refused()));
    env.server.push(Script::text("never sent"));
    let two = vec![user("alpha", 400), user("omega", 400)];
    assert_eq!(
        summarize(&env, &two, 1, go()).await.unwrap(),
        "Context contained 2 messages, summary unavailable."
    );
    assert_eq!(env.server.requests().len(), 3);

    // With an oversized message: three tries in full, three without it, then the placeholder.
    env.server.clear_queue();
    env.server.clear_requests();
    env.server.push_all((0..6).map(|_| refused()));
    env.server.push(Script::text("never sent"));
    let three = vec![user("alpha", 400), user("HUGE", 50_000), user("omega", 400)];
    assert_eq!(
        summarize(&env, &three, 1, go()).await.unwrap(),
        "Context contained 3 messages, summary unavailable. 1 of them were too large to summarize."
    );
    assert_eq!(env.server.requests().len(), 6);
    assert_eq!(env.server.pending(), 1);

    // A cancelled compaction makes no call and no placeholder.
    env.server.clear_requests();
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(
        summarize(&env, &two, 1, cancel).await,
        Err(ChunkedSummaryError::Aborted)
    );
    assert!(env.server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_merge_keeps_the_partial_summaries() {
    let env = Env::new(WINDOW, json!({})).await;
    let messages: Vec<_> = (0..9).map(|i| user(&format!("m{i}"), 4_000)).collect();
    env.server
        .push_all([Script::text("PARTIAL-ONE"), Script::text("PARTIAL-TWO")]);
    env.server.push_all((0..3).map(|_| refused()));

    let summary = summarize(&env, &messages, 2, CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(summary, "PARTIAL-ONE\n\n---\n\nPARTIAL-TWO");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 5, "two parts, three tries of the merge");
    assert!(request_text(&requests[0]).contains("m0 "));
    assert!(request_text(&requests[1]).contains("m8 "));
    for request in &requests[2..] {
        assert!(request_text(request).contains("Partial summary 2 of 2"));
    }
}
