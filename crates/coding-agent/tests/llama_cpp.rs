//! pi 1.6.0's built-in llama.cpp extension, through the real `pi` binary against mock-llm's
//! stand-in router: the router's models in RPC `get_available_models`, `--list-models` and
//! the saved catalog; a print-mode prompt to a router model; `/llama` outside the terminal
//! UI; `-builtin:llama.cpp`. Each is compared with pi 1.6.0 when `PI_TS16` is set (pi 1.6.0
//! runs with its catalogs refreshed but every outside request sent to a closed local port).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{LlamaSettings, MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, run, ts16, ts16_pi, ts16_pi_catalogs};

/// A router with a loaded thinking model, a sleeping vision model, an unloaded model, an
/// unloaded preset (autoload off) and a loaded decision-only model.
fn router(server: &MockServer) {
    let models = json!([
        {"id": "qwen-think", "object": "model", "status": {"value": "loaded", "args": ["llama-server", "--ctx-size", "8192"]},
         "meta": {"n_ctx": 8192, "n_ctx_train": 40960}, "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]}},
        {"id": "gemma-vision", "status": {"value": "sleeping"}, "meta": {"n_ctx_train": 131072},
         "architecture": {"input_modalities": ["text", "image"], "output_modalities": ["text"]}},
        {"id": "small-unloaded", "status": {"value": "unloaded"}, "meta": {"n_ctx_train": 32768}},
        {"id": "preset-auto", "status": {"value": "unloaded"}, "source": "preset"},
        {"id": "julia-decision", "status": {"value": "loaded"}, "architecture": {"output_modalities": ["decisions"]}}
    ]);
    server.set_llama(LlamaSettings {
        models: models.as_array().unwrap().clone(),
        chat_template: Some("{%- if enable_thinking %}<think>{% endif %}".into()),
        loaded_n_ctx: Some(4096),
        ..Default::default()
    });
}

/// `program` with the router configured through the environment.
fn with_router(mut program: Command, server: &MockServer) -> Command {
    program.env("LLAMA_BASE_URL", server.url());
    program
}

/// The llama.cpp models of a `get_available_models` answer.
fn llama_models(answer: &Value) -> Vec<Value> {
    answer["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["provider"] == "llama.cpp")
        .cloned()
        .collect()
}

/// What a run printed, stdout then stderr: with stdin not a terminal this build writes
/// informational text such as `--list-models` to stderr, pi 1.6.0 to stdout.
fn terminal_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What one pi shows of the router: the models RPC lists once its background refresh
/// is in, `--list-models llama` afterwards (from the saved catalog), and that catalog.
struct Seen {
    models: Vec<Value>,
    listed: String,
    store: Value,
}

fn seen(server: &MockServer, rpc_program: Command, list_program: Command) -> Seen {
    let env = Env::new(server, 128_000, json!({}));
    let mut rpc = Rpc::start_program(&env, with_router(rpc_program, server), &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut n = 0;
    let models = loop {
        n += 1;
        let answer = rpc.call(&format!("m{n}"), json!({"type": "get_available_models"}));
        let models = llama_models(&answer);
        if !models.is_empty() || Instant::now() > deadline {
            break models;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    rpc.finish();
    let out = run(
        &env,
        with_router(list_program, server),
        &["--list-models", "llama"],
    );
    let listed = terminal_text(&out);
    let text = std::fs::read_to_string(env.agent.join("models-store.json")).unwrap_or_default();
    let mut store: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    // When it was checked differs from run to run.
    if let Some(entry) = store.get_mut("llama.cpp").and_then(Value::as_object_mut) {
        entry.remove("checkedAt");
    }
    Seen {
        models,
        listed,
        store,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn router_models_are_listed_and_saved_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    router(&server);
    let ours = seen(&server, ours(), ours());
    let ids: Vec<&str> = ours
        .models
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    // Loaded and sleeping chat models; not the unloaded ones (autoload is off), not the
    // decision-only model.
    assert_eq!(ids, ["qwen-think", "gemma-vision"]);
    let base = format!("{}/v1", server.url());
    assert_eq!(
        ours.models[0],
        json!({"id": "qwen-think", "name": "qwen-think", "api": "openai-completions", "provider": "llama.cpp",
            "baseUrl": base, "reasoning": true,
            "thinkingLevelMap": {"off": "off", "minimal": null, "low": null, "medium": "medium", "high": null, "xhigh": null},
            "input": ["text"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 8192, "maxTokens": 8192,
            "compat": {"supportsStore": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true,
                "supportsStrictMode": false, "maxTokensField": "max_tokens", "thinkingFormat": "qwen-chat-template"}})
    );
    // A sleeping model is not asked for its template (that would wake it).
    assert_eq!(ours.models[1]["reasoning"], false);
    assert_eq!(ours.models[1]["input"], json!(["text", "image"]));
    assert_eq!(ours.models[1]["contextWindow"], 131072);
    let calls = server.llama_calls();
    assert!(
        calls.contains(&"GET /props qwen-think".to_owned()),
        "{calls:?}"
    );
    assert!(
        !calls.iter().any(|c| c.contains("gemma-vision")),
        "{calls:?}"
    );
    assert_eq!(
        ours.listed,
        "provider   model         context  max-out  thinking  images\n\
         llama.cpp  gemma-vision  131.1K   131.1K   no        yes   \n\
         llama.cpp  qwen-think    8.2K     8.2K     yes       no    \n"
    );
    let saved = ours.store["llama.cpp"]["models"].as_array().unwrap();
    assert_eq!(saved.len(), 5, "2 chat models, then 3 classifier entries");
    assert_eq!(saved[4]["type"], "classifier");
    assert_eq!(saved[4]["api"], "typesafe-system-one");
    if let Some(wrapper) = ts16() {
        let theirs = seen(&server, ts16_pi_catalogs(&wrapper), ts16_pi(&wrapper));
        assert_eq!(ours.models, theirs.models);
        assert_eq!(ours.listed, theirs.listed);
        assert_eq!(ours.store, theirs.store);
    }
}

/// The request a print-mode prompt to `qwen-think` sends, after an RPC run saved the
/// catalog (print mode does not ask the router), and what it printed.
fn print_prompt(
    server: &MockServer,
    rpc_program: Command,
    print_program: Command,
) -> (String, Value) {
    let env = Env::new(server, 128_000, json!({}));
    let mut rpc = Rpc::start_program(&env, with_router(rpc_program, server), &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut n = 0;
    while llama_models(&rpc.call(&format!("m{n}"), json!({"type": "get_available_models"})))
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the router's models never came");
        n += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    rpc.finish();
    server.clear_requests();
    server.push(Script::text("Hello from llama"));
    let mut program = with_router(print_program, server);
    program.env("LLAMA_API_KEY", "test-secret");
    let out = run(
        &env,
        program,
        &[
            "-p",
            "--provider",
            "llama.cpp",
            "--model",
            "qwen-think",
            "hi",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    let chat: Vec<_> = requests
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect();
    assert_eq!(chat.len(), 1, "{requests:#?}");
    assert_eq!(chat[0].headers["authorization"], "Bearer test-secret");
    // The key stays out of the session file.
    for file in env.session_files() {
        assert!(
            !std::fs::read_to_string(file)
                .unwrap()
                .contains("test-secret")
        );
    }
    let body = &chat[0].body;
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    let view = json!({
        "model": body["model"],
        "roles": roles,
        "stream": body["stream"],
        "stream_options": body["stream_options"],
        "chat_template_kwargs": body["chat_template_kwargs"],
        "max_tokens": body.get("max_tokens").is_some(),
        "max_completion_tokens": body.get("max_completion_tokens").is_some(),
        "store": body.get("store").is_some(),
        "reasoning_effort": body.get("reasoning_effort").is_some(),
    });
    (String::from_utf8_lossy(&out.stdout).into_owned(), view)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_print_prompt_streams_from_a_router_model_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    router(&server);
    let (printed, request) = print_prompt(&server, ours(), ours());
    assert_eq!(printed, "Hello from llama\n");
    assert_eq!(
        request,
        json!({"model": "qwen-think", "roles": ["system", "user"], "stream": true,
            "stream_options": {"include_usage": true},
            "chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true},
            "max_tokens": true, "max_completion_tokens": false, "store": false, "reasoning_effort": false})
    );
    if let Some(wrapper) = ts16() {
        let theirs = print_prompt(&server, ts16_pi_catalogs(&wrapper), ts16_pi(&wrapper));
        assert_eq!((printed, request), theirs);
    }
}

/// The notices and the answer of an RPC prompt `/llama`.
fn llama_over_rpc(server: &MockServer, program: Command, settings: Value) -> Vec<Value> {
    let env = Env::new(server, 128_000, settings);
    let mut rpc = Rpc::start_program(&env, with_router(program, server), &[]);
    rpc.send(json!({"id": "p", "type": "prompt", "message": "/llama"}));
    let lines = rpc.until("the answer to /llama", |l| {
        l["id"] == "p" && l["type"] == "response"
    });
    rpc.finish();
    lines
        .iter()
        .filter_map(|l| match l["type"].as_str() {
            Some("extension_ui_request") if l["method"] == "notify" => {
                Some(json!(["notify", l["notifyType"], l["message"]]))
            }
            Some("response") => Some(json!(["response", l["success"], l["data"]])),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_over_rpc_says_it_needs_the_terminal_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    router(&server);
    let ours = llama_over_rpc(&server, ours(), json!({}));
    assert_eq!(
        ours,
        [
            json!([
                "notify",
                "warning",
                "/llama is available in interactive mode"
            ]),
            json!(["response", true, {"disposition": "handled"}]),
        ]
    );
    // Nothing was asked of the router for it.
    assert!(!server.llama_calls().iter().any(|c| c.starts_with("POST")));
    if let Some(wrapper) = ts16() {
        assert_eq!(ours, llama_over_rpc(&server, ts16_pi(&wrapper), json!({})));
    }
}

/// The command names, the llama.cpp models after a while, `--list-models llama` and its
/// stderr of a pi whose settings turn the built-in extension off (a catalog is saved and
/// the router configured all the same).
fn disabled(
    server: &MockServer,
    program: &dyn Fn() -> Command,
) -> (Vec<Value>, Vec<Value>, String, String) {
    let env = Env::new(
        server,
        128_000,
        json!({"extensions": ["-builtin:llama.cpp"]}),
    );
    let saved = json!({"llama.cpp": {"models": [
        {"id": "qwen-think", "name": "qwen-think", "api": "openai-completions", "provider": "llama.cpp",
         "baseUrl": format!("{}/v1", server.url()), "reasoning": false, "input": ["text"],
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 8192, "maxTokens": 8192}
    ], "checkedAt": 1}});
    std::fs::write(env.agent.join("models-store.json"), saved.to_string()).unwrap();
    let mut rpc = Rpc::start_program(&env, with_router(program(), server), &[]);
    let commands = rpc.call("c", json!({"type": "get_commands"}));
    std::thread::sleep(Duration::from_secs(2));
    let models = llama_models(&rpc.call("m", json!({"type": "get_available_models"})));
    rpc.finish();
    let names = commands["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    let out = run(
        &env,
        with_router(program(), server),
        &["--list-models", "llama"],
    );
    (
        names,
        models,
        terminal_text(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builtin_llama_cpp_off_in_settings_hides_provider_and_command_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    router(&server);
    let (names, models, listed, stderr) = disabled(&server, &ours);
    assert_eq!(names, [json!("mcp")]);
    assert_eq!(models, Vec::<Value>::new());
    assert_eq!(listed, "No models matching \"llama\"\n");
    assert!(!stderr.contains("builtin"), "{stderr}");
    assert!(
        server.llama_calls().is_empty(),
        "the router is not asked: {:?}",
        server.llama_calls()
    );
    if let Some(wrapper) = ts16() {
        let (their_names, their_models, their_listed, _) =
            disabled(&server, &|| ts16_pi_catalogs(&wrapper));
        assert_eq!(
            (names, models, listed),
            (their_names, their_models, their_listed)
        );
    }
}
