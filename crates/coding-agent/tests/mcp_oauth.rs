//! `pi mcp login|logout` and OAuth-protected MCP servers through the real `pi` binary,
//! against a local authorization server and MCP server written for the test
//! (`tests/fixtures/mcp/oauth_server.py`); the "browser" is a script `$BROWSER` names.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::mcp::*;
use support::oauth::{OAuthServer, login_by_visiting};
use support::rpc::Env;

/// A "browser" that opens the URL and follows the redirect to pi's callback.
const BROWSER: &str =
    "python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1]).read()' %s";

fn stored(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.agent.join("mcp-auth.json")).unwrap())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_registers_signs_in_with_pkce_and_the_model_calls_the_tool() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let oauth = OAuthServer::start(env.dir.path(), 3600);
    write_config(
        &env,
        json!({"secure": {"url": oauth.url(), "exposure": "direct"}}),
    );

    // Before signing in: the server needs sign-in, and list says how.
    let out = pi_with(&env, &["mcp", "list"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let listed = text(&out.stdout);
    assert!(
        listed.contains("secure: needs sign-in (direct, global)"),
        "{listed}"
    );
    assert!(
        listed.contains("sign in with: pi mcp login secure"),
        "{listed}"
    );

    let out = pi_with(&env, &["mcp", "login", "secure"], &[("BROWSER", BROWSER)]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}\n{}", text(&out.stderr));
    assert!(
        said.contains("Sign in to MCP server \"secure\" in your browser:\nhttp://127.0.0.1:"),
        "{said}"
    );
    assert!(
        said.contains("Signed in to MCP server \"secure\" (1 tools)."),
        "{said}"
    );

    // Registered once, as pi, with a loopback redirect; tokens stored under pi's key.
    let state = oauth.get("/_state");
    let registrations = state["registrations"].as_array().unwrap();
    assert_eq!(registrations.len(), 1, "{state}");
    assert_eq!(registrations[0]["client_name"], "pi");
    assert_eq!(registrations[0]["application_type"], "native");
    let redirect = registrations[0]["redirect_uris"][0].as_str().unwrap();
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
        "{redirect}"
    );
    let key = format!("mcp__secure|{}", oauth.url());
    let entry = &stored(&env)[&key];
    assert_eq!(entry["serverUrl"], oauth.url());
    assert_eq!(entry["tokens"]["access_token"], "access-1");
    assert_eq!(entry["tokens"]["refresh_token"], "refresh-1");
    assert_eq!(entry["tokens"]["scope"], "mcp.read");
    assert_eq!(entry["clientInformation"]["client_id"], "client-1");
    assert!(entry["tokensExpireAt"].as_i64().unwrap() > 0);
    let mode = std::fs::metadata(env.agent.join("mcp-auth.json")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );

    // Signed in: a second login needs no browser.
    let out = pi_with(&env, &["mcp", "login", "secure"], &[("BROWSER", "false")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("Already signed in to MCP server \"secure\" (1 tools)."));

    // The model calls the tool with the stored token.
    server.push(Script::tool_call("mcp__secure__whoami", json!({})));
    server.push(Script::text("done"));
    let out = pi_with(&env, &["-p", "who am I"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = server.requests();
    assert!(
        declared(&requests[0].body)
            .iter()
            .any(|t| t == "mcp__secure__whoami")
    );
    assert_eq!(
        tool_results(&requests[1].body),
        vec!["signed in with access-1".to_owned()]
    );

    // No token reaches the session file or the output.
    for file in walk(&env.agent.join("sessions")) {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains("refresh-1"));
    }
    assert!(!text(&out.stdout).contains("refresh-1") && !text(&out.stderr).contains("refresh-1"));

    // Logout forgets the credentials; the server needs sign-in again.
    let out = pi_with(&env, &["mcp", "logout", "secure"], &[]);
    assert_eq!(text(&out.stdout), "Signed out of MCP server \"secure\".\n");
    assert!(stored(&env).get(&key).is_none());
    let out = pi_with(&env, &["mcp", "logout", "secure"], &[]);
    assert_eq!(
        text(&out.stdout),
        "No stored credentials for MCP server \"secure\".\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_and_revoked_tokens_are_refreshed_and_a_revoked_grant_needs_sign_in() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    // Access tokens live 2 s: pi refreshes 30 s before expiry, so before every connection.
    let oauth = OAuthServer::start(env.dir.path(), 2);
    write_config(
        &env,
        json!({"secure": {"url": oauth.url(), "exposure": "direct"}}),
    );
    let out = pi_with(&env, &["mcp", "login", "secure"], &[("BROWSER", BROWSER)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = pi_with(&env, &["mcp", "list"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("secure: connected, 1 tool"));
    let state = oauth.get("/_state");
    assert!(state["refreshed"].as_u64().unwrap() >= 1, "{state}");
    let entry = &stored(&env)[&format!("mcp__secure|{}", oauth.url())];
    assert_ne!(entry["tokens"]["access_token"], "access-1", "{entry}");

    // The server forgets its access tokens: a 401, one refresh, and the call goes through.
    write_config(
        &env,
        json!({"secure": {"url": oauth.url(), "exposure": "direct"}}),
    );
    std::fs::write(
        env.agent.join("mcp-auth.json"),
        serde_json::to_string(&{
            let mut all = stored(&env);
            all[&format!("mcp__secure|{}", oauth.url())]["tokensExpireAt"] = json!(i64::MAX / 2);
            all
        })
        .unwrap(),
    )
    .unwrap();
    oauth.get("/_revoke");
    let before = oauth.get("/_state")["refreshed"].as_u64().unwrap();
    server.push(Script::tool_call("mcp__secure__whoami", json!({})));
    server.push(Script::text("done"));
    let out = pi_with(&env, &["-p", "who am I"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let state = oauth.get("/_state");
    // At least the refresh after the 401 (with 2-second tokens, each connection refreshes too).
    assert!(state["refreshed"].as_u64().unwrap() > before, "{state}");
    assert!(state["unauthorized"].as_u64().unwrap() >= 1, "{state}");
    let results = tool_results(&server.requests()[1].body);
    assert!(
        results[0].starts_with("signed in with access-"),
        "{results:?}"
    );

    // Refresh tokens revoked too: the server needs sign-in, and the tool result says so.
    oauth.get("/_revoke?refresh=1");
    let out = pi_with(&env, &["mcp", "list", "--json"], &[]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["servers"][0]["state"], "needs-auth", "{listed}");
    let entry = &stored(&env)[&format!("mcp__secure|{}", oauth.url())];
    assert!(
        entry.get("tokens").is_none(),
        "a refused grant clears the tokens: {entry}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_nobody_completes_times_out_and_servers_without_oauth_are_refused() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let oauth = OAuthServer::start(env.dir.path(), 3600);
    write_config(
        &env,
        json!({
            "secure": {"url": oauth.url()},
            "keyed": {"url": oauth.url(), "headers": {"Authorization": "Bearer x"}},
            "local": {"command": "true"}
        }),
    );
    let started = Instant::now();
    let out = pi_with(
        &env,
        &["mcp", "login", "secure", "--timeout", "2"],
        &[("BROWSER", "true")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        text(&out.stderr),
        "Sign-in to MCP server \"secure\" was cancelled or not completed within 2 seconds.\n"
    );
    for name in ["keyed", "local"] {
        let out = pi_with(&env, &["mcp", "login", name], &[]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            text(&out.stderr),
            format!(
                "MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do.\n"
            )
        );
    }
    let out = pi_with(&env, &["mcp", "login", "secure", "--timeout", "-1"], &[]);
    assert_eq!(
        text(&out.stderr),
        "--timeout must be a positive number of seconds.\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_mcp_login_signs_in_and_reload_reads_mcp_json_again() {
    if !support::tmux::available() {
        eprintln!("tmux is not installed; skipping");
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let oauth = OAuthServer::start(env.dir.path(), 3600);
    write_config(
        &env,
        json!({"secure": {"url": oauth.url(), "exposure": "direct"}}),
    );
    let tmux = support::tmux::Tmux::start_with(&env, &[("BROWSER", BROWSER)], &[], 200, 50);
    tmux.wait_for("mock-model");
    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    tmux.wait("needs sign-in", Duration::from_secs(20), |s| {
        s.contains("secure: needs sign-in, run /mcp login secure (direct, global)")
    });
    tmux.type_text("/mcp login");
    tmux.keys(&["Enter"]);
    // The sign-in link is a status; the result replaces it, as pi 1.6's statuses do.
    tmux.wait("the sign-in", Duration::from_secs(30), |s| {
        s.contains("Signed in to MCP server \"secure\" (1 tools).")
    });

    // The model sees the tool at once.
    server.push(Script::tool_call("mcp__secure__whoami", json!({})));
    server.push(Script::text("all done"));
    tmux.type_text("who am I");
    tmux.keys(&["Enter"]);
    tmux.wait("the answer", Duration::from_secs(30), |s| {
        s.contains("all done")
    });
    assert_eq!(
        tool_results(&server.requests()[1].body),
        vec!["signed in with access-1".to_owned()]
    );

    // Sign out; then /reload reads a changed mcp.json: the server is gone, another is there.
    tmux.type_text("/mcp logout secure");
    tmux.keys(&["Enter"]);
    tmux.wait("the sign-out", Duration::from_secs(20), |s| {
        s.contains("Signed out of MCP server \"secure\".")
    });
    let (test, _) = test_server(&env, json!({}));
    write_config(&env, json!({"fresh": test}));
    tmux.type_text("/reload");
    tmux.keys(&["Enter"]);
    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("the new list", Duration::from_secs(20), |s| {
        s.contains("fresh: connected, 7 tools")
    });
    let last = screen.rsplit("MCP Servers").next().unwrap();
    assert!(!last.contains("secure:"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_auth_provider_gets_that_logins_key() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let oauth = OAuthServer::start(env.dir.path(), 3600);
    oauth.get("/_grant?token=provider-key-1");
    write_config(
        &env,
        json!({"viaLogin": {"url": oauth.url(), "auth": {"provider": "my-provider"}, "exposure": "direct"}}),
    );
    let auth = |key: &str| {
        std::fs::write(
            env.agent.join("auth.json"),
            json!({"my-provider": {"type": "api_key", "key": key}}).to_string(),
        )
        .unwrap();
    };
    auth("provider-key-1");
    server.push(Script::tool_call("mcp__viaLogin__whoami", json!({})));
    server.push(Script::text("done"));
    let out = pi_with(&env, &["-p", "who am I"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        tool_results(&server.requests()[1].body),
        vec!["signed in with provider-key-1".to_owned()]
    );
    // A key the server refuses: needs sign-in, with /login of that provider.
    auth("wrong-key");
    let out = pi_with(&env, &["mcp", "list"], &[]);
    let listed = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(listed.contains("viaLogin: needs sign-in"), "{listed}");
    assert!(
        listed.contains("sign in with: /login my-provider in pi"),
        "{listed}"
    );
    let out = pi_with(&env, &["mcp", "login", "viaLogin"], &[]);
    assert_eq!(
        text(&out.stderr),
        "MCP server \"viaLogin\" uses the credentials of provider \"my-provider\". Run \"pi auth login my-provider\".\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_signed_in_by_the_typescript_pi_work_in_ours_and_back() {
    let Some(ts) = std::env::var_os("PI_TS15").filter(|p| !p.is_empty()) else {
        eprintln!("PI_TS15 is not set: skipped (run scripts/ts-compat.sh)");
        return;
    };
    let ts = std::path::PathBuf::from(ts);
    let ours = Path::new(env!("CARGO_BIN_EXE_pi"));
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let oauth = OAuthServer::start(env.dir.path(), 3600);
    write_config(&env, json!({"secure": {"url": oauth.url()}}));
    let list = |program: &Path| {
        let out = Command::new(program)
            .args(["mcp", "list"])
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env("PI_OFFLINE", "1")
            .output()
            .unwrap();
        text(&out.stdout)
    };
    for (signs_in, uses) in [(&ts, ours), (&ours.to_path_buf(), ts.as_path())] {
        let _ = std::fs::remove_file(env.agent.join("mcp-auth.json"));
        let (code, said) = login_by_visiting(signs_in, &env);
        assert_eq!(code, Some(0), "{} login: {said}", signs_in.display());
        assert!(
            said.contains("Signed in to MCP server \"secure\" (1 tools)."),
            "{said}"
        );
        let listed = list(uses);
        assert!(
            listed.contains("secure: connected, 1 tool (direct, global)"),
            "{} with the credentials of {}: {listed}",
            uses.display(),
            signs_in.display()
        );
    }
    // Both registered pi the same way.
    let state = oauth.get("/_state");
    let registrations = state["registrations"].as_array().unwrap();
    assert_eq!(registrations.len(), 2);
    let shape = |r: &Value| {
        let mut r = r.clone();
        r["client_id"] = Value::Null;
        r["redirect_uris"] = Value::Null;
        r
    };
    assert_eq!(shape(&registrations[0]), shape(&registrations[1]));
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}
