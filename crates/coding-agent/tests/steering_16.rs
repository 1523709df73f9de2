//! Steering and follow-up messages over RPC as pi 1.6.0 delivers them: messages of only an
//! image leave the pending queue once delivered (pi 1.5.1). Our `pi` and pi 1.6.0
//! (`PI_TS16`) run the same steps against the mock model, steering while a bash tool call
//! sleeps.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_only_steering_and_follow_up_leave_the_queue_when_delivered_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    // The mock model, taking images.
    let models = json!({"providers": {"mock": {
        "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "input": ["text", "image"],
                    "contextWindow": 128000, "maxTokens": 16384}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let image = json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]);
    for (who, wrapper) in pis() {
        server.clear_requests();
        server.push_all([
            Script::tool_call("bash", json!({"command": "sleep 2; echo slept"})),
            Script::text("saw the steering image"),
            Script::text("saw the follow-up image"),
        ]);
        let mut rpc = Rpc::start_program(&env, program(&wrapper), &[]);
        rpc.call("p", json!({"type": "prompt", "message": "look"}));
        rpc.event("tool_execution_start");
        let steered = rpc.call(
            "s",
            json!({"type": "steer", "message": "", "images": image}),
        );
        assert_eq!(steered["success"], true, "{who}: {steered}");
        let followed = rpc.call(
            "f",
            json!({"type": "follow_up", "message": "", "images": image}),
        );
        assert_eq!(followed["success"], true, "{who}: {followed}");
        rpc.event("agent_end");
        let state = rpc.call("st", json!({"type": "get_state"}));
        assert_eq!(state["data"]["pendingMessageCount"], 0, "{who}: {state}");
        rpc.finish();
        // The steering image went with the tool result, the follow-up image after it.
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{who}");
        for request in &requests[1..] {
            let last = request.body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            assert_eq!(last["role"], "user", "{who}: {last}");
            assert!(last.to_string().contains("image_url"), "{who}: {last}");
        }
    }
}
