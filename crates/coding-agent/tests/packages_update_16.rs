//! `pi update --extensions` and `-e` packages against a local npm registry and local git
//! remotes, through ours and pi 1.6.0 (`PI_TS16`) step by step: the summaries
//! (`npm:foo 1.2.0 -> 1.3.0`, a git commit change, "Packages are already up to date"), no
//! downgrade when the registry's newest is older, the warning when npm leaves the old
//! version, a failed `git clean` that does not stop the update, and `-e` packages that
//! follow their registry version or ref on each start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::git::{git, rewrite_test_host};
use support::npm_registry::{NpmRegistry, npm_available};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, pis, ts16_pi_catalogs};

/// The pi under test, online (its npm and git reach only the local registry and remotes).
fn program(wrapper: &Option<PathBuf>, env: &Env, registry: &NpmRegistry) -> Command {
    let mut command = match wrapper {
        Some(wrapper) => ts16_pi_catalogs(wrapper),
        None => ours(),
    };
    command.env_remove("PI_OFFLINE");
    registry.apply(&mut command);
    rewrite_test_host(&mut command, env.dir.path());
    command
}

fn pi(wrapper: &Option<PathBuf>, env: &Env, registry: &NpmRegistry, args: &[&str]) -> Output {
    support::ts16::run(env, program(wrapper, env, registry), args)
}

/// pi's own stdout lines: npm's and git's progress (`added 1 package in 1s`, `HEAD is now
/// at …`, `Removing node_modules/`) and blank lines left out.
fn pi_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| {
            let git_clean = line.starts_with("Removing ") && !line.ends_with("...");
            !line.trim().is_empty()
                && !git_clean
                && ![
                    "added ",
                    "changed ",
                    "removed ",
                    "up to date",
                    "npm ",
                    "HEAD is now at ",
                ]
                .iter()
                .any(|p| line.starts_with(p))
        })
        .map(str::to_owned)
        .collect()
}

fn installed(path: &Path) -> String {
    let text = std::fs::read_to_string(path.join("package.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["version"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A package with one prompt template whose description names the version.
fn publish(registry: &NpmRegistry, version: &str) {
    let prompt = format!("---\ndescription: hello {version}\n---\nSay hello");
    registry.publish(
        "pi-hello",
        version,
        json!({"pi": {"prompts": ["./prompts"]}}),
        &[("prompts/hello.md", &prompt)],
    );
}

/// Runs a step's command and checks its exit code and pi's lines.
fn step(who: &str, out: &Output, expected: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{who}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(pi_lines(out), expected, "{who}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_updates_report_changes_and_never_downgrade() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let env = Env::new(&server, 128_000, json!({}));
        let run = |args: &[&str]| pi(&wrapper, &env, &registry, args);
        publish(&registry, "1.2.0");
        let out = run(&["install", "npm:pi-hello"]);
        step(
            who,
            &out,
            &["Installing npm:pi-hello...", "Installed npm:pi-hello"],
        );
        let path = env.agent.join("npm/node_modules/pi-hello");
        assert_eq!(installed(&path), "1.2.0", "{who}");

        step(
            who,
            &run(&["update", "--extensions"]),
            &["Packages are already up to date"],
        );

        publish(&registry, "1.3.0");
        step(
            who,
            &run(&["update", "--extensions"]),
            &[
                "Updating npm:pi-hello...",
                "Updated 1 package:",
                "  npm:pi-hello 1.2.0 -> 1.3.0",
            ],
        );
        assert_eq!(installed(&path), "1.3.0", "{who}");

        // The registry's newest is now older than the installed one: no downgrade.
        publish(&registry, "1.1.0");
        step(
            who,
            &run(&["update", "npm:pi-hello"]),
            &["npm:pi-hello is already up to date"],
        );
        assert_eq!(installed(&path), "1.3.0", "{who}");

        // npm's metadata announces 1.4.0 but it installs the old package.
        registry.publish_as(
            "pi-hello",
            "1.4.0",
            "1.3.0",
            json!({"pi": {"prompts": ["./prompts"]}}),
            &[("prompts/hello.md", "---\ndescription: stale\n---\nx")],
        );
        step(
            who,
            &run(&["update", "--extensions"]),
            &[
                "Updating npm:pi-hello...",
                "npm:pi-hello is still 1.3.0 (registry reports 1.4.0); npm registry metadata may be stale, try again in a few minutes",
                "No packages were updated, see the warnings above",
            ],
        );

        let mut offline = program(&wrapper, &env, &registry);
        offline.env("PI_OFFLINE", "1");
        step(
            who,
            &support::ts16::run(&env, offline, &["update", "--extensions"]),
            &["Skipped package updates (offline mode)"],
        );
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The remote `https://git.example.test/user/gitpkg` (a bare repository) with one commit
/// of `files` on `main`; returns the work tree later commits are made in.
fn git_remote(env: &Env, files: &[(&str, &str)]) -> PathBuf {
    let work = env.dir.path().join("gitpkg-src");
    for (path, text) in files {
        write(&work.join(path), text);
    }
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "first"]);
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
    work
}

/// Commits `files` in the work tree and pushes the commit to the remote's `branch`.
fn push(env: &Env, work: &Path, files: &[(&str, &str)], branch: &str) -> String {
    for (path, text) in files {
        write(&work.join(path), text);
    }
    git(work, &["add", "."]);
    git(work, &["commit", "-q", "-m", "next"]);
    let bare = env.dir.path().join("repos/user/gitpkg");
    git(
        work,
        &[
            "push",
            "-q",
            "-f",
            bare.to_str().unwrap(),
            &format!("HEAD:{branch}"),
        ],
    );
    head(work)
}

fn head(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A `git` first on PATH that fails `git clean` while `switch` exists (a file another
/// process holds) and runs the real git otherwise.
fn failing_clean_git(env: &Env) -> (String, PathBuf) {
    let real = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8_lossy(&real.stdout).trim().to_owned();
    let dir = env.dir.path().join("shim");
    let switch = env.dir.path().join("fail-clean");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = clean ] && [ -e '{}' ]; then\n  echo 'warning: failed to remove node_modules/pi-dep/: Device or resource busy' >&2\n  exit 1\nfi\nexec '{real}' \"$@\"\n",
        switch.display()
    );
    write(&dir.join("git"), &script);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (path, switch)
}

const GIT_SOURCE: &str = "git:git.example.test/user/gitpkg";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_updates_report_commits_and_survive_a_failed_clean() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        registry.publish("pi-dep", "1.0.0", json!({}), &[("index.js", "")]);
        registry.publish("pi-dep2", "1.0.0", json!({}), &[("index.js", "")]);
        let env = Env::new(&server, 128_000, json!({}));
        let manifest = |deps: Value| {
            json!({"name": "gitpkg", "pi": {"prompts": ["./prompts"]}, "dependencies": deps})
                .to_string()
        };
        let work = git_remote(
            &env,
            &[
                ("package.json", &manifest(json!({"pi-dep": "1.0.0"}))),
                ("prompts/hello.md", "hello 1"),
            ],
        );
        let first = head(&work);
        let (path, switch) = failing_clean_git(&env);
        let run = |args: &[&str]| {
            let mut command = program(&wrapper, &env, &registry);
            command.env("PATH", &path);
            support::ts16::run(&env, command, args)
        };
        let out = run(&["install", GIT_SOURCE]);
        step(
            who,
            &out,
            &[
                &format!("Installing {GIT_SOURCE}..."),
                &format!("Installed {GIT_SOURCE}"),
            ],
        );
        let checkout = env.agent.join("git/git.example.test/user/gitpkg");
        assert!(checkout.join("node_modules/pi-dep").exists(), "{who}");

        let updating = format!("Updating {GIT_SOURCE}...");
        step(
            who,
            &run(&["update", "--extensions"]),
            &[&updating, "Packages are already up to date"],
        );

        // A new commit with a new dependency; `git clean` fails on the way.
        let second = push(
            &env,
            &work,
            &[
                (
                    "package.json",
                    &manifest(json!({"pi-dep": "1.0.0", "pi-dep2": "1.0.0"})),
                ),
                ("prompts/hello.md", "hello 2"),
            ],
            "main",
        );
        write(&switch, "");
        let warning = format!(
            "Could not remove all untracked files in {} (git clean -fdx failed with code 1). Files may be in use by another pi session; close it and run the update again.",
            checkout.display()
        );
        let changed = format!("  {GIT_SOURCE} {} -> {}", &first[..7], &second[..7]);
        step(
            who,
            &run(&["update", "--extensions"]),
            &[&updating, &warning, "Updated 1 package:", &changed],
        );
        // The update went on: the new commit and its new dependency are there.
        assert_eq!(head(&checkout), second, "{who}");
        assert!(checkout.join("node_modules/pi-dep2").exists(), "{who}");
        let marker = env
            .agent
            .join("git/git.example.test/user/.gitpkg.pi-update-incomplete");
        assert!(marker.exists(), "{who}: the next update cleans again");

        // The next update cleans (now possible) and clears the marker.
        std::fs::remove_file(&switch).unwrap();
        step(
            who,
            &run(&["update", "--extensions"]),
            &[&updating, "Packages are already up to date"],
        );
        assert!(!marker.exists(), "{who}");
        assert!(checkout.join("node_modules/pi-dep2").exists(), "{who}");
    }
}

/// The description of the `hello` prompt template a run with `args` loads.
fn hello_description(program: Command, env: &Env, args: &[&str]) -> String {
    let mut rpc = Rpc::start_program(env, program, args);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    answer["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "hello")
        .map(|c| c["description"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_packages_follow_the_registry_and_their_ref_on_each_start() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let env = Env::new(&server, 128_000, json!({}));
        let loaded = |args: &[&str]| {
            let env_ref = &env;
            hello_description(program(&wrapper, env_ref, &registry), env_ref, args)
        };
        publish(&registry, "1.0.0");
        assert_eq!(loaded(&["-e", "npm:pi-hello"]), "hello 1.0.0", "{who}");
        publish(&registry, "1.1.0");
        assert_eq!(loaded(&["-e", "npm:pi-hello"]), "hello 1.1.0", "{who}");
        // An exact version stays where it is.
        assert_eq!(
            loaded(&["-e", "npm:pi-hello@1.0.0"]),
            "hello 1.0.0",
            "{who}"
        );

        // A git package pinned to a branch follows the branch when it moves.
        let work = git_remote(
            &env,
            &[("prompts/hello.md", "---\ndescription: git 1\n---\nx")],
        );
        git(&work, &["branch", "stable"]);
        let bare = env.dir.path().join("repos/user/gitpkg");
        git(&work, &["push", "-q", bare.to_str().unwrap(), "stable"]);
        let source = format!("{GIT_SOURCE}@stable");
        assert_eq!(loaded(&["-e", &source]), "git 1", "{who}");
        push(
            &env,
            &work,
            &[("prompts/hello.md", "---\ndescription: git 2\n---\nx")],
            "stable",
        );
        assert_eq!(loaded(&["-e", &source]), "git 2", "{who}");
    }
}

/// `/reload` (an extension's `ctx.reload()`) brings an `-e npm:` package to the registry's
/// newest too: the extension of the new version is the one loaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_npm_packages_follow_the_registry_on_reload() {
    if !npm_available() {
        return;
    }
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let env = Env::new(&server, 128_000, json!({}));
        let reloader = env.work.join("reloader.ts");
        write(
            &reloader,
            r#"export default function (pi) {
  pi.on("session_start", async (event, ctx) => ctx.ui.notify("start " + event.reason, "info"));
  pi.registerCommand("again", { handler: async (args, ctx) => { await ctx.reload(); } });
}"#,
        );
        // Each version's extension registers a command named after it.
        let release = |version: &str| {
            let command = format!("hello-{}", version.replace('.', "-"));
            let code = format!(
                "export default function (pi) {{ pi.registerCommand(\"{command}\", {{ handler: async () => {{}} }}); }}"
            );
            registry.publish(
                "pi-hello-ext",
                version,
                json!({"pi": {"extensions": ["./index.ts"]}}),
                &[("index.ts", &code)],
            );
        };
        release("2.0.0");
        let mut command = program(&wrapper, &env, &registry);
        command.env("PI_EXTENSION_HOST_DIR", &host);
        let mut rpc = Rpc::start_program(
            &env,
            command,
            &["-e", reloader.to_str().unwrap(), "-e", "npm:pi-hello-ext"],
        );
        rpc.until("startup", |l| l["message"] == "start startup");
        let hello = |rpc: &mut Rpc, id: &str| -> Vec<String> {
            rpc.call(id, json!({"type": "get_commands"}))["data"]["commands"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|c| c["name"].as_str())
                .filter(|n| n.starts_with("hello-"))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(hello(&mut rpc, "c1"), ["hello-2-0-0"], "{who}");
        release("2.1.0");
        rpc.send(json!({"id": "r", "type": "prompt", "message": "/again"}));
        rpc.until("reload", |l| l["message"] == "start reload");
        assert_eq!(hello(&mut rpc, "c2"), ["hello-2-1-0"], "{who}");
        rpc.finish();
    }
}

/// A configured package that cannot be installed is skipped with a warning at startup
/// (the run goes on) and installed at the next start once it can be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_package_failing_to_install_is_skipped_and_retried() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let env = Env::new(&server, 128_000, json!({"packages": ["npm:pi-later"]}));
        server.push(mock_llm::Script::text("first answer"));
        let out = pi(&wrapper, &env, &registry, &["-p", "hi"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{who}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "first answer\n",
            "{who}"
        );
        let prefix = env.agent.join("npm").canonicalize().unwrap();
        let warning = format!(
            "Warning: Extension package \"npm:pi-later\": failed to install (npm install pi-later --prefix {} --legacy-peer-deps --no-audit --no-fund failed with code 1). Run \"pi remove npm:pi-later\" to remove it from settings.json.",
            prefix.display()
        );
        assert!(
            stderr.lines().any(|line| line == warning),
            "{who}: {stderr}"
        );
        let installed = env.agent.join("npm/node_modules/pi-later");
        assert!(!installed.exists(), "{who}");

        registry.publish(
            "pi-later",
            "1.0.0",
            json!({"pi": {"prompts": ["./prompts"]}}),
            &[("prompts/later.md", "Later")],
        );
        server.push(mock_llm::Script::text("second answer"));
        let out = pi(&wrapper, &env, &registry, &["-p", "hi"]);
        assert_eq!(out.status.code(), Some(0), "{who}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "second answer\n",
            "{who}"
        );
        assert!(installed.join("prompts/later.md").exists(), "{who}");
    }
}

/// Installs and removals through a symlinked agent dir keep `package-lock.json` flat:
/// npm is given the real path, so no nested `node_modules/…/node_modules` entries appear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlinked_agent_dir_keeps_the_lock_file_flat() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let env = Env::new(&server, 128_000, json!({}));
        registry.publish("pi-one", "1.0.0", json!({}), &[("index.js", "")]);
        registry.publish("pi-two", "1.0.0", json!({}), &[("index.js", "")]);
        let link = env.dir.path().join("agent-link");
        std::os::unix::fs::symlink(&env.agent, &link).unwrap();
        let run = |args: &[&str]| {
            let mut command = program(&wrapper, &env, &registry);
            command
                .args(args)
                .current_dir(&env.work)
                .env("PI_CODING_AGENT_DIR", &link)
                .env("HOME", env.dir.path())
                .stdin(std::process::Stdio::null());
            let out = command.output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{who} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&["install", "npm:pi-one"]);
        run(&["install", "npm:pi-two"]);
        run(&["remove", "npm:pi-one"]);
        run(&["install", "npm:pi-one"]);
        let lock: Value = serde_json::from_str(
            &std::fs::read_to_string(env.agent.join("npm/package-lock.json")).unwrap(),
        )
        .unwrap();
        let mut keys: Vec<&str> = lock["packages"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["", "node_modules/pi-one", "node_modules/pi-two"],
            "{who}"
        );
    }
}

/// A managed git package's peer dependencies are not installed (pi's own modules come from
/// the host), and an extension package listing host-provided modules in `dependencies` is
/// warned about at startup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_packages_skip_peers_and_host_dependencies_are_warned_about() {
    if !npm_available() {
        return;
    }
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        for name in ["typebox", "@earendil-works/pi-ai", "pi-peer"] {
            registry.publish(name, "1.0.0", json!({}), &[("index.js", "")]);
        }
        let env = Env::new(&server, 128_000, json!({}));
        let manifest = json!({
            "name": "gitext",
            "pi": {"extensions": ["./index.ts"]},
            "dependencies": {"typebox": "1.0.0", "@earendil-works/pi-ai": "1.0.0"},
            "peerDependencies": {"pi-peer": "*"},
        });
        git_remote(
            &env,
            &[
                ("package.json", &manifest.to_string()),
                (
                    "index.ts",
                    "export default function (pi) { pi.registerCommand(\"gitext\", { handler: async () => {} }); }",
                ),
            ],
        );
        let run = |args: &[&str]| {
            let mut command = program(&wrapper, &env, &registry);
            command.env("PI_EXTENSION_HOST_DIR", &host);
            support::ts16::run(&env, command, args)
        };
        let out = run(&["install", GIT_SOURCE]);
        assert_eq!(out.status.code(), Some(0), "{who}");
        let modules = env
            .agent
            .join("git/git.example.test/user/gitpkg/node_modules");
        assert!(modules.join("typebox").exists(), "{who}");
        assert!(
            !modules.join("pi-peer").exists(),
            "{who}: a peer was installed"
        );

        server.push(mock_llm::Script::text("answer"));
        let out = run(&["-p", "hi"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{who}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "answer\n", "{who}");
        let warning = format!(
            "Warning: Extension package \"{}\": Host-provided extension packages must be declared in peerDependencies with a \"*\" range, not dependencies: @earendil-works/pi-ai, typebox. Installed copies can bypass the extension loader and create duplicate runtime modules.",
            modules.with_file_name("package.json").display()
        );
        assert!(stderr.lines().any(|l| l == warning), "{who}: {stderr}");
    }
}
