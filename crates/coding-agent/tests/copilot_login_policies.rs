//! The GitHub Copilot sign-in's model steps (pi 0.84.2, 0.84.3): after the Copilot token,
//! `pi auth login github-copilot` reads the account's models, then accepts the policy of each
//! one still unconfigured, one request at a time. A 429 is retried (twice at most, within
//! 5 s) after the server's `retry-after`; a policy still rate limited ends the updates, and a
//! model list still rate limited fails the sign-in. The models the account can use are
//! stored with the login (`availableModelIds`).
//!
//! pi 1.6.0 signs in at github.com and api.individual.githubcopilot.com with no way to point
//! it elsewhere, so only ours runs (through `PI_OAUTH_BASE_URL`, against mock-llm's Copilot
//! stand-in), held to what 1.6.0's source does (`fetchWithRateLimitRetry`,
//! `enableGitHubCopilotModels`, `parseGitHubCopilotModelCatalog`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::logins::{WAIT, agent_env, shown_lines, start_login};
use support::rpc::Env;
use support::tmux;

/// The mock's record of the Copilot API calls (path, status, time) and the most policy
/// requests it had in flight at once.
fn copilot_status(server: &MockServer) -> Value {
    let (code, body) = support::http_exchange(server.addr(), "GET", "/_mock/copilot", None);
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// One sign-in: its exit code, the lines shown, the Copilot API calls and the agent dir.
struct SignIn {
    code: i32,
    lines: Vec<String>,
    status: Value,
    env: Env,
}

/// Signs in to GitHub Copilot (github.com) with the Copilot API answering as `settings`
/// says; `None` (skipped) without tmux.
fn sign_in(settings: Value) -> Option<SignIn> {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return None;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let (code, body) =
        support::http_exchange(server.addr(), "POST", "/_mock/copilot", Some(&settings));
    assert_eq!(code, 204, "{body}");
    let env = agent_env(&server, "github-copilot");
    let base = server.url();
    let login = start_login(
        &env,
        &None,
        &[("PI_OAUTH_BASE_URL", base.as_str())],
        &["github-copilot"],
    );
    login.wait_for("GitHub Enterprise URL/domain (blank for github.com)");
    login.keys(&["Enter"]);
    let code = login.wait_exit(WAIT);
    let lines = shown_lines(&login, &env);
    let status = copilot_status(&server);
    drop(server);
    drop(runtime);
    Some(SignIn {
        code,
        lines,
        status,
        env,
    })
}

/// Each call as `<status> <path>`.
fn calls(status: &Value) -> Vec<String> {
    status["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {}", c["status"], c["path"].as_str().unwrap()))
        .collect()
}

/// Milliseconds between call `a` and call `b`.
fn gap(status: &Value, a: usize, b: usize) -> u64 {
    let at = |i: usize| status["calls"][i]["atMs"].as_u64().unwrap();
    at(b) - at(a)
}

fn stored_models(env: &Env) -> Value {
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("auth.json")).unwrap())
            .unwrap();
    auth["github-copilot"]["availableModelIds"].clone()
}

#[test]
fn copilot_login_retries_after_the_servers_delay_and_enables_policies_one_at_a_time() {
    let settings = json!({"modelsRateLimits": 1, "policyRateLimits": 1, "retryAfter": "1"});
    let Some(SignIn {
        code,
        lines,
        status,
        env,
    }) = sign_in(settings)
    else {
        return;
    };
    assert_eq!(code, 0, "{lines:#?}");
    assert_eq!(
        calls(&status),
        [
            "429 /models",
            "200 /models",
            "429 /models/claude-sonnet-5/policy",
            "200 /models/claude-sonnet-5/policy",
            "200 /models/claude-opus-5/policy",
            "200 /models/gemini-4-argon/policy",
        ]
    );
    // `retry-after: 1` is waited out before each retry.
    assert!(gap(&status, 0, 1) >= 1000, "{status}");
    assert!(gap(&status, 2, 3) >= 1000, "{status}");
    assert_eq!(status["maxInFlight"], 1, "{status}");
    assert!(
        lines.iter().any(|l| l == "Enabling models..."),
        "{lines:#?}"
    );
    // The picker's models (the disabled and tool-less ones left out).
    assert_eq!(
        stored_models(&env),
        json!([
            "claude-sonnet-5",
            "claude-opus-5",
            "gemini-4-argon",
            "gpt-6.2-sol"
        ])
    );
}

#[test]
fn a_policy_still_rate_limited_ends_the_policy_updates() {
    // A 10 s wait would end past the 5 s the retries may take: no retry, no more policies.
    let settings = json!({"policyRateLimits": 1, "retryAfter": "10"});
    let Some(SignIn {
        code,
        lines,
        status,
        env,
    }) = sign_in(settings)
    else {
        return;
    };
    assert_eq!(code, 0, "{lines:#?}");
    assert_eq!(
        calls(&status),
        ["200 /models", "429 /models/claude-sonnet-5/policy"]
    );
    assert_eq!(
        stored_models(&env),
        json!([
            "claude-sonnet-5",
            "claude-opus-5",
            "gemini-4-argon",
            "gpt-6.2-sol"
        ])
    );
}

#[test]
fn a_model_list_still_rate_limited_after_two_retries_fails_the_sign_in() {
    // No `retry-after`: 0.5 s, then 1 s.
    let settings = json!({"modelsRateLimits": 3});
    let Some(SignIn {
        code,
        lines,
        status,
        ..
    }) = sign_in(settings)
    else {
        return;
    };
    assert_ne!(code, 0, "{lines:#?}");
    assert_eq!(
        calls(&status),
        ["429 /models", "429 /models", "429 /models"]
    );
    assert!(gap(&status, 0, 1) >= 500, "{status}");
    assert!(gap(&status, 1, 2) >= 1000, "{status}");
    let failure = r#"429 Too Many Requests: {"message":"API rate limit exceeded"}"#;
    assert!(lines.iter().any(|l| l.contains(failure)), "{lines:#?}");
}

/// An account whose model list shows nothing in the picker (answers that only carry
/// policies, pi 0.84.0's restored fallback for the individual endpoint): the models whose
/// policy is on are available, the catalog's unconfigured ones are accepted and added, and
/// the disabled one stays out. `--list-models` then offers exactly those (pi 1.6.0's
/// `filterModels`, compared side by side in `copilot_models_16.rs`).
#[test]
fn an_account_without_picker_models_keeps_its_policy_models() {
    let Some(SignIn {
        code,
        lines,
        status,
        env,
    }) = sign_in(json!({"pickerOff": true}))
    else {
        return;
    };
    assert_eq!(code, 0, "{lines:#?}");
    assert_eq!(
        calls(&status),
        [
            "200 /models",
            "200 /models/claude-sonnet-5/policy",
            "200 /models/claude-opus-5/policy",
            "200 /models/gemini-4-argon/policy",
        ]
    );
    let mut stored: Vec<String> = serde_json::from_value(stored_models(&env)).unwrap();
    assert_eq!(
        stored,
        [
            "gpt-6.2-sol",
            "claude-sonnet-5",
            "claude-opus-5",
            "gemini-4-argon"
        ]
    );
    let mut command = support::ts16::ours();
    command.env("PI_OFFLINE", "1");
    let out = support::ts16::run(&env, command, &["--list-models", "github-copilot"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut listed: Vec<String> = text
        .lines()
        .filter_map(|line| {
            let mut columns = line.split_whitespace();
            (columns.next() == Some("github-copilot")).then(|| columns.next())?
        })
        .map(str::to_owned)
        .collect();
    listed.sort();
    stored.sort();
    assert_eq!(listed, stored, "{text}");
}
