//! `pi auth print-bearer-token` and `print-api-key` with a stored OAuth login, ours and pi
//! 1.6.0 side by side on Kimi Code's login (its sign-in server is configurable,
//! `KIMI_CODE_OAUTH_HOST`, so both refresh at mock-llm's stand-in): a token with less than
//! the asked-for lifetime left (30 minutes unless `--min-expiry` says otherwise) is refreshed
//! and saved before it is printed, one with enough is printed as stored, and a refresh the
//! server refuses fails with its answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::logins::{configure, now_ms, oauth_status};
use support::rpc::Env;
use support::ts16::{pis, program};

/// Stores a Kimi Code login whose token has `left_ms` to live.
fn store_login(env: &Env, access: &str, refresh: &str, left_ms: i64) {
    let login = json!({"kimi-coding": {"type": "oauth", "access": access,
        "refresh": refresh, "expires": now_ms() + left_ms}});
    std::fs::write(env.agent.join("auth.json"), login.to_string()).unwrap();
}

fn stored_login(env: &Env) -> Value {
    let text = std::fs::read_to_string(env.agent.join("auth.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["kimi-coding"].clone()
}

/// One `pi auth <args>` run: exit code, stdout and stderr.
fn auth(env: &Env, wrapper: &Option<std::path::PathBuf>, host: &str, args: &[&str]) -> Value {
    let mut command = program(wrapper);
    command.env("KIMI_CODE_OAUTH_HOST", host).arg("auth");
    let out = support::ts16::run(env, command, args);
    json!([
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).trim(),
        String::from_utf8_lossy(&out.stderr).trim(),
    ])
}

/// What one pi printed and stored through the cases, with the tokens the mock issued named
/// by their order (`issued-1`, …) so both runs compare.
fn print_run(wrapper: &Option<std::path::PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    configure(&server, json!({"seedRefreshTokens": ["kimi-seed-refresh"]}));
    let env = Env::new(&server, 128_000, json!({}));
    let host = format!("{}/auth.kimi.com", server.url());
    let bearer = ["print-bearer-token", "--provider", "kimi-coding"];
    let mut steps = Vec::new();
    let mut step = |name: &str, args: &[&str], env: &Env| {
        let out = auth(env, wrapper, &host, args);
        let login = stored_login(env);
        let expires_in_min = (login["expires"].as_i64().unwrap() - now_ms() + 30_000) / 60_000;
        steps.push(json!({"step": name, "out": out, "access": login["access"],
            "refresh": login["refresh"], "expiresInMin": expires_in_min}));
    };
    // An hour left: more than the default 30 minutes, printed as stored.
    store_login(&env, "kimi-stored-access", "kimi-seed-refresh", 3_600_000);
    step("an hour left", &bearer, &env);
    // Asked for two hours: refreshed first and the new login saved, but an hour-long token
    // is still too short.
    let mut longer = bearer.to_vec();
    longer.extend(["--min-expiry", "2h"]);
    step("--min-expiry 2h", &longer, &env);
    // Ten minutes left: refreshed by default, kept with --min-expiry 5m.
    let login = stored_login(&env);
    let (access, refresh) = (login["access"].as_str().unwrap(), login["refresh"].as_str());
    store_login(&env, access, refresh.unwrap(), 600_000);
    let mut shorter = bearer.to_vec();
    shorter.extend(["--min-expiry", "5m"]);
    step("ten minutes left, --min-expiry 5m", &shorter, &env);
    step("ten minutes left", &bearer, &env);
    // An API key is not what an OAuth login holds.
    step(
        "print-api-key",
        &["print-api-key", "--provider", "kimi-coding"],
        &env,
    );
    step(
        "by model",
        &["print-bearer-token", "--model", "kimi-coding/k3"],
        &env,
    );
    // The server refuses the refresh: the command fails with its answer, nothing printed.
    configure(&server, json!({"revokeAll": true}));
    let login = stored_login(&env);
    let (access, refresh) = (login["access"].as_str().unwrap(), login["refresh"].as_str());
    store_login(&env, access, refresh.unwrap(), 60_000);
    step("refused", &bearer, &env);
    let status = oauth_status(&server);
    let issued: Vec<String> = status["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let mut text = json!({"steps": steps, "refreshes": status["refreshes"],
        "refused": status["refused"]})
    .to_string();
    for (n, token) in issued.iter().enumerate() {
        text = text.replace(token, &format!("issued-{}", n + 1));
    }
    let mut live: Vec<String> = status["liveRefreshTokenList"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    live.sort();
    let spent = stored_login(&env)["refresh"].as_str().unwrap().to_owned();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["storedRefreshStillLive"] = json!(live.contains(&spent));
    value
}

#[test]
fn print_bearer_token_refreshes_a_token_shorter_lived_than_asked_as_in_16() {
    let runs: Vec<(&str, Value)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, print_run(&wrapper)))
        .collect();
    let ours = &runs[0].1;
    let steps = ours["steps"].as_array().unwrap();
    let printed = |n: usize| steps[n]["out"][1].as_str().unwrap().to_owned();
    assert_eq!(
        steps[0]["out"],
        json!([0, "kimi-stored-access", ""]),
        "{ours:#}"
    );
    assert_eq!(steps[0]["access"], "kimi-stored-access");
    // Refreshed and saved, but the new token's hour is still less than the two asked for.
    assert_eq!(
        steps[1]["out"],
        json!([1, "", "Error: Failed to resolve credential"]),
        "{ours:#}"
    );
    assert_eq!(
        steps[1]["access"], "issued-1",
        "the refreshed login is saved"
    );
    assert_eq!(
        printed(2),
        "issued-1",
        "ten minutes are more than 5m: {ours:#}"
    );
    assert_eq!(
        printed(3),
        "issued-2",
        "ten minutes are less than 30m: {ours:#}"
    );
    assert_eq!(steps[3]["access"], "issued-2");
    assert_eq!(
        steps[4]["out"],
        json!([
            1,
            "",
            "Error: Provider \"kimi-coding\" is configured with OAuth, not an API key"
        ])
    );
    assert_eq!(printed(5), "issued-2", "{ours:#}");
    assert_eq!(
        steps[6]["out"],
        json!([1, "", "Error: Failed to resolve credential"]),
        "{ours:#}"
    );
    assert_eq!(ours["refreshes"], 2, "{ours:#}");
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}
