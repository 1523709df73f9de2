//! What the Google providers send, checked against the documented API shapes: the Gemini
//! body, thinking levels per model, Cloud Code Assist's wrapping (and Claude behind it),
//! images, payload hooks and headers, and credentials kept out of debug output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use mock_llm::Script;
use pi_ai::{
    AssistantBlock, AssistantMessage, Context, ImageContent, InputBlock, InputKind, Message,
    StopReason, TextContent, ThinkingLevel, Tool, ToolCall, ToolChoice, ToolResultMessage,
    UserMessage, api,
};
use serde_json::{Value, json};

use common::google::{
    ALL, Api, context, inner, model, model_with_id, options, read_tool, run_script, simple,
    simple_body,
};
use common::{collect, keys, server};

#[tokio::test]
async fn gemini_body_has_the_documented_shape() {
    let server = server().await;
    let m = model(&server, Api::Gemini);
    let mut opts = simple(Api::Gemini, None);
    opts.stream.temperature = Some(0.5);
    opts.stream.tool_choice = Some(ToolChoice::Required);
    let body = simple_body(Api::Gemini, &m, &context("hello"), opts).await;
    assert_eq!(
        keys(&body),
        [
            "contents",
            "systemInstruction",
            "tools",
            "toolConfig",
            "generationConfig"
        ]
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "hello"}]}])
    );
    assert_eq!(
        body["systemInstruction"],
        json!({"role": "user", "parts": [{"text": "You are a test."}]})
    );
    // Full JSON Schema in `parametersJsonSchema`, without document keywords.
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations": [{
            "name": "read",
            "description": "Read a file",
            "parametersJsonSchema": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"path": {"type": "string"}, "offset": {"type": ["integer", "null"]}},
                "required": ["path"]
            }
        }]}])
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY"}})
    );
    // maxOutputTokens defaults to the model's (capped at 32 000); thinking off is explicit.
    assert_eq!(
        body["generationConfig"],
        json!({"temperature": 0.5, "maxOutputTokens": 16384, "thinkingConfig": {"thinkingBudget": 0}})
    );
}

#[tokio::test]
async fn thinking_levels_map_per_model() {
    struct Case {
        which: Api,
        id: &'static str,
        level: Option<ThinkingLevel>,
        expected: Value,
    }
    let cases = [
        Case {
            which: Api::Gemini,
            id: "gemini-2.5-flash",
            level: Some(ThinkingLevel::High),
            expected: json!({"includeThoughts": true, "thinkingBudget": 24576}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-2.5-pro",
            level: Some(ThinkingLevel::Xhigh),
            expected: json!({"includeThoughts": true, "thinkingBudget": 32768}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-2.5-flash-lite",
            level: Some(ThinkingLevel::Minimal),
            expected: json!({"includeThoughts": true, "thinkingBudget": 512}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-2.5-flash-lite",
            level: Some(ThinkingLevel::Minimal),
            expected: json!({"includeThoughts": true, "thinkingBudget": 128}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-3-pro-preview",
            level: Some(ThinkingLevel::Medium),
            // No `thinkingLevelMap`: the level itself, as pi-ai 1.6 (the catalog's entries map).
            expected: json!({"includeThoughts": true, "thinkingLevel": "MEDIUM"}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-3-flash-preview",
            level: Some(ThinkingLevel::Low),
            expected: json!({"includeThoughts": true, "thinkingLevel": "LOW"}),
        },
        Case {
            which: Api::Gemini,
            id: "gemma-4-31b-it",
            level: Some(ThinkingLevel::Low),
            expected: json!({"includeThoughts": true, "thinkingLevel": "LOW"}),
        },
        Case {
            which: Api::Vertex,
            id: "gemma-4-31b-it",
            level: Some(ThinkingLevel::Low),
            expected: json!({"includeThoughts": true, "thinkingLevel": "LOW"}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-3-pro-preview",
            level: None,
            // Off with no map: thinking can be turned off, a zero budget (pi-ai 1.6).
            expected: json!({"thinkingBudget": 0}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-3.1-flash-lite-preview",
            level: None,
            expected: json!({"thinkingBudget": 0}),
        },
        Case {
            which: Api::Gemini,
            id: "gemma-4-31b-it",
            level: None,
            expected: json!({"thinkingBudget": 0}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-2.5-pro",
            level: None,
            expected: json!({"thinkingBudget": 0}),
        },
        Case {
            which: Api::Cli,
            id: "gemini-3-pro-preview",
            level: Some(ThinkingLevel::Minimal),
            expected: json!({"includeThoughts": true, "thinkingLevel": "LOW"}),
        },
    ];
    let server = server().await;
    for case in cases {
        let m = model_with_id(&server, case.which, case.id);
        let body = simple_body(
            case.which,
            &m,
            &context("q"),
            simple(case.which, case.level),
        )
        .await;
        let config = &inner(case.which, &body)["generationConfig"]["thinkingConfig"];
        assert_eq!(
            config, &case.expected,
            "{:?} {} {:?}",
            case.which, case.id, case.level
        );
    }
    // A non-reasoning model gets no thinking config at all; custom budgets win.
    let mut plain = model_with_id(&server, Api::Gemini, "gemini-2.0-flash");
    plain.reasoning = false;
    let body = simple_body(
        Api::Gemini,
        &plain,
        &context("q"),
        simple(Api::Gemini, Some(ThinkingLevel::High)),
    )
    .await;
    assert_eq!(body["generationConfig"], json!({"maxOutputTokens": 16384}));
    let mut custom = simple(Api::Gemini, Some(ThinkingLevel::Low));
    custom.thinking_budgets = Some(pi_ai::ThinkingBudgets {
        low: Some(3000),
        ..Default::default()
    });
    let m = model(&server, Api::Gemini);
    let body = simple_body(Api::Gemini, &m, &context("q"), custom).await;
    assert_eq!(
        body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        3000
    );
    // `stream` without a reasoning effort leaves thinking to the model.
    let (_, request) = run_script(
        Api::Gemini,
        &m,
        &context("q"),
        Script::text("ok"),
        options(Api::Gemini),
    )
    .await;
    assert!(
        request.body.get("generationConfig").is_none(),
        "{}",
        request.body
    );
    let mut effort = options(Api::Gemini);
    effort.reasoning_effort = Some(ThinkingLevel::Medium);
    let (_, request) = run_script(Api::Gemini, &m, &context("q"), Script::text("ok"), effort).await;
    assert_eq!(
        request.body["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingBudget": 8192})
    );
}

#[tokio::test]
async fn cloud_code_assist_body_wraps_the_request() {
    let server = server().await;
    let m = model(&server, Api::Cli);
    let mut opts = simple(Api::Cli, Some(ThinkingLevel::High));
    opts.stream.session_id = Some("session-9".into());
    opts.stream.tool_choice = Some(ToolChoice::Tool("read".into()));
    let body = simple_body(Api::Cli, &m, &context("hello"), opts).await;
    assert_eq!(
        keys(&body),
        ["project", "model", "request", "userAgent", "requestId"]
    );
    assert_eq!(body["project"], "proj-1");
    assert_eq!(body["model"], "gemini-2.5-flash");
    assert_eq!(body["userAgent"], "pi-coding-agent");
    assert!(body["requestId"].as_str().unwrap().starts_with("pi-"));
    let request = &body["request"];
    assert_eq!(
        keys(request),
        [
            "contents",
            "sessionId",
            "systemInstruction",
            "generationConfig",
            "tools",
            "toolConfig"
        ]
    );
    assert_eq!(request["sessionId"], "session-9");
    // The system instruction is an object with parts (no role).
    assert_eq!(
        request["systemInstruction"],
        json!({"parts": [{"text": "You are a test."}]})
    );
    // Budget thinking on top of maxTokens, capped at the model's limit, leaving 1024 to answer.
    assert_eq!(
        request["generationConfig"],
        json!({"maxOutputTokens": 16384, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 15360}})
    );
    assert_eq!(
        request["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}})
    );
    assert!(
        request["tools"][0]["functionDeclarations"][0]
            .get("parametersJsonSchema")
            .is_some()
    );
    // Thinking off: no thinking config at all (as the TypeScript pi sends it).
    let body = simple_body(Api::Cli, &m, &context("q"), simple(Api::Cli, None)).await;
    assert_eq!(
        body["request"]["generationConfig"],
        json!({"maxOutputTokens": 16384})
    );
}

#[tokio::test]
async fn claude_behind_cloud_code_assist_gets_openapi_parameters_and_ids() {
    let server = server().await;
    let m = model_with_id(&server, Api::Cli, "claude-sonnet-4-5");
    let mut ctx = context("read it");
    ctx.tools.push(Tool {
        name: "pick".into(),
        description: "Pick".into(),
        parameters: json!({
            "type": "object",
            "$defs": {"Mode": {"type": "string", "enum": ["a", "b"]}},
            "properties": {"mode": {"$ref": "#/$defs/Mode"}, "n": {"type": "integer", "exclusiveMinimum": 0}},
            "additionalProperties": false
        }),
        constrained_sampling: None,
    });
    let mut foreign = AssistantMessage::empty(api::OPENAI_RESPONSES, "openai", "gpt-5");
    foreign.content = vec![AssistantBlock::ToolCall(ToolCall::new(
        "call_abc|fc_xyz+1",
        "read",
        serde_json::Map::new(),
    ))]
    .into();
    foreign.stop_reason = StopReason::ToolUse;
    ctx.messages.push(Message::Assistant(foreign.into()));
    ctx.messages.push(Message::ToolResult(
        ToolResultMessage {
            tool_call_id: "call_abc|fc_xyz+1".into(),
            tool_name: "read".into(),
            content: vec![InputBlock::text("contents")].into(),
            ..Default::default()
        }
        .into(),
    ));
    let (_, request) = run_script(Api::Cli, &m, &ctx, Script::text("ok"), options(Api::Cli)).await;
    let inner = &request.body["request"];
    let declarations = &inner["tools"][0]["functionDeclarations"];
    for declaration in declarations.as_array().unwrap() {
        assert!(declaration.get("parametersJsonSchema").is_none());
        let text = declaration["parameters"].to_string();
        assert!(
            !text.contains("$schema") && !text.contains("$defs") && !text.contains("$ref"),
            "{text}"
        );
        assert!(!text.contains("additionalProperties"), "{text}");
    }
    assert_eq!(
        declarations[1]["parameters"]["properties"]["mode"],
        json!({"type": "string", "enum": ["a", "b"]})
    );
    assert_eq!(
        declarations[0]["parameters"]["properties"]["offset"]["nullable"],
        true
    );
    // Claude needs ids, normalized to [a-zA-Z0-9_-].
    let contents = inner["contents"].as_array().unwrap();
    assert_eq!(
        contents[1]["parts"][0]["functionCall"]["id"],
        "call_abc_fc_xyz_1"
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["id"],
        "call_abc_fc_xyz_1"
    );
}

#[tokio::test]
async fn images_in_user_turns_and_tool_results() {
    let image = ImageContent::new("iVBORw0KGgo=", "image/png");
    let tool_round = |with_text: bool| {
        let mut ctx = Context {
            system_prompt: None,
            messages: vec![Message::User(UserMessage::blocks(vec![
                InputBlock::Text(TextContent::new("look")),
                InputBlock::Image(image.clone()),
            ]))],
            tools: vec![read_tool()],
            ..Default::default()
        };
        let mut assistant = AssistantMessage::empty(api::GOOGLE_GENERATIVE_AI, "google", "x");
        assistant.content = vec![AssistantBlock::ToolCall(ToolCall::new(
            "c1",
            "read",
            serde_json::Map::new(),
        ))]
        .into();
        assistant.stop_reason = StopReason::ToolUse;
        ctx.messages.push(Message::Assistant(assistant.into()));
        let mut content = vec![InputBlock::Image(image.clone())];
        if with_text {
            content.insert(0, InputBlock::text("a screenshot"));
        }
        ctx.messages.push(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                content: content.into(),
                ..Default::default()
            }
            .into(),
        ));
        ctx
    };
    let inline = json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}});
    let server = server().await;
    for which in ALL {
        // Gemini 2.x: the image follows in a separate user turn.
        let m = model_with_id(&server, which, "gemini-2.5-pro");
        let (_, request) = run_script(
            which,
            &m,
            &tool_round(false),
            Script::text("ok"),
            options(which),
        )
        .await;
        let contents = inner(which, &request.body)["contents"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(
            contents[0],
            json!({"role": "user", "parts": [{"text": "look"}, inline.clone()]})
        );
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [{"functionResponse": {"name": "read",
                "response": {"output": "(see attached image)"}}}]})
        );
        assert_eq!(
            contents[3],
            json!({"role": "user", "parts": [{"text": "Tool result image:"}, inline.clone()]})
        );
        // Gemini 3: the image is nested in the function response.
        let m = model_with_id(&server, which, "gemini-3-pro-preview");
        let (_, request) = run_script(
            which,
            &m,
            &tool_round(true),
            Script::text("ok"),
            options(which),
        )
        .await;
        let contents = inner(which, &request.body)["contents"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(contents.len(), 3, "{which:?}");
        // Gemini 3 also gets the tool call's id back (pi-ai 1.6).
        let id = contents[1]["parts"][0]["functionCall"]["id"].clone();
        assert!(id.is_string(), "{contents:#?}");
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [{"functionResponse": {"name": "read",
                "response": {"output": "a screenshot"}, "parts": [inline.clone()], "id": id}}]})
        );
    }
    // A text-only model gets placeholders instead of image data.
    let mut text_only = model_with_id(&server, Api::Gemini, "gemini-2.5-pro");
    text_only.input = vec![InputKind::Text];
    let (_, request) = run_script(
        Api::Gemini,
        &text_only,
        &tool_round(false),
        Script::text("ok"),
        options(Api::Gemini),
    )
    .await;
    let text = request.body.to_string();
    assert!(!text.contains("iVBORw0KGgo="), "{text}");
    assert!(text.contains("(image omitted: model does not support images)"));
    assert!(text.contains("(tool image omitted: model does not support images)"));
}

#[tokio::test]
async fn payload_hook_and_headers_apply_to_every_api() {
    for which in ALL {
        let server = server().await;
        let mut m = model(&server, which);
        m.headers = Some(BTreeMap::from([("x-model".to_owned(), "1".to_owned())]));
        let mut opts = options(which);
        opts.headers.insert("x-extra".into(), "2".into());
        opts.on_payload = Some(std::sync::Arc::new(|_model, body| {
            body["hooked"] = json!(true);
        }));
        server.push(Script::text("ok"));
        let events = collect(&m, &context("q"), opts).await;
        assert_eq!(events.last().unwrap().kind(), "done");
        let request = &server.requests()[0];
        assert_eq!(request.body["hooked"], true);
        assert_eq!(request.headers["x-model"], "1");
        assert_eq!(request.headers["x-extra"], "2");
    }
}

#[tokio::test]
async fn request_debug_output_hides_credentials() {
    let server = server().await;
    let m = model(&server, Api::Gemini);
    let request = pi_ai::providers::google::build_gemini_request(
        &m,
        &context("q"),
        &options(Api::Gemini),
        None,
        "AIza-secret-key",
    )
    .unwrap();
    assert!(
        request
            .url
            .ends_with("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    );
    let shown = format!("{request:?}");
    assert!(!shown.contains("secret"), "{shown}");
}
