//! Requests of one `pi -p` run set up as an upstream ledger row says, through our `pi` and
//! pi 1.6.0 (`PI_TS16`) against the mock model: how a custom provider is authenticated, which
//! session id an ephemeral run sends for prompt caching, which provider retry settings a
//! project's settings leave in force, and how an unreachable server is reported. Without `PI_TS16` only ours runs, against the
//! expectations written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// What one run showed: its exit code, the requests the mock received and the session files
/// written.
#[derive(Debug)]
struct Seen {
    exit: Option<i32>,
    stderr: String,
    requests: Vec<mock_llm::RecordedRequest>,
    session_files: usize,
}

/// A run's set-up: `models.json`, `auth.json` (optional), global and project settings, the
/// scripts the mock answers with, and the arguments after the agent folders are set.
struct Case {
    models: Value,
    auth: Option<Value>,
    settings: Value,
    project_settings: Option<Value>,
    scripts: Vec<Script>,
    args: Vec<String>,
}

impl Case {
    /// A `-p` run of `prompt` on the model `model`, answered "Done."; `models` gets the
    /// mock's URL.
    fn new(models: impl Fn(&str) -> Value, model: &str, prompt: &str) -> impl Fn(&str) -> Case {
        let model = model.to_owned();
        let prompt = prompt.to_owned();
        move |url| Case {
            models: models(url),
            auth: None,
            settings: json!({"retry": {"enabled": false}}),
            project_settings: None,
            scripts: vec![Script::text("Done.")],
            args: vec!["--model".into(), model.clone(), "-p".into(), prompt.clone()],
        }
    }
}

/// Runs the case `setup` gives through `program`.
async fn seen(program: Command, setup: &dyn Fn(&str) -> Case) -> Seen {
    let server = MockServer::start().await.unwrap();
    let case = setup(&server.url());
    server.push_all(case.scripts);
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(env.agent.join("models.json"), case.models.to_string()).unwrap();
    std::fs::write(env.agent.join("settings.json"), case.settings.to_string()).unwrap();
    if let Some(auth) = &case.auth {
        std::fs::write(env.agent.join("auth.json"), auth.to_string()).unwrap();
    }
    if let Some(project) = &case.project_settings {
        let dir = env.work.join(".pi");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), project.to_string()).unwrap();
    }
    let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
    let output = run(&env, program, &args);
    Seen {
        exit: output.status.code(),
        stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        requests: server.requests(),
        session_files: env.session_files().len(),
    }
}

/// Runs the case through ours and, when installed, pi 1.6.0; returns both views `view`
/// takes of them (pi 1.6.0's `None` without `PI_TS16`), after asserting they agree.
async fn compare(setup: impl Fn(&str) -> Case, view: impl Fn(&Seen) -> Value) -> Value {
    let our = view(&seen(ours(), &setup).await);
    if let Some(wrapper) = ts16() {
        let their = view(&seen(ts16_pi(&wrapper), &setup).await);
        assert_eq!(our, their, "ours (left) and pi 1.6.0 (right) differ");
    }
    our
}

/// One custom provider `gateway` on `api` at the mock, its model `m1`, with `fields` merged
/// into the provider.
fn gateway(url: &str, api: &str, fields: Value) -> Value {
    let path = if api == "anthropic-messages" {
        ""
    } else {
        "/v1"
    };
    let mut provider = json!({"baseUrl": format!("{url}{path}"), "api": api,
        "models": [{"id": "m1", "name": "M1", "contextWindow": 128000, "maxTokens": 16384}]});
    if let (Some(provider), Some(fields)) = (provider.as_object_mut(), fields.as_object()) {
        provider.extend(fields.clone());
    }
    json!({"providers": {"gateway": provider}})
}

/// pi 0.80.0: a `models.json` provider without `apiKey` is authenticated by the key stored
/// for it in `auth.json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_key_authenticates_a_custom_provider_without_api_key_as_in_16() {
    let setup = |url: &str| Case {
        auth: Some(json!({"gateway": {"type": "api_key", "key": "sk-stored-gateway"}})),
        ..Case::new(
            |url| gateway(url, "openai-completions", json!({})),
            "gateway/m1",
            "hello",
        )(url)
    };
    let view = |seen: &Seen| {
        json!({"exit": seen.exit, "requests": seen.requests.len(),
               "authorization": seen.requests.first().map(|r| r.headers.get("authorization"))})
    };
    let outcome = compare(setup, view).await;
    assert_eq!(
        outcome,
        json!({"exit": 0, "requests": 1, "authorization": "Bearer sk-stored-gateway"})
    );
}

/// pi 0.80.3: `--no-session --session-id <id>` keeps the run in memory (no session file)
/// but sends the given id for the provider's prompt cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ephemeral_run_sends_the_given_session_id_as_in_16() {
    let id = "019a0000-0000-7000-8000-00000000e0e1";
    let setup = |url: &str| {
        let mut case = Case::new(
            |url| gateway(url, "openai-responses", json!({"apiKey": "sk-gateway"})),
            "gateway/m1",
            "hello",
        )(url);
        let mut args = vec!["--no-session".into(), "--session-id".into(), id.into()];
        args.append(&mut case.args);
        case.args = args;
        case
    };
    let view = |seen: &Seen| {
        let body = seen
            .requests
            .first()
            .map(|r| r.body.clone())
            .unwrap_or_default();
        json!({"exit": seen.exit, "sessionFiles": seen.session_files,
               "promptCacheKey": body["prompt_cache_key"]})
    };
    let outcome = compare(setup, view).await;
    assert_eq!(
        outcome,
        json!({"exit": 0, "sessionFiles": 0, "promptCacheKey": id})
    );
}

/// pi 0.84.0: a project's `retry.provider` settings are merged key by key into the global
/// ones (of a trusted project): a project timeout leaves the global `maxRetries: 1` in
/// force, so a 503 is retried once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_provider_retry_settings_merge_into_the_global_ones_as_in_16() {
    let case = |project: Option<Value>| {
        move |url: &str| {
            let mut case = Case {
                settings: json!({"retry": {"enabled": false,
                                       "provider": {"maxRetries": 1, "maxRetryDelayMs": 50}}}),
                project_settings: project.clone(),
                scripts: vec![
                    Script::http_error(503),
                    Script::http_error(503),
                    Script::text("Done."),
                ],
                ..Case::new(
                    |url| gateway(url, "openai-completions", json!({"apiKey": "sk-gateway"})),
                    "gateway/m1",
                    "hello",
                )(url)
            };
            // The project's settings are trusted for the run.
            case.args.insert(0, "--approve".into());
            case
        }
    };
    let requests = |seen: &Seen| json!(seen.requests.len());
    // Replaced, the global `maxRetries` would be gone (no retry): merged, the 503 is retried.
    let merged = json!({"retry": {"provider": {"timeoutMs": 60000}}});
    assert_eq!(compare(case(Some(merged)), requests).await, json!(2));
    // The project's own `maxRetries` does apply.
    let own = json!({"retry": {"provider": {"maxRetries": 0}}});
    assert_eq!(compare(case(Some(own)), requests).await, json!(1));
}

/// pi 1.5.1: a connection the server refuses is reported with its cause, not as a bare
/// "Connection error.".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_shows_its_cause_as_in_16() {
    // A port held bound but not listening for the whole test: connections to it are
    // refused, and no other server can take it meanwhile.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    let closed = format!("http://127.0.0.1:{port}");
    let setup = |_: &str| {
        Case::new(
            |_| {
                gateway(
                    &closed,
                    "openai-completions",
                    json!({"apiKey": "sk-gateway"}),
                )
            },
            "gateway/m1",
            "hello",
        )(&closed)
    };
    let outcome = compare(
        setup,
        |seen| json!({"exit": seen.exit, "stderr": seen.stderr}),
    )
    .await;
    assert_eq!(
        outcome,
        json!({"exit": 1,
               "stderr": format!("Connection error.: connect ECONNREFUSED 127.0.0.1:{port}")})
    );
    drop(socket);
}

/// Two prompts and a `/compact` over RPC on the catalog's Anthropic provider authenticated
/// by `ANTHROPIC_AUTH_TOKEN` (a bearer header, no key): whether each succeeded and the
/// credentials of every request.
async fn header_auth_compaction(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer."));
    server.push(Script::text("Second answer."));
    server.push(Script::text("## Goal\nA summary."));
    // Compaction keeps almost nothing, so that two short turns have something to summarize.
    let settings = json!({"retry": {"enabled": false},
                          "compaction": {"keepRecentTokens": 1, "reserveTokens": 100}});
    let env = Env::new(&server, 128_000, settings);
    let case = request_parity::catalog::CatalogCase::named("anthropic", "claude-haiku-4-5");
    let setup = case.setup(&server.url());
    std::fs::write(env.agent.join("models.json"), setup.models_json.to_string()).unwrap();
    program
        .envs(setup.env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("ANTHROPIC_AUTH_TOKEN", "gateway-token");
    tokio::task::spawn_blocking(move || {
        let mut rpc = support::rpc::Rpc::start_program(&env, program, &["--model", &setup.model]);
        let mut stops = Vec::new();
        for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            let settled = rpc.event("agent_settled");
            stops.extend(
                settled
                    .iter()
                    .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
                    .map(|e| e["message"]["stopReason"].clone()),
            );
        }
        let compact = rpc.call("c", json!({"type": "compact"}));
        rpc.finish();
        let credentials: Vec<Value> = server
            .requests()
            .iter()
            .map(|r| json!([r.headers.get("authorization"), r.headers.get("x-api-key")]))
            .collect();
        json!({"stops": stops, "compacted": compact["success"], "error": compact["error"],
               "credentials": credentials})
    })
    .await
    .unwrap()
}

/// pi 0.82.1: a provider whose auth resolves to request headers alone (Anthropic with
/// `ANTHROPIC_AUTH_TOKEN`) serves prompts and compaction summaries; no key is asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_auth_serves_prompts_and_compaction_as_in_16() {
    let ours = header_auth_compaction(ours()).await;
    assert_eq!(ours["stops"], json!(["stop", "stop"]), "{ours}");
    assert_eq!(ours["compacted"], true, "{ours}");
    // The two prompts and at least one summary request, each with the bearer token only.
    let sent = ours["credentials"].as_array().unwrap();
    assert!(sent.len() >= 3, "{ours}");
    assert!(
        sent.iter()
            .all(|c| *c == json!(["Bearer gateway-token", null])),
        "{ours}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = header_auth_compaction(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours (left) and pi 1.6.0 (right) differ");
    }
}
