//! Project trust as pi 1.6.0 decides and applies it: a folder's `.pi` settings,
//! APPEND_SYSTEM.md and project `.agents/skills` load only in a trusted project; the decision
//! comes from `--approve`, a user or `-e` extension's `project_trust` answer, `trust.json`,
//! then `defaultProjectTrust`. Each case runs ours and pi 1.6.0 (`PI_TS16`) on one fixture
//! and compares what reached the model, the saved decisions and the messages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program_with_host as program, run_in};

/// What a run showed of the project's protected resources.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    /// `.pi/settings.json` picked the model.
    settings: bool,
    /// `.pi/APPEND_SYSTEM.md` reached the system prompt.
    append_file: bool,
    /// The project's `.agents/skills` skill is offered.
    agents_skill: bool,
    /// `trust.json` after the run (keys relative to the scratch dir).
    saved: Value,
    /// The lines of stderr naming `project_trust` or trust.
    messages: Vec<String>,
    /// `ctx.isProjectTrusted()` in `session_start`, when a case's extension logged it.
    ctx_trusted: Option<bool>,
}

/// A project folder with protected resources: settings choosing the thinker model, an
/// APPEND_SYSTEM.md and a skill in `.agents/skills`.
fn protected_project(env: &Env) -> PathBuf {
    let project = env.work.join("project");
    std::fs::create_dir_all(project.join(".pi")).unwrap();
    std::fs::write(
        project.join(".pi/settings.json"),
        json!({"defaultModel": "mock-thinker"}).to_string(),
    )
    .unwrap();
    std::fs::write(
        project.join(".pi/APPEND_SYSTEM.md"),
        "Project addendum: prefer tabs.\n",
    )
    .unwrap();
    let skill = project.join(".agents/skills/proj-skill");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: proj-skill\ndescription: A skill of the project.\n---\nDo project things.\n",
    )
    .unwrap();
    project
}

/// An extension answering `project_trust` with `answer` (a JS expression; `throw` allowed)
/// and logging `ctx.isProjectTrusted()` at `session_start` to `$TRUST_LOG`.
fn trust_extension(dir: &Path, name: &str, answer: &str) -> String {
    let path = dir.join(format!("{name}.ts"));
    std::fs::write(
        &path,
        format!(
            r#"import {{ appendFileSync }} from "node:fs";
export default function (pi) {{
  pi.on("project_trust", async (event, ctx) => {{
    ctx.ui.notify(`{name}: project_trust mode=${{ctx.mode}} hasUI=${{ctx.hasUI}}`, "info");
    {answer}
  }});
  pi.on("session_start", async (_event, ctx) => {{
    if (process.env.TRUST_LOG) appendFileSync(process.env.TRUST_LOG, `${{ctx.isProjectTrusted()}}\n`);
  }});
}}
"#
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// Runs `pi -p` in `cwd` with `args` (one per pi, same fixture built by `setup`).
async fn seen(wrapper: &Option<PathBuf>, setup: &dyn Fn(&Env) -> (PathBuf, Vec<String>)) -> Seen {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Ok."));
    let env = Env::new(&server, 128_000, json!({}));
    let (cwd, mut args) = setup(&env);
    let log = env.dir.path().join("trust.log");
    args.extend(["-p".to_owned(), "Hello.".to_owned()]);
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command = program(wrapper);
    command.env("TRUST_LOG", &log);
    let output = tokio::task::block_in_place(|| run_in(&env, &cwd, command, &arg_refs));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let requests = server.requests();
    let body = &requests[0].body;
    let prompt = body["messages"][0]["content"].to_string();
    let scratch = env.dir.path().canonicalize().unwrap().display().to_string();
    let saved = std::fs::read_to_string(env.agent.join("trust.json"))
        .map(|text| {
            let relative = text.replace(&scratch, "<scratch>");
            serde_json::from_str(&relative).unwrap()
        })
        .unwrap_or(Value::Null);
    let messages = stderr
        .lines()
        .filter(|line| line.contains("project_trust") || line.contains("trust"))
        .map(|line| line.replace(&scratch, "<scratch>"))
        .map(|line| line.replace(&env.dir.path().display().to_string(), "<scratch>"))
        .collect();
    let ctx_trusted = std::fs::read_to_string(&log)
        .ok()
        .and_then(|text| text.lines().last().map(|line| line == "true"));
    Seen {
        settings: body["model"] == "mock-thinker",
        append_file: prompt.contains("Project addendum: prefer tabs."),
        agents_skill: prompt.contains("proj-skill"),
        saved,
        messages,
        ctx_trusted,
    }
}

/// Ours and pi 1.6.0 see the same; ours sees `expected` (with `PI_TS16` unset too).
async fn same(setup: &dyn Fn(&Env) -> (PathBuf, Vec<String>), expected: &dyn Fn(&Seen)) {
    let mut first: Option<Seen> = None;
    for (name, wrapper) in pis() {
        let got = seen(&wrapper, setup).await;
        match &first {
            None => {
                expected(&got);
                first = Some(got);
            }
            Some(ours) => assert_eq!(&got, ours, "{name} differs from ours"),
        }
    }
}

fn loaded(seen: &Seen, all: bool) {
    assert_eq!(
        (seen.settings, seen.append_file, seen.agents_skill),
        (all, all, all),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_resources_wait_for_a_decision() {
    // Nothing decided, `defaultProjectTrust` "ask" without a UI: nothing protected loads.
    same(&|env| (protected_project(env), vec![]), &|seen| {
        loaded(seen, false);
        assert_eq!(seen.saved, Value::Null);
    })
    .await;
    // `--approve` trusts for this run only.
    same(
        &|env| (protected_project(env), vec!["--approve".into()]),
        &|seen| {
            loaded(seen, true);
            assert_eq!(seen.saved, Value::Null);
        },
    )
    .await;
    // A saved decision for a parent folder applies.
    same(
        &|env| {
            let key = env.work.canonicalize().unwrap().display().to_string();
            std::fs::write(
                env.agent.join("trust.json"),
                json!({ key: true }).to_string(),
            )
            .unwrap();
            (protected_project(env), vec![])
        },
        &|seen| loaded(seen, true),
    )
    .await;
    // `defaultProjectTrust: "always"` (global settings only).
    same(
        &|env| {
            let settings = env.agent.join("settings.json");
            let mut value: Value =
                serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
            value["defaultProjectTrust"] = json!("always");
            std::fs::write(&settings, value.to_string()).unwrap();
            (protected_project(env), vec![])
        },
        &|seen| loaded(seen, true),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_decide_before_saved_decisions() {
    // The first yes/no answer wins; `remember` saves it.
    same(
        &|env| {
            let undecided = trust_extension(
                &env.work,
                "undecided",
                r#"return { trusted: "undecided" };"#,
            );
            let yes = trust_extension(
                &env.work,
                "yes",
                r#"return { trusted: "yes", remember: true };"#,
            );
            (
                protected_project(env),
                vec!["-e".into(), undecided, "-e".into(), yes],
            )
        },
        &|seen| {
            loaded(seen, true);
            assert_eq!(seen.saved, json!({"<scratch>/work/project": true}));
            assert_eq!(seen.ctx_trusted, Some(true));
            assert!(
                seen.messages
                    .iter()
                    .any(|m| m == "yes: project_trust mode=print hasUI=false"),
                "{:?}",
                seen.messages
            );
        },
    )
    .await;
    // "no" overrules a saved trust, and is not saved without `remember`.
    same(
        &|env| {
            let project = protected_project(env);
            let key = project.canonicalize().unwrap().display().to_string();
            std::fs::write(
                env.agent.join("trust.json"),
                json!({ key: true }).to_string(),
            )
            .unwrap();
            let no = trust_extension(&env.work, "no", r#"return { trusted: "no" };"#);
            (project, vec!["-e".into(), no])
        },
        &|seen| {
            loaded(seen, false);
            assert_eq!(seen.saved, json!({"<scratch>/work/project": true}));
            assert_eq!(seen.ctx_trusted, Some(false));
        },
    )
    .await;
    // A failing handler is reported and the built-in decision goes on.
    same(
        &|env| {
            let broken = trust_extension(
                &env.work,
                "broken",
                r#"throw new Error("trust store down");"#,
            );
            (protected_project(env), vec!["-e".into(), broken])
        },
        &|seen| {
            loaded(seen, false);
            assert!(
                seen.messages.iter().any(|m| m.contains(
                    "Extension \"<scratch>/work/broken.ts\" project_trust error: trust store down"
                )),
                "{:?}",
                seen.messages
            );
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_without_protected_resources_keeps_a_saved_no() {
    let agents_only = |env: &Env, saved: Option<bool>| {
        let project = env.work.join("plain");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("AGENTS.md"), "Be kind.\n").unwrap();
        if let Some(saved) = saved {
            let key = project.canonicalize().unwrap().display().to_string();
            std::fs::write(
                env.agent.join("trust.json"),
                json!({ key: saved }).to_string(),
            )
            .unwrap();
        }
        let logger = trust_extension(&env.work, "logger", r#"return { trusted: "yes" };"#);
        (project, vec!["-e".into(), logger])
    };
    // Nothing protected: trusted, without asking any extension.
    same(&|env| agents_only(env, None), &|seen| {
        assert_eq!(seen.ctx_trusted, Some(true));
        assert!(seen.messages.is_empty(), "{:?}", seen.messages);
    })
    .await;
    // A saved "Do not trust" still holds.
    same(&|env| agents_only(env, Some(false)), &|seen| {
        assert_eq!(seen.ctx_trusted, Some(false));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_home_folder_is_not_a_project_because_of_the_agent_dir() {
    // pi's own `~/.pi/agent` and the user's `~/.agents/skills` do not make `$HOME` a
    // project that needs trust.
    same(
        &|env| {
            let home = env.dir.path().to_path_buf();
            let skill = home.join(".agents/skills/user-skill");
            std::fs::create_dir_all(&skill).unwrap();
            std::fs::write(
                skill.join("SKILL.md"),
                "---\nname: user-skill\ndescription: The user's skill.\n---\nBody.\n",
            )
            .unwrap();
            std::fs::create_dir_all(home.join(".pi/agent")).unwrap();
            std::fs::write(home.join(".pi/agent/settings.json"), "{}").unwrap();
            let logger = trust_extension(&env.work, "logger", r#"return { trusted: "no" };"#);
            (home, vec!["-e".into(), logger])
        },
        &|seen| {
            assert_eq!(seen.ctx_trusted, Some(true));
            assert!(seen.messages.is_empty(), "{:?}", seen.messages);
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn package_commands_ask_for_trust_to_use_project_settings() {
    let server = MockServer::start().await.unwrap();
    let mut outputs = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let project = env.work.join("project");
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        std::fs::write(
            project.join(".pi/settings.json"),
            json!({"packages": ["./pkgx"]}).to_string(),
        )
        .unwrap();
        let package = env.work.join("pkg");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(
            package.join("package.json"),
            json!({"name": "pkgx", "version": "1.0.0", "pi": {}}).to_string(),
        )
        .unwrap();
        let mut seen = Vec::new();
        for args in [
            vec!["list"],
            vec!["install", "-l", "../pkg"],
            vec!["list", "--approve"],
            vec!["config", "-l"],
        ] {
            let output =
                tokio::task::block_in_place(|| run_in(&env, &project, program(&wrapper), &args));
            seen.push((
                args.join(" "),
                output.status.code(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            ));
        }
        assert_eq!(
            std::fs::read_to_string(project.join(".pi/settings.json")).unwrap(),
            json!({"packages": ["./pkgx"]}).to_string(),
            "{name} changed the untrusted project's settings"
        );
        outputs.push((name, seen));
    }
    let (_, ours) = &outputs[0];
    assert_eq!(ours[0].2, "No packages installed.\n", "{ours:?}");
    assert_eq!(
        (ours[1].1, ours[1].3.as_str()),
        (
            Some(1),
            "Project is not trusted. Use --approve to modify local package config.\n"
        )
    );
    assert_eq!(ours[2].2, "Project packages:\n  ./pkgx\n", "{ours:?}");
    assert_eq!(
        (ours[3].1, ours[3].3.as_str()),
        (
            Some(1),
            "Project is not trusted. Use --approve to modify local resource config.\n"
        )
    );
    for (name, theirs) in &outputs[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_prompt_files_come_from_a_trusted_project_else_the_agent_dir() {
    // Which of the four texts reached the system prompt.
    async fn texts(wrapper: &Option<PathBuf>, approve: bool) -> Vec<&'static str> {
        let server = MockServer::start().await.unwrap();
        server.push(Script::text("Ok."));
        let env = Env::new(&server, 128_000, json!({}));
        std::fs::write(env.agent.join("SYSTEM.md"), "Global system: be exact.\n").unwrap();
        std::fs::write(
            env.agent.join("APPEND_SYSTEM.md"),
            "Global addendum: cite.\n",
        )
        .unwrap();
        let project = env.work.join("project");
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        std::fs::write(project.join(".pi/SYSTEM.md"), "Project system: be loud.\n").unwrap();
        std::fs::write(
            project.join(".pi/APPEND_SYSTEM.md"),
            "Project addendum: tabs.\n",
        )
        .unwrap();
        let mut args = vec!["-p", "Hello."];
        if approve {
            args.insert(0, "--approve");
        }
        let output =
            tokio::task::block_in_place(|| run_in(&env, &project, program(wrapper), &args));
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let prompt = server.requests()[0].body["messages"][0]["content"].to_string();
        [
            "Global system: be exact.",
            "Global addendum: cite.",
            "Project system: be loud.",
            "Project addendum: tabs.",
        ]
        .into_iter()
        .filter(|text| prompt.contains(text))
        .collect()
    }
    for (name, wrapper) in pis() {
        assert_eq!(
            texts(&wrapper, false).await,
            ["Global system: be exact.", "Global addendum: cite."],
            "{name}"
        );
        assert_eq!(
            texts(&wrapper, true).await,
            ["Project system: be loud.", "Project addendum: tabs."],
            "{name}"
        );
    }
}
