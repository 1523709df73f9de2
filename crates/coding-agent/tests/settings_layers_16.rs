//! Settings layers through ours and pi 1.6.0 (`PI_TS16`) side by side: a project
//! `defaultTools` made of `+name`/`-name` entries edits the user's selection instead of
//! replacing it, while a list with plain names replaces it; resource patterns match from
//! their settings file's folder (`.agents` for skills there, which keep that provenance).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{pis, program};

/// The tool names of the last request the mock received.
fn sent_tools(server: &MockServer) -> Vec<String> {
    let body = server.requests().last().unwrap().body.clone();
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_default_tools_edit_or_replace_the_user_selection() {
    let server = MockServer::start().await.unwrap();
    let cases = [
        // Edits are applied after the user's, in order.
        (
            json!(["+find", "-bash"]),
            vec!["read", "edit", "grep", "find"],
        ),
        (
            json!(["-grep", "+write"]),
            vec!["read", "bash", "edit", "write"],
        ),
        // Plain names replace the user's list (and its edits).
        (json!(["read", "+ls"]), vec!["read", "ls"]),
    ];
    for (who, wrapper) in pis() {
        for (project, expected) in &cases {
            let env = Env::new(
                &server,
                128_000,
                json!({"defaultTools": ["+grep", "-write"]}),
            );
            let settings = env.work.join(".pi/settings.json");
            std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
            std::fs::write(&settings, json!({"defaultTools": project}).to_string()).unwrap();
            server.push(Script::text("ok"));
            let out = support::ts16::run(
                &env,
                program(&wrapper),
                &["--approve", "--no-session", "-p", "hi"],
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{who}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(&sent_tools(&server), expected, "{who} {project}");
        }
    }
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The prompt templates and skills a run loads (their `get_commands` entries), by name.
fn resource_commands(program: std::process::Command, env: &Env, args: &[&str]) -> Vec<Value> {
    let mut rpc = support::rpc::Rpc::start_program(env, program, args);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    let mut commands: Vec<Value> = answer["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"] == "prompt" || c["source"] == "skill")
        .cloned()
        .collect();
    commands.sort_by_key(|c| c["name"].as_str().unwrap_or_default().to_owned());
    commands
}

/// Resource patterns in settings match paths relative to the folder they belong to: the
/// agent dir for user settings, `.pi` for project settings, and the `.agents` folder for
/// skills found under `~/.agents/skills` and the project's `.agents/skills`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_patterns_resolve_from_their_base_folder() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(
            &server,
            128_000,
            json!({
                "prompts": ["-prompts/ub.md", "./extra", "!extra/s*.md"],
                "skills": ["-skills/sb"],
            }),
        );
        let prompt = |description: &str| format!("---\ndescription: {description}\n---\nx");
        let skill = |name: &str| format!("---\nname: {name}\ndescription: skill {name}\n---\nx");
        let home = env.dir.path();
        for (path, text) in [
            (env.agent.join("prompts/ua.md"), prompt("ua")),
            (env.agent.join("prompts/ub.md"), prompt("ub")),
            (env.agent.join("extra/keep.md"), prompt("keep")),
            (env.agent.join("extra/skip.md"), prompt("skip")),
            (env.work.join(".pi/prompts/pa.md"), prompt("pa")),
            (env.work.join(".pi/prompts/pb.md"), prompt("pb")),
            (home.join(".agents/skills/sa/SKILL.md"), skill("sa")),
            (home.join(".agents/skills/sb/SKILL.md"), skill("sb")),
            (env.work.join(".agents/skills/px/SKILL.md"), skill("px")),
            (env.work.join(".agents/skills/py/SKILL.md"), skill("py")),
        ] {
            write(&path, &text);
        }
        write(
            &env.work.join(".pi/settings.json"),
            &json!({"prompts": ["!prompts/*b.md"], "skills": ["!skills/?x"]}).to_string(),
        );
        let commands = resource_commands(program(&wrapper), &env, &["--approve"]);
        let names: Vec<&str> = commands.iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(names, ["keep", "pa", "skill:py", "skill:sa", "ua"], "{who}");
        // `.agents` skills keep their provenance: auto-discovered, their scope, and the
        // `.agents` folder as base.
        let info =
            |name: &str| commands.iter().find(|c| c["name"] == name).unwrap()["sourceInfo"].clone();
        let skill_md = |root: &std::path::Path, name: &str| {
            root.join(format!(".agents/skills/{name}/SKILL.md"))
        };
        for (name, root, scope) in [
            ("py", &env.work, "project"),
            ("sa", &home.to_path_buf(), "user"),
        ] {
            assert_eq!(
                info(&format!("skill:{name}")),
                json!({
                    "path": skill_md(root, name),
                    "source": "auto",
                    "scope": scope,
                    "origin": "top-level",
                    "baseDir": root.join(".agents"),
                }),
                "{who} {name}"
            );
        }
    }
}
