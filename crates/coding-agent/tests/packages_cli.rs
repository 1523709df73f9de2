//! pi packages through the real binary: `pi install / list / update / remove` with a local
//! folder and a git repository made by the test (served through git's own `insteadOf`
//! rewriting, so the TypeScript pi's `git:host/path@ref` sources reach it), the resources
//! they bring (prompt templates, skills, themes, extensions), and the faults: a missing
//! path, npm absent, a repository that does not exist — each leaves settings as they were.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::git::{git, rewrite_test_host};
use support::rpc::{Env, Rpc};

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// `pi <args>` in the env's work folder, with git's URL rewriting for the test host.
fn pi(env: &Env, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
    command
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path());
    rewrite_test_host(&mut command, env.dir.path());
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn settings(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.agent.join("settings.json")).unwrap())
        .unwrap()
}

/// The names `get_commands` lists over RPC.
fn command_names(env: &Env) -> Vec<String> {
    let mut rpc = Rpc::start(env, &["--no-extensions"]);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    answer["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_package_installs_lists_loads_and_removes() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let package = env.dir.path().join("localpkg");
    write(
        &package.join("package.json"),
        r#"{"name": "localpkg", "pi": {"prompts": ["./prompts"], "skills": ["./skills"]}}"#,
    );
    write(
        &package.join("prompts/greet.md"),
        "---\ndescription: Greets\n---\nSay hello to $1",
    );
    write(
        &package.join("skills/tidy/SKILL.md"),
        "---\nname: tidy\ndescription: Tidies things\n---\nTidy up.",
    );

    let out = pi(&env, &["install", "../localpkg"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Installing ../localpkg...\nInstalled ../localpkg\n"
    );
    assert_eq!(settings(&env)["packages"], json!(["../localpkg"]));
    // Installing again changes nothing.
    assert_eq!(pi(&env, &["install", "../localpkg"]).status.code(), Some(0));
    assert_eq!(settings(&env)["packages"], json!(["../localpkg"]));

    let out = pi(&env, &["list"]);
    assert_eq!(
        text(&out.stdout),
        format!("User packages:\n  ../localpkg\n    {}\n", package.display())
    );

    let names = command_names(&env);
    assert!(names.contains(&"greet".to_owned()), "{names:?}");
    assert!(names.contains(&"skill:tidy".to_owned()), "{names:?}");

    // A filter switches the skill off.
    let mut s = settings(&env);
    s["packages"] = json!([{"source": "../localpkg", "skills": []}]);
    std::fs::write(env.agent.join("settings.json"), s.to_string()).unwrap();
    let names = command_names(&env);
    assert!(names.contains(&"greet".to_owned()), "{names:?}");
    assert!(!names.contains(&"skill:tidy".to_owned()), "{names:?}");
    let out = pi(&env, &["list"]);
    assert!(text(&out.stdout).contains("  ../localpkg (filtered)\n"));

    let out = pi(&env, &["remove", "../localpkg"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Removing ../localpkg...\nRemoved ../localpkg\n"
    );
    assert_eq!(settings(&env)["packages"], json!([]));
    assert!(
        package.exists(),
        "a local package is referenced, never deleted"
    );
    let names = command_names(&env);
    assert!(!names.contains(&"greet".to_owned()), "{names:?}");
    assert_eq!(
        text(&pi(&env, &["list"]).stdout),
        "No packages installed.\n"
    );

    let out = pi(&env, &["uninstall", "../nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "No matching package found for ../nope\n");
}

/// The "remote": a bare repository with tags v1 and v2, reached as
/// https://git.example.test/user/gitpkg through insteadOf.
fn make_git_remote(env: &Env) {
    let work = env.dir.path().join("gitpkg-src");
    write(&work.join("prompts/hello.md"), "hello v1");
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "v1"]);
    git(&work, &["tag", "v1"]);
    write(&work.join("prompts/hello.md"), "hello v2");
    git(&work, &["commit", "-q", "-am", "v2"]);
    git(&work, &["tag", "v2"]);
    let bare = env.dir.path().join("repos/user/gitpkg");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    git(
        env.dir.path(),
        &[
            "clone",
            "-q",
            "--bare",
            work.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
}

/// `-e git:…` installs for this run only: the resources load, the settings stay as they
/// were, and the checkout is kept under the agent dir's `tmp/extensions`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_package_given_with_e_loads_for_one_run() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    make_git_remote(&env);
    let before = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
    let mut program = Command::new(env!("CARGO_BIN_EXE_pi"));
    rewrite_test_host(&mut program, env.dir.path());
    let mut rpc = Rpc::start_program(
        &env,
        program,
        &["-e", "git:git.example.test/user/gitpkg@v2"],
    );
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    let hello = answer["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "hello")
        .cloned()
        .expect("the package's prompt template loads");
    assert_eq!(hello["sourceInfo"]["scope"], "temporary");
    let path = hello["sourceInfo"]["path"].as_str().unwrap();
    assert!(
        path.starts_with(
            &env.agent
                .join("tmp/extensions/git-git.example.test")
                .display()
                .to_string()
        ),
        "{path}"
    );
    assert_eq!(std::fs::read_to_string(path).unwrap(), "hello v2");
    assert_eq!(
        std::fs::read_to_string(env.agent.join("settings.json")).unwrap(),
        before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_git_package_follows_its_pin_on_update() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    make_git_remote(&env);

    let source = "git:git.example.test/user/gitpkg@v1";
    let out = pi(&env, &["install", source]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with(&format!("Installed {source}\n")));
    let checkout = env.agent.join("git/git.example.test/user/gitpkg");
    let prompt = checkout.join("prompts/hello.md");
    assert_eq!(std::fs::read_to_string(&prompt).unwrap(), "hello v1");
    assert_eq!(
        std::fs::read_to_string(env.agent.join("git/.gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );
    assert!(command_names(&env).contains(&"hello".to_owned()));

    // A pinned package stays at its pin…
    let out = pi(&env, &["update", "--extensions"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&prompt).unwrap(), "hello v1");
    // …and moves when the pin changes.
    let mut s = settings(&env);
    s["packages"] = json!(["git:git.example.test/user/gitpkg@v2"]);
    std::fs::write(env.agent.join("settings.json"), s.to_string()).unwrap();
    let out = pi(&env, &["update", "--extensions"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Updated 1 package:\n  git:git.example.test/user/gitpkg@v2 "),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read_to_string(&prompt).unwrap(), "hello v2");

    let out = pi(&env, &["remove", "git:git.example.test/user/gitpkg"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!checkout.exists());
    assert!(
        !env.agent.join("git/git.example.test").exists(),
        "empty parents pruned"
    );
    assert_eq!(settings(&env)["packages"], json!([]));
    assert!(!command_names(&env).contains(&"hello".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_installs_leave_settings_and_folders_as_they_were() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({"packages": ["npm:kept-package"]}));
    let before = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
    let unchanged = |env: &Env| {
        assert_eq!(
            std::fs::read_to_string(env.agent.join("settings.json")).unwrap(),
            before
        );
    };

    let out = pi(&env, &["install", "./missing"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "Error: Path does not exist: {}\n",
            env.work.join("missing").display()
        )
    );
    unchanged(&env);

    let out = pi(&env, &["install", "git:git.example.test/user/absent"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Error: git clone"),
        "{}",
        text(&out.stderr)
    );
    assert!(!env.agent.join("git/git.example.test").exists());
    unchanged(&env);

    // npm missing: the configured npm command does not exist.
    let mut s = settings(&env);
    s["npmCommand"] = json!(["definitely-not-npm-here"]);
    std::fs::write(env.agent.join("settings.json"), s.to_string()).unwrap();
    let before_npm = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
    let out = pi(&env, &["install", "npm:left-pad"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("definitely-not-npm-here was not found"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(env.agent.join("settings.json")).unwrap(),
        before_npm
    );

    let out = pi(&env, &["install"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("Missing install source.\n"));
    let out = pi(&env, &["install", "x", "--bogus"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("Unknown option --bogus for \"install\".\n"));
    let out = pi(&env, &["install", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("Usage:\n  pi install <source> [-l]"));
}

/// `pi config` in a real terminal: the package's resources are listed, space switches the
/// selected one off (written as a `-path` filter), and the next run no longer loads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_config_filters_take_effect() {
    if !support::tmux::available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let package = env.dir.path().join("cfgpkg");
    write(&package.join("prompts/alpha.md"), "alpha prompt");
    write(&package.join("prompts/beta.md"), "beta prompt");
    write(&package.join("themes/reef.json"), "{}");
    assert_eq!(pi(&env, &["install", "../cfgpkg"]).status.code(), Some(0));
    assert!(command_names(&env).contains(&"alpha".to_owned()));

    let term = support::tmux::Tmux::start(&env, &["config"], 100, 30);
    let screen = term.wait_for("Resource Configuration");
    assert!(screen.contains("../cfgpkg (user)"), "{screen}");
    assert!(screen.contains("Prompts"), "{screen}");
    assert!(
        screen.contains("> ") && screen.contains("[x] alpha.md"),
        "{screen}"
    );
    assert!(screen.contains("[x] reef.json"), "{screen}");
    // Filter to "alpha", switch it off, close.
    term.type_text("alpha");
    term.wait(
        "the filtered list",
        std::time::Duration::from_secs(10),
        |s| !s.contains("beta.md"),
    );
    term.keys(&["Space"]);
    term.wait_for("[ ] alpha.md");
    term.keys(&["Escape"]);
    assert_eq!(term.wait_exit(std::time::Duration::from_secs(10)), 0);

    assert_eq!(
        settings(&env)["packages"],
        json!([{"source": "../cfgpkg", "prompts": ["-prompts/alpha.md"]}])
    );
    let names = command_names(&env);
    assert!(!names.contains(&"alpha".to_owned()), "{names:?}");
    assert!(names.contains(&"beta".to_owned()), "{names:?}");
    let listed = text(&pi(&env, &["list"]).stdout);
    assert!(listed.contains("  ../cfgpkg (filtered)"), "{listed}");
}

/// No network: npm cannot reach its registry (a closed port stands for it); two installs
/// at once both land in the settings; a package whose extension throws installs, and pi
/// starts without that extension, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_failures_concurrent_installs_and_throwing_extensions() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let before = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
    if Command::new("npm").arg("--version").output().is_ok() {
        let out = Command::new(env!("CARGO_BIN_EXE_pi"))
            .args(["install", "npm:left-pad@1.3.0"])
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env("npm_config_registry", "http://127.0.0.1:9/")
            .env("npm_config_fetch_retries", "0")
            .env("npm_config_cache", env.dir.path().join("npm-cache"))
            .output()
            .unwrap();
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
        assert!(!env.agent.join("npm/node_modules/left-pad").exists());
    }

    // Eight installs at once, each of its own local package.
    for i in 0..8 {
        write(&env.dir.path().join(format!("p{i}/prompts/p{i}.md")), "x");
    }
    let children: Vec<_> = (0..8)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_pi"))
                .args(["install", &format!("../p{i}")])
                .current_dir(&env.work)
                .env("PI_CODING_AGENT_DIR", &env.agent)
                .env("HOME", env.dir.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let mut installed: Vec<String> = settings(&env)["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    installed.sort();
    assert_eq!(
        installed,
        (0..8).map(|i| format!("../p{i}")).collect::<Vec<_>>()
    );

    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let broken = env.dir.path().join("broken");
    write(
        &broken.join("extensions/boom.ts"),
        "export default function () { throw new Error(\"boom at load\"); }\n",
    );
    write(&broken.join("prompts/still.md"), "still here");
    assert_eq!(pi(&env, &["install", "../broken"]).status.code(), Some(0));
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--mode", "rpc"])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_EXTENSION_HOST_DIR", &host)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = out;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}", json!({"id": "c", "type": "get_commands"})).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(stderr.contains("boom at load"), "{stderr}");
    assert!(
        text(&out.stdout).contains("\"still\""),
        "{}",
        text(&out.stdout)
    );
}

/// `/reload` finds packages installed since startup: their extensions load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_loads_a_package_installed_meanwhile() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let reloader = write(
        &env.work.join("reloader.ts"),
        r#"export default function (pi) {
  pi.on("session_start", async (event, ctx) => ctx.ui.notify("start " + event.reason, "info"));
  pi.registerCommand("again", { handler: async (args, ctx) => { await ctx.reload(); } });
}"#,
    );
    write(
        &env.dir.path().join("later/extensions/fresh.ts"),
        r#"export default function (pi) { pi.registerCommand("fresh", { handler: async () => {} }); }"#,
    );
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", reloader.to_str().unwrap()],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    rpc.until("startup notify", |l| l["message"] == "start startup");
    let has_fresh = |rpc: &mut Rpc, id: &str| {
        rpc.call(id, json!({"type": "get_commands"}))["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "fresh")
    };
    assert!(!has_fresh(&mut rpc, "c1"));
    assert_eq!(pi(&env, &["install", "../later"]).status.code(), Some(0));
    rpc.send(json!({"id": "r", "type": "prompt", "message": "/again"}));
    rpc.until("reload notify", |l| l["message"] == "start reload");
    assert!(has_fresh(&mut rpc, "c2"));
    rpc.finish();
}

/// A project's packages load only in a trusted folder, and a package in both the user's
/// and the project's settings loads once, as the project's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_packages_need_trust_and_duplicates_load_once() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let package = env.dir.path().join("shared");
    write(&package.join("prompts/shared-prompt.md"), "shared");
    let project_only = env.dir.path().join("projpkg");
    write(&project_only.join("prompts/project-prompt.md"), "project");
    assert_eq!(pi(&env, &["install", "../shared"]).status.code(), Some(0));
    assert_eq!(
        pi(&env, &["install", "-l", "../shared"]).status.code(),
        Some(0)
    );
    // Now the project has settings: changing them needs its trust (pi 1.6.0).
    assert_eq!(
        pi(&env, &["install", "-l", "../projpkg"]).status.code(),
        Some(1)
    );
    assert_eq!(
        pi(&env, &["install", "-l", "../projpkg", "--approve"])
            .status
            .code(),
        Some(0)
    );

    let commands = |approve: &str| -> Vec<Value> {
        let mut rpc = Rpc::start(&env, &["--no-extensions", approve]);
        let answer = rpc.call("c", json!({"type": "get_commands"}));
        rpc.finish();
        answer["data"]["commands"].as_array().unwrap().clone()
    };
    let untrusted = commands("--no-approve");
    let named = |list: &[Value], name: &str| -> Vec<Value> {
        list.iter().filter(|c| c["name"] == name).cloned().collect()
    };
    assert!(
        named(&untrusted, "project-prompt").is_empty(),
        "{untrusted:?}"
    );
    let shared = named(&untrusted, "shared-prompt");
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0]["sourceInfo"]["scope"], "user");

    let trusted = commands("--approve");
    assert_eq!(named(&trusted, "project-prompt").len(), 1, "{trusted:?}");
    let shared = named(&trusted, "shared-prompt");
    assert_eq!(shared.len(), 1, "{trusted:?}");
    assert_eq!(shared[0]["sourceInfo"]["scope"], "project");
}
