//! `codemode.mode: "only"` and `codemode.inlineBudget` against pi 1.6.0: with codemode
//! active, the tools scripts can call are left out of the request's tool list and of the
//! system prompt's tool lines, and listed in codemode's description instead, as many as
//! the budget holds; with `"on"` they stay declared with a note on calling them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// What the first request showed the model: the declared tools, the `### ` headings of
/// codemode's description (its listed tools) and whether its text has a `Nested tools:`
/// part, and which tools the system prompt has a `- <name>:` line for.
#[derive(Debug, PartialEq)]
struct Shown {
    declared: Vec<String>,
    listed: Vec<String>,
    nested: bool,
    prompt_lines: Vec<String>,
}

fn shown(wrapper: &Option<PathBuf>, tools: &str, settings: Value) -> Shown {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, settings);
    let output = run(&env, program(wrapper), &["--tools", tools, "-p", "Go."]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let body = &server.requests()[0].body;
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let declared: Vec<String> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    let codemode = tools
        .iter()
        .find(|t| t["function"]["name"] == "codemode")
        .map(|t| t["function"]["description"].as_str().unwrap().to_owned())
        .unwrap_or_default();
    let listed = codemode
        .lines()
        .filter(|l| l.starts_with("### ") || l.starts_with("## "))
        .map(str::to_owned)
        .collect();
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let prompt_lines = [
        "read", "bash", "edit", "write", "grep", "find", "ls", "codemode",
    ]
    .iter()
    .filter(|name| system.contains(&format!("\n- {name}:")))
    .map(|n| (*n).to_owned())
    .collect();
    Shown {
        declared,
        listed,
        nested: codemode.contains("\n\nNested tools:"),
        prompt_lines,
    }
}

fn compare(tools: &str, settings: Value) -> Shown {
    let mut all = Vec::new();
    for (who, wrapper) in pis() {
        all.push((who, shown(&wrapper, tools, settings.clone())));
    }
    let (_, ours) = &all[0];
    for (who, theirs) in &all[1..] {
        assert_eq!(ours, theirs, "ours and {who}");
    }
    all.remove(0).1
}

#[test]
fn only_mode_lists_the_tools_in_codemode_as_16() {
    let only = compare("+codemode", json!({"codemode": {"mode": "only"}}));
    assert_eq!(only.declared, ["codemode"], "{only:?}");
    assert_eq!(only.listed.len(), 4, "{only:?}");
    let on = compare("+codemode", json!({}));
    assert_eq!(on.declared.len(), 5, "{on:?}");
    assert!(on.listed.is_empty() && !on.nested, "{on:?}");
}

#[test]
fn the_inline_budget_limits_the_listing_as_16() {
    let none = compare(
        "+codemode",
        json!({"codemode": {"mode": "only", "inlineBudget": 0}}),
    );
    assert!(none.listed.is_empty() && none.nested, "{none:?}");
    // The cheapest declarations first: at 600 tokens `edit`'s is left out, at 150 all but
    // `write`'s.
    let some = compare(
        "+codemode",
        json!({"codemode": {"mode": "only", "inlineBudget": 600}}),
    );
    assert_eq!(some.listed, ["### `read`", "### `bash`", "### `write`"]);
    let few = compare(
        "+codemode",
        json!({"codemode": {"mode": "only", "inlineBudget": 150}}),
    );
    assert_eq!(few.listed, ["### `write`"]);
    let all = compare(
        "read,grep,find,ls,codemode",
        json!({"codemode": {"mode": "only", "inlineBudget": 100000}}),
    );
    assert_eq!(all.listed.len(), 4, "{all:?}");
}

/// The tool result a script reading a file gets in `only` mode, where `read` is not
/// declared but still callable from scripts.
fn script_result(wrapper: &Option<PathBuf>) -> String {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::tool_call(
        "codemode",
        json!({"code": "const text = await tools.read({ path: \"a.txt\" });\nreturn text.trim();"}),
    ));
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({"codemode": {"mode": "only"}}));
    std::fs::write(env.work.join("a.txt"), "alpha\n").unwrap();
    let output = run(
        &env,
        program(wrapper),
        &["--tools", "+codemode", "-p", "Go."],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    let tools: Vec<&str> = last["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["codemode"]);
    let result = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    regex::Regex::new(r"Wall time [0-9.]+ seconds")
        .unwrap()
        .replace(&result, "Wall time T seconds")
        .into_owned()
}

#[test]
fn scripts_call_the_hidden_tools_as_16() {
    let mut results = Vec::new();
    for (who, wrapper) in pis() {
        results.push((who, script_result(&wrapper)));
    }
    assert_eq!(
        results[0].1,
        "Script completed\nWall time T seconds\nOutput:\n\nalpha"
    );
    for (who, theirs) in &results[1..] {
        assert_eq!(&results[0].1, theirs, "ours and {who}");
    }
}
