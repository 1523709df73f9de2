//! `/session` beside pi 1.6.0 (`PI_TS16`) in tmux: a session with two answers from two
//! models of a priced provider, the second missing the prompt cache the first filled. The
//! rows are compared one by one: labels, layout, and the numbers that come from the mock's
//! fixed usage (file and id differ by nature; both pis report the same usage).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script, ScriptUsage};
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);

fn usage(input: u64, output: u64, cache_read: u64) -> ScriptUsage {
    ScriptUsage {
        input,
        output,
        cache_read,
        cache_write: 0,
        reasoning: 0,
    }
}

/// Two priced models on the mock provider.
fn priced_models(env: &Env, server: &MockServer) {
    let cost = json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75});
    let models = json!({"providers": {
        "mock": {"baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
                 "models": [
                    {"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384, "cost": cost},
                    {"id": "mock-other", "name": "Mock Other", "contextWindow": 128000, "maxTokens": 16384, "cost": cost}
                 ]}
    }});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
}

fn submit(tmux: &Tmux, name: &str, text: &str) {
    tmux.type_text(text);
    tmux.wait(&format!("{name}: {text} typed"), WAIT, |s| s.contains(text));
    tmux.keys(&["Enter"]);
}

/// The rows of the `/session` block: from "Session Info" to the last non-blank row before
/// the editor's border.
fn session_rows(screen: &str) -> Vec<String> {
    let rows: Vec<String> = screen.lines().map(|r| r.trim_end().to_owned()).collect();
    let start = rows
        .iter()
        .position(|r| r.trim() == "Session Info")
        .expect("Session Info shown");
    let mut block: Vec<String> = rows[start..]
        .iter()
        .take_while(|r| !r.starts_with("────"))
        .cloned()
        .collect();
    while block.last().is_some_and(String::is_empty) {
        block.pop();
    }
    // The row above, a blank (the spacer).
    let mut out = vec![rows[start - 1].clone()];
    out.extend(block);
    out
}

/// The rows with what differs by nature masked: the file's path (wrapped over rows up to
/// the ID's) and the id.
fn masked(rows: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_file = false;
    for row in rows {
        let t = row.trim_start();
        if t.starts_with("ID:") {
            in_file = false;
            out.push(" ID: <id>".to_owned());
        } else if t.starts_with("File:") {
            in_file = true;
            out.push(" File: <path>".to_owned());
        } else if !in_file {
            out.push(row.clone());
        }
    }
    out
}

/// The coloured row that holds `text`.
fn colored_row<'a>(colored: &'a str, text: &str) -> &'a str {
    colored
        .lines()
        .find(|r| r.contains(text))
        .unwrap_or_else(|| panic!("no row with {text}: {colored}"))
}

#[test]
fn session_info_with_two_models_and_a_cache_miss_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut shown = Vec::new();
    for (name, wrapper) in pis() {
        server.push_all([
            Script::text("first answer").with_full_usage(usage(3_000, 50, 2_000)),
            Script::text("second answer").with_full_usage(usage(5_000, 60, 100)),
        ]);
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        priced_models(&env, &server);
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 60);
        tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-model") && s.contains("escape")
        });
        submit(&tmux, name, "hello");
        tmux.wait(&format!("{name}: first answer"), WAIT, |s| {
            s.contains("first answer")
        });
        // pi 1.6.0's autocomplete takes the first Enter (it completes the model's name).
        submit(&tmux, name, "/model mock-other");
        let switched = tmux.wait(&format!("{name}: model switched"), WAIT, |s| {
            s.contains("Model: mock-other") || s.contains("/model mock/mock-other")
        });
        if !switched.contains("Model: mock-other") {
            tmux.keys(&["Enter"]);
            tmux.wait(&format!("{name}: model switched"), WAIT, |s| {
                s.contains("Model: mock-other")
            });
        }
        submit(&tmux, name, "again");
        tmux.wait(&format!("{name}: second answer"), WAIT, |s| {
            s.contains("second answer")
        });
        submit(&tmux, name, "/session");
        let screen = tmux.wait(&format!("{name}: /session"), WAIT, |s| {
            s.contains("Cache Re-billed:")
        });
        let colored = tmux.colored_screen();
        shown.push((name, session_rows(&screen), colored));
        drop(tmux);
    }
    let (_, ours, _) = &shown[0];
    // What the mock's fixed usage and the models' prices decide (a prompt of 5,000 + 2,000
    // then 5,000 + 100 tokens, $3/M input, $0.30/M cache read, $15/M output).
    let expected = [
        "",
        " Session Info",
        "",
        " File: <path>",
        " ID: <id>",
        "",
        " Messages",
        " Total: 5",
        " User: 2",
        " Assistant: 2",
        " Tools: 0 calls, 0 results",
        "",
        " Tokens",
        " Input: 10,100",
        "   Cached: 2,100 (20.8%)",
        "   Uncached: 8,000",
        " Output: 110",
        " Total: 10,210",
        "",
        " Cache Warming",
        " Mode: idle",
        " Status: Inactive (cache lifetime unavailable)",
        "",
        " Cost",
        " Total: $0.026",
        "   mock/mock-other: $0.016 (5.2k tokens)",
        "   mock/mock-model: $0.010 (5.0k tokens)",
        " Cache Re-billed: $0.013 (4,900 tokens, 1 miss)",
    ];
    assert_eq!(masked(ours), expected, "ours");
    if let Some((name, theirs, their_colors)) = shown.get(1) {
        assert_eq!(masked(ours), masked(theirs), "ours vs {name}");
        let our_colors = &shown[0].2;
        for text in [
            "Session Info",
            "Cache Re-billed",
            "mock/mock-other:",
            "Cached:",
            "Status:",
        ] {
            assert_eq!(
                colored_row(our_colors, text),
                colored_row(their_colors, text),
                "colours of the row with {text}, ours vs {name}"
            );
        }
    }
}
