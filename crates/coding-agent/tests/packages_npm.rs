//! Real pi packages from the npm registry, installed by our `pi install` with the machine's
//! npm and loaded through the real binary: `pi-aliases` (an extension with commands),
//! `pi-subagents` (skills and prompt templates; its extension filtered off in settings) and
//! `pi-themes` (themes and an extension). Needs npm and the registry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};

fn pi(env: &Env, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn commands(env: &Env, host: &Path) -> Vec<Value> {
    let mut rpc = Rpc::start_with_env(env, &[], &[("PI_EXTENSION_HOST_DIR", host)]);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    answer["data"]["commands"].as_array().unwrap().clone()
}

fn names(commands: &[Value]) -> Vec<&str> {
    commands.iter().filter_map(|c| c["name"].as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packages_from_the_npm_registry_install_load_and_go() {
    if Command::new("npm").arg("--version").output().is_err() {
        eprintln!("skipped: npm is not installed");
        return;
    }
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({"theme": "dracula"}));
    let theme_warning = |env: &Env| -> Option<bool> {
        if !support::tmux::available() {
            return None;
        }
        let host = host.display().to_string();
        let term = support::tmux::Tmux::start_with(
            env,
            &[("PI_EXTENSION_HOST_DIR", host.as_str())],
            &[],
            100,
            30,
        );
        let screen = term.wait_for("mock-model");
        term.keys(&["C-d"]);
        // Any warning about it (not found, or not loadable) names it.
        Some(screen.contains("dracula"))
    };
    // Before pi-themes is installed its theme is unknown.
    assert_ne!(theme_warning(&env), Some(false));

    // A package that is not on the registry: npm's error, nothing written.
    let before = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
    let out = pi(&env, &["install", "npm:pi-rs-no-such-package-5f1c2a"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Error: npm install"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(env.agent.join("settings.json")).unwrap(),
        before
    );

    for source in [
        "npm:pi-aliases@1.0.7",
        "npm:pi-subagents@0.67.0",
        "npm:pi-themes@1.0.1",
    ] {
        let out = pi(&env, &["install", source]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{source}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stdout).ends_with(&format!("Installed {source}\n")));
    }
    // The TypeScript pi 1.5 layout: <agentDir>/npm/node_modules/<name>.
    let modules = env.agent.join("npm/node_modules");
    for name in ["pi-aliases", "pi-subagents", "pi-themes"] {
        assert!(modules.join(name).join("package.json").exists(), "{name}");
    }
    let list = text(&pi(&env, &["list"]).stdout);
    for (source, name) in [
        ("npm:pi-aliases@1.0.7", "pi-aliases"),
        ("npm:pi-subagents@0.67.0", "pi-subagents"),
        ("npm:pi-themes@1.0.1", "pi-themes"),
    ] {
        assert!(
            list.contains(&format!(
                "  {source}\n    {}\n",
                modules.join(name).display()
            )),
            "{list}"
        );
    }

    // pi-subagents' extension needs a server of its own: keep its skills and prompts only.
    let path = env.agent.join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["packages"][1] = json!({"source": "npm:pi-subagents@0.67.0", "extensions": []});
    std::fs::write(&path, settings.to_string()).unwrap();

    let all = commands(&env, &host);
    let found = names(&all);
    for wanted in [
        "clear",
        "exit",
        "theme",
        "council",
        "parallel-review",
        "skill:council-mode",
    ] {
        assert!(found.contains(&wanted), "{wanted} missing from {found:?}");
    }
    // pi-themes' themes are in the theme list: the setting's theme loads.
    assert_ne!(theme_warning(&env), Some(true));
    let council = all.iter().find(|c| c["name"] == "council").unwrap();
    assert_eq!(council["sourceInfo"]["source"], "npm:pi-subagents@0.67.0");
    assert_eq!(council["sourceInfo"]["origin"], "package");

    // Removing a package unloads what it brought.
    let out = pi(&env, &["remove", "npm:pi-aliases"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!modules.join("pi-aliases").exists());
    let found_after: Vec<String> = names(&commands(&env, &host))
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert!(!found_after.iter().any(|n| n == "clear"), "{found_after:?}");
    assert!(
        found_after.iter().any(|n| n == "council"),
        "{found_after:?}"
    );
}
