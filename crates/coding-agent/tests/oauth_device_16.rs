//! The device-code subscription sign-ins pi 1.6.0 added: Kimi Code and xAI. `pi auth login`
//! runs in a tmux terminal against mock-llm's stand-in sign-in servers; then a model request
//! must carry the stored token, an expired one is refreshed first, and a revoked one fails
//! with the server's answer.
//!
//! Kimi Code's sign-in server is configurable (`KIMI_CODE_OAUTH_HOST`), so ours and pi 1.6.0
//! (`PI_TS16`) run the same steps and must show the same lines, open the same page and store
//! the same kind of login. xAI's is fixed to auth.x.ai in pi 1.6.0, so only ours runs it
//! (through `PI_OAUTH_BASE_URL`), held to what 1.6.0's source does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::logins::{
    WAIT, agent_env, ask, configure, expire, last_bearer, login, oauth_status, opened,
    opened_at_least, stored,
};
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program};

/// One pi's Kimi Code run: sign in (the browser opens the prefilled page), ask, refresh an
/// expired token, then fail on a revoked one.
fn kimi_run(wrapper: &Option<PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push_all([Script::text("hello"), Script::text("hello again")]);
    let env = agent_env(&server, "kimi-coding");
    let host = format!("{}/auth.kimi.com", server.url());
    let vars = [("KIMI_CODE_OAUTH_HOST", host.as_str())];
    let signed_in = login(&env, wrapper, &vars, &["kimi-coding"]);
    let entry = stored(&env, &server, "kimi-coding", 3_600_000);
    // The sign-in opened the prefilled page (its record may follow pi's exit).
    let pages = opened_at_least(&env, 1);
    let first = ask(&env, wrapper, &vars, "kimi-coding/k3");
    let first_bearer = last_bearer(&server);
    assert_eq!(
        first_bearer,
        format!("Bearer {}", entry["access"].as_str().unwrap())
    );
    expire(&env, "kimi-coding");
    let refreshed = ask(&env, wrapper, &vars, "kimi-coding/k3");
    let renewed = stored(&env, &server, "kimi-coding", 3_600_000);
    assert_ne!(renewed["access"], entry["access"]);
    assert_eq!(
        last_bearer(&server),
        format!("Bearer {}", renewed["access"].as_str().unwrap())
    );
    configure(&server, json!({"revokeAll": true}));
    expire(&env, "kimi-coding");
    let revoked = ask(&env, wrapper, &vars, "kimi-coding/k3");
    let no_browser_env = agent_env(&server, "kimi-coding");
    let headless = login(
        &no_browser_env,
        wrapper,
        &vars,
        &["kimi-coding", "--no-browser"],
    );
    json!({
        "login": [signed_in.code, signed_in.lines],
        "pages": pages,
        "ask": first,
        "refreshed": refreshed,
        "revoked": revoked,
        "headless": [headless.code, headless.lines, opened(&no_browser_env)],
        "status": oauth_status(&server),
    })
}

#[test]
fn kimi_code_device_login_refresh_and_revocation_are_pi_16s() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let runs: Vec<(&str, Value)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, kimi_run(&wrapper)))
        .collect();
    let ours = &runs[0].1;
    assert_eq!(
        ours["login"][1],
        json!([
            "Open https://www.kimi.com/code/authorize_device?user_code=WXYZ-5678 and enter code: WXYZ-5678",
            "Waiting for authentication...",
            "Logged in to Kimi For Coding. Credentials saved to <AGENT>/auth.json",
        ]),
        "{ours:#}"
    );
    assert_eq!(ours["login"][0], 0);
    assert_eq!(
        ours["pages"],
        json!(["https://www.kimi.com/code/authorize_device?user_code=WXYZ-5678"])
    );
    assert_eq!(ours["ask"], json!([0, ""]));
    assert_eq!(ours["refreshed"], json!([0, ""]));
    assert_eq!(ours["revoked"][0], 1, "{ours:#}");
    assert_eq!(
        ours["revoked"][1],
        "OAuth refresh failed for kimi-coding: Kimi Code token refresh unauthorized (status 400): Refresh token is invalid, used or revoked"
    );
    assert_eq!(ours["headless"][2], json!([]), "--no-browser opens nothing");
    // Two sign-ins and one refresh; the revoked token was refused (once per attempt).
    assert_eq!(ours["status"]["logins"], 2, "{ours:#}");
    assert_eq!(ours["status"]["refreshes"], 1, "{ours:#}");
    for (name, theirs) in &runs[1..] {
        let mut theirs = theirs.clone();
        let mut ours = ours.clone();
        // The retries of a request whose login failed: each asks the server again.
        for run in [&mut theirs, &mut ours] {
            run["status"]["refused"] = json!(null);
            run["status"]["issued"] = json!(null);
            run["status"]["liveRefreshTokens"] = json!(null);
            // When each device code was issued and polled (compared in oauth_device_polling_16.rs).
            run["status"]["deviceEvents"] = json!(null);
        }
        assert_eq!(ours, theirs, "ours against {name}");
    }
}

/// After a sign-in to `model`'s provider: a request carries the stored token (expiring
/// `lifetime_ms` after the sign-in), an expired one is refreshed first and the new one
/// sent, then every refresh token is revoked. The first and the renewed login, and the
/// exit code and stderr of the request on the revoked one.
fn use_refresh_revoke(
    env: &Env,
    server: &MockServer,
    vars: &[(&str, &str)],
    model: &str,
    lifetime_ms: i64,
) -> (Value, Value, (i32, String)) {
    let provider = model.split('/').next().unwrap();
    let entry = stored(env, server, provider, lifetime_ms);
    assert_eq!(ask(env, &None, vars, model), (0, String::new()));
    assert_eq!(
        last_bearer(server),
        format!("Bearer {}", entry["access"].as_str().unwrap())
    );
    expire(env, provider);
    assert_eq!(ask(env, &None, vars, model), (0, String::new()));
    let renewed = stored(env, server, provider, lifetime_ms);
    assert_ne!(renewed["access"], entry["access"]);
    assert_eq!(
        last_bearer(server),
        format!("Bearer {}", renewed["access"].as_str().unwrap())
    );
    configure(server, json!({"revokeAll": true}));
    expire(env, provider);
    let revoked = ask(env, &None, vars, model);
    (entry, renewed, revoked)
}

#[test]
fn xai_device_login_and_refresh_follow_pi_16s_flow() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push_all([Script::text("hello"), Script::text("hello again")]);
    let env = agent_env(&server, "xai");
    let base = server.url();
    let vars = [("PI_OAUTH_BASE_URL", base.as_str())];
    let run = login(&env, &None, &vars, &["xai"]);
    assert_eq!(run.code, 0, "{:#?}", run.lines);
    assert_eq!(
        run.lines,
        [
            "Open https://accounts.x.ai/device?user_code=WXYZ-5678 and enter code: WXYZ-5678",
            "Waiting for authentication...",
            "Logged in to xAI. Credentials saved to <AGENT>/auth.json",
        ]
    );
    assert_eq!(
        opened_at_least(&env, 1),
        ["https://accounts.x.ai/device?user_code=WXYZ-5678"]
    );
    // pi keeps five minutes of the hour in hand.
    let (_, _, revoked) = use_refresh_revoke(&env, &server, &vars, "xai/grok-4.5", 3_300_000);
    assert_eq!(
        revoked,
        (
            1,
            "OAuth refresh failed for xai: xAI OAuth token refresh failed (HTTP 400): invalid_grant: Refresh token is invalid, used or revoked".to_owned()
        )
    );
    // xAI takes an API key too.
    let key_env = agent_env(&server, "xai");
    let keyed = Tmux::start_with(
        &key_env,
        &[],
        &["auth", "login", "xai", "--api-key"],
        200,
        40,
    );
    keyed.wait_for("Enter API key:");
    keyed.type_text("xai-test-key");
    keyed.keys(&["Enter"]);
    assert_eq!(keyed.wait_exit(WAIT), 0);
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(key_env.agent.join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(
        auth["xai"],
        json!({"type": "api_key", "key": "xai-test-key"})
    );
}

/// The providers `pi auth login` names when it does not know one are pi 1.6.0's: Kimi Code
/// and xAI among them, Google Gemini CLI and Antigravity (retired in pi 0.71) not.
#[test]
fn auth_login_knows_the_providers_pi_16_knows() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let answers: Vec<Value> = pis()
        .into_iter()
        .map(|(_, wrapper)| {
            let mut answer = Vec::new();
            for provider in ["nosuch", "google-gemini-cli", "google-antigravity"] {
                let out = support::ts16::run(&env, program(&wrapper), &["auth", "login", provider]);
                answer.push(json!([
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr),
                ]));
            }
            Value::Array(answer)
        })
        .collect();
    let ours = answers[0][0][1].as_str().unwrap();
    assert!(
        ours.contains(" kimi-coding, ")
            && ours.contains(" xai, ")
            && !ours.contains("google-gemini-cli")
            && !ours.contains("google-antigravity"),
        "{ours}"
    );
    assert_eq!(answers[0][1][0], 1, "{:#}", answers[0]);
    for theirs in &answers[1..] {
        assert_eq!(&answers[0], theirs);
    }
}

/// Meta (Muse): the device sign-in's identity token mints a Model API key for a day; a
/// refresh mints another with it, and a revoked one fails with Meta's answer. pi 1.6.0's
/// auth.meta.com is fixed, so only ours runs it, held to 1.6.0's source.
#[test]
fn meta_device_login_mints_a_key_and_refreshes_it() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push_all([Script::text("hello"), Script::text("hello again")]);
    let env = agent_env(&server, "meta");
    let base = server.url();
    let vars = [("PI_OAUTH_BASE_URL", base.as_str())];
    let run = login(&env, &None, &vars, &["meta"]);
    assert_eq!(run.code, 0, "{:#?}", run.lines);
    assert_eq!(
        run.lines,
        [
            "Open https://auth.meta.com/device?user_code=WXYZ-5678 and enter code: WXYZ-5678",
            "Waiting for authentication...",
            "Enabling Meta Model API access...",
            "Logged in to Meta. Credentials saved to <AGENT>/auth.json",
        ]
    );
    let (entry, renewed, revoked) =
        use_refresh_revoke(&env, &server, &vars, "meta/muse-spark-1.3", 24 * 3_600_000);
    assert!(
        entry["access"]
            .as_str()
            .unwrap()
            .starts_with("meta-mock-key-")
    );
    assert!(
        entry["refresh"]
            .as_str()
            .unwrap()
            .starts_with("meta-identity-"),
        "the identity token is kept to mint the next key: {entry}"
    );
    assert_eq!(renewed["refresh"], entry["refresh"]);
    assert_eq!(oauth_status(&server)["refreshes"], 1);
    assert_eq!(
        revoked,
        (
            1,
            "OAuth refresh failed for meta: Meta session expired (status 401). Run `/login meta` to sign in again.: Identity token expired or revoked".to_owned()
        )
    );
}

/// In the interactive UI a device-code sign-in shows its page and code and opens nothing
/// until Enter, which opens the page and copies the code (pi 0.79.5; ours only, with the
/// recording browser). `/login kimi-coding` first asks for the sign-in or an API key.
#[test]
fn an_interactive_device_sign_in_opens_the_browser_only_on_enter() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    // The user has not approved the code yet: the sign-in waits.
    configure(&server, json!({"pendingPolls": 1000}));
    let env = agent_env(&server, "kimi-coding");
    let browser = env.dir.path().join("browser.sh").display().to_string();
    let host = format!("{}/auth.kimi.com", server.url());
    let vars = [
        ("BROWSER", browser.as_str()),
        ("KIMI_CODE_OAUTH_HOST", host.as_str()),
        ("PI_OFFLINE", "1"),
    ];
    let tmux = Tmux::start_program(&env, env!("CARGO_BIN_EXE_pi"), &vars, &[], 120, 40);
    tmux.wait_for("ctrl+o more");
    tmux.type_text("/login kimi-coding");
    tmux.keys(&["Enter"]);
    let methods = tmux.wait_for("Select authentication method for Kimi For Coding:");
    assert!(methods.contains("Sign in with Kimi Code"), "{methods}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("(enter to open browser and copy code)");
    // A marker before the Enter: the page must be opened after it, not when it was shown.
    let opened_file = env.dir.path().join("opened.txt");
    std::fs::write(&opened_file, "ENTER\n").unwrap();
    tmux.keys(&["Enter"]);
    tmux.wait_for("Browser open requested");
    let page = "https://www.kimi.com/code/authorize_device?user_code=WXYZ-5678";
    let deadline = std::time::Instant::now() + WAIT;
    while opened(&env).len() < 2 {
        assert!(std::time::Instant::now() < deadline, "{:?}", opened(&env));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(opened(&env), ["ENTER", page]);
    // The user approves: the sign-in ends.
    configure(&server, json!({"pendingPolls": 0}));
    tmux.wait_for("Logged in to Kimi For Coding");
}
