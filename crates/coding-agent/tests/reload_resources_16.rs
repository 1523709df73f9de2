//! `/reload` reads skills, prompt templates and context files from disk again and rebuilds
//! the system prompt from them, as pi 1.6.0 does ("Reloaded keybindings, extensions,
//! skills, prompts, themes, and context files"). A prompt template, a skill and an
//! AGENTS.md written while pi runs are used after `/reload`, in ours and in pi 1.6.0
//! (`PI_TS16`) side by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::pis;

const RELOADED: &str =
    "Reloaded keybindings, extensions, skills, prompts, themes, and context files";

/// The system prompt and the last user text of `body` (an OpenAI Completions request).
fn system_and_user(body: &Value) -> (String, String) {
    let messages = body["messages"].as_array().unwrap();
    let text = |m: &Value| match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    let system = messages
        .iter()
        .find(|m| m["role"] == "system" || m["role"] == "developer")
        .map(text)
        .unwrap_or_default();
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(text)
        .unwrap_or_default();
    (system, user)
}

#[test]
fn reload_reads_prompts_skills_and_context_files_again_as_pi_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (name, wrapper) in pis() {
        let server = runtime.block_on(MockServer::start()).unwrap();
        server.push(Script::text("First."));
        server.push(Script::text("Second."));
        // 1.6.0 keeps the regular (scrollback) screen with this setting, as ours has.
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let pi = wrapper
            .as_ref()
            .map_or(env!("CARGO_BIN_EXE_pi").to_owned(), |w| {
                w.display().to_string()
            });
        // The first prompt comes from the command line: it starts once pi is ready.
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &["Before."], 120, 40);
        tmux.wait_for("First.");

        // Written while pi runs: nothing of them is known until `/reload`.
        std::fs::create_dir_all(env.agent.join("prompts")).unwrap();
        std::fs::write(
            env.agent.join("prompts/greet.md"),
            "---\ndescription: Greets\n---\nSay hello to $1 from the template.",
        )
        .unwrap();
        let skill = env.agent.join("skills/late-skill");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: late-skill\ndescription: A skill written after startup.\n---\nDo it.\n",
        )
        .unwrap();
        std::fs::write(
            env.work.join("AGENTS.md"),
            "Context written after startup.\n",
        )
        .unwrap();

        tmux.type_text("/reload");
        tmux.keys(&["Enter"]);
        tmux.wait_for(RELOADED);
        tmux.type_text("/greet world");
        tmux.keys(&["Enter"]);
        tmux.wait_for("Second.");
        tmux.keys(&["C-d"]);
        tmux.wait_exit(Duration::from_secs(20));

        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{name}");
        let (before, _) = system_and_user(&requests[0].body);
        assert!(!before.contains("late-skill"), "{name}: {before}");
        assert!(!before.contains("Context written after startup."), "{name}");
        let (after, user) = system_and_user(&requests[1].body);
        assert_eq!(user, "Say hello to world from the template.", "{name}");
        assert!(after.contains("<name>late-skill</name>"), "{name}: {after}");
        assert!(
            after.contains("Context written after startup."),
            "{name}: {after}"
        );
    }
}

/// An extension whose `/rl` command reloads (`ctx.reload()`) and whose
/// `resources_discover` handler adds a skill of its own folder.
const RELOADER: &str = r#"
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
const here = dirname(fileURLToPath(import.meta.url));
export default function (pi) {
  pi.registerCommand("rl", { description: "Reload", handler: async (_args, ctx) => { await ctx.reload(); } });
  pi.on("resources_discover", () => ({ skillPaths: [join(here, "ext-skills")] }));
}
"#;

/// The skill commands `get_commands` lists, with their source info.
fn skill_commands(rpc: &mut support::rpc::Rpc, id: &str) -> Vec<Value> {
    let response = rpc.call(id, json!({"type": "get_commands"}));
    let mut skills: Vec<Value> = response["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"] == "skill")
        .cloned()
        .collect();
    skills.sort_by_key(|c| c["name"].as_str().unwrap_or_default().to_owned());
    skills
}

/// Skills of an installed package and of an extension keep their source information
/// across a reload (pi 0.7x: "skills, prompts, and themes losing package source metadata
/// after extensions reload resources"): `get_commands` lists them the same before and after
/// `ctx.reload()`, in ours and in pi 1.6.0.
#[test]
fn skills_keep_their_sources_across_a_reload_as_pi_16() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        let server = runtime.block_on(MockServer::start()).unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let package = scratch.path().join("pkg");
        let skill_dir = package.join("skills/pkg-skill");
        std::fs::create_dir_all(&skill_dir).unwrap();
        std::fs::write(
            package.join("package.json"),
            json!({"name": "pkg", "version": "1.0.0", "pi": {"skills": ["./skills"]}}).to_string(),
        )
        .unwrap();
        std::fs::write(
            skill_dir.join("SKILL.md"),
            "---\nname: pkg-skill\ndescription: From a package.\n---\nBody.\n",
        )
        .unwrap();
        let env = Env::new(
            &server,
            128_000,
            json!({"packages": [package.display().to_string()]}),
        );
        let ext_dir = env.work.join("ext");
        std::fs::create_dir_all(ext_dir.join("ext-skills/ext-skill")).unwrap();
        std::fs::write(
            ext_dir.join("ext-skills/ext-skill/SKILL.md"),
            "---\nname: ext-skill\ndescription: From an extension.\n---\nBody.\n",
        )
        .unwrap();
        let extension = ext_dir.join("reloader.ts");
        std::fs::write(&extension, RELOADER).unwrap();
        let extension = extension.display().to_string();
        let program = support::ts16::program_with_host(&wrapper);
        let mut rpc = support::rpc::Rpc::start_program(&env, program, &["-e", &extension]);
        let before = skill_commands(&mut rpc, "before");
        let reply = rpc.call("rl", json!({"type": "prompt", "message": "/rl"}));
        assert_eq!(reply["success"], true, "{name}: {reply}");
        let after = skill_commands(&mut rpc, "after");
        rpc.finish();
        let names: Vec<&str> = before.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["skill:ext-skill", "skill:pkg-skill"],
            "{name}: {before:?}"
        );
        assert_eq!(
            before, after,
            "{name}: the sources changed across the reload"
        );
        // Paths differ between the two runs' scratch folders: compare their shapes.
        let relative: Vec<Value> = after
            .iter()
            .map(|c| {
                let text = c.to_string();
                let text = text.replace(&package.display().to_string(), "<pkg>");
                let text = text.replace(&ext_dir.display().to_string(), "<ext>");
                serde_json::from_str(&text).unwrap()
            })
            .collect();
        seen.push((name, relative));
    }
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, &seen[0].1, "{name} (left) and ours (right) differ");
    }
}
