//! Prompt templates, skills, and `!` / `!!` bash through the real `pi` binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output};

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl, user_texts};

fn pi(env: &Env, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_templates_expand_with_arguments() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    write(
        &env.agent.join("prompts/greet.md"),
        "---\ndescription: Greet someone\n---\nSay hello to $1 from $2 (all: $@)",
    );
    write(
        &env.work.join(".pi/prompts/review.md"),
        "Review the file $ARGUMENTS carefully.",
    );
    let out = pi(&env, &["-p", "/greet Bob \"Alice Smith\""]);
    assert!(out.status.success());
    // A project's own templates load once it is trusted (pi 1.6.0).
    let out2 = pi(&env, &["--approve", "-p", "/review src/main.rs"]);
    assert!(out2.status.success());
    let extra = env.dir.path().join("extra.md");
    write(&extra, "From the command line: $1");
    let out3 = pi(
        &env,
        &[
            "--no-prompt-templates",
            "--prompt-template",
            extra.to_str().unwrap(),
            "-p",
            "/greet Bob",
        ],
    );
    assert!(out3.status.success());
    let out4 = pi(
        &env,
        &[
            "--prompt-template",
            extra.to_str().unwrap(),
            "-p",
            "/extra one two",
        ],
    );
    assert!(out4.status.success());
    let requests = server.requests();
    assert_eq!(
        user_texts(&requests[0].body),
        ["Say hello to Bob from Alice Smith (all: Bob Alice Smith)"]
    );
    assert_eq!(
        user_texts(&requests[1].body),
        ["Review the file src/main.rs carefully."]
    );
    // --no-prompt-templates: only the command-line template exists, /greet is sent as typed.
    assert_eq!(user_texts(&requests[2].body), ["/greet Bob"]);
    assert_eq!(
        user_texts(&requests[3].body),
        ["From the command line: one"]
    );

    // RPC lists templates as commands.
    let mut rpc = Rpc::start(&env, &["--approve"]);
    let commands = rpc.call("c", json!({"type": "get_commands"}));
    let commands = commands["data"]["commands"].as_array().unwrap();
    let greet = commands.iter().find(|c| c["name"] == "greet").unwrap();
    assert_eq!(greet["description"], "Greet someone");
    assert_eq!(greet["source"], "prompt");
    assert_eq!(greet["sourceInfo"]["scope"], "user");
    assert!(commands.iter().any(|c| c["name"] == "review"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_in_the_system_prompt_and_expand() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let skill = env.agent.join("skills/deploy/SKILL.md");
    write(
        &skill,
        "---\nname: deploy\ndescription: Deploys the app to staging.\n---\n# Deploy\nRun ./deploy.sh staging.",
    );
    let out = pi(&env, &["-p", "/skill:deploy right now"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out2 = pi(&env, &["--tools", "grep", "-p", "hello"]);
    assert!(out2.status.success());
    let out3 = pi(&env, &["--no-skills", "-p", "/skill:deploy"]);
    assert!(out3.status.success());
    let requests = server.requests();

    let system = system_prompt(&requests[0].body);
    assert!(system.contains("<available_skills>"), "{system}");
    assert!(system.contains("<name>deploy</name>"));
    assert!(system.contains("<description>Deploys the app to staging.</description>"));
    assert!(system.contains(&format!("<location>{}</location>", skill.display())));
    let sent = &user_texts(&requests[0].body)[0];
    assert!(
        sent.starts_with(&format!(
            "<skill name=\"deploy\" location=\"{}\">",
            skill.display()
        )),
        "{sent}"
    );
    assert!(sent.contains("Run ./deploy.sh staging."));
    assert!(sent.ends_with("</skill>\n\nright now"), "{sent}");

    // Without `read` or `bash` the model cannot open a skill: no catalog (pi 1.6 lists it
    // with `bash` alone, see skills_catalog_16.rs).
    assert!(!system_prompt(&requests[1].body).contains("<available_skills>"));
    // --no-skills: nothing discovered, the command goes out as typed.
    assert!(!system_prompt(&requests[2].body).contains("<available_skills>"));
    assert_eq!(user_texts(&requests[2].body), ["/skill:deploy"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_commands_enter_the_context_and_double_bang_stays_out() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let out = pi(&env, &["-p", "!echo visible output", "what did it print?"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout(&out).starts_with("visible output\n"),
        "{}",
        stdout(&out)
    );
    let out2 = pi(&env, &["-p", "!!echo hidden output", "anything?"]);
    assert!(out2.status.success());
    assert!(stdout(&out2).starts_with("hidden output\n"));
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the bash commands made no request");
    let first = user_texts(&requests[0].body);
    assert_eq!(
        first,
        [
            "Ran `echo visible output`\n```\nvisible output\n\n```",
            "what did it print?"
        ]
    );
    let second = user_texts(&requests[1].body);
    assert_eq!(second, ["anything?"]);
    assert!(!requests[1].body.to_string().contains("hidden output"));

    let files = env.session_files();
    assert_eq!(files.len(), 2);
    let bash: Vec<Value> = files
        .iter()
        .flat_map(|f| read_jsonl(f))
        .filter(|l| l["message"]["role"] == "bashExecution")
        .map(|l| l["message"].clone())
        .collect();
    assert_eq!(bash.len(), 2);
    let visible = bash
        .iter()
        .find(|m| m["command"] == "echo visible output")
        .unwrap();
    assert_eq!(visible["exitCode"], 0);
    assert!(visible.get("excludeFromContext").is_none());
    let hidden = bash
        .iter()
        .find(|m| m["command"] == "echo hidden output")
        .unwrap();
    assert_eq!(hidden["excludeFromContext"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_during_a_run_is_flushed_before_the_next_prompt() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::text("slow reply that keeps going")
            .with_chunk_size(4)
            .with_fault(Fault::stall(2, 1500)),
        Script::text("second reply"),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("p1", json!({"type": "prompt", "message": "first"}));
    rpc.event("message_start");
    let bash = rpc.call("b", json!({"type": "bash", "command": "echo during-run"}));
    assert_eq!(bash["data"]["output"], "during-run\n");
    rpc.event("agent_end");
    let messages = rpc.call("m", json!({"type": "get_messages"}));
    let roles: Vec<&str> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant"],
        "held back until the next prompt"
    );
    rpc.call("p2", json!({"type": "prompt", "message": "second"}));
    rpc.event("agent_end");
    let body = &server.requests()[1].body;
    let texts = user_texts(body);
    assert_eq!(texts.len(), 3);
    assert!(texts[1].starts_with("Ran `echo during-run`"), "{texts:?}");
    assert_eq!(texts[2], "second");
}
