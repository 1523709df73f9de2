//! Subscription sign-ins and token refresh through the real `pi` binary against mock-llm's
//! stand-in sign-in servers (`PI_OAUTH_BASE_URL`): `pi auth login <provider>` in a tmux
//! terminal for every OAuth provider (browser, copy-code and device flows, with a scripted
//! "browser" that follows the redirect to pi's callback), what lands in auth.json, the
//! refresh of an expired token before a model request, two processes refreshing at once
//! under the auth.json lock, a revoked refresh token, and the login refusals.
//!
//! The callback ports are fixed per provider, so the tests run one at a time (a static
//! mutex), each with its own mock server on its own runtime.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::Env;
use support::tmux::{self, Tmux};

/// How long a sign-in (or a `pi` run) may take.
const WAIT: Duration = Duration::from_secs(30);

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the other tests of this file off (the callback ports are fixed).
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The python3 interpreter the scripted browser uses (its real path: HOME changes under
/// pi, which a version-manager shim may depend on), or `None` to skip.
fn python() -> Option<String> {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !path.is_empty()).then_some(path)
}

/// The python3 path when tmux and python3 are there; else prints why the test is skipped.
macro_rules! require_tools {
    () => {{
        if !tmux::available() {
            eprintln!("tmux is not installed; skipping");
            return;
        }
        let Some(python) = python() else {
            eprintln!("python3 is not installed; skipping");
            return;
        };
        python
    }};
}

fn now_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// A mock server on its own runtime (the tests themselves are synchronous).
struct Mock {
    server: MockServer,
    _runtime: tokio::runtime::Runtime,
}

impl Mock {
    fn start() -> Mock {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(MockServer::start()).unwrap();
        Mock {
            server,
            _runtime: runtime,
        }
    }

    fn url(&self) -> String {
        self.server.url()
    }

    /// `GET /_mock/oauth`: `{logins, refreshes, refused, issued, liveRefreshTokens}`.
    fn status(&self) -> Value {
        let (code, body) = support::http_exchange(self.server.addr(), "GET", "/_mock/oauth", None);
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// `POST /_mock/oauth`.
    fn configure(&self, settings: Value) {
        let (code, body) =
            support::http_exchange(self.server.addr(), "POST", "/_mock/oauth", Some(&settings));
        assert_eq!(code, 204, "{body}");
    }

    /// Whether the mock issued this access token.
    fn issued(&self, token: &str) -> bool {
        self.status()["issued"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == token)
    }

    /// The `/v1/messages` requests the mock received.
    fn anthropic_requests(&self) -> Vec<mock_llm::RecordedRequest> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.path == "/v1/messages")
            .collect()
    }
}

/// An agent dir with Anthropic's base URL on the mock (no key, no default model) and a
/// scripted browser next to it.
fn agent_env(mock: &Mock, python: &str) -> Env {
    let env = Env::new(&mock.server, 128_000, json!({}));
    std::fs::write(
        env.agent.join("models.json"),
        json!({"providers": {"anthropic": {"baseUrl": mock.url()}}}).to_string(),
    )
    .unwrap();
    std::fs::write(env.agent.join("settings.json"), "{}").unwrap();
    let browser = env.dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nexec '{python}' -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    env
}

fn browser_of(env: &Env) -> String {
    env.dir.path().join("browser.sh").display().to_string()
}

/// A finished `pi auth login` in tmux.
struct LoginRun {
    code: i32,
    /// Everything the terminal showed, wrapped lines joined.
    shown: String,
}

impl LoginRun {
    /// Asserts a clean exit and the success line naming the auth file.
    fn assert_logged_in(&self, env: &Env, name: &str) {
        assert_eq!(self.code, 0, "login exit code; terminal:\n{}", self.shown);
        let expected = format!(
            "Logged in to {name}. Credentials saved to {}",
            env.agent.join("auth.json").display()
        );
        assert!(
            self.shown.lines().any(|l| l.trim_end() == expected),
            "{expected:?} in:\n{}",
            self.shown
        );
    }
}

/// Runs `pi auth login <args>` in tmux with the OAuth endpoints on the mock and `browser`
/// as `$BROWSER`; `interact` answers the prompts; waits for pi to exit.
fn login(
    env: &Env,
    mock: &Mock,
    args: &[&str],
    browser: &str,
    interact: impl FnOnce(&Tmux),
) -> LoginRun {
    let base = mock.url();
    let mut all = vec!["auth", "login"];
    all.extend_from_slice(args);
    let tmux = Tmux::start_with(
        env,
        &[
            ("PI_OAUTH_BASE_URL", &base),
            ("BROWSER", browser),
            ("ANTHROPIC_OAUTH_TOKEN", ""),
        ],
        &all,
        200,
        50,
    );
    interact(&tmux);
    let code = tmux.wait_exit(WAIT);
    LoginRun {
        code,
        shown: tmux.joined_history(),
    }
}

/// The whole auth.json, checked to be private (0600).
fn auth_file(env: &Env) -> Value {
    let path = env.agent.join("auth.json");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "auth.json mode");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The stored entry of `provider`: an OAuth login whose access token the mock issued,
/// with a refresh token and an expiry within the mock's hour (less the five minutes pi
/// keeps in hand, except for OpenAI Codex, which stores the full hour as pi-ai does).
fn stored_login(env: &Env, mock: &Mock, provider: &str) -> Value {
    let auth = auth_file(env);
    let entry = auth[provider].clone();
    assert_eq!(entry["type"], "oauth", "{auth}");
    let access = entry["access"].as_str().unwrap();
    assert!(mock.issued(access), "{access} issued by the mock");
    assert!(
        !entry["refresh"].as_str().unwrap().is_empty(),
        "refresh token in {entry}"
    );
    let expires = entry["expires"].as_i64().unwrap();
    let now = now_ms();
    assert!(
        expires > now + 50 * 60_000 && expires <= now + 61 * 60_000,
        "expiry {expires} within the hour after {now}"
    );
    entry
}

/// Signs in to Anthropic through the browser; returns the stored entry.
fn anthropic_login(env: &Env, mock: &Mock) -> Value {
    let run = login(env, mock, &["anthropic"], &browser_of(env), |_| {});
    run.assert_logged_in(env, "Anthropic");
    stored_login(env, mock, "anthropic")
}

/// Marks the stored login of `provider` as long expired.
fn expire(env: &Env, provider: &str) {
    let mut auth = auth_file(env);
    auth[provider]["expires"] = json!(1000);
    std::fs::write(env.agent.join("auth.json"), auth.to_string()).unwrap();
}

/// `pi <args>` on the agent dir with the OAuth endpoints on the mock, no provider keys in
/// the environment and no terminal.
fn pi(env: &Env, mock: &Mock, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
    command
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_OAUTH_BASE_URL", mock.url())
        .env("PI_OFFLINE", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_OAUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits (bounded) for a spawned pi and collects its output.
fn finish(mut child: Child) -> Output {
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = Vec::new();
        stdout.read_to_end(&mut text).unwrap();
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = Vec::new();
        stderr.read_to_end(&mut text).unwrap();
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > WAIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pi did not finish within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn run(env: &Env, mock: &Mock, args: &[&str]) -> Output {
    finish(pi(env, mock, args).spawn().unwrap())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const PRINT_ARGS: [&str; 7] = [
    "-p",
    "hi",
    "--provider",
    "anthropic",
    "--model",
    "claude-sonnet-4-5",
    "--no-session",
];

// ---------------------------------------------------------------------------------------
// 1. Each provider's sign-in.

#[test]
fn anthropic_browser_login_saves_the_issued_token() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let run = login(&env, &mock, &["anthropic"], &browser_of(&env), |_| {});
    run.assert_logged_in(&env, "Anthropic");
    assert!(
        run.shown
            .contains(&format!("{}/claude.ai/oauth/authorize?", mock.url())),
        "the printed URL is on the mock:\n{}",
        run.shown
    );
    let entry = stored_login(&env, &mock, "anthropic");
    assert!(
        entry["access"]
            .as_str()
            .unwrap()
            .starts_with("sk-ant-oat01-mock-access-"),
        "{entry}"
    );
    let status = mock.status();
    assert_eq!(status["logins"], 1, "{status}");
    assert_eq!(status["refused"], 0, "{status}");
    assert_eq!(status["liveRefreshTokens"], 1, "{status}");
}

/// Port 53692 taken (pi 1.1.0: Hyper-V/WSL port exclusions): the callback listens on a free
/// port instead, the authorize URL names it, and the sign-in completes, as pi 1.6.0 does
/// (its `startCallbackServer(53692)`, else port 0).
#[test]
fn anthropic_browser_login_with_its_port_taken_listens_elsewhere() {
    let python = require_tools!();
    let _serial = serial();
    // Held for the whole sign-in (or already held by someone else: taken either way).
    let _taken = std::net::TcpListener::bind("127.0.0.1:53692");
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let run = login(&env, &mock, &["anthropic"], &browser_of(&env), |_| {});
    run.assert_logged_in(&env, "Anthropic");
    let shown = run.shown.replace("\n", "");
    assert!(
        shown.contains("redirect_uri=http%3A%2F%2Flocalhost%3A") && !shown.contains("53692"),
        "the authorize URL names another port:\n{}",
        run.shown
    );
    assert_eq!(mock.status()["logins"], 1);
}

/// The provider sends the browser back with an authorization error (the user declined):
/// the sign-in ends at once with the provider's description instead of waiting (pi 0.99.0).
#[test]
fn anthropic_browser_login_ends_on_an_authorization_error() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    // A "browser" that declines: it calls the callback with `error` and the request's state.
    let declining = env.dir.path().join("decline.sh");
    let script = "import sys, urllib.parse as p, urllib.request as r\n\
        q = dict(p.parse_qsl(p.urlsplit(sys.argv[1]).query))\n\
        back = q['redirect_uri'] + '?' + p.urlencode({'error': 'access_denied', \
        'error_description': 'The user declined', 'state': q['state']})\n\
        try:\n    r.urlopen(back).read()\nexcept Exception:\n    pass\n";
    std::fs::write(
        &declining,
        format!("#!/bin/sh\nexec '{python}' -c \"{script}\" \"$1\"\n"),
    )
    .unwrap();
    std::fs::set_permissions(&declining, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = login(
        &env,
        &mock,
        &["anthropic"],
        &declining.display().to_string(),
        |_| {},
    );
    assert_eq!(run.code, 1, "{}", run.shown);
    assert!(
        run.shown
            .contains("Anthropic authorization failed: The user declined"),
        "{}",
        run.shown
    );
    assert!(!env.agent.join("auth.json").exists() || auth_file(&env).get("anthropic").is_none());
    assert_eq!(mock.status()["logins"], 0);
}

#[test]
fn anthropic_no_browser_login_takes_the_pasted_code() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let prefix = format!("{}/claude.ai/oauth/authorize?", mock.url());
    // A browser that fails the test if pi opens it.
    let opened = env.dir.path().join("opened");
    let browser = format!("touch '{}'", opened.display());
    let run = login(
        &env,
        &mock,
        &["anthropic", "--no-browser"],
        &browser,
        |tmux| {
            tmux.wait("the code prompt", WAIT, |s| {
                s.contains("Paste the code Anthropic shows after you sign in (code#state):")
            });
            let shown = tmux.joined_history();
            let url = shown
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("the sign-in URL in:\n{shown}"));
            assert!(
                url.contains(
                    "redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth%2Fcode%2Fcallback"
                ),
                "copy-code redirect in {url}"
            );
            // The user opens the URL elsewhere; the page shows `code#state`.
            let target = url.strip_prefix(&mock.url()).unwrap();
            let (status, page) = support::http_exchange(mock.server.addr(), "GET", target, None);
            assert_eq!(status, 200, "{page}");
            assert!(page.contains('#'), "code#state: {page}");
            tmux.type_text(page.trim());
            tmux.keys(&["Enter"]);
        },
    );
    run.assert_logged_in(&env, "Anthropic");
    assert!(!opened.exists(), "--no-browser opened no browser");
    stored_login(&env, &mock, "anthropic");
    let status = mock.status();
    assert_eq!(status["logins"], 1, "{status}");
    assert_eq!(status["refused"], 0, "{status}");
}

#[test]
fn openai_codex_browser_login_stores_the_account_id() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let run = login(&env, &mock, &["openai-codex"], &browser_of(&env), |_| {});
    run.assert_logged_in(&env, "OpenAI Codex");
    let entry = stored_login(&env, &mock, "openai-codex");
    assert_eq!(entry["accountId"], "acct-mock", "{entry}");
    assert_eq!(
        entry["access"].as_str().unwrap().split('.').count(),
        3,
        "a JWT: {entry}"
    );
    assert_eq!(mock.status()["logins"], 1);
}

/// After the browser's callback, the paste prompt it answered for the user ends its line,
/// and pi's next lines start on their own.
#[test]
fn browser_login_ends_the_unanswered_prompt_line() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let run = login(&env, &mock, &["openai-codex"], &browser_of(&env), |_| {});
    run.assert_logged_in(&env, "OpenAI Codex");
    let prompt = "Complete login in your browser, or paste the authorization code / redirect URL here (http://localhost:1455/auth/callback):";
    assert!(
        run.shown.lines().any(|l| l == prompt),
        "the prompt line ends after the prompt:\n{}",
        run.shown
    );
    let expected = format!(
        "Logged in to OpenAI Codex. Credentials saved to {}",
        env.agent.join("auth.json").display()
    );
    assert!(
        run.shown.lines().any(|l| l == expected),
        "{expected:?} on its own line:\n{}",
        run.shown
    );
}

#[test]
fn openai_codex_no_browser_login_uses_the_device_code() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let run = login(
        &env,
        &mock,
        &["openai-codex", "--no-browser"],
        &browser_of(&env),
        |_| {},
    );
    run.assert_logged_in(&env, "OpenAI Codex");
    assert!(
        run.shown
            .contains("Open https://auth.openai.com/codex/device and enter code: MOCK-CODE"),
        "{}",
        run.shown
    );
    let entry = stored_login(&env, &mock, "openai-codex");
    assert_eq!(entry["accountId"], "acct-mock", "{entry}");
    assert_eq!(mock.status()["logins"], 1);
}

#[test]
fn github_copilot_device_login_stores_the_copilot_token() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    // The device page is on github.com: this browser opens nothing.
    let run = login(&env, &mock, &["github-copilot"], "true", |tmux| {
        tmux.wait_for("GitHub Enterprise URL/domain (blank for github.com) (company.ghe.com):");
        tmux.keys(&["Enter"]);
    });
    run.assert_logged_in(&env, "GitHub Copilot");
    assert!(
        run.shown
            .contains("Open https://github.com/login/device and enter code: ABCD-1234"),
        "{}",
        run.shown
    );
    let auth = auth_file(&env);
    let entry = &auth["github-copilot"];
    assert_eq!(entry["type"], "oauth", "{auth}");
    let access = entry["access"].as_str().unwrap();
    assert!(access.starts_with("tid=mock-"), "{entry}");
    assert!(access.contains("proxy-ep="), "{entry}");
    assert!(mock.issued(access));
    assert!(
        entry["refresh"].as_str().unwrap().starts_with("gho_mock_"),
        "the GitHub token is the refresh token: {entry}"
    );
    assert!(entry.get("enterpriseUrl").is_none(), "{entry}");
    assert!(entry["expires"].as_i64().unwrap() > now_ms() + 50 * 60_000);
    let status = mock.status();
    assert_eq!(status["logins"], 1, "{status}");
    assert_eq!(status["refused"], 0, "{status}");
}

// ---------------------------------------------------------------------------------------
// 2-4. Refresh.

#[test]
fn expired_token_is_refreshed_before_the_request() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let old = anthropic_login(&env, &mock);
    expire(&env, "anthropic");

    let out = run(&env, &mock, &PRINT_ARGS);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let new = stored_login(&env, &mock, "anthropic");
    let token = new["access"].as_str().unwrap();
    assert_ne!(token, old["access"].as_str().unwrap(), "a new access token");
    assert_ne!(new["refresh"], old["refresh"], "the refresh token rotated");
    let requests = mock.anthropic_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(
        requests[0].headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {token}").as_str()),
        "{:?}",
        requests[0].headers
    );
    let status = mock.status();
    assert_eq!(status["refreshes"], 1, "{status}");
    assert_eq!(status["refused"], 0, "{status}");
}

#[test]
fn two_processes_refreshing_at_once_share_one_new_token() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let old = anthropic_login(&env, &mock);
    mock.configure(json!({"accessTtlSecs": 3600, "tokenDelayMs": 400, "pendingPolls": 1}));
    expire(&env, "anthropic");
    let before = mock.status();

    let args = ["auth", "print-bearer-token", "--provider", "anthropic"];
    let first = pi(&env, &mock, &args).spawn().unwrap();
    let second = pi(&env, &mock, &args).spawn().unwrap();
    let outputs = [finish(first), finish(second)];
    for out in &outputs {
        assert_eq!(
            out.status.code(),
            Some(0),
            "stdout: {}\nstderr: {}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let tokens: Vec<String> = outputs
        .iter()
        .map(|o| text(&o.stdout).trim().to_owned())
        .collect();
    assert_eq!(tokens[0], tokens[1], "both print the same token");
    assert_ne!(tokens[0], old["access"].as_str().unwrap(), "a new token");
    let status = mock.status();
    assert_eq!(
        status["refreshes"].as_u64().unwrap(),
        before["refreshes"].as_u64().unwrap() + 1,
        "exactly one refresh: {status}"
    );
    assert_eq!(status["refused"], 0, "{status}");
    let stored = stored_login(&env, &mock, "anthropic");
    assert_eq!(stored["access"], tokens[0].as_str());
}

#[test]
fn revoked_refresh_token_fails_with_the_servers_answer() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);
    let entry = anthropic_login(&env, &mock);
    mock.configure(json!({"revokeAll": true}));
    expire(&env, "anthropic");
    let secrets = [
        entry["access"].as_str().unwrap(),
        entry["refresh"].as_str().unwrap(),
    ];

    let out = run(&env, &mock, &PRINT_ARGS);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    // pi 1.6.0's words, with the sign-in server's answer.
    assert!(
        stderr.contains(
            "OAuth refresh failed for anthropic: Anthropic token refresh request failed."
        ) && stderr.contains("error=invalid_grant"),
        "{stderr}"
    );
    for secret in secrets {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "a token leaked:\nstdout: {stdout}\nstderr: {stderr}"
        );
    }
    assert!(
        mock.anthropic_requests().is_empty(),
        "no request without a valid token"
    );

    let check = run(&env, &mock, &["auth", "check", "--provider", "anthropic"]);
    assert_eq!(
        text(&check.stdout),
        "not_ready\n",
        "stderr: {}",
        text(&check.stderr)
    );
    assert_eq!(check.status.code(), Some(1));
    let status = mock.status();
    assert_eq!(status["refreshes"], 0, "{status}");
    assert!(status["refused"].as_u64().unwrap() >= 2, "{status}");
}

// ---------------------------------------------------------------------------------------
// 5. Refusals.

#[test]
fn login_refuses_unknown_providers_and_api_keys_for_copilot() {
    let python = require_tools!();
    let _serial = serial();
    let mock = Mock::start();
    let env = agent_env(&mock, &python);

    let out = run(&env, &mock, &["auth", "login", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.lines().next(),
        Some("Unknown provider \"nosuch\"."),
        "{stderr}"
    );
    assert!(text(&out.stdout).is_empty());

    let run = login(
        &env,
        &mock,
        &["github-copilot", "--api-key"],
        &browser_of(&env),
        |_| {},
    );
    assert_eq!(run.code, 1, "{}", run.shown);
    assert!(
        run.shown
            .lines()
            .any(|l| l == "GitHub Copilot has no API key login. Omit --api-key to sign in."),
        "{}",
        run.shown
    );
    assert!(!env.agent.join("auth.json").exists(), "nothing saved");
    assert_eq!(mock.status()["logins"], 0);
}
