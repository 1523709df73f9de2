//! The credential store (`auth.json`) as pi 1.6.0 keeps it: a write keeps the file mode an
//! administrator set (compared with pi 1.6.0 through `pi auth logout`); a subscription login
//! with less than five minutes left is refreshed before a request; a login another process
//! changes is what the next request of a running session uses; a stalled token refresh fails
//! after 15 s and lets go of the auth.json lock; and a prompt aborted while its refresh waits
//! for that lock refreshes nothing later. The refresh cases run ours only: pi 1.6.0's token
//! endpoints are fixed HTTPS hosts, while ours reaches the mock's (`PI_OAUTH_BASE_URL`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program, run};

#[test]
fn auth_json_writes_keep_the_mode_an_administrator_set_as_in_16() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let auth = env.agent.join("auth.json");
        std::fs::write(
            &auth,
            json!({"openai": {"type": "api_key", "key": "sk-one"},
                   "groq": {"type": "api_key", "key": "gsk-two"}})
            .to_string(),
        )
        .unwrap();
        std::fs::set_permissions(&auth, std::fs::Permissions::from_mode(0o640)).unwrap();
        let output = run(&env, program(&wrapper), &["auth", "logout", "openai"]);
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mode = std::fs::metadata(&auth).unwrap().permissions().mode() & 0o777;
        let stored: Value = serde_json::from_str(&std::fs::read_to_string(&auth).unwrap()).unwrap();
        let providers: Vec<&String> = stored.as_object().unwrap().keys().collect();
        seen.push((
            name,
            json!({"mode": format!("{mode:o}"), "providers": providers}),
        ));
    }
    for (name, got) in &seen {
        assert_eq!(
            *got,
            json!({"mode": "640", "providers": ["groq"]}),
            "{name}"
        );
    }
}

fn now_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

/// A mock with Anthropic's OAuth endpoints, on its own runtime (the tests are synchronous).
struct Mock {
    server: MockServer,
    _runtime: tokio::runtime::Runtime,
}

impl Mock {
    /// Starts the mock; `refresh_tokens` are valid refresh tokens from the start.
    fn start(refresh_tokens: &[&str]) -> Mock {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(MockServer::start()).unwrap();
        let mock = Mock {
            server,
            _runtime: runtime,
        };
        mock.configure(json!({ "seedRefreshTokens": refresh_tokens }));
        mock
    }

    /// `POST /_mock/oauth`.
    fn configure(&self, settings: Value) {
        let (status, body) =
            support::http_exchange(self.server.addr(), "POST", "/_mock/oauth", Some(&settings));
        assert_eq!(status, 204, "{body}");
    }

    /// `GET /_mock/oauth`: `{logins, refreshes, refused, issued, liveRefreshTokens}`.
    fn status(&self) -> Value {
        let (status, body) =
            support::http_exchange(self.server.addr(), "GET", "/_mock/oauth", None);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// The `authorization` header of each Anthropic request.
    fn bearers(&self) -> Vec<String> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.path == "/v1/messages")
            .map(|r| r.headers.get("authorization").cloned().unwrap_or_default())
            .collect()
    }
}

/// An agent dir with Anthropic on the mock and an OAuth login expiring at `expires`.
fn agent_with_login(mock: &Mock, access: &str, refresh: &str, expires: i64) -> Env {
    let env = Env::new(&mock.server, 128_000, json!({}));
    std::fs::write(
        env.agent.join("models.json"),
        json!({"providers": {"anthropic": {"baseUrl": mock.server.url()}}}).to_string(),
    )
    .unwrap();
    std::fs::write(env.agent.join("settings.json"), "{}").unwrap();
    write_login(&env, access, refresh, expires);
    env
}

fn write_login(env: &Env, access: &str, refresh: &str, expires: i64) {
    let login = json!({"anthropic": {"type": "oauth", "access": access, "refresh": refresh,
        "expires": expires}});
    std::fs::write(env.agent.join("auth.json"), login.to_string()).unwrap();
}

fn stored_access(env: &Env) -> String {
    let text = std::fs::read_to_string(env.agent.join("auth.json")).unwrap();
    let auth: Value = serde_json::from_str(&text).unwrap();
    auth["anthropic"]["access"].as_str().unwrap().to_owned()
}

/// Our pi with the OAuth endpoints on the mock and no provider keys in the environment.
fn pi(mock: &Mock) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
    command
        .env("PI_OAUTH_BASE_URL", mock.server.url())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env_remove("ANTHROPIC_OAUTH_TOKEN")
        .env_remove("ANTHROPIC_AUTH_TOKEN");
    command
}

const MODEL: [&str; 4] = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"];

fn print_prompt(env: &Env, mock: &Mock) -> Output {
    let mut args = MODEL.to_vec();
    args.extend(["-p", "hi", "--no-session"]);
    run(env, pi(mock), &args)
}

#[test]
fn a_login_with_less_than_five_minutes_left_is_refreshed_before_the_request() {
    let mock = Mock::start(&["seed-refresh-soon", "seed-refresh-later"]);
    // Two minutes left: refreshed first, the request carries the new token.
    let env = agent_with_login(
        &mock,
        "sk-ant-oat01-old-soon",
        "seed-refresh-soon",
        now_ms() + 120_000,
    );
    mock.server.push(Script::text("Refreshed."));
    let output = print_prompt(&env, &mock);
    assert!(output.status.success(), "{output:?}");
    let access = stored_access(&env);
    assert_ne!(access, "sk-ant-oat01-old-soon");
    assert_eq!(mock.bearers(), [format!("Bearer {access}")]);
    assert_eq!(mock.status()["refreshes"], 1);
    // Ten minutes left: used as it is.
    mock.server.clear_requests();
    let env = agent_with_login(
        &mock,
        "sk-ant-oat01-old-later",
        "seed-refresh-later",
        now_ms() + 600_000,
    );
    mock.server.push(Script::text("Kept."));
    let output = print_prompt(&env, &mock);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(mock.bearers(), ["Bearer sk-ant-oat01-old-later"]);
    assert_eq!(stored_access(&env), "sk-ant-oat01-old-later");
    assert_eq!(mock.status()["refreshes"], 1);
}

#[test]
fn a_running_session_uses_the_login_another_process_stored() {
    let mock = Mock::start(&[]);
    let hour = now_ms() + 3_600_000;
    let env = agent_with_login(&mock, "sk-ant-oat01-before", "refresh-before", hour);
    mock.server
        .push_all([Script::text("First."), Script::text("Second.")]);
    let mut rpc = Rpc::start_program(&env, pi(&mock), &MODEL);
    rpc.call("one", json!({"type": "prompt", "message": "first"}));
    rpc.event("agent_settled");
    // Another process (a login elsewhere) replaces the stored login.
    write_login(&env, "sk-ant-oat01-after", "refresh-after", hour);
    rpc.call("two", json!({"type": "prompt", "message": "second"}));
    rpc.event("agent_settled");
    drop(rpc);
    assert_eq!(
        mock.bearers(),
        ["Bearer sk-ant-oat01-before", "Bearer sk-ant-oat01-after"]
    );
}

#[test]
fn a_stalled_refresh_fails_and_lets_go_of_the_auth_json_lock() {
    let mock = Mock::start(&["seed-refresh-stalled", "seed-refresh-again"]);
    mock.configure(json!({"tokenDelayMs": 40_000}));
    let env = agent_with_login(&mock, "sk-ant-oat01-expired", "seed-refresh-stalled", 1000);
    let started = Instant::now();
    let output = print_prompt(&env, &mock);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("took longer than 15 seconds"),
        "the refresh timed out: {stderr}"
    );
    assert!(
        took >= Duration::from_secs(15) && took < Duration::from_secs(35),
        "{took:?}"
    );
    assert!(!env.agent.join("auth.json.lock").exists(), "lock released");
    assert!(mock.bearers().is_empty(), "no request without a token");
    // The next run refreshes at once with the lock free.
    mock.configure(json!({"tokenDelayMs": 0}));
    write_login(&env, "sk-ant-oat01-expired", "seed-refresh-again", 1000);
    mock.server.push(Script::text("Refreshed."));
    let output = print_prompt(&env, &mock);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(mock.bearers(), [format!("Bearer {}", stored_access(&env))]);
}

#[test]
fn a_prompt_aborted_while_waiting_for_the_lock_refreshes_nothing_later() {
    let mock = Mock::start(&["seed-refresh-waiting"]);
    let env = agent_with_login(&mock, "sk-ant-oat01-expired", "seed-refresh-waiting", 1000);
    let auth = env.agent.join("auth.json");
    // Another process holds the lock (fresh: not taken over as stale within 10 s).
    let lock = pi_ai::oauth::FileLock::acquire(&auth).unwrap();
    let mut rpc = Rpc::start_program(&env, pi(&mock), &MODEL);
    rpc.call("one", json!({"type": "prompt", "message": "first"}));
    rpc.event("agent_start");
    rpc.call("stop", json!({"type": "abort"}));
    // The abort is answered once the run settled.
    let ends: Vec<&Value> = rpc
        .seen
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(
        ends.last().map(|e| e["message"]["stopReason"].clone()),
        Some(json!("aborted")),
        "{:?}",
        rpc.seen
    );
    drop(lock);
    // A round trip after the lock is free: a refresh left running would have taken it.
    mock.server.push(Script::text("Unused."));
    rpc.call("state", json!({"type": "get_state"}));
    std::thread::sleep(Duration::from_millis(500));
    drop(rpc);
    assert_eq!(mock.status()["refreshes"], 0);
    assert_eq!(stored_access(&env), "sk-ant-oat01-expired");
    assert!(mock.bearers().is_empty());
}
