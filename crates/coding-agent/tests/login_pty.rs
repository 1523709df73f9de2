//! The first run and `/login` through a real terminal: `pi` starts in tmux with no usable
//! model, opens anyway with guidance, refuses to send prompts, lists the sign-in providers,
//! signs in to Anthropic against mock-llm's stand-in sign-in server (a scripted "browser"
//! follows the redirect to pi's callback) and then talks to the model with the new token.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::logins::first_run_env;
use support::rpc::Env;
use support::tmux::{self, Tmux};

const WAIT: Duration = Duration::from_secs(20);

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("tmux is not installed; skipping");
            return;
        }
    };
}

/// A "browser" that opens the URL and follows redirects, as a signed-in user's would.
fn browser_script(env: &Env) -> String {
    let path = env.dir.path().join("browser.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\npython3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// What mock-llm's sign-in stand-in issued and counted.
async fn oauth_status(server: &MockServer) -> Value {
    let addr = server.addr();
    tokio::task::spawn_blocking(move || support::logins::oauth_status_at(addr))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_run_opens_with_guidance_and_login_makes_it_work() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = first_run_env(&server);
    let browser = browser_script(&env);
    let base = server.url();
    let tmux = Tmux::start_with(
        &env,
        &[
            ("PI_OAUTH_BASE_URL", &base),
            ("BROWSER", &browser),
            ("GEMINI_API_KEY", ""),
            ("OPENROUTER_API_KEY", ""),
        ],
        &[],
        110,
        40,
    );
    // The guidance and the footer saying "no model": the screen may be caught between the
    // writes of one frame, so the whole of it is waited for, not its first line.
    tmux.wait("the guidance and the footer", WAIT, |s| {
        s.contains("No model selected")
            && s.contains("/login")
            && s.contains("/local-llm")
            && s.contains("no model")
    });

    // A prompt is not sent: the guidance comes back instead.
    tmux.type_text("hello there");
    tmux.keys(&["Enter"]);
    tmux.wait("the guidance as an error", WAIT, |s| {
        s.contains("Error: No model selected")
    });
    assert!(server.requests().is_empty(), "nothing reached a provider");

    // /login lists the ways in and every account provider.
    tmux.type_text("/login");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Select authentication method:");
    tmux.keys(&["Enter"]);
    let names = [
        "Anthropic (Claude Pro/Max)",
        "GitHub Copilot",
        "OpenAI (ChatGPT Plus/Pro)",
        "Kimi Code (subscription)",
        "xAI (Grok/X subscription)",
    ];
    tmux.wait("every account provider", WAIT, |s| {
        s.contains("Select a provider to sign in to:") && names.iter().all(|n| s.contains(n))
    });
    tmux.keys(&["Enter"]);
    tmux.wait_for("Select Anthropic login method:");
    tmux.keys(&["Enter"]);
    let done = tmux.wait("the login to finish", WAIT, |s| {
        s.contains("Logged in to Anthropic")
    });
    // The default model of the provider (pi 1.6: Claude Opus 5.5).
    assert!(done.contains("Selected claude-opus-5-5"), "{done}");

    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("auth.json")).unwrap())
            .unwrap();
    let access = auth["anthropic"]["access"].as_str().unwrap().to_owned();
    assert_eq!(auth["anthropic"]["type"], "oauth");
    let status = oauth_status(&server).await;
    assert_eq!(status["logins"], 1, "{status}");
    assert_eq!(status["issued"][0], access.as_str());

    // The session now sends prompts, with the subscription token.
    tmux.type_text("hi after login");
    tmux.keys(&["Enter"]);
    tmux.wait("the reply", WAIT, |s| {
        s.contains("hi after login") && server.requests().len() == 1
    });
    let request = &server.requests()[0];
    assert_eq!(
        request.headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {access}").as_str()),
        "{:?}",
        request.headers
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_with_an_api_key_and_logout() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = Tmux::start(&env, &[], 100, 30);
    tmux.wait_for("mock-model");
    tmux.type_text("/login openai");
    tmux.keys(&["Enter"]);
    // OpenAI has Sign in with ChatGPT too: pi 1.6.0 asks which first.
    let methods = tmux.wait_for("Select authentication method for OpenAI:");
    assert!(
        methods.contains("Sign in with ChatGPT") && methods.contains("Sign in with an API key"),
        "{methods}"
    );
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("Enter API key for OpenAI:");
    tmux.type_text("sk-typed-secret");
    let masked = tmux.screen();
    assert!(
        !masked.contains("sk-typed-secret"),
        "the key is masked:\n{masked}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("Saved API key for OpenAI");
    let path = env.agent.join("auth.json");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        auth["openai"],
        json!({"type": "api_key", "key": "sk-typed-secret"})
    );
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);

    tmux.type_text("/logout");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Select a provider to log out of:");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Removed stored API key for OpenAI");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(auth, json!({}));
}
