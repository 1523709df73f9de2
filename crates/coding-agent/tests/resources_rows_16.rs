//! Resource loading cases of pi's changelog, through ours and pi 1.6.0 (`PI_TS16`) on the
//! same files: Markdown skills nested in `~/.agents/skills` grouping folders (0.84.3), package
//! manifests with malformed resource arrays (0.84.0), and prompt templates with malformed
//! frontmatter reported instead of skipped silently (0.87.0).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\nDo {name}.\n")
}

/// The commands (`get_commands`) of a run in `env`, by name, with their `sourceInfo`.
fn commands(wrapper: &Option<PathBuf>, env: &Env) -> Vec<(String, Value)> {
    let mut rpc = Rpc::start_program(env, program(wrapper), &[]);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    let mut found: Vec<(String, Value)> = answer["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["sourceInfo"].clone(),
            )
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

fn names(commands: &[(String, Value)]) -> Vec<&str> {
    commands.iter().map(|(n, _)| n.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_nested_in_agents_skills_groups_load() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let home_skills = env.dir.path().join(".agents/skills");
        write(&home_skills.join("tools/lint/SKILL.md"), &skill("lint"));
        write(&home_skills.join("tools/deep/fmt/SKILL.md"), &skill("fmt"));
        write(&home_skills.join("plain/SKILL.md"), &skill("plain"));
        // A Markdown skill in a grouping folder counts; at the root of `.agents/skills` it
        // does not, nor beside a `SKILL.md`.
        write(&home_skills.join("tools/notes.md"), &skill("notes"));
        write(&home_skills.join("tools/deep/more/todo.md"), &skill("todo"));
        write(&home_skills.join("loose.md"), &skill("loose"));
        write(&home_skills.join("plain/extra.md"), &skill("extra"));
        let found = commands(&wrapper, &env);
        let skills: Vec<&str> = names(&found)
            .into_iter()
            .filter(|n| n.starts_with("skill:"))
            .collect();
        assert_eq!(
            skills,
            [
                "skill:fmt",
                "skill:lint",
                "skill:notes",
                "skill:plain",
                "skill:todo"
            ],
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_manifest_resource_arrays_are_ignored() {
    let server = MockServer::start().await.unwrap();
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        // A list with a number and a string in place of a list: neither counts, so the
        // package's convention folders are used.
        let loose = env.dir.path().join("loose");
        write(
            &loose.join("package.json"),
            r#"{"name": "loose", "pi": {"prompts": ["./prompts", 5], "skills": "./skills", "themes": {"a": 1}}}"#,
        );
        write(&loose.join("prompts/loose-prompt.md"), "Loose prompt");
        write(
            &loose.join("skills/loose-skill/SKILL.md"),
            &skill("loose-skill"),
        );
        // One good list: only it is used, the `skills` folder is not (its list is bad).
        let mixed = env.dir.path().join("mixed");
        write(
            &mixed.join("package.json"),
            r#"{"name": "mixed", "pi": {"prompts": ["./extra"], "skills": [null]}}"#,
        );
        write(&mixed.join("extra/mixed-prompt.md"), "Mixed prompt");
        write(&mixed.join("prompts/unlisted.md"), "Not listed");
        write(
            &mixed.join("skills/mixed-skill/SKILL.md"),
            &skill("mixed-skill"),
        );
        let settings = env.agent.join("settings.json");
        let mut all: Value =
            serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
        all["packages"] = json!([loose.display().to_string(), mixed.display().to_string()]);
        std::fs::write(&settings, all.to_string()).unwrap();

        let found = commands(&wrapper, &env);
        let loaded: Vec<&str> = names(&found)
            .into_iter()
            .filter(|n| n.contains("loose") || n.contains("mixed") || *n == "unlisted")
            .collect();
        assert_eq!(
            loaded,
            ["loose-prompt", "mixed-prompt", "skill:loose-skill"],
            "{who}"
        );
        let source = |name: &str| {
            let info = &found.iter().find(|(n, _)| n == name).unwrap().1;
            (info["origin"].clone(), info["source"].clone())
        };
        let (origin, from) = source("skill:loose-skill");
        let dir = env.dir.path().display().to_string();
        seen.push((origin, from.as_str().unwrap().replace(&dir, "<TMP>")));
        assert_eq!(
            source("mixed-prompt"),
            (json!("package"), json!(mixed.display().to_string())),
            "{who}"
        );
    }
    seen.dedup();
    assert_eq!(seen.len(), 1, "ours and pi 1.6.0 differ: {seen:?}");
}

#[test]
fn malformed_prompt_frontmatter_is_reported_at_startup() {
    if !support::tmux::available() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        write(
            &env.agent.join("prompts/broken.md"),
            "---\ndescription: [unclosed\n---\nBody",
        );
        write(
            &env.agent.join("prompts/fine.md"),
            "---\ndescription: Fine\n---\nBody",
        );
        let program = match &wrapper {
            Some(path) => path.display().to_string(),
            None => env!("CARGO_BIN_EXE_pi").to_owned(),
        };
        let term = support::tmux::Tmux::start_program(
            &env,
            &program,
            &[("PI_OFFLINE", "1")],
            &[],
            160,
            40,
        );
        let screen = term.wait_for("broken.md");
        term.keys(&["C-d"]);
        assert!(
            screen.contains(&env.agent.join("prompts/broken.md").display().to_string())
                || screen.contains("prompts/broken.md"),
            "{who}: {screen}"
        );
        assert!(!screen.contains("fine.md"), "{who}: {screen}");
    }
}
