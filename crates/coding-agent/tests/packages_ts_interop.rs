//! Packages cross between the TypeScript pi 0.73.1 and ours: what one installs (a local
//! folder, a git repository, an npm package) the other loads from the same settings and
//! folders. The global npm prefix is a folder of the test (`npm_config_prefix`), so the
//! TypeScript pi's `npm install -g` stays inside it. Needs the TypeScript pi
//! (`scripts/install-ts-pi.sh`), node, npm and the registry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::git::{git, rewrite_test_host};
use support::rpc::{Env, Rpc};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// git's URL rewriting and the npm prefix every process of a test shares.
fn shared_env(env: &Env, command: &mut Command) {
    command
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("npm_config_prefix", env.dir.path().join("npm-global"))
        // The TypeScript pi 0.73's `npm install -g` would also install the packages' peers
        // (a whole pi, over a hundred packages): pi's own installs skip them too.
        .env("npm_config_legacy_peer_deps", "true")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    rewrite_test_host(command, env.dir.path());
}

fn ours() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pi"))
}

fn theirs(cli: &Path) -> Command {
    let mut command = Command::new("node");
    command.arg(cli);
    command
}

fn install(env: &Env, mut program: Command, source: &str) {
    shared_env(env, &mut program);
    let out = program.arg("install").arg(source).output().unwrap();
    assert!(
        out.status.success(),
        "install {source}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn command_names(env: &Env, mut program: Command, host: &Path) -> Vec<String> {
    shared_env(env, &mut program);
    program.env("PI_EXTENSION_HOST_DIR", host);
    let mut rpc = Rpc::start_program(env, program, &[]);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    answer["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect()
}

/// A local package and a git "remote" beside the env's folders.
fn make_packages(env: &Env) {
    let local = env.dir.path().join("localpkg");
    write(&local.join("prompts/greet.md"), "Say hello to $1");
    let src = env.dir.path().join("gitpkg-src");
    write(&src.join("prompts/hello.md"), "hello from git");
    git(&src, &["init", "-q", "-b", "main"]);
    git(&src, &["add", "."]);
    git(&src, &["commit", "-q", "-m", "one"]);
    git(&src, &["tag", "v1"]);
    let bare = env.dir.path().join("repos/user/gitpkg");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    git(
        env.dir.path(),
        &[
            "clone",
            "-q",
            "--bare",
            src.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
}

const SOURCES: [&str; 3] = [
    "../localpkg",
    "git:git.example.test/user/gitpkg@v1",
    "npm:pi-aliases@1.0.7",
];

fn setup() -> Option<(PathBuf, PathBuf)> {
    if Command::new("npm").arg("--version").output().is_err() {
        eprintln!("skipped: npm is not installed");
        return None;
    }
    let host = support::ext_host::host_dir()?;
    let cli = support::ext_host::ts_package()?.join("dist/cli.js");
    Some((host, cli))
}

fn assert_loaded(names: &[String], who: &str) {
    for wanted in ["greet", "hello", "clear"] {
        assert!(
            names.iter().any(|n| n == wanted),
            "{who}: {wanted} missing from {names:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packages_the_typescript_pi_installed_load_in_ours() {
    let Some((host, cli)) = setup() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    make_packages(&env);
    for source in SOURCES {
        install(&env, theirs(&cli), source);
    }
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(settings["packages"], json!(SOURCES));
    // 0.73 put the npm package in the global root, not in <agentDir>/npm.
    assert!(!env.agent.join("npm/node_modules/pi-aliases").exists());
    let names = command_names(&env, ours(), &host);
    assert_loaded(&names, "ours");
    // Our list finds the TS pi's install where it is.
    let mut list = ours();
    shared_env(&env, &mut list);
    let out = list.arg("list").output().unwrap();
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        listed.contains(&format!(
            "    {}",
            env.dir
                .path()
                .join("npm-global/lib/node_modules/pi-aliases")
                .display()
        )),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packages_ours_installed_load_in_the_typescript_pi() {
    let Some((host, cli)) = setup() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    make_packages(&env);
    for source in SOURCES {
        install(&env, ours(), source);
    }
    let names = command_names(&env, theirs(&cli), &host);
    assert_loaded(&names, "the TypeScript pi");
}
