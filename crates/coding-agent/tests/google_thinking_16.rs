//! Gemini thinking controls as pi-ai 1.6 sends them (pi 1.3.0, X-26bb404d): models that take
//! a thinking level (Gemini 3 Pro/Flash, Gemini 4 and later, Gemma 4) get the one their
//! `thinkingLevelMap` maps, else the level itself; thinking turned off is the lowest level a
//! model maps, or a zero budget. Custom `models.json` models without a map and the catalog's
//! Gemini 4 Argon, on mock-llm, each at several levels; ours and pi 1.6.0 (`PI_TS16`) must
//! send the same `generationConfig`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// `(model, thinking level)` pairs sent.
const CASES: [(&str, &str); 10] = [
    ("gcustom/gemini-3-pro-preview", "medium"),
    ("gcustom/gemini-3-pro-preview", "off"),
    ("gcustom/gemma-4-31b-it", "low"),
    ("gcustom/gemma-4-31b-it", "off"),
    ("gcustom/gemini-2.5-pro", "high"),
    ("google/gemini-4-argon", "off"),
    ("google/gemini-4-argon", "medium"),
    ("google/gemini-3.1-pro-preview", "off"),
    ("gcustom/gemini-3-pro-mapped", "medium"),
    ("gcustom/gemini-3-pro-mapped", "off"),
];

fn configs(wrapper: &Option<PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let base = format!("{}/v1beta", server.url());
    let custom = |id: &str| json!({"id": id, "reasoning": true, "contextWindow": 100_000, "maxTokens": 8000});
    // A custom model with its own map (pi 0.84.3: custom Google models used to ignore it).
    let mut mapped = custom("gemini-3-pro-mapped");
    mapped["thinkingLevelMap"] =
        json!({"off": null, "minimal": null, "low": "low", "medium": "high", "high": "high"});
    let models = json!({"providers": {
        "gcustom": {"baseUrl": base, "api": "google-generative-ai", "apiKey": "gk",
                    "models": [custom("gemini-3-pro-preview"), custom("gemma-4-31b-it"),
                               custom("gemini-2.5-pro"), mapped]},
        "google": {"baseUrl": base, "apiKey": "gk"},
    }});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let mut sent = Vec::new();
    for (model, level) in CASES {
        server.push(Script::text("ok"));
        let args = [
            "-p",
            "hi",
            "--no-session",
            "--model",
            model,
            "--thinking",
            level,
        ];
        let out = run(&env, program(wrapper), &args);
        assert!(out.status.success(), "{model} {level}: {out:?}");
        let requests = server.requests();
        let config = &requests.last().unwrap().body["generationConfig"]["thinkingConfig"];
        sent.push(json!([model, level, config]));
    }
    json!(sent)
}

#[test]
fn gemini_thinking_controls_are_pi_16s() {
    let runs: Vec<(&str, Value)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, configs(&wrapper)))
        .collect();
    let ours = &runs[0].1;
    let level = |l: &str| json!({"includeThoughts": true, "thinkingLevel": l});
    assert_eq!(ours[0][2], level("MEDIUM"), "{ours:#}");
    assert_eq!(ours[1][2], json!({"thinkingBudget": 0}), "{ours:#}");
    assert_eq!(ours[2][2], level("LOW"), "{ours:#}");
    assert_eq!(
        ours[5][2],
        level("LOW"),
        "Gemini 4 cannot turn thinking off: {ours:#}"
    );
    assert_eq!(ours[6][2], level("MEDIUM"), "{ours:#}");
    assert_eq!(ours[8][2], level("HIGH"), "the custom map: {ours:#}");
    assert_eq!(
        ours[9][2],
        level("LOW"),
        "the custom map's lowest level: {ours:#}"
    );
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}
