//! Every API of pi-ai through the real `pi` binary: a custom provider per API in
//! models.json, pointed at mock-llm, answers a prompt and a tool turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use base64::Engine;
use serde_json::{Value, json};

use mock_llm::{MockServer, Script};

fn pi(dir: &std::path::Path, model: &str, prompt: &str) -> Output {
    let work = dir.join("work");
    Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--model", model, "-p", prompt])
        .current_dir(&work)
        .env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .env("HOME", dir)
        .env("AWS_BEARER_TOKEN_BEDROCK", "bedrock-test-token")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_PROFILE")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// A ChatGPT-style OAuth token carrying an account id, as the Codex backend needs.
fn codex_token() -> String {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}});
    format!(
        "{}.{}.sig",
        engine.encode(r#"{"alg":"none"}"#),
        engine.encode(payload.to_string())
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_api_answers_through_the_binary() {
    let server = MockServer::start().await.unwrap();
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("agent")).unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    std::fs::write(dir.path().join("work/hello.txt"), "hello from the file\n").unwrap();
    let gemini_cli_key = json!({"token": "oauth-token", "projectId": "my-project"}).to_string();
    let providers = [
        (
            "p-responses",
            "openai-responses",
            format!("{url}/v1"),
            "k".to_owned(),
        ),
        (
            "p-azure",
            "azure-openai-responses",
            format!("{url}/openai/v1"),
            "k".to_owned(),
        ),
        (
            "p-codex",
            "openai-codex-responses",
            url.clone(),
            codex_token(),
        ),
        (
            "p-gemini",
            "google-generative-ai",
            format!("{url}/v1beta"),
            "k".to_owned(),
        ),
        (
            "p-vertex",
            "google-vertex",
            format!("{url}/v1"),
            "k".to_owned(),
        ),
        (
            "p-gemini-cli",
            "google-gemini-cli",
            url.clone(),
            gemini_cli_key,
        ),
        (
            "p-bedrock",
            "bedrock-converse-stream",
            url.clone(),
            "unused".to_owned(),
        ),
        (
            "p-mistral",
            "mistral-conversations",
            format!("{url}/mistral"),
            "k".to_owned(),
        ),
    ];
    let mut config = serde_json::Map::new();
    for (name, api, base_url, key) in &providers {
        config.insert(
            (*name).into(),
            json!({"baseUrl": base_url, "api": api, "apiKey": key,
                   "models": [{"id": "m1", "contextWindow": 128000, "maxTokens": 4096}]}),
        );
    }
    std::fs::write(
        dir.path().join("agent/models.json"),
        json!({"providers": config}).to_string(),
    )
    .unwrap();

    for (name, api, _, _) in &providers {
        server.clear_requests();
        let out = pi(dir.path(), &format!("{name}/m1"), "hi there");
        assert!(
            out.status.success(),
            "{api}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ok: hi there\n",
            "{api}"
        );

        // A tool turn: the read result goes back in this API's shape.
        server.push_all([
            Script::tool_call("read", json!({"path": "hello.txt"})),
            Script::text("the file says hello"),
        ]);
        let out = pi(dir.path(), &format!("{name}/m1"), "read hello.txt");
        assert!(
            out.status.success(),
            "{api}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "the file says hello\n",
            "{api}"
        );
        let requests = server.requests();
        let second: &Value = &requests.last().unwrap().body;
        assert!(
            second.to_string().contains("hello from the file"),
            "{api}: the tool result reached the model: {second}"
        );
    }
}
