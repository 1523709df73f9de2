//! Compaction and branch summaries against mock-llm: the request holds the summarization
//! prompt and the serialized conversation; the result holds the reply and the file lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use mock_llm::{Fault, MockServer, RecordedRequest, Script};
use pi_ai::{InputKind, Model, ModelCost, ThinkingLevel, api};
use pi_coding_agent::compaction::summarize::{
    SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
};
use pi_coding_agent::compaction::{
    CompactionError, CompactionSettings, GenerateBranchSummaryOptions, branch_summary, compact,
    generate_branch_summary, prepare_compaction,
};
use pi_coding_agent::model_registry::RequestAuth;
use pi_coding_agent::session::{EntryKind, SessionEntry};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn server() -> MockServer {
    MockServer::start().await.expect("mock server starts")
}

fn model(server: &MockServer, anthropic: bool, reasoning: bool) -> Model {
    let (api, base_url) = if anthropic {
        (api::ANTHROPIC_MESSAGES, server.anthropic_base_url())
    } else {
        (api::OPENAI_COMPLETIONS, server.openai_base_url())
    };
    Model {
        id: "mock-model".into(),
        name: "Mock Model".into(),
        api: api.into(),
        provider: "mock".into(),
        base_url,
        reasoning,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

fn auth() -> RequestAuth {
    RequestAuth {
        api_key: Some("test-key".into()),
        headers: BTreeMap::from([("x-compaction-test".to_owned(), "yes".to_owned())]),
        ..RequestAuth::default()
    }
}

fn entry(id: &str, parent: Option<&str>, message: Value) -> SessionEntry {
    SessionEntry {
        id: id.into(),
        parent_id: parent.map(str::to_owned),
        timestamp: "2025-01-01T00:00:00.000Z".into(),
        kind: EntryKind::Message {
            message: serde_json::from_value(message).unwrap(),
        },
    }
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text, "timestamp": 1})
}

fn assistant_text(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}],
        "api": "openai-completions", "provider": "mock", "model": "mock-model",
        "stopReason": "stop", "timestamp": 1})
}

fn tool_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"role": "assistant", "content": [{"type": "toolCall", "id": id, "name": name, "arguments": arguments}],
        "api": "openai-completions", "provider": "mock", "model": "mock-model",
        "stopReason": "toolUse", "timestamp": 1})
}

fn tool_result(id: &str, name: &str, text: &str) -> Value {
    json!({"role": "toolResult", "toolCallId": id, "toolName": name,
        "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 1})
}

/// Builds a linked path from messages, ids `e0`, `e1`, …
fn path(messages: Vec<Value>) -> Vec<SessionEntry> {
    let mut entries = Vec::new();
    for (i, message) in messages.into_iter().enumerate() {
        let parent = (i > 0).then(|| format!("e{}", i - 1));
        entries.push(entry(&format!("e{i}"), parent.as_deref(), message));
    }
    entries
}

/// Every string in a JSON value.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The request text that holds the transcript.
fn request_text(request: &RecordedRequest) -> String {
    let mut all = Vec::new();
    strings(&request.body, &mut all);
    all.into_iter()
        .find(|s| s.starts_with("<conversation>\n") || s.starts_with("# Conversation\n"))
        .unwrap_or_else(|| panic!("no transcript in {}", request.body))
}

fn has_string(request: &RecordedRequest, wanted: &str) -> bool {
    let mut all = Vec::new();
    strings(&request.body, &mut all);
    all.iter().any(|s| s == wanted)
}

fn max_tokens(request: &RecordedRequest) -> Option<u64> {
    ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|key| request.body.get(key).and_then(Value::as_u64))
}

fn big(label: &str) -> String {
    format!("{label} {}", "x".repeat(400))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_sends_prompt_and_transcript_and_appends_file_lists() {
    for anthropic in [false, true] {
        let server = server().await;
        server.push(Script::text("## Goal\nFix the parser."));
        let entries = path(vec![
            user(&big("Please fix src/parser.rs")),
            tool_call("c1", "read", json!({"path": "src/parser.rs"})),
            tool_result("c1", "read", "fn parse() {}"),
            tool_call("c2", "read", json!({"path": "README.md"})),
            tool_result("c2", "read", &"r".repeat(2100)),
            tool_call(
                "c3",
                "edit",
                json!({"path": "src/parser.rs", "oldText": "a", "newText": "b"}),
            ),
            tool_result("c3", "edit", "Edited"),
            assistant_text("Fixed it."),
            user(&big("Now add tests")),
            assistant_text(&big("Added")),
        ]);
        let settings = CompactionSettings {
            keep_recent_tokens: 150,
            ..CompactionSettings::default()
        };
        let preparation = prepare_compaction(&entries, &settings).unwrap();
        assert_eq!(preparation.first_kept_entry_id, "e8");
        assert!(!preparation.is_split_turn);

        let model = model(&server, anthropic, false);
        let result = compact(
            &preparation,
            &model,
            &auth(),
            Some("the parser"),
            None,
            CancellationToken::new(),
            None,
        )
        .await
        .unwrap();

        assert_eq!(
            result.summary,
            "## Goal\nFix the parser.\n\n<read-files>\nREADME.md\n</read-files>\n\n\
             <modified-files>\nsrc/parser.rs\n</modified-files>"
        );
        assert_eq!(result.first_kept_entry_id, "e8");
        assert_eq!(result.tokens_before, preparation.tokens_before);
        assert_eq!(result.details.read_files, ["README.md"]);
        assert_eq!(result.details.modified_files, ["src/parser.rs"]);
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(
            wire.as_object().unwrap().keys().collect::<Vec<_>>(),
            // pi 1.6's order; `estimatedTokensAfter` comes once the session saved it.
            [
                "summary",
                "firstKeptEntryId",
                "tokensBefore",
                "usage",
                "details"
            ]
        );
        assert_eq!(
            wire["details"],
            json!({"readFiles": ["README.md"], "modifiedFiles": ["src/parser.rs"]})
        );

        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        let request = &requests[0];
        assert_eq!(
            request.headers.get("x-compaction-test").map(String::as_str),
            Some("yes")
        );
        assert!(
            has_string(request, SUMMARIZATION_SYSTEM_PROMPT),
            "{anthropic}"
        );
        // No cap of its own (pi 1.6.0): the model's.
        assert_eq!(max_tokens(request), Some(16_384), "{anthropic}");
        let text = request_text(request);
        let expected_start = format!(
            "<conversation>\n[User]: {}\n\n[Assistant tool calls]: read(path=\"src/parser.rs\")\n\n\
             [Tool result]: fn parse() {{}}\n\n[Assistant tool calls]: read(path=\"README.md\")\n\n\
             [Tool result]: {}\n\n[... 100 more characters truncated]\n\n\
             [Assistant tool calls]: edit(path=\"src/parser.rs\", oldText=\"a\", newText=\"b\")\n\n\
             [Tool result]: Edited\n\n[Assistant]: Fixed it.\n</conversation>\n\n",
            big("Please fix src/parser.rs"),
            "r".repeat(2000)
        );
        assert_eq!(
            text,
            format!(
                "{expected_start}{SUMMARIZATION_PROMPT}\n\nAlso pay particular attention to: the parser"
            )
        );
        assert!(!text.contains("Now add tests"));
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_split_turn_with_previous_summary_makes_two_calls_and_merges() {
    let server = server().await;
    // No scripts: mock-llm echoes "ok: <prompt>", so each part shows which request it answers.
    let mut entries = path(vec![
        user("old question"),
        assistant_text("old answer"),
        user("second question"),
        assistant_text("second answer"),
        user("Refactor everything"),
        tool_call(
            "c1",
            "write",
            json!({"path": "src/new.rs", "content": big("body")}),
        ),
        tool_result("c1", "write", &big("Wrote")),
        tool_call("c2", "read", json!({"path": "src/other.rs"})),
        tool_result("c2", "read", &big("contents")),
        assistant_text("Done refactoring"),
    ]);
    // A compaction after the first exchange that kept from e2.
    let compaction = SessionEntry {
        id: "c".into(),
        parent_id: Some("e1".into()),
        timestamp: "2025-01-01T00:00:00.000Z".into(),
        kind: EntryKind::Compaction {
            summary: "Earlier summary".into(),
            first_kept_entry_id: "e2".into(),
            tokens_before: 500,
            details: Some(json!({"readFiles": ["docs/old.md"], "modifiedFiles": []})),
            usage: None,
            from_hook: None,
            system_message: None,
        },
    };
    entries.insert(2, compaction);
    entries[3].parent_id = Some("c".into());
    let settings = CompactionSettings {
        keep_recent_tokens: 150,
        ..CompactionSettings::default()
    };
    let preparation = prepare_compaction(&entries, &settings).unwrap();
    assert!(preparation.is_split_turn);
    assert_eq!(preparation.first_kept_entry_id, "e7");
    assert_eq!(
        preparation.previous_summary.as_deref(),
        Some("Earlier summary")
    );

    let model = model(&server, false, false);
    let result = compact(
        &preparation,
        &model,
        &auth(),
        None,
        None,
        CancellationToken::new(),
        None,
    )
    .await
    .unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let history = requests
        .iter()
        .find(|r| request_text(r).ends_with(UPDATE_SUMMARIZATION_PROMPT))
        .expect("history request");
    let prefix = requests
        .iter()
        .find(|r| request_text(r).ends_with(TURN_PREFIX_SUMMARIZATION_PROMPT))
        .expect("turn prefix request");
    let history_text = request_text(history);
    assert_eq!(
        history_text,
        format!(
            "<conversation>\n[User]: second question\n\n[Assistant]: second answer\n</conversation>\n\n\
             <previous-summary>\nEarlier summary\n</previous-summary>\n\n{UPDATE_SUMMARIZATION_PROMPT}"
        )
    );
    assert_eq!(max_tokens(history), Some(16_384));
    let prefix_text = request_text(prefix);
    // A split turn's prefix is laid out as pi 1.6.0 lays it out.
    assert!(prefix_text.starts_with("# Conversation\n[User]: Refactor everything\n\n[Assistant tool calls]: write(path=\"src/new.rs\""));
    assert!(prefix_text.contains("[Tool result]: Wrote"));
    assert!(!prefix_text.contains("src/other.rs"));
    assert_eq!(max_tokens(prefix), Some(16_384));

    let (history_part, rest) = result
        .summary
        .split_once("\n\n---\n\n**Turn Context (split turn):**\n\n")
        .expect("merged summary");
    assert_eq!(history_part, format!("ok: {history_text}"));
    assert_eq!(
        rest,
        format!(
            "ok: {prefix_text}\n\n<read-files>\ndocs/old.md\n</read-files>\n\n\
             <modified-files>\nsrc/new.rs\n</modified-files>"
        )
    );
    assert_eq!(result.details.read_files, ["docs/old.md"]);
    assert_eq!(result.details.modified_files, ["src/new.rs"]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_thinking_level_reaches_reasoning_models_only() {
    let server = server().await;
    let entries = path(vec![
        user(&big("q1")),
        assistant_text(&big("a1")),
        user(&big("q2")),
    ]);
    let settings = CompactionSettings {
        keep_recent_tokens: 50,
        ..CompactionSettings::default()
    };
    let preparation = prepare_compaction(&entries, &settings).unwrap();
    for (reasoning, level, enabled) in [
        (true, Some(ThinkingLevel::High), true),
        (true, Some(ThinkingLevel::Off), false),
        (false, Some(ThinkingLevel::High), false),
    ] {
        server.clear_requests();
        server.push(Script::text("summary"));
        let model = model(&server, true, reasoning);
        compact(
            &preparation,
            &model,
            &auth(),
            None,
            level,
            CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
        let body = &server.requests()[0].body;
        let thinking_enabled = body.pointer("/thinking/type") == Some(&json!("enabled"))
            || body.pointer("/thinking/type") == Some(&json!("adaptive"));
        assert_eq!(thinking_enabled, enabled, "{reasoning} {level:?}: {body}");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_cancellation_and_provider_errors() {
    let server = server().await;
    let entries = path(vec![
        user(&big("q1")),
        assistant_text(&big("a1")),
        user(&big("q2")),
    ]);
    let settings = CompactionSettings {
        keep_recent_tokens: 50,
        ..CompactionSettings::default()
    };
    let preparation = prepare_compaction(&entries, &settings).unwrap();
    let model = model(&server, false, false);

    // The reply stalls for far longer than any test runs, and the call is cancelled once
    // the request arrived: no race between two timers decides the outcome.
    server.push(Script::text("slow summary").with_fault(Fault::stall(1, 3_600_000)));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let requests_before = server.requests().len();
    let watcher = server.clone();
    tokio::spawn(async move {
        while watcher.requests().len() == requests_before {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        trigger.cancel();
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        compact(&preparation, &model, &auth(), None, None, cancel, None),
    )
    .await
    .expect("cancellation ends the call");
    assert_eq!(outcome.unwrap_err(), CompactionError::Aborted);

    server.push(Script::http_error(400));
    let err = compact(
        &preparation,
        &model,
        &auth(),
        None,
        None,
        CancellationToken::new(),
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, CompactionError::Summarization(_)), "{err:?}");
    assert!(
        err.to_string().starts_with("Summarization failed: "),
        "{err}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_branch_summary_has_preamble_reply_and_files() {
    let server = server().await;
    server.push(Script::text("## Goal\nTry another approach."));
    let entries = path(vec![
        user("try approach B"),
        tool_call(
            "c1",
            "edit",
            json!({"path": "src/b.rs", "oldText": "x", "newText": "y"}),
        ),
        tool_result("c1", "edit", "secret tool output"),
        tool_call("c2", "read", json!({"path": "src/c.rs"})),
        tool_result("c2", "read", "c"),
        assistant_text("B works"),
    ]);
    let model = model(&server, false, false);
    let auth = auth();
    let mut options = GenerateBranchSummaryOptions::new(&model, &auth, CancellationToken::new());
    options.custom_instructions = Some("only the outcome");
    let result = generate_branch_summary(&entries, &options).await.unwrap();
    assert_eq!(
        result.summary,
        format!(
            "{}## Goal\nTry another approach.\n\n<read-files>\nsrc/c.rs\n</read-files>\n\n\
             <modified-files>\nsrc/b.rs\n</modified-files>",
            branch_summary::BRANCH_SUMMARY_PREAMBLE
        )
    );
    assert_eq!(result.read_files, ["src/c.rs"]);
    assert_eq!(result.modified_files, ["src/b.rs"]);

    let request = &server.requests()[0];
    assert_eq!(max_tokens(request), Some(16_384));
    let text = request_text(request);
    // Tool results are left out of branch summaries.
    assert_eq!(
        text,
        format!(
            "<conversation>\n[User]: try approach B\n\n\
             [Assistant tool calls]: edit(path=\"src/b.rs\", oldText=\"x\", newText=\"y\")\n\n\
             [Assistant tool calls]: read(path=\"src/c.rs\")\n\n[Assistant]: B works\n</conversation>\n\n\
             {}\n\nAlso pay particular attention to: only the outcome",
            branch_summary::BRANCH_SUMMARY_PROMPT
        )
    );

    server.push(Script::text("custom only"));
    options.replace_instructions = true;
    generate_branch_summary(&entries, &options).await.unwrap();
    let text = request_text(&server.requests()[1]);
    assert!(
        text.ends_with("</conversation>\n\nonly the outcome"),
        "{text}"
    );
    server.shutdown().await;
}
