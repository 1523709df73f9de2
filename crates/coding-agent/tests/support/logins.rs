//! Account sign-ins through `pi auth login` in a tmux terminal against mock-llm's stand-in
//! sign-in servers, for ours and pi 1.6.0: a recording "browser", the stored login, and a
//! model request with it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use mock_llm::MockServer;

use super::rpc::Env;
use super::tmux::Tmux;
use super::ts16::program;

pub const WAIT: Duration = Duration::from_secs(60);

/// A first run: an agent dir whose only change is Anthropic's base URL (pointed at the
/// mock), no key anywhere, no default model.
pub fn first_run_env(server: &MockServer) -> Env {
    let env = Env::new(server, 128_000, json!({}));
    std::fs::write(
        env.agent.join("models.json"),
        json!({"providers": {"anthropic": {"baseUrl": server.url()}}}).to_string(),
    )
    .unwrap();
    std::fs::write(env.agent.join("settings.json"), "{}").unwrap();
    env
}

pub fn now_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// An agent dir whose `provider` sends its requests to the mock, and a "browser" that
/// records each page it is asked to open.
pub fn agent_env(server: &MockServer, provider: &str) -> Env {
    let env = Env::new(server, 128_000, json!({}));
    let models = json!({"providers": {provider: {"baseUrl": server.openai_base_url()}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let browser = env.dir.path().join("browser.sh");
    let opened = env.dir.path().join("opened.txt");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" >> '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env
}

/// The pages the browser was asked to open.
pub fn opened(env: &Env) -> Vec<String> {
    std::fs::read_to_string(env.dir.path().join("opened.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The pages opened once there are `count` of them: a browser is started in the
/// background (pi 1.6.0 does not wait for it), so its record may follow pi's exit. Gives
/// what is there after [`WAIT`] otherwise, for the caller's assertion to report.
pub fn opened_at_least(env: &Env, count: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let pages = opened(env);
        if pages.len() >= count || std::time::Instant::now() > deadline {
            return pages;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// What a `pi auth login` run showed (its lines, the agent dir as `<AGENT>`) and its exit.
pub struct Login {
    pub code: i32,
    pub lines: Vec<String>,
}

/// Starts `pi auth login <args>` (ours, or pi 1.6.0 with `wrapper`) in tmux, offline, with
/// the recording browser of [`agent_env`].
pub fn start_login(
    env: &Env,
    wrapper: &Option<PathBuf>,
    vars: &[(&str, &str)],
    args: &[&str],
) -> Tmux {
    let browser = env.dir.path().join("browser.sh").display().to_string();
    let mut all_vars = vec![("BROWSER", browser.as_str()), ("PI_OFFLINE", "1")];
    all_vars.extend_from_slice(vars);
    let mut all_args = vec!["auth", "login"];
    all_args.extend_from_slice(args);
    let pi = match wrapper {
        Some(wrapper) => wrapper.display().to_string(),
        None => env!("CARGO_BIN_EXE_pi").to_owned(),
    };
    Tmux::start_program(env, &pi, &all_vars, &all_args, 200, 40)
}

/// The non-empty lines `tmux` shows, the agent dir written `<AGENT>`.
pub fn shown_lines(tmux: &Tmux, env: &Env) -> Vec<String> {
    let agent = env.agent.display().to_string();
    tmux.joined_history()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("Pane is dead"))
        .map(|l| l.replace(&agent, "<AGENT>"))
        .collect()
}

/// Runs `pi auth login <args>` to its end (see [`start_login`]).
pub fn login(env: &Env, wrapper: &Option<PathBuf>, vars: &[(&str, &str)], args: &[&str]) -> Login {
    let tmux = start_login(env, wrapper, vars, args);
    let code = tmux.wait_exit(WAIT);
    Login {
        code,
        lines: shown_lines(&tmux, env),
    }
}

/// The stored login of `provider`, checked to be an OAuth entry the mock issued, expiring
/// `lifetime_ms` after the sign-in (within a minute).
pub fn stored(env: &Env, server: &MockServer, provider: &str, lifetime_ms: i64) -> Value {
    let path = env.agent.join("auth.json");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let entry = auth[provider].clone();
    assert_eq!(entry["type"], "oauth", "{auth}");
    let access = entry["access"].as_str().unwrap();
    let status = oauth_status(server);
    assert!(
        status["issued"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == access),
        "{access} issued by the mock: {status}"
    );
    assert!(entry["refresh"].as_str().is_some_and(|r| !r.is_empty()));
    let expires = entry["expires"].as_i64().unwrap();
    let expected = now_ms() + lifetime_ms;
    assert!(
        (expected - 60_000..=expected).contains(&expires),
        "expiry {expires}, expected about {expected}: {entry}"
    );
    entry
}

pub fn oauth_status(server: &MockServer) -> Value {
    oauth_status_at(server.addr())
}

/// [`oauth_status`] of the mock at `addr` (for callers on another thread).
pub fn oauth_status_at(addr: std::net::SocketAddr) -> Value {
    let (code, body) = super::http_exchange(addr, "GET", "/_mock/oauth", None);
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

pub fn configure(server: &MockServer, settings: Value) {
    let (code, body) = super::http_exchange(server.addr(), "POST", "/_mock/oauth", Some(&settings));
    assert_eq!(code, 204, "{body}");
}

/// Marks the stored login of `provider` as long expired.
pub fn expire(env: &Env, provider: &str) {
    let path = env.agent.join("auth.json");
    let mut auth: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    auth[provider]["expires"] = json!(1000);
    std::fs::write(&path, auth.to_string()).unwrap();
}

/// `pi -p hi --model <model>` offline; its exit code and stderr.
pub fn ask(
    env: &Env,
    wrapper: &Option<PathBuf>,
    vars: &[(&str, &str)],
    model: &str,
) -> (i32, String) {
    let mut command = program(wrapper);
    command
        .args(["-p", "hi", "--model", model, "--no-session"])
        .envs(vars.iter().copied())
        .env("PI_OFFLINE", "1");
    let out = super::ts16::run(env, command, &[]);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    )
}

/// The bearer token of the mock's last model request.
pub fn last_bearer(server: &MockServer) -> String {
    let requests = server.requests();
    let request = requests
        .iter()
        .rev()
        .find(|r| !r.path.starts_with("/auth."))
        .expect("a model request");
    request
        .headers
        .get("authorization")
        .cloned()
        .unwrap_or_default()
}
