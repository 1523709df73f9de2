//! What the Responses APIs send: the body layout, system messages and reasoning levels, Codex
//! and Azure bodies, headers and URLs, session cache keys, foreign thinking and tool-call ids
//! from other models, images, payload hooks and header overrides.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use mock_llm::Script;
use pi_ai::providers::openai_responses;
use pi_ai::{
    AssistantBlock, CacheRetention, ImageContent, InputBlock, InputKind, Message, Model,
    OpenAiResponsesOptions, TextContent, ThinkingLevel, UserMessage, api,
};
use serde_json::{Value, json};

use common::responses::{
    ACCOUNT_ID, ALL, Api, api_id, codex_token, input, model, options, provider_id, sent, simple,
    tool_result,
};
use common::{context, keys, read_call, read_tool, server, tool_use_turn};

#[tokio::test]
/// pi 1.3: another model's thinking is dropped, neither replayed as reasoning nor as text.
async fn foreign_thinking_is_left_out() {
    for which in ALL {
        let mut ctx = context("q");
        let mut thinking = pi_ai::ThinkingContent::new("Claude thought.");
        thinking.thinking_signature = Some("sig-anthropic".into());
        ctx.messages.push(tool_use_turn(
            "anthropic-messages",
            "anthropic",
            "claude",
            vec![
                AssistantBlock::Thinking(thinking),
                AssistantBlock::Text(TextContent::new("Claude said.")),
                AssistantBlock::Text(TextContent::new("And more.")),
            ],
        ));
        ctx.messages.push(Message::User(UserMessage::text("next")));
        let (body, _) = sent(which, |_| {}, &ctx, simple(which, None)).await;
        let items = input(&body);
        assert!(!items.iter().any(|i| i["type"] == "reasoning"), "{body}");
        let texts: Vec<&Value> = items.iter().filter(|i| i["type"] == "message").collect();
        assert_eq!(texts.len(), 2, "{body}");
        assert_eq!(texts[0]["content"][0]["text"], "Claude said.");
        // Unique fallback ids for texts without their own (pi 0.77.0; pi-ai 1.6's form).
        assert_eq!(texts[0]["id"], "msg_pi_1");
        assert_eq!(texts[1]["id"], "msg_pi_1_1");
        assert!(!body.to_string().contains("Claude thought."), "{body}");
    }
}

#[tokio::test]
async fn images_in_user_messages_and_tool_results() {
    let image = ImageContent::new("iVBORw0KGgo=", "image/png");
    let data_url = "data:image/png;base64,iVBORw0KGgo=";
    for which in ALL {
        let mut ctx = context("unused");
        ctx.messages = vec![Message::User(UserMessage::blocks(vec![
            InputBlock::Text(TextContent::new("What is this?")),
            InputBlock::Image(image.clone()),
        ]))];
        ctx.messages.push(tool_use_turn(
            api_id(which),
            provider_id(which),
            "gpt-mock",
            vec![
                read_call("call_1|fc_1", "a.png"),
                read_call("call_2|fc_2", "b.png"),
            ],
        ));
        ctx.messages.push(tool_result(
            "call_1|fc_1",
            vec![
                InputBlock::text("an image"),
                InputBlock::Image(image.clone()),
            ],
        ));
        ctx.messages.push(tool_result(
            "call_2|fc_2",
            vec![InputBlock::Image(image.clone())],
        ));
        let (body, _) = sent(which, |_| {}, &ctx, simple(which, None)).await;
        let items = input(&body);
        let user = items.iter().find(|i| i["role"] == "user").unwrap();
        assert_eq!(
            user["content"],
            json!([{"type": "input_text", "text": "What is this?"},
                   {"type": "input_image", "detail": "auto", "image_url": data_url}])
        );
        let outputs: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .collect();
        assert_eq!(
            outputs[0]["output"],
            json!([{"type": "input_text", "text": "an image"},
                   {"type": "input_image", "detail": "auto", "image_url": data_url}])
        );
        assert_eq!(
            outputs[1]["output"],
            json!([{"type": "input_image", "detail": "auto", "image_url": data_url}])
        );

        // A text-only model gets placeholders instead.
        let (body, _) = sent(
            which,
            |m| m.input = vec![InputKind::Text],
            &ctx,
            simple(which, None),
        )
        .await;
        let text = body.to_string();
        assert!(!text.contains("iVBORw0KGgo="), "{which:?}");
        assert!(text.contains("(image omitted: model does not support images)"));
        assert!(text.contains("(tool image omitted: model does not support images)"));
    }
}

/// Fields of Chat Completions that must never appear in a Responses body.
const CHAT_FIELDS: [&str; 6] = [
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "stream_options",
    "functions",
    "n",
];

#[tokio::test]
async fn openai_body_layout() {
    let mut ctx = context("read hello.txt");
    ctx.messages.push(tool_use_turn(
        api::OPENAI_RESPONSES,
        "openai",
        "gpt-mock",
        vec![read_call("call_abc|fc_abc", "hello.txt")],
    ));
    ctx.messages.push(tool_result(
        "call_abc|fc_abc",
        vec![InputBlock::text("Hello from the file!\n")],
    ));
    let (body, headers) = sent(Api::OpenAi, |_| {}, &ctx, simple(Api::OpenAi, None)).await;
    assert_eq!(
        keys(&body),
        [
            "model",
            "input",
            "stream",
            "store",
            "max_output_tokens",
            "tools",
            "reasoning"
        ]
    );
    assert_eq!(body["model"], "gpt-mock");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert_eq!(body["max_output_tokens"], 16384);
    // A reasoning model without a level is asked for no reasoning.
    assert_eq!(body["reasoning"], json!({"effort": "none"}));
    assert_eq!(
        body["tools"],
        // pi-ai 1.6: no `strict` unless the model's compat says strict mode is supported.
        json!([{"type": "function", "name": "read", "description": "Read a file",
            "parameters": read_tool().parameters}])
    );
    assert_eq!(
        *input(&body),
        vec![
            json!({"role": "developer", "content": "You are a test."}),
            json!({"role": "user", "content": [{"type": "input_text", "text": "read hello.txt"}]}),
            json!({"type": "function_call", "id": "fc_abc", "call_id": "call_abc", "name": "read",
                "arguments": "{\"path\":\"hello.txt\"}"}),
            json!({"type": "function_call_output", "call_id": "call_abc",
                "output": "Hello from the file!\n"}),
        ]
    );
    for field in CHAT_FIELDS {
        assert!(body.get(field).is_none(), "{field}");
    }
    assert_eq!(headers["authorization"], "Bearer test-key");
    assert_eq!(headers["content-type"], "application/json");
    assert!(!headers.contains_key("session-id"));
}

#[tokio::test]
async fn non_reasoning_models_get_a_system_message_and_no_reasoning() {
    for which in [Api::OpenAi, Api::Azure] {
        let (body, _) = sent(
            which,
            |m| m.reasoning = false,
            &context("hi"),
            simple(which, Some(ThinkingLevel::High)),
        )
        .await;
        assert_eq!(
            input(&body)[0],
            json!({"role": "system", "content": "You are a test."})
        );
        assert!(body.get("reasoning").is_none());
        assert!(body.get("include").is_none());
    }
}

#[tokio::test]
async fn reasoning_levels_and_maps() {
    let off_unsupported = |m: &mut Model| {
        m.thinking_level_map = Some(BTreeMap::from([
            (ThinkingLevel::Off, None),
            (ThinkingLevel::Xhigh, Some("xhigh".into())),
            (ThinkingLevel::Minimal, Some("low".into())),
        ]));
    };
    for which in [Api::OpenAi, Api::Azure] {
        // A model that cannot turn reasoning off gets no reasoning field without a level.
        let (body, _) = sent(which, off_unsupported, &context("hi"), simple(which, None)).await;
        assert!(body.get("reasoning").is_none(), "{which:?}: {body}");
        let (body, _) = sent(
            which,
            off_unsupported,
            &context("hi"),
            simple(which, Some(ThinkingLevel::Minimal)),
        )
        .await;
        assert_eq!(
            body["reasoning"],
            json!({"effort": "low", "summary": "auto"})
        );
        // Without an xhigh mapping, xhigh clamps to high.
        let (body, _) = sent(
            which,
            |_| {},
            &context("hi"),
            simple(which, Some(ThinkingLevel::Xhigh)),
        )
        .await;
        assert_eq!(body["reasoning"]["effort"], "high");
    }
    // A summary alone asks for medium effort.
    let mut opts = simple(Api::OpenAi, None);
    opts.stream.openai_responses = Some(OpenAiResponsesOptions {
        reasoning_summary: Some("detailed".into()),
        ..Default::default()
    });
    let (body, _) = sent(Api::OpenAi, |_| {}, &context("hi"), opts).await;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "detailed"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));

    // Codex: a reasoning model without a level asks for effort none (pi-ai 1.6); a level
    // uses the model's mapping.
    let (body, _) = sent(Api::Codex, |_| {}, &context("hi"), simple(Api::Codex, None)).await;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "none", "summary": "auto"})
    );
    let (body, _) = sent(
        Api::Codex,
        off_unsupported,
        &context("hi"),
        simple(Api::Codex, Some(ThinkingLevel::Minimal)),
    )
    .await;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "low", "summary": "auto"})
    );
    let server = server().await;
    server.push(Script::text("ok"));
    let mut opts = options(Api::Codex);
    opts.reasoning_effort = Some(ThinkingLevel::Off);
    let _ = pi_ai::complete(&model(&server, Api::Codex), &context("hi"), opts).await;
    let body = server.requests().pop().unwrap().body;
    assert_eq!(
        body["reasoning"],
        json!({"effort": "none", "summary": "auto"})
    );
}

#[tokio::test]
async fn codex_body_and_headers() {
    let mut opts = simple(Api::Codex, Some(ThinkingLevel::Medium));
    opts.stream.session_id = Some("sess-42".into());
    opts.stream.headers.insert("x-extra".into(), "1".into());
    opts.stream
        .headers
        .insert("authorization".into(), "Bearer ignored".into());
    opts.stream.temperature = Some(0.5);
    let (body, headers) = sent(Api::Codex, |_| {}, &context("hi"), opts).await;
    assert_eq!(
        keys(&body),
        [
            "model",
            "store",
            "stream",
            "input",
            "text",
            "include",
            "prompt_cache_key",
            "tool_choice",
            "parallel_tool_calls",
            "max_output_tokens",
            "temperature",
            "tools",
            "reasoning"
        ]
    );
    assert_eq!(body["store"], false);
    // pi-ai 1.6 sends the system prompt as the first input item, not as instructions.
    assert_eq!(
        *input(&body),
        vec![
            json!({"role": "developer", "content": "You are a test."}),
            json!({"role": "user", "content": [{"type": "input_text", "text": "hi"}]})
        ]
    );
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["prompt_cache_key"], "sess-42");
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["parallel_tool_calls"], true);
    assert_eq!(body["tools"][0]["strict"], Value::Null);
    assert_eq!(
        body["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    assert!(body["max_output_tokens"].as_u64().is_some_and(|m| m >= 16));
    for field in CHAT_FIELDS {
        assert!(body.get(field).is_none(), "{field}");
    }
    assert_eq!(
        headers["authorization"],
        format!("Bearer {}", codex_token())
    );
    assert_eq!(headers["chatgpt-account-id"], ACCOUNT_ID);
    assert_eq!(headers["originator"], "pi");
    assert_eq!(headers["openai-beta"], "responses=experimental");
    assert_eq!(headers["accept"], "text/event-stream");
    assert_eq!(headers["session-id"], "sess-42");
    assert_eq!(headers["x-client-request-id"], "sess-42");
    assert_eq!(headers["x-extra"], "1");
    // The client's user agent, as every provider's (pi-ai 1.6's identity headers).
    assert_eq!(headers["user-agent"], pi_ai::identity::user_agent());

    // No system prompt: no instructions at all, as pi-ai 1.6.
    let mut ctx = context("hi");
    ctx.system_prompt = None;
    let (body, _) = sent(Api::Codex, |_| {}, &ctx, simple(Api::Codex, None)).await;
    assert!(body.get("instructions").is_none());
    assert_eq!(
        *input(&body),
        vec![json!({"role": "user", "content": [{"type": "input_text", "text": "hi"}]})]
    );
}

#[tokio::test]
async fn azure_body_headers_and_url() {
    let mut opts = simple(Api::Azure, None);
    opts.stream.session_id = Some("sess-az".into());
    opts.stream.openai_responses = Some(OpenAiResponsesOptions {
        azure_deployment_name: Some("my-deployment".into()),
        ..Default::default()
    });
    let (body, headers) = sent(Api::Azure, |_| {}, &context("hi"), opts.clone()).await;
    assert_eq!(
        keys(&body),
        [
            "model",
            "input",
            "stream",
            "prompt_cache_key",
            "store",
            "max_output_tokens",
            "tools",
            "reasoning"
        ]
    );
    assert_eq!(body["model"], "my-deployment");
    assert_eq!(body["prompt_cache_key"], "sess-az");
    assert_eq!(body["store"], false);
    assert_eq!(headers["api-key"], "test-key");
    assert!(!headers.contains_key("authorization"));
    assert!(!headers.contains_key("session-id"));

    let m = model(&server().await, Api::Azure);
    let request = openai_responses::azure::build_request(
        &m,
        &context("hi"),
        &opts.stream,
        "test-key",
        &|_| None,
    )
    .unwrap();
    assert_eq!(
        request.url,
        format!("{}/responses?api-version=v1", m.base_url)
    );
    let mut resource = m.clone();
    resource.base_url = "https://res.openai.azure.com".into();
    let env =
        |name: &str| (name == "AZURE_OPENAI_API_VERSION").then(|| "2025-04-01-preview".to_owned());
    let request =
        openai_responses::azure::build_request(&resource, &context("hi"), &opts.stream, "k", &env)
            .unwrap();
    assert_eq!(
        request.url,
        "https://res.openai.azure.com/openai/v1/responses?api-version=2025-04-01-preview"
    );
}

#[tokio::test]
async fn session_cache_key_and_headers_follow_retention() {
    let mut opts = simple(Api::OpenAi, None);
    opts.stream.session_id = Some("sess-1".into());
    opts.stream.cache_retention = Some(CacheRetention::Long);
    let (body, headers) = sent(Api::OpenAi, |_| {}, &context("hi"), opts.clone()).await;
    assert_eq!(body["prompt_cache_key"], "sess-1");
    assert_eq!(body["prompt_cache_retention"], "24h");
    assert_eq!(headers["session-id"], "sess-1");
    assert_eq!(headers["x-client-request-id"], "sess-1");

    opts.stream.cache_retention = Some(CacheRetention::None);
    let (body, headers) = sent(Api::OpenAi, |_| {}, &context("hi"), opts.clone()).await;
    assert!(body.get("prompt_cache_key").is_none());
    assert!(body.get("prompt_cache_retention").is_none());
    assert!(!headers.contains_key("session-id"));

    opts.stream.cache_retention = Some(CacheRetention::Short);
    let (body, headers) = sent(
        Api::OpenAi,
        |m| {
            m.compat = Some(pi_ai::ModelCompat {
                session_affinity_format: Some("openai-nosession".into()),
                ..Default::default()
            })
        },
        &context("hi"),
        opts,
    )
    .await;
    assert_eq!(body["prompt_cache_key"], "sess-1");
    assert!(body.get("prompt_cache_retention").is_none());
    assert!(!headers.contains_key("session-id"));
    assert_eq!(headers["x-client-request-id"], "sess-1");
}

#[tokio::test]
async fn tool_call_ids_from_other_models_are_normalized() {
    for which in ALL {
        let mut ctx = context("go");
        // From Anthropic: a plain id with characters the API rejects.
        ctx.messages.push(tool_use_turn(
            api::ANTHROPIC_MESSAGES,
            "anthropic",
            "claude",
            vec![read_call("toolu_01+abc/def", "a")],
        ));
        ctx.messages
            .push(tool_result("toolu_01+abc/def", vec![InputBlock::text("A")]));
        // From another model of the same API and provider: the fc_ item id is dropped.
        ctx.messages.push(tool_use_turn(
            api_id(which),
            provider_id(which),
            "gpt-other",
            vec![read_call("call_same|fc_same", "b")],
        ));
        ctx.messages.push(tool_result(
            "call_same|fc_same",
            vec![InputBlock::text("B")],
        ));
        // From another Responses API: the item id is hashed.
        let (other_api, other_provider) = if which == Api::OpenAi {
            (api::AZURE_OPENAI_RESPONSES, "azure-openai-responses")
        } else {
            (api::OPENAI_RESPONSES, "openai")
        };
        ctx.messages.push(tool_use_turn(
            other_api,
            other_provider,
            "gpt-mock",
            vec![read_call("call_x|fc_foreign", "c")],
        ));
        // ... and its result goes missing.
        ctx.messages
            .push(Message::User(UserMessage::text("continue")));
        let (body, _) = sent(which, |_| {}, &ctx, simple(which, None)).await;
        let items = input(&body);
        let calls: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call")
            .collect();
        let outputs: Vec<&Value> = items
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .collect();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0]["call_id"], "toolu_01_abc_def");
        assert!(calls[0].get("id").is_none());
        assert_eq!(calls[1]["call_id"], "call_same");
        assert!(calls[1].get("id").is_none(), "{which:?}: {}", calls[1]);
        assert_eq!(calls[2]["call_id"], "call_x");
        let hashed = calls[2]["id"].as_str().unwrap();
        assert!(
            hashed.starts_with("fc_") && hashed != "fc_foreign",
            "{hashed}"
        );
        let output_ids: Vec<&Value> = outputs.iter().map(|o| &o["call_id"]).collect();
        assert_eq!(
            output_ids,
            [
                &calls[0]["call_id"],
                &calls[1]["call_id"],
                &calls[2]["call_id"]
            ]
        );
        assert_eq!(outputs[2]["output"], "No result provided");
    }
}

#[tokio::test]
async fn payload_hook_and_header_overrides_apply() {
    let mut opts = simple(Api::OpenAi, None);
    opts.stream.on_payload = Some(std::sync::Arc::new(|_model: &Model, body: &mut Value| {
        body["metadata"] = json!({"trace": "t-1"});
    }));
    opts.stream.headers.insert("x-custom".into(), "yes".into());
    let (body, headers) = sent(
        Api::OpenAi,
        |m| m.headers = Some(BTreeMap::from([("x-model".to_owned(), "m".to_owned())])),
        &context("hi"),
        opts,
    )
    .await;
    assert_eq!(body["metadata"], json!({"trace": "t-1"}));
    assert_eq!(headers["x-custom"], "yes");
    assert_eq!(headers["x-model"], "m");
}

#[tokio::test]
async fn tool_choice_is_sent_on_every_responses_api() {
    // pi-ai 0.80.7 / 0.84.3: OpenAI, Azure and Codex Responses take `toolChoice` as given
    // (a named tool as `{type: "function", name}`); Codex sends `auto` without one.
    let choices = [
        (pi_ai::ToolChoice::Auto, json!("auto")),
        (pi_ai::ToolChoice::None, json!("none")),
        (pi_ai::ToolChoice::Required, json!("required")),
        (
            pi_ai::ToolChoice::Tool("read".into()),
            json!({"type": "function", "name": "read"}),
        ),
    ];
    for which in ALL {
        for (choice, expected) in &choices {
            let mut opts = simple(which, None);
            opts.stream.tool_choice = Some(choice.clone());
            let (body, _) = sent(which, |_| {}, &context("hi"), opts).await;
            assert_eq!(body["tool_choice"], *expected, "{which:?} {choice:?}");
            let order = keys(&body);
            let at = |key: &str| order.iter().position(|k| *k == key);
            // Where pi-ai puts it: after the tools, or (Codex) in place of its `auto`.
            let after = if which == Api::Codex {
                "include"
            } else {
                "tools"
            };
            assert_eq!(
                at("tool_choice"),
                at(after).map(|i| i + 1),
                "{which:?}: {order:?}"
            );
        }
        let (body, _) = sent(which, |_| {}, &context("hi"), simple(which, None)).await;
        let default = (which == Api::Codex).then(|| json!("auto"));
        assert_eq!(body.get("tool_choice").cloned(), default, "{which:?}");
    }
}
