//! "Sign in with OpenRouter" (pi 0.82/0.83): PKCE through a localhost callback on a free
//! port, or the redirect URL pasted when the browser is elsewhere; the code buys an API key
//! that the model requests then carry.
//!
//! pi 1.6.0 sends the key exchange to openrouter.ai itself, which cannot be reached here, so
//! it runs up to the question (the terminal must show the same lines as ours); ours then
//! finishes against mock-llm's stand-in (`PI_OAUTH_BASE_URL`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::{MockServer, Script};
use support::logins::{
    WAIT, agent_env, ask, last_bearer, login, oauth_status, opened, shown_lines, start_login,
};
use support::tmux;
use support::ts16::ts16;

const QUESTION: &str =
    "Complete sign-in in your browser, or paste the authorization code / redirect URL here:";

/// The sign-in lines with what differs by run (port, callback id, challenge, the mock's
/// address in place of openrouter.ai) written alike.
fn normalized(lines: &[String], mock: &str) -> Vec<String> {
    let port = regex::Regex::new(r"127\.0\.0\.1(%3A|:)\d+").unwrap();
    let id = regex::Regex::new(r"callback(%2F|/)[0-9a-f-]{36}").unwrap();
    let challenge = regex::Regex::new(r"code_challenge=[A-Za-z0-9_-]+").unwrap();
    lines
        .iter()
        .map(|line| {
            let line = line.replace(&format!("{mock}/openrouter.ai/"), "https://openrouter.ai/");
            let line = port.replace_all(&line, "127.0.0.1${1}PORT");
            let line = id.replace_all(&line, "callback${1}ID");
            challenge
                .replace_all(&line, "code_challenge=CHALLENGE")
                .into_owned()
        })
        .collect()
}

/// The lines a sign-in shows up to its question, the browser opening nothing.
fn lines_to_the_question(server: &MockServer, wrapper: &Option<std::path::PathBuf>) -> Vec<String> {
    let env = agent_env(server, "openrouter");
    std::fs::write(env.dir.path().join("browser.sh"), "#!/bin/sh\nexit 0\n").unwrap();
    let base = server.url();
    let tmux = start_login(
        &env,
        wrapper,
        &[("PI_OAUTH_BASE_URL", &base)],
        &["openrouter"],
    );
    tmux.wait_for(QUESTION);
    // Ending the terminal ends the sign-in (a Ctrl-C would stop tmux's wrapper shell too).
    normalized(&shown_lines(&tmux, &env), &base)
}

#[test]
fn openrouter_sign_in_shows_pi_16s_steps_and_mints_a_key() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let ours = lines_to_the_question(&server, &None);
    assert_eq!(
        ours.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "Listening for OpenRouter OAuth callback on http://127.0.0.1:PORT/oauth/callback/ID",
            "Open this URL to sign in:",
            "  https://openrouter.ai/auth?callback_url=http%3A%2F%2F127.0.0.1%3APORT%2Foauth%2Fcallback%2FID&code_challenge=CHALLENGE&code_challenge_method=S256",
            "Complete sign-in in your browser. If the browser is on another machine, paste the final redirect URL here.",
            &format!("{QUESTION} (http://127.0.0.1:PORT/oauth/callback/ID):"),
        ]
    );
    if let Some(wrapper) = ts16() {
        assert_eq!(ours, lines_to_the_question(&server, &Some(wrapper)));
    }

    // The browser follows OpenRouter's redirect to the callback: a key is minted and used.
    server.push(Script::text("hello"));
    let env = agent_env(&server, "openrouter");
    let follow = "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/opened.txt\"\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n";
    std::fs::write(env.dir.path().join("browser.sh"), follow).unwrap();
    let base = server.url();
    let vars = [("PI_OAUTH_BASE_URL", base.as_str())];
    let run = login(&env, &None, &vars, &["openrouter"]);
    assert_eq!(run.code, 0, "{:#?}", run.lines);
    assert_eq!(
        run.lines.last().map(String::as_str),
        Some("Logged in to OpenRouter. Credentials saved to <AGENT>/auth.json")
    );
    assert_eq!(opened(&env).len(), 1);
    let auth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("auth.json")).unwrap())
            .unwrap();
    let key = auth["openrouter"]["access"].as_str().unwrap().to_owned();
    assert!(key.starts_with("sk-or-v1-mock-"), "{auth}");
    // The key never expires: pi-ai stores Number.MAX_SAFE_INTEGER and no refresh token.
    assert_eq!(
        auth["openrouter"],
        json!({"type": "oauth", "refresh": "", "access": key, "expires": 9_007_199_254_740_991_i64})
    );
    let model = "openrouter/~deepseek/deepseek-flash-latest";
    assert_eq!(ask(&env, &None, &vars, model), (0, String::new()));
    assert_eq!(last_bearer(&server), format!("Bearer {key}"));
    assert_eq!(oauth_status(&server)["logins"], 1);
}

/// Over SSH the browser is elsewhere: the redirect URL it ends on is pasted instead.
#[test]
fn a_pasted_redirect_url_signs_in_without_the_callback() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let env = agent_env(&server, "openrouter");
    let base = server.url();
    let tmux = start_login(
        &env,
        &None,
        &[("PI_OAUTH_BASE_URL", &base)],
        &["openrouter", "--no-browser"],
    );
    let screen = tmux.wait_for(QUESTION);
    assert!(opened(&env).is_empty(), "--no-browser opens nothing");
    // The other machine's browser: OpenRouter answers with a redirect it cannot follow.
    let url = shown_lines(&tmux, &env)
        .iter()
        .find_map(|l| l.trim().strip_prefix(base.as_str()).map(str::to_owned))
        .unwrap_or_else(|| panic!("no sign-in URL in {screen}"));
    let redirect = redirect_of(server.addr(), &url);
    assert!(redirect.contains("/oauth/callback/") && redirect.contains("code="));
    tmux.type_text(&redirect);
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(WAIT), 0, "{:#?}", shown_lines(&tmux, &env));
    let lines = shown_lines(&tmux, &env);
    assert!(
        lines
            .iter()
            .any(|l| l == "Exchanging authorization code for an API key..."),
        "{lines:#?}"
    );
    let auth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("auth.json")).unwrap())
            .unwrap();
    assert!(
        auth["openrouter"]["access"]
            .as_str()
            .unwrap()
            .starts_with("sk-or-v1-mock-")
    );
}

/// The `Location` the mock answers a GET of `target` with.
fn redirect_of(addr: std::net::SocketAddr, target: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    write!(stream, "GET {target} HTTP/1.0\r\nHost: mock\r\n\r\n").unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
        .lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        })
        .unwrap_or_else(|| panic!("no redirect: {reply}"))
        .trim()
        .to_owned()
}
