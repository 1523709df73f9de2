//! Sign in with ChatGPT on the `openai` provider (pi 0.99, 1.0.1): the browser registers
//! pi as an agent of this installation's device id (kept in settings.json) and comes back to
//! `127.0.0.1:1455` with the issued client id; the tokens and that client id are stored,
//! requests carry the access token, and a refresh uses the client id.
//!
//! pi 1.6.0 sends its token request to auth.openai.com itself, which cannot be reached
//! here, so it runs up to the question (the terminal must show the same lines as ours);
//! ours then finishes against mock-llm's stand-in (`PI_OAUTH_BASE_URL`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;

use mock_llm::{MockServer, Script};
use support::logins::{
    WAIT, agent_env, ask, expire, last_bearer, login, opened, shown_lines, start_login, stored,
};
use support::tmux;
use support::ts16::ts16;

/// Both tests need port 1455: one at a time.
static PORT_1455: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn port_1455() -> std::sync::MutexGuard<'static, ()> {
    PORT_1455
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

const QUESTION: &str = "Complete login in your browser, or paste the final redirect URL here:";

/// The sign-in lines with what differs by run (state, nonce, challenge, device id, the
/// mock's address in place of auth.openai.com) written alike.
fn normalized(lines: &[String], mock: &str) -> Vec<String> {
    let random = regex::Regex::new(r"(state|nonce|code_challenge)=[A-Za-z0-9_-]+").unwrap();
    let device = regex::Regex::new(r"uuid%3A[0-9a-f-]{36}").unwrap();
    lines
        .iter()
        .map(|line| {
            let line = line.replace(
                &format!("{mock}/auth.openai.com/"),
                "https://auth.openai.com/",
            );
            let line = random.replace_all(&line, "${1}=X");
            device.replace_all(&line, "uuid%3ADEVICE").into_owned()
        })
        .collect()
}

/// The lines a sign-in shows up to its question, the browser opening nothing, and the
/// device id it made.
fn lines_to_the_question(
    server: &MockServer,
    wrapper: &Option<std::path::PathBuf>,
) -> (Vec<String>, String) {
    let env = agent_env(server, "openai");
    std::fs::write(env.dir.path().join("browser.sh"), "#!/bin/sh\nexit 0\n").unwrap();
    let base = server.url();
    let tmux = start_login(&env, wrapper, &[("PI_OAUTH_BASE_URL", &base)], &["openai"]);
    tmux.wait_for(QUESTION);
    let lines = normalized(&shown_lines(&tmux, &env), &base);
    drop(tmux);
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("settings.json")).unwrap())
            .unwrap();
    let device = settings["deviceId"].as_str().unwrap_or_default().to_owned();
    (lines, device)
}

#[test]
fn sign_in_with_chatgpt_shows_pi_16s_steps_and_stores_the_issued_client() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let _port = port_1455();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let (ours, device) = lines_to_the_question(&server, &None);
    assert!(
        uuid::Uuid::parse_str(&device).is_ok(),
        "deviceId {device:?}"
    );
    assert_eq!(
        ours.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "Open this URL to sign in:",
            "  https://auth.openai.com/api/accounts/authorize?client_id=dynamic_agent_client&agent_name_hint=Pi&ext_agent_host_id=urn%3Auuid%3ADEVICE&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A1455%2Fauth%2Fcallback&resource=https%3A%2F%2Fapi.openai.com%2Fv1&scope=openid+profile+email+offline_access+resource.invoke+chatgpt.tokens.use.direct&state=X&code_challenge=X&code_challenge_method=S256&nonce=X",
            "Complete sign-in in your browser. If the callback does not complete, paste the final redirect URL here.",
            &format!("{QUESTION} (http://127.0.0.1:1455/auth/callback):"),
        ]
    );
    if let Some(wrapper) = ts16() {
        let (theirs, their_device) = lines_to_the_question(&server, &Some(wrapper));
        assert_eq!(ours, theirs);
        assert!(uuid::Uuid::parse_str(&their_device).is_ok());
    }

    // The browser follows the redirect to the callback.
    server.push_all([Script::text("hello"), Script::text("hello again")]);
    let env = agent_env(&server, "openai");
    let follow = "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/opened.txt\"\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n";
    std::fs::write(env.dir.path().join("browser.sh"), follow).unwrap();
    let base = server.url();
    let vars = [("PI_OAUTH_BASE_URL", base.as_str())];
    let run = login(&env, &None, &vars, &["openai"]);
    assert_eq!(run.code, 0, "{:#?}", run.lines);
    assert_eq!(
        run.lines[run.lines.len() - 2..],
        [
            "Exchanging authorization code for tokens...",
            "Logged in to OpenAI. Credentials saved to <AGENT>/auth.json",
        ]
    );
    assert_eq!(opened(&env).len(), 1);
    // The mock's hour, less the three minutes pi keeps in hand.
    let entry = stored(&env, &server, "openai", 57 * 60_000);
    assert_eq!(entry["clientId"], "app_mock_agent", "{entry}");
    assert!(
        entry["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "chatgpt.tokens.use.direct"),
        "{entry}"
    );
    let model = "openai/gpt-5.5";
    assert_eq!(ask(&env, &None, &vars, model), (0, String::new()));
    assert_eq!(
        last_bearer(&server),
        format!("Bearer {}", entry["access"].as_str().unwrap())
    );
    expire(&env, "openai");
    assert_eq!(ask(&env, &None, &vars, model), (0, String::new()));
    let renewed = stored(&env, &server, "openai", 57 * 60_000);
    assert_ne!(renewed["access"], entry["access"]);
    assert_eq!(renewed["clientId"], "app_mock_agent");
    assert_eq!(
        last_bearer(&server),
        format!("Bearer {}", renewed["access"].as_str().unwrap())
    );
}

/// Another sign-in holding port 1455 makes Sign in with ChatGPT fail at once with pi
/// 1.6.0's explanation, instead of a browser that ends on "OAuth state mismatch".
#[test]
fn a_taken_callback_port_fails_with_pi_16s_explanation() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let _port = port_1455();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let Ok(_holder) = std::net::TcpListener::bind("127.0.0.1:1455") else {
        eprintln!("skipped: port 1455 is taken by something else");
        return;
    };
    let mut seen = Vec::new();
    let wrappers = std::iter::once(None).chain(ts16().map(Some));
    for wrapper in wrappers {
        let env = agent_env(&server, "openai");
        let tmux = start_login(&env, &wrapper, &[], &["openai"]);
        let code = tmux.wait_exit(WAIT);
        seen.push((code, shown_lines(&tmux, &env)));
    }
    assert_eq!(
        seen[0],
        (
            1,
            vec![
                "Failed to log in to OpenAI: Port 1455 is in use, probably by an unfinished login in another pi session or by the Codex CLI. Cancel that login and try again.".to_owned()
            ]
        )
    );
    for theirs in &seen[1..] {
        assert_eq!(&seen[0], theirs);
    }
}
