//! Context files as pi 1.6.0 reads them: in each directory an `AGENTS.override.md` takes the
//! place of its `AGENTS.md` or `CLAUDE.md` (pi 0.84), and only there: the agent dir's and
//! the parent directories' files still count.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::ts16::{ours, run_in, ts16, ts16_pi};

/// The system prompt `program` sends from a project whose folder has an override.
async fn system_prompt(program: Command) -> String {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Ok."));
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(env.agent.join("AGENTS.md"), "Global: be brief.\n").unwrap();
    let project = env.work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(env.work.join("AGENTS.md"), "Parent: use tabs.\n").unwrap();
    std::fs::write(project.join("AGENTS.md"), "Project: use spaces.\n").unwrap();
    std::fs::write(project.join("CLAUDE.md"), "Project: write Go.\n").unwrap();
    std::fs::write(
        project.join("AGENTS.override.md"),
        "Override: write Rust.\n",
    )
    .unwrap();
    let output = run_in(&env, &project, program, &["-p", "Hello."]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let body = &requests[0].body;
    body["messages"][0]["content"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| {
            body["messages"][0]["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| panic!("no system prompt in {body}"))
}

/// Which context texts a prompt carries, in order.
fn contexts(prompt: &str) -> Vec<&'static str> {
    let mut found: Vec<(usize, &'static str)> = [
        "Global: be brief.",
        "Parent: use tabs.",
        "Project: use spaces.",
        "Project: write Go.",
        "Override: write Rust.",
    ]
    .into_iter()
    .filter_map(|text| prompt.find(text).map(|at| (at, text)))
    .collect();
    found.sort();
    found.into_iter().map(|(_, text)| text).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_override_replaces_only_its_own_folders_context_file() {
    let ours_prompt = system_prompt(ours()).await;
    let expected = [
        "Global: be brief.",
        "Parent: use tabs.",
        "Override: write Rust.",
    ];
    assert_eq!(contexts(&ours_prompt), expected, "{ours_prompt}");
    if let Some(wrapper) = ts16() {
        let theirs = system_prompt(ts16_pi(&wrapper)).await;
        assert_eq!(contexts(&theirs), expected, "{theirs}");
    }
}
