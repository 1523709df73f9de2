//! Providers TypeScript extensions register, through the real `pi` and its node host: a
//! provider with its own `streamSimple` answers prompts (registered while loading, and from
//! a command after loading), and `unregisterProvider` takes its models away.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};

/// Registers `echo` (a streamSimple that answers "echo: <last user text>") while loading,
/// and `late` (the same, answering "late: …") when `/add-late` runs; `/drop-late` removes it.
const PROVIDERS: &str = r#"
import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";

function provider(prefix) {
  return {
    baseUrl: "http://127.0.0.1:9", apiKey: prefix + "-key", api: prefix + "-api",
    models: [{ id: prefix + "-1", name: prefix, reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 10000, maxTokens: 100 }],
    streamSimple(model, context, options) {
      const stream = createAssistantMessageEventStream();
      const last = context.messages[context.messages.length - 1];
      const said = typeof last.content === "string" ? last.content : last.content.map((c) => c.text).join("");
      const text = prefix + ": " + said + " (key " + options.apiKey + ")";
      const message = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop", timestamp: Date.now() };
      setTimeout(() => {
        stream.push({ type: "start", partial: message });
        message.content.push({ type: "text", text: "" });
        stream.push({ type: "text_start", contentIndex: 0, partial: message });
        message.content[0].text = text;
        stream.push({ type: "text_delta", contentIndex: 0, delta: text, partial: message });
        stream.push({ type: "text_end", contentIndex: 0, content: text, partial: message });
        stream.push({ type: "done", reason: "stop", message });
        stream.end();
      }, 5);
      return stream;
    },
  };
}

export default function (pi) {
  pi.registerProvider("echo", provider("echo"));
  pi.registerCommand("add-late", { handler: async () => { pi.registerProvider("late", provider("late")); } });
  pi.registerCommand("drop-late", { handler: async () => { pi.unregisterProvider("late"); } });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_simple_providers_answer_prompts_and_can_be_added_and_removed() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.work.join("providers.ts");
    std::fs::write(&ext, PROVIDERS).unwrap();
    let mut rpc = Rpc::start_with_env(
        &env,
        &[
            "-e",
            ext.to_str().unwrap(),
            "--provider",
            "echo",
            "--model",
            "echo-1",
        ],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    let response = rpc.call("p1", json!({"type": "prompt", "message": "hi there"}));
    assert_eq!(response["success"], true, "{response}");
    let lines = rpc.event("agent_end");
    let end = lines.last().unwrap();
    // The system message (pi 1.5), the prompt, then the reply.
    assert_eq!(end["messages"][0]["role"], "system");
    let reply = &end["messages"][2];
    assert_eq!(
        reply["content"][0]["text"], "echo: hi there (key echo-key)",
        "{end}"
    );
    assert_eq!(reply["provider"], "echo");

    // A provider registered after loading joins the models, and answers.
    let missing = rpc.call(
        "m0",
        json!({"type": "set_model", "provider": "late", "modelId": "late-1"}),
    );
    assert_eq!(missing["success"], false, "{missing}");
    rpc.call("a", json!({"type": "prompt", "message": "/add-late"}));
    let set = rpc.call(
        "m1",
        json!({"type": "set_model", "provider": "late", "modelId": "late-1"}),
    );
    assert_eq!(set["success"], true, "{set}");
    rpc.call("p2", json!({"type": "prompt", "message": "again"}));
    let lines = rpc.event("agent_end");
    let messages = lines.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        messages.last().unwrap()["content"][0]["text"],
        "late: again (key late-key)"
    );

    // Unregistered, it is gone from the models.
    rpc.call("d", json!({"type": "prompt", "message": "/drop-late"}));
    let models = rpc.call("l", json!({"type": "get_available_models"}));
    let names: Vec<String> = models["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["provider"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    assert!(!names.contains(&"late".to_owned()), "{names:?}");
    assert_eq!(rpc.finish(), Some(0));
}
