//! Default echo replies, request recording and the `/_mock/` control endpoints.

mod common;

use common::{
    JsonExt, anthropic_request, client, openai_concat, openai_request, read_json, stream,
};
use mock_llm::{MockServer, RecordedRequest, Script};
use serde_json::{Value, json};

#[tokio::test]
async fn default_replies_echo_the_conversation() {
    let server = MockServer::start().await.unwrap();
    let openai = format!("{}/chat/completions", server.openai_base_url());
    let events = stream(&openai, &openai_request("hello there")).await;
    assert_eq!(openai_concat(&events, "content"), "ok: hello there");
    assert_eq!(
        events[events.len() - 2].json()["choices"][0]["finish_reason"],
        "stop"
    );

    let events = stream(&openai, &openai_request("read src/lib.rs")).await;
    let tool: Vec<Value> = events[..events.len() - 1]
        .iter()
        .filter_map(|e| e.json()["choices"][0]["delta"].get("tool_calls").cloned())
        .collect();
    assert_eq!(tool[0][0]["function"]["name"], "read");
    let args: String = tool
        .iter()
        .map(|t| t[0]["function"]["arguments"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(args, r#"{"path":"src/lib.rs"}"#);
    assert_eq!(
        events[events.len() - 2].json()["choices"][0]["finish_reason"],
        "tool_calls"
    );

    let request = json!({"model": "m", "messages": [
        {"role": "user", "content": "read x"},
        {"role": "assistant", "content": null, "tool_calls": []},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "file contents are long"}]}
    ]});
    let events = stream(&openai, &request).await;
    assert_eq!(
        openai_concat(&events, "content"),
        "done: file contents are lo"
    );

    let anthropic = format!("{}/v1/messages", server.anthropic_base_url());
    let events = stream(&anthropic, &anthropic_request("hi")).await;
    let text: String = events
        .iter()
        .filter(|e| e.event.as_deref() == Some("content_block_delta"))
        .map(|e| e.json()["delta"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "ok: hi");
    let request = json!({"model": "m", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "read y"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "yes"}]}
    ]});
    let events = stream(&anthropic, &request).await;
    assert_eq!(events[3].json()["delta"]["text"], "done: ye");
}

#[tokio::test]
async fn requests_are_recorded_in_order() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("one"));
    let url = format!("{}/chat/completions", server.openai_base_url());
    let response = client()
        .post(&url)
        .header("Authorization", "Bearer sk-test")
        .header("X-Custom", "Value")
        .json_body(&openai_request("first"))
        .send()
        .await
        .unwrap();
    response.text().await.unwrap();
    client()
        .post(format!("{}/v1/messages", server.url()))
        .body("not json")
        .send()
        .await
        .unwrap();

    let requests: Vec<RecordedRequest> = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-test");
    assert_eq!(requests[0].headers["x-custom"], "Value");
    assert_eq!(requests[0].body["messages"][0]["content"], "first");
    assert_eq!(
        requests[0].raw_body_len,
        serde_json::to_vec(&openai_request("first")).unwrap().len()
    );
    assert_eq!(requests[1].path, "/v1/messages");
    assert_eq!(requests[1].body, Value::Null);
    assert_eq!(requests[1].raw_body_len, 8);

    server.clear_requests();
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn control_endpoints() {
    let server = MockServer::start().await.unwrap();
    let http = client();
    let base = server.url();

    let health = http
        .get(format!("{base}/_mock/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok");

    let one = json!({"items": [{"type": "text", "text": "from control"}], "chunkSize": 100});
    let response = http
        .post(format!("{base}/_mock/scripts"))
        .json_body(&one)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let many = json!([
        {"items": [{"type": "toolCall", "name": "ls", "arguments": {}}], "stopReason": "toolUse"},
        {"fault": {"type": "httpError", "status": 503, "retryAfter": "1"}}
    ]);
    let response = http
        .post(format!("{base}/_mock/scripts"))
        .json_body(&many)
        .send()
        .await
        .unwrap();
    assert_eq!(
        read_json::<Value>(response).await,
        json!({"queued": 2, "pending": 3})
    );
    assert_eq!(server.pending(), 3);

    let bad = http
        .post(format!("{base}/_mock/scripts"))
        .body("{\"items\": 5}")
        .send()
        .await;
    assert_eq!(bad.unwrap().status(), 400);

    let url = format!("{}/chat/completions", server.openai_base_url());
    let events = stream(&url, &openai_request("q")).await;
    assert_eq!(openai_concat(&events, "content"), "from control");

    let recorded: Vec<RecordedRequest> = read_json(
        http.get(format!("{base}/_mock/requests"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(recorded.len(), 1, "control requests are not recorded");
    assert_eq!(recorded[0].path, "/v1/chat/completions");

    let cleared = http
        .delete(format!("{base}/_mock/requests"))
        .send()
        .await
        .unwrap();
    assert!(cleared.status().is_success());
    assert!(server.requests().is_empty());

    let reset = http
        .post(format!("{base}/_mock/reset"))
        .send()
        .await
        .unwrap();
    assert!(reset.status().is_success());
    assert_eq!(server.pending(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_the_server() {
    let server = MockServer::start().await.unwrap();
    let url = server.url();
    let clone = server.clone();
    server.shutdown().await;
    assert!(
        client()
            .get(format!("{url}/_mock/health"))
            .send()
            .await
            .is_err()
    );
    drop(clone);
}
