//! The skills catalog in the system prompt, as pi 1.6.0 decides it: it is there when a
//! tool can read a skill's file, `read` or else `bash` (pi 0.85: skills were unavailable
//! with bash as the only tool), and not with neither. The wording is ours; which tool sets
//! carry a catalog naming the skill is compared with pi 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

const SKILL: &str =
    "---\nname: pdf-tools\ndescription: Work with PDF files.\n---\nUse pdftotext.\n";

/// Whether the system prompt `program` sends with `tools` lists the skill.
async fn lists_the_skill(program: Command, tools: &str) -> bool {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Ok."));
    let env = Env::new(&server, 128_000, json!({}));
    let skill_dir = env.agent.join("skills/pdf-tools");
    std::fs::create_dir_all(&skill_dir).unwrap();
    std::fs::write(skill_dir.join("SKILL.md"), SKILL).unwrap();
    let output = run(&env, program, &["--tools", tools, "-p", "Hello."]);
    assert!(
        output.status.success(),
        "{tools}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let body = &requests[0].body;
    let system = body["messages"][0]["content"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| {
            body["messages"][0]["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| panic!("no system prompt in {body}"));
    system.contains("<name>pdf-tools</name>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_needs_read_or_bash_as_in_pi_16() {
    let cases = [
        ("read", true),
        ("bash", true),
        ("read,bash", true),
        ("grep,ls", false),
    ];
    let theirs = ts16();
    for (tools, expected) in cases {
        assert_eq!(lists_the_skill(ours(), tools).await, expected, "{tools}");
        if let Some(wrapper) = &theirs {
            assert_eq!(
                lists_the_skill(ts16_pi(wrapper), tools).await,
                expected,
                "pi 1.6.0 with {tools}"
            );
        }
    }
}
