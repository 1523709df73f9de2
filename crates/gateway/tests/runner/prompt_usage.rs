//! Seed 004 §1 and §6: usage over the calls of a run (output adds up, the prompt side is the
//! last call's, so tool round trips do not multiply the context), and the system prompt
//! modes full / minimal / none as they reach the provider.

use serde_json::json;

use mock_llm::{Script, ScriptUsage};
use pi_ai::{ThinkingLevel, Usage};
use pi_coding_agent::modes::system_prompt::ContextFile;
use pi_gateway::runner::prompt::IDENTITY_LINE;
use pi_gateway::runner::{FailureKind, PromptMode, RunUsage, run_embedded};

use super::*;

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> ScriptUsage {
    ScriptUsage {
        input,
        output,
        cache_read,
        cache_write,
        reasoning: 0,
    }
}

/// Usage of the assistant messages in the session's context, oldest first.
fn reply_usages(session: &AgentSession) -> Vec<Usage> {
    session
        .messages()
        .iter()
        .filter_map(AgentMessage::as_assistant)
        .map(|a| a.usage)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_adds_output_but_reports_the_prompt_side_of_the_last_call() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push_all([
        // A failed attempt reports nothing and must not disturb the sums.
        Script::http_error(429),
        Script::tool_call("big", json!({"size": 10})).with_full_usage(usage(1_200, 40, 9_000, 0)),
        Script::text("all done").with_full_usage(usage(150, 25, 10_500, 300)),
    ]);
    let store = profiles(&[("a", KEY_A), ("b", KEY_B)]);
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "use the tool", &store, fast_config())).await;

    assert!(result.is_ok(), "{:?}", result.meta.error);
    assert_eq!(result.text(), "all done");
    assert_eq!(
        attempt_log(&result),
        [
            (Some("a".into()), Some(FailureKind::RateLimit)),
            (Some("b".into()), None)
        ]
    );
    assert_eq!(env.server.requests().len(), 3);
    assert_eq!(
        roles(&session),
        ["user", "assistant", "toolResult", "assistant"]
    );
    // What the provider layer made of the two reports (it reads cache writes as part of
    // the cached tokens on this wire, so they are taken from the messages themselves).
    let calls = reply_usages(&session);
    assert_eq!(calls.len(), 2);
    let (first, last) = (&calls[0], &calls[1]);
    assert_eq!(
        (first.input, first.cache_read, first.cache_write),
        (1_200, 9_000, 0)
    );
    assert_ne!(first.cache_read, last.cache_read);
    assert_ne!(first.cache_write, last.cache_write);
    assert!(last.cache_write > 0);

    let reported = result.usage.expect("usage reported");
    let last_prompt = last.input + last.cache_read + last.cache_write;
    assert_eq!(
        reported,
        RunUsage {
            // Seed 004 §1: input, cache read and cache write come from the last call only.
            input: last.input,
            output: 65,
            cache_read: last.cache_read,
            cache_write: last.cache_write,
            total: last_prompt + 65,
        }
    );
    assert_eq!(last_prompt, 150 + 10_500 + 300);
    // Summing the calls would count the context twice.
    let naive: u64 = calls.iter().map(|u| u.total_tokens).sum();
    assert!(
        naive > reported.total + 10_000,
        "{naive} vs {}",
        reported.total
    );
    assert_no_secrets(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_usage_reports_none() {
    let env = Env::new(128_000, json!({})).await;
    env.server.push(Script::http_error(400));
    let session = env.session("mock-model", ThinkingLevel::Off);

    let result = run_embedded(params(&session, "hi", &profiles(&[]), fast_config())).await;

    assert_eq!(result.meta.error.map(|e| e.kind), Some(FailureKind::Other));
    assert_eq!(result.usage, None);
}

/// Runs one prompt in `mode` and returns the system text the provider got.
async fn system_prompt_of(env: &Env, session: &AgentSession, mode: Option<PromptMode>) -> String {
    env.server.clear_requests();
    let mut params = params(session, "hello", &profiles(&[]), fast_config());
    params.prompt_mode = mode;
    params.context_files = vec![ContextFile {
        path: env.work.join("AGENTS.md"),
        content: "CONTEXT-FILE-RULE: use tabs.".into(),
    }];
    let result = run_embedded(params).await;
    assert!(result.is_ok(), "{:?}", result.meta.error);
    // The run's prompt is the run's only: the session's own is back afterwards.
    assert_eq!(session.agent().state().system_prompt, SESSION_PROMPT);
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    system_text(&requests[0])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_modes_send_the_documented_system_prompts() {
    let env = Env::new(128_000, json!({})).await;
    let session = env.session("mock-model", ThinkingLevel::Off);

    let none = system_prompt_of(&env, &session, Some(PromptMode::None)).await;
    assert_eq!(none, IDENTITY_LINE);
    assert!(!none.contains('\n'), "one line");

    let minimal = system_prompt_of(&env, &session, Some(PromptMode::Minimal)).await;
    assert!(minimal.starts_with(IDENTITY_LINE));
    for section in ["## Tooling", "## Safety", "## Workspace", "## Runtime"] {
        assert!(minimal.contains(section), "{section} in {minimal}");
    }
    assert!(minimal.contains("- big"), "the run's tools are listed");
    assert!(minimal.contains(&env.work.display().to_string()));
    assert!(minimal.contains("Model: mock/mock-model"));
    assert!(
        !minimal.contains("CONTEXT-FILE-RULE"),
        "context files are full-mode only"
    );
    assert!(!minimal.contains(SESSION_PROMPT));

    let full = system_prompt_of(&env, &session, Some(PromptMode::Full)).await;
    assert!(
        full.contains("You are an expert coding assistant"),
        "{full}"
    );
    assert!(full.contains("CONTEXT-FILE-RULE: use tabs."));
    assert!(full.contains("## Safety") && full.contains("## Runtime"));
    assert!(full.contains("Model: mock/mock-model"));
    assert!(full.len() > minimal.len() && minimal.len() > none.len());

    // Without a mode the session's own prompt goes out unchanged.
    let own = system_prompt_of(&env, &session, None).await;
    assert_eq!(own, SESSION_PROMPT);
}
