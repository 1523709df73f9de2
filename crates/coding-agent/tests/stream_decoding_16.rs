//! What pi makes of server streams in the shapes the upstream ledger's decoder rows name,
//! compared whole with pi 1.6.0: the same raw stream from the mock model through our
//! `pi --mode rpc` and through 1.6.0 (`PI_TS16`) ends in the same assistant message (its
//! blocks in order, stop reason, error text and token counts). Without `PI_TS16` only our
//! side runs, against the expectations written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

/// `events` as an SSE body of `data:` lines, closed by `[DONE]` when `done`.
fn sse(events: &[Value], done: bool) -> String {
    let mut out: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    if done {
        out.push_str("data: [DONE]\n\n");
    }
    out
}

/// One Chat Completions chunk; `usage` goes on a chunk without choices.
fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-d", "object": "chat.completion.chunk", "created": 1,
           "model": "mock-model", "choices": [{"index": 0, "delta": delta,
           "finish_reason": finish}]})
}

fn usage_chunk(usage: Value) -> Value {
    json!({"id": "chatcmpl-d", "object": "chat.completion.chunk", "created": 1,
           "model": "mock-model", "choices": [], "usage": usage})
}

/// A Responses event of `kind` with `fields`.
fn event(kind: &str, fields: Value) -> Value {
    let mut value = json!({"type": kind});
    if let (Some(map), Value::Object(fields)) = (value.as_object_mut(), fields) {
        map.extend(fields);
    }
    value
}

fn call_item(call: &str, id: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": id, "call_id": call, "name": "read",
           "arguments": arguments})
}

fn completed(output: Value) -> Value {
    event(
        "response.completed",
        json!({"response": {"id": "resp_d", "status": "completed", "output": output,
            "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                      "input_tokens_details": {"cached_tokens": 0}}}}),
    )
}

/// The assistant messages of one prompt through `program`, `api` on the mock answering
/// `scripts`, normalized: blocks in order, stop reason, error text, token counts.
async fn messages(program: Command, api: &str, scripts: &[Script]) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    server.push_all(scripts.to_vec());
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    // Mistral's wire is mounted under its own prefix on the mock.
    let base_url = if api == "mistral-conversations" {
        format!("{}/mistral", server.url())
    } else {
        server.openai_base_url()
    };
    let models = json!({"providers": {"mock": {"baseUrl": base_url,
        "api": api, "apiKey": "mock-key", "models": [{"id": "mock-model",
        "name": "Mock Model", "reasoning": true, "contextWindow": 128000,
        "maxTokens": 16384}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(env.work.join("notes.txt"), "The notes.\n").unwrap();
    let mut rpc = Rpc::start_program(&env, program, &["--thinking", "high"]);
    rpc.call("p", json!({"type": "prompt", "message": "Read notes.txt."}));
    rpc.event("agent_settled");
    rpc.seen
        .iter()
        .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
        .map(|l| normalize(&l["message"]))
        .collect()
}

/// What of an assistant message is compared.
fn normalize(message: &Value) -> Value {
    let blocks: Vec<Value> = message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| match b["type"].as_str() {
            Some("text") => json!({"text": b["text"]}),
            Some("thinking") => json!({"thinking": b["thinking"]}),
            Some("toolCall") => json!({"toolCall": b["name"], "arguments": b["arguments"]}),
            other => json!({"other": other}),
        })
        .collect();
    let usage = &message["usage"];
    json!({
        "blocks": blocks,
        "stopReason": message["stopReason"],
        "errorMessage": message["errorMessage"],
        "usage": [usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"],
                  usage["totalTokens"]],
    })
}

/// Ours for one case, checked against 1.6.0's when it is installed.
async fn compare(case: &str, api: &str, scripts: &[Script]) -> Vec<Value> {
    let our = messages(ours(), api, scripts).await;
    if let Some(wrapper) = ts16() {
        let their = messages(ts16_pi(&wrapper), api, scripts).await;
        assert_eq!(
            our, their,
            "{case}: ours (left) and pi 1.6.0 (right) differ"
        );
    }
    our
}

/// pi 1.3: thinking sent in the same chunk as the answer (LiteLLM) comes first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_sent_with_the_answer_in_one_chunk_comes_first_as_in_16() {
    let stream = sse(
        &[
            chunk(
                json!({"role": "assistant", "content": "The answer.",
                       "reasoning_content": "Thinking first."}),
                None,
            ),
            chunk(json!({}), Some("stop")),
        ],
        true,
    );
    let got = compare(
        "same-chunk reasoning",
        "openai-completions",
        &[Script::raw(stream)],
    )
    .await;
    assert_eq!(
        got[0]["blocks"],
        json!([{"thinking": "Thinking first."}, {"text": "The answer."}])
    );
}

/// pi 0.84.3: Kimi's top-level `cached_tokens` are cache reads; cache writes reported
/// beside cached tokens are their own count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_token_fields_count_as_in_16() {
    let text = |usage: Value| {
        Script::raw(sse(
            &[
                chunk(json!({"role": "assistant", "content": "Hi."}), None),
                chunk(json!({}), Some("stop")),
                usage_chunk(usage),
            ],
            true,
        ))
    };
    let kimi = compare(
        "kimi cached_tokens",
        "openai-completions",
        &[text(json!({"prompt_tokens": 100, "completion_tokens": 10,
                      "total_tokens": 110, "cached_tokens": 40}))],
    )
    .await;
    assert_eq!(kimi[0]["usage"], json!([60, 10, 40, 0, 110]));
    let written = compare(
        "cache writes beside cached tokens",
        "openai-completions",
        &[text(json!({"prompt_tokens": 100, "completion_tokens": 10,
                      "total_tokens": 110, "prompt_tokens_details":
                      {"cached_tokens": 40, "cache_write_tokens": 10}}))],
    )
    .await;
    assert_eq!(written[0]["usage"], json!([50, 10, 40, 10, 110]));
}

/// pi 0.79.5: a message item whose `content` is null before a call does not break the
/// stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_message_content_before_a_call_streams_as_in_16() {
    let arguments = json!({"path": "notes.txt"}).to_string();
    let message = json!({"type": "message", "id": "msg_1", "role": "assistant",
                         "status": "completed", "content": null});
    let stream = sse(
        &[
            event("response.created", json!({"response": {"id": "resp_d"}})),
            event(
                "response.output_item.added",
                json!({"output_index": 0, "item": message}),
            ),
            event(
                "response.output_item.done",
                json!({"output_index": 0, "item": message}),
            ),
            event(
                "response.output_item.added",
                json!({"output_index": 1, "item": call_item("call_1", "fc_1", "")}),
            ),
            event(
                "response.function_call_arguments.delta",
                json!({"output_index": 1, "item_id": "fc_1", "delta": arguments}),
            ),
            event(
                "response.output_item.done",
                json!({"output_index": 1, "item": call_item("call_1", "fc_1", &arguments)}),
            ),
            completed(json!([message, call_item("call_1", "fc_1", &arguments)])),
        ],
        false,
    );
    let got = compare(
        "null message content",
        "openai-responses",
        &[
            Script::raw(stream),
            // A fixed usage: the mock's own counts follow the request, worded by each pi.
            Script::text("It says: the notes.").with_usage(200, 5),
        ],
    )
    .await;
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(got[0]["stopReason"], "toolUse");
    assert_eq!(got[1]["blocks"], json!([{"text": "It says: the notes."}]));
}

/// pi 0.99.0: calls without `output_index` that overlap (llama.cpp) end in an error
/// naming the call left unfinished, not in a mixed-up call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_calls_without_output_index_fail_as_in_16() {
    let arguments = json!({"path": "notes.txt"}).to_string();
    let stream = sse(
        &[
            event("response.created", json!({"response": {"id": "resp_d"}})),
            event(
                "response.output_item.added",
                json!({"item": call_item("call_a", "fc_a", "")}),
            ),
            event(
                "response.output_item.added",
                json!({"item": call_item("call_b", "fc_b", "")}),
            ),
            event(
                "response.function_call_arguments.delta",
                json!({"item_id": "fc_b", "delta": arguments}),
            ),
            event(
                "response.output_item.done",
                json!({"item": call_item("call_b", "fc_b", &arguments)}),
            ),
            completed(json!([
                call_item("call_a", "fc_a", ""),
                call_item("call_b", "fc_b", &arguments)
            ])),
        ],
        false,
    );
    let got = compare(
        "overlapping calls",
        "openai-responses",
        &[Script::raw(stream)],
    )
    .await;
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0]["stopReason"], "error");
    assert_eq!(
        got[0]["errorMessage"],
        "OpenAI Responses stream completed with an unfinished tool call: read (call_a|fc_a)"
    );
}

/// pi 0.84.4: a Mistral tool call streamed in fragments whose continuation chunks carry no
/// id (only the call's index) stays one call with all of its arguments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fragmented_mistral_calls_without_ids_stay_one_call_as_in_16() {
    let call = |id: Option<&str>, name: &str, arguments: &str| {
        let mut call = json!({"function": {"name": name, "arguments": arguments}, "index": 0});
        if let Some(id) = id {
            call["id"] = json!(id);
        }
        json!({"tool_calls": [call]})
    };
    let mut first = call(Some("Ab12Cd34E"), "read", r#"{"pa"#);
    first["role"] = json!("assistant");
    let mut last = chunk(json!({"content": ""}), Some("tool_calls"));
    last["usage"] = json!({"prompt_tokens": 90, "completion_tokens": 12, "total_tokens": 102});
    let stream = sse(
        &[
            chunk(first, None),
            chunk(call(None, "", r#"th": "notes"#), None),
            chunk(call(None, "", r#".txt"}"#), None),
            last,
        ],
        true,
    );
    let got = compare(
        "fragmented Mistral call",
        "mistral-conversations",
        &[
            Script::raw(stream),
            Script::text("It says: the notes.").with_usage(200, 5),
        ],
    )
    .await;
    assert_eq!(got.len(), 2, "{got:#?}");
    let calls: Vec<&Value> = got[0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b.get("toolCall").is_some())
        .collect();
    assert_eq!(
        calls,
        [&json!({"toolCall": "read", "arguments": {"path": "notes.txt"}})],
        "{got:#?}"
    );
    assert_eq!(got[0]["stopReason"], "toolUse");
}
