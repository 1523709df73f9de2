//! A token refresh that races with something else, for ours and pi 1.6.0 side by side on
//! Kimi Code's login (its sign-in server is configurable, `KIMI_CODE_OAUTH_HOST`, so both
//! pis refresh at mock-llm's stand-in). The stand-in spends the old refresh token as soon as
//! a refresh arrives and answers 1.5 s later, as a server whose reply is slow or lost does:
//! - two processes reaching one auth.json through a symlink refresh once (the lock is taken
//!   on the real file);
//! - a prompt aborted while its refresh is under way ends aborted (not as an error), and the
//!   refreshed login is saved, so the next prompt needs no refresh;
//! - pi stopped (stdin closed in RPC mode) during a refresh saves the new login first.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::logins::{agent_env, ask, configure, now_ms, oauth_status};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

const MODEL: &str = "kimi-coding/k3";

/// The mock with Kimi Code's stand-in, the seeded refresh token, and slow refresh replies.
fn start_mock(runtime: &tokio::runtime::Runtime) -> MockServer {
    let server = runtime.block_on(MockServer::start()).unwrap();
    configure(
        &server,
        json!({"seedRefreshTokens": ["kimi-seed-refresh"], "refreshReplyDelayMs": 1500}),
    );
    server
}

/// `KIMI_CODE_OAUTH_HOST` for both pis.
fn kimi_host(server: &MockServer) -> String {
    format!("{}/auth.kimi.com", server.url())
}

/// Stores an expired Kimi Code login whose refresh token the mock accepts once.
fn store_expired_login(env: &Env) {
    let login = json!({"kimi-coding": {"type": "oauth", "access": "kimi-expired-access",
        "refresh": "kimi-seed-refresh", "expires": now_ms() - 60_000}});
    std::fs::write(env.agent.join("auth.json"), login.to_string()).unwrap();
}

fn stored_login(agent: &Path) -> Value {
    let text = std::fs::read_to_string(agent.join("auth.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["kimi-coding"].clone()
}

/// Waits (up to 30 s) until `done` holds.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The bearer tokens of the model requests the mock received, in order.
fn model_bearers(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .filter(|r| !r.path.starts_with("/auth."))
        .map(|r| r.headers.get("authorization").cloned().unwrap_or_default())
        .collect()
}

/// What the test compares between the pis: the mock's counts and what is left in auth.json.
fn outcome(server: &MockServer, agent: &Path) -> Value {
    let status = oauth_status(server);
    let stored = stored_login(agent);
    let live = status["liveRefreshTokenList"]
        .as_array()
        .is_some_and(|live| live.contains(&stored["refresh"]));
    let issued = status["issued"]
        .as_array()
        .is_some_and(|issued| issued.contains(&stored["access"]));
    json!({
        "refreshes": status["refreshes"],
        "refused": status["refused"],
        "storedRefreshIsLive": live,
        "storedAccessWasIssued": issued,
    })
}

/// Runs `case` with each pi (ours, then pi 1.6.0 when there).
fn each_pi(case: fn(&Option<PathBuf>) -> Value) -> Vec<(&'static str, Value)> {
    pis()
        .into_iter()
        .map(|(name, wrapper)| (name, case(&wrapper)))
        .collect()
}

/// The one outcome every refresh below must leave: one refresh, nothing refused, and the
/// saved login the one the server issued last.
fn refreshed_once() -> Value {
    json!({"refreshes": 1, "refused": 0, "storedRefreshIsLive": true,
           "storedAccessWasIssued": true})
}

fn symlinked_run(wrapper: &Option<PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = start_mock(&runtime);
    server.push_all([Script::text("first"), Script::text("second")]);
    let first = agent_env(&server, "kimi-coding");
    let second = agent_env(&server, "kimi-coding");
    store_expired_login(&first);
    let link = second.agent.join("auth.json");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(first.agent.join("auth.json"), &link).unwrap();
    let host = kimi_host(&server);
    let vars = [("KIMI_CODE_OAUTH_HOST", host.as_str())];
    let lock = first.agent.join("auth.json.lock");
    let (one, two) = std::thread::scope(|scope| {
        let one = scope.spawn(|| ask(&first, wrapper, &vars, MODEL));
        // The first process holds the lock for its refresh; the second starts now.
        wait_until("the first refresh to take the lock", || {
            lock.exists() || one.is_finished()
        });
        let two = ask(&second, wrapper, &vars, MODEL);
        (one.join().unwrap(), two)
    });
    let stored = stored_login(&first.agent);
    let bearer = format!("Bearer {}", stored["access"].as_str().unwrap_or_default());
    json!({
        "runs": [one, two],
        "bothUsedTheSavedLogin": model_bearers(&server) == [bearer.clone(), bearer],
        "outcome": outcome(&server, &first.agent),
        "stillALink": std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
    })
}

#[test]
fn two_processes_reaching_auth_json_through_a_symlink_refresh_once_as_16_does() {
    let runs = each_pi(symlinked_run);
    for (name, run) in &runs {
        assert_eq!(
            *run,
            json!({
                "runs": [[0, ""], [0, ""]],
                "bothUsedTheSavedLogin": true,
                "outcome": refreshed_once(),
                "stillALink": true,
            }),
            "{name}"
        );
    }
}

/// An RPC pi on an expired Kimi Code login whose refresh is under way (granted by the mock,
/// the reply not yet sent) after a first prompt.
struct Refreshing {
    server: MockServer,
    env: Env,
    rpc: Rpc,
    _runtime: tokio::runtime::Runtime,
}

fn refreshing(wrapper: &Option<PathBuf>) -> Refreshing {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = start_mock(&runtime);
    let env = agent_env(&server, "kimi-coding");
    store_expired_login(&env);
    let mut command = program(wrapper);
    command.env("KIMI_CODE_OAUTH_HOST", kimi_host(&server));
    let mut rpc = Rpc::start_program(&env, command, &["--model", MODEL, "--no-session"]);
    rpc.call("one", json!({"type": "prompt", "message": "first"}));
    wait_until("the mock to grant the refresh", || {
        oauth_status(&server)["refreshes"] == 1
    });
    Refreshing {
        server,
        env,
        rpc,
        _runtime: runtime,
    }
}

/// `[role, stopReason]` of each message that ended.
fn ended_messages(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "message_end")
        .map(|e| json!([e["message"]["role"], e["message"]["stopReason"]]))
        .collect()
}

fn aborted_run(wrapper: &Option<PathBuf>) -> Value {
    let Refreshing {
        server,
        env,
        mut rpc,
        _runtime,
    } = refreshing(wrapper);
    rpc.call("stop", json!({"type": "abort"}));
    // The refresh goes on and is saved (the lock goes with it).
    let lock = env.agent.join("auth.json.lock");
    wait_until("the refreshed login to be saved", || {
        !lock.exists() && stored_login(&env.agent)["refresh"] != "kimi-seed-refresh"
    });
    server.push(Script::text("second"));
    let before = rpc.seen.len();
    rpc.call("two", json!({"type": "prompt", "message": "second"}));
    rpc.event("agent_end");
    let seen = std::mem::take(&mut rpc.seen);
    drop(rpc);
    let stored = stored_login(&env.agent);
    json!({
        "first": ended_messages(&seen[..before]),
        "second": ended_messages(&seen[before..]),
        "secondBearerIsTheSavedLogin": model_bearers(&server)
            == [format!("Bearer {}", stored["access"].as_str().unwrap_or_default())],
        "outcome": outcome(&server, &env.agent),
    })
}

#[test]
fn a_prompt_aborted_during_its_token_refresh_keeps_the_refreshed_login_as_16_does() {
    let runs = each_pi(aborted_run);
    let ours = &runs[0].1;
    // Cancelled while authenticating: an abort, not an error (pi 1.5.1).
    assert_eq!(
        ours["first"],
        json!([["system", null], ["user", null], ["assistant", "aborted"]]),
        "{ours:#}"
    );
    assert_eq!(ours["outcome"], refreshed_once(), "{ours:#}");
    assert_eq!(ours["secondBearerIsTheSavedLogin"], true, "{ours:#}");
    assert_eq!(
        ours["second"],
        json!([["user", null], ["assistant", "stop"]]),
        "{ours:#}"
    );
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}

fn stopped_run(wrapper: &Option<PathBuf>) -> Value {
    let Refreshing {
        server,
        env,
        mut rpc,
        _runtime,
    } = refreshing(wrapper);
    rpc.close_stdin();
    rpc.wait_exit();
    json!({
        "outcome": outcome(&server, &env.agent),
        "lockLeft": env.agent.join("auth.json.lock").exists(),
    })
}

#[test]
fn pi_stopped_during_a_token_refresh_saves_the_new_login_first_as_16_does() {
    let runs = each_pi(stopped_run);
    for (name, run) in &runs {
        assert_eq!(
            *run,
            json!({
                "outcome": refreshed_once(),
                "lockLeft": false,
            }),
            "{name}"
        );
    }
}
