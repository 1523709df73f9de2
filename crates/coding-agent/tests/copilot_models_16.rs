//! The GitHub Copilot models a login's account may use: the sign-in stores them with the
//! login (`availableModelIds`, from the account's model list and the policies it accepted),
//! and pi 1.6.0's provider then offers only those of its catalog (`filterModels`). A stored
//! login is enough to see it, offline, so ours and pi 1.6.0 (`PI_TS16`) list the models of
//! the same auth.json side by side; a login without the list, or with one that is not all
//! strings, keeps the whole catalog.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::Env;
use support::ts16::{pis, program};

/// A Copilot login valid for a day, with `available` as its `availableModelIds` (left out
/// when `null`).
fn copilot_login(available: Value) -> Value {
    let expires = support::logins::now_ms() + 24 * 3_600_000;
    let mut login = json!({"type": "oauth", "refresh": "gho_stored",
        "access": format!("tid=stored;exp={};proxy-ep=proxy.individual.githubcopilot.com;", expires / 1000),
        "expires": expires});
    if !available.is_null() {
        login["availableModelIds"] = available;
    }
    json!({"github-copilot": login})
}

/// The ids `pi --list-models github-copilot` shows for each login, and its exit code.
fn listed(wrapper: &Option<std::path::PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let logins = [
        json!(["claude-sonnet-5", "gpt-5.6-sol", "no-such-model"]),
        json!(null),
        json!(["claude-sonnet-5", 7]),
        json!([]),
    ];
    let mut runs = Vec::new();
    for login in logins {
        // A fresh agent dir per login: pi 1.6.0 may still be saving what one run learned
        // (models-store.json) when the next starts, which made its answer to the next
        // login depend on timing.
        let env = Env::new(&server, 128_000, json!({}));
        std::fs::write(
            env.agent.join("auth.json"),
            copilot_login(login).to_string(),
        )
        .unwrap();
        let mut command = program(wrapper);
        command
            .env("PI_OFFLINE", "1")
            .env_remove("COPILOT_GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN");
        let out = support::ts16::run(&env, command, &["--list-models", "github-copilot"]);
        // With stdin not a terminal ours writes the table to stderr, pi 1.6.0 to stdout.
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let ids: Vec<String> = text
            .lines()
            .filter_map(|line| {
                let mut columns = line.split_whitespace();
                (columns.next() == Some("github-copilot")).then(|| columns.next())?
            })
            .map(str::to_owned)
            .collect();
        runs.push(json!({"code": out.status.code(), "ids": ids}));
    }
    Value::Array(runs)
}

#[test]
fn a_copilot_login_offers_only_its_accounts_models_as_in_16() {
    let runs: Vec<(&str, Value)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, listed(&wrapper)))
        .collect();
    let ours = &runs[0].1;
    assert_eq!(
        ours[0],
        json!({"code": 0, "ids": ["claude-sonnet-5", "gpt-5.6-sol"]}),
        "{ours:#}"
    );
    let whole = ours[1]["ids"].as_array().unwrap();
    assert!(whole.len() > 10, "no list: the whole catalog: {ours:#}");
    assert_eq!(
        ours[2], ours[1],
        "a list that is not all strings is ignored"
    );
    assert_eq!(ours[3]["ids"], json!([]), "an empty list hides every model");
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}
