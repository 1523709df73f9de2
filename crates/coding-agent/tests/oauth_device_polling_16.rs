//! How a device-code sign-in polls, as pi 1.6.0's `pollOAuthDeviceCodeFlow`: it waits one
//! interval before the first poll, and a `slow_down` answer sets the interval to the one the
//! server names, or adds five seconds when it names none. mock-llm's sign-in stand-ins record
//! when each device code was issued and each poll arrived, and answer the first polls
//! `slow_down`.
//!
//! Kimi Code's sign-in server is configurable (`KIMI_CODE_OAUTH_HOST`), so ours and pi 1.6.0
//! (`PI_TS16`) run the same sign-in and must poll at the same times; GitHub Copilot's is
//! fixed to github.com in pi 1.6.0, so only ours runs it (through `PI_OAUTH_BASE_URL`), held
//! to the same rules, which 1.6.0 shares between the two.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::logins::{WAIT, agent_env, configure, login, oauth_status, start_login};
use support::tmux;
use support::ts16::pis;

/// The gaps, in whole seconds (rounded), between a device code's issue and each of its
/// polls in turn: a wait is never shorter than asked, and the rounding leaves half a
/// second for the request to travel.
fn poll_gaps(server: &MockServer) -> Vec<i64> {
    let events = oauth_status(server)["deviceEvents"].clone();
    let events = events.as_array().unwrap();
    let issued = events.iter().find(|e| e.get("issued").is_some()).unwrap();
    let device = &issued["issued"];
    let mut last = issued["atMs"].as_i64().unwrap();
    let mut gaps = Vec::new();
    for poll in events.iter().filter(|e| &e["poll"] == device) {
        let at = poll["atMs"].as_i64().unwrap();
        let gap = at - last;
        assert!(gap >= 1000, "a poll {gap} ms after the last: {events:?}");
        gaps.push((gap + 500) / 1000);
        last = at;
    }
    gaps
}

/// One pi's Kimi Code sign-in where the first poll is answered `slow_down` naming two
/// seconds and the second is still pending: the sign-in's end and the gaps between polls.
fn kimi_run(wrapper: &Option<PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    configure(
        &server,
        json!({"slowDownPolls": 1, "slowDownInterval": 2, "pendingPolls": 1}),
    );
    let env = agent_env(&server, "kimi-coding");
    let host = format!("{}/auth.kimi.com", server.url());
    let signed_in = login(
        &env,
        wrapper,
        &[("KIMI_CODE_OAUTH_HOST", &host)],
        &["kimi-coding"],
    );
    json!({
        "login": [signed_in.code, signed_in.lines.last()],
        "gaps": poll_gaps(&server),
        "logins": oauth_status(&server)["logins"],
    })
}

#[test]
fn a_device_sign_in_waits_before_its_first_poll_and_slows_down_as_told_as_in_16() {
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
        ours["login"],
        json!([
            0,
            "Logged in to Kimi For Coding. Credentials saved to <AGENT>/auth.json"
        ]),
        "{ours:#}"
    );
    // One second (the device code's interval) before the first poll, then the two seconds
    // the `slow_down` named, for the pending poll and the approved one.
    assert_eq!(ours["gaps"], json!([1, 2, 2]), "{ours:#}");
    assert_eq!(ours["logins"], 1);
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}

/// GitHub Copilot's device sign-in (ours only; its server is fixed in pi 1.6.0): the first
/// poll waits the device code's one-second interval; a `slow_down` naming no interval adds
/// five seconds to it.
#[test]
fn a_copilot_sign_in_waits_before_its_first_poll_and_slows_down_by_five_seconds() {
    if !tmux::available() {
        eprintln!("skipped: tmux is missing");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    configure(
        &server,
        json!({"slowDownPolls": 1, "slowDownInterval": null, "pendingPolls": 0}),
    );
    let env = agent_env(&server, "github-copilot");
    let base = server.url();
    let tmux = start_login(
        &env,
        &None,
        &[("PI_OAUTH_BASE_URL", base.as_str())],
        &["github-copilot"],
    );
    tmux.wait_for("GitHub Enterprise URL/domain (blank for github.com)");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(WAIT), 0, "{}", tmux.joined_history());
    assert!(
        tmux.joined_history()
            .contains("Logged in to GitHub Copilot. Credentials saved to"),
        "{}",
        tmux.joined_history()
    );
    assert_eq!(poll_gaps(&server), [1, 6]);
    assert_eq!(oauth_status(&server)["logins"], 1);
}
