//! Files that start with a UTF-8 byte order mark (as Windows editors and PowerShell write
//! them) load as in pi 1.6.0: settings.json, models.json, auth.json, AGENTS.md, a skill and
//! a prompt template, each with a mark, all take effect in one print-mode prompt, and
//! what reaches the model is the same for ours and for 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

const BOM: &str = "\u{feff}";

fn write_with_bom(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{BOM}{text}")).unwrap();
}

/// Agent-dir files, each starting with a mark.
fn write_files(env: &Env, server: &MockServer) {
    let models = json!({"providers": {"bom": {
        "baseUrl": server.openai_base_url(), "api": "openai-completions",
        "models": [{"id": "bom-model", "name": "BOM Model", "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    write_with_bom(&env.agent.join("models.json"), &models.to_string());
    let settings =
        json!({"defaultProvider": "bom", "defaultModel": "bom-model", "retry": {"enabled": false}});
    write_with_bom(&env.agent.join("settings.json"), &settings.to_string());
    let auth = json!({"bom": {"type": "api_key", "key": "bom-key"}});
    write_with_bom(&env.agent.join("auth.json"), &auth.to_string());
    write_with_bom(
        &env.agent.join("AGENTS.md"),
        "Context line from a file with a mark.\n",
    );
    write_with_bom(
        &env.agent.join("skills/bom-skill/SKILL.md"),
        "---\nname: bom-skill\ndescription: A skill whose file starts with a mark.\n---\nSkill body.\n",
    );
    write_with_bom(
        &env.agent.join("prompts/bomtpl.md"),
        "---\ndescription: A template whose file starts with a mark\n---\nTemplate body with $1.\n",
    );
}

/// The system prompt's text from a Chat Completions body.
fn system_text(body: &Value) -> String {
    let first = &body["messages"][0];
    assert!(
        first["role"] == "system" || first["role"] == "developer",
        "{body:#}"
    );
    match &first["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// What one prompt through `program` sent: the facts these files decide.
async fn facts(program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("done"));
    let env = Env::new(&server, 128_000, json!({}));
    write_files(&env, &server);
    let out = tokio::task::spawn_blocking(move || {
        let out = run(&env, program, &["-p", "/bomtpl hello"]);
        (out, env)
    })
    .await
    .unwrap()
    .0;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let request = &requests[0];
    let system = system_text(&request.body);
    let user_text = support::rpc::last_user_text(&request.body);
    json!({
        "model": request.body["model"],
        "authorization": request.headers.get("authorization"),
        "context file": system.contains("Context line from a file with a mark."),
        "skill": system.contains("bom-skill") && system.contains("A skill whose file starts with a mark."),
        "mark in the request": request.body.to_string().contains(BOM),
        "user": user_text,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_with_a_byte_order_mark_load_as_in_16() {
    let our = facts(ours()).await;
    assert_eq!(
        our,
        json!({
            "model": "bom-model",
            "authorization": "Bearer bom-key",
            "context file": true,
            "skill": true,
            "mark in the request": false,
            "user": "Template body with hello.",
        })
    );
    if let Some(wrapper) = ts16() {
        let their = facts(ts16_pi(&wrapper)).await;
        assert_eq!(our, their, "ours (left) and pi 1.6.0 (right) differ");
    }
}
