//! Settings patterns with `~` (pi 1.2): `!~/…`, `+~/…` and `-~/…` entries of `skills` (and
//! the other resource lists) name paths under the home directory, as plain entries do.
//! Compared with pi 1.6.0 through the skills its system prompt lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

const SKILLS: [&str; 3] = ["alpha-skill", "beta-skill", "gamma-skill"];

/// The skills `program`'s system prompt lists when settings keep `~/extra` but exclude
/// beta with `!~/…`, and gamma (found in the agent dir) is forced out with `-~/…`.
async fn listed_skills(program: Command) -> Vec<&'static str> {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Ok."));
    let env = Env::new(
        &server,
        128_000,
        json!({"skills": ["~/extra", "!~/extra/beta-skill", "-~/agent/skills/gamma-skill"]}),
    );
    let home = env.dir.path();
    let skill = |dir: std::path::PathBuf, name: &str| {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} for tests.\n---\nDo {name}.\n"),
        )
        .unwrap();
    };
    skill(home.join("extra/alpha-skill"), "alpha-skill");
    skill(home.join("extra/beta-skill"), "beta-skill");
    skill(env.agent.join("skills/gamma-skill"), "gamma-skill");
    let output = run(&env, program, &["-p", "Hello."]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let prompt = requests[0].body["messages"][0].to_string();
    SKILLS
        .into_iter()
        .filter(|name| prompt.contains(&format!("The {name} for tests.")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_patterns_exclude_and_force_out_as_in_pi_16() {
    assert_eq!(listed_skills(ours()).await, ["alpha-skill"]);
    if let Some(wrapper) = ts16() {
        assert_eq!(listed_skills(ts16_pi(&wrapper)).await, ["alpha-skill"]);
    }
}
