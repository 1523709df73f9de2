//! Package fixes of pi 0.74–1.5 through ours and pi 1.6.0 (`PI_TS16`) side by side, against
//! a local npm registry and local git remotes: unsafe git sources taken as local paths,
//! another ref installed over a checkout keeping the package's filters, npm ranges and tags
//! that load without a reinstall, the private one-run folder, npm runs without audit or
//! funding advice and without peers (host packages included), removals despite conflicting
//! peers, the cloud-sync mark on npm folders, and `pi update` being self-only unless `--all`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
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

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(who: &str, args: &[&str], out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{who} {args:?}: {}", text(out));
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn installed_version(path: &Path) -> String {
    let text = std::fs::read_to_string(path.join("package.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["version"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The prompt templates a run loads: name and description, from `get_commands`.
fn prompts(program: Command, env: &Env, args: &[&str]) -> Vec<(String, String)> {
    let mut rpc = Rpc::start_program(env, program, args);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    let mut found: Vec<(String, String)> = answer["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"] == "prompt")
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["description"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    found.sort();
    found
}

fn prompt_file(description: &str) -> String {
    format!("---\ndescription: {description}\n---\nSay it")
}

/// Git sources whose host or path could lead outside the install root (`..`, also
/// percent-encoded, a `/` or `\` in the host) are no git packages: `pi install` takes them
/// as local paths that do not exist, and nothing is cloned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_git_sources_are_taken_as_local_paths() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let env = Env::new(&server, 128_000, json!({}));
        let work = env.work.display().to_string();
        let cases = [
            (
                "git:git.example.test/user/../../evil",
                format!("{work}/evil"),
            ),
            ("git:git.example.test/../evil/x", format!("{work}/evil/x")),
            (
                "https://git.example.test/a/%2e%2e/b",
                format!("{work}/https:/git.example.test/a/%2e%2e/b"),
            ),
            (
                "git:git.example.test/a/b%2f..%2f..%2fc",
                format!("{work}/git:git.example.test/a/b%2f..%2f..%2fc"),
            ),
            (
                "git:exa%2fmple.test/a/b",
                format!("{work}/git:exa%2fmple.test/a/b"),
            ),
            (
                "git:exa\\mple.test/a/b",
                format!("{work}/git:exa\\mple.test/a/b"),
            ),
        ];
        for (source, resolved) in cases {
            let out = support::ts16::run(
                &env,
                program(&wrapper, &env, &registry),
                &["install", source],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            let error = format!("Error: Path does not exist: {resolved}");
            assert!(
                stderr.lines().any(|l| l == error),
                "{who} {source}: {}",
                text(&out)
            );
            assert_eq!(out.status.code(), Some(1), "{who} {source}");
            assert!(!env.agent.join("git").exists(), "{who} {source}: cloned");
        }
        let settings = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
        assert!(!settings.contains("evil"), "{who}: {settings}");
    }
}

/// The remote `https://git.example.test/user/gitpkg` with a commit tagged `v1` and a
/// later one tagged `v2`, each with prompt templates `a` and `b` naming their tag.
fn tagged_remote(env: &Env) {
    let work = env.dir.path().join("gitpkg-src");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    for tag in ["v1", "v2"] {
        write(
            &work.join("prompts/a.md"),
            &prompt_file(&format!("a {tag}")),
        );
        write(
            &work.join("prompts/b.md"),
            &prompt_file(&format!("b {tag}")),
        );
        git(&work, &["add", "."]);
        git(&work, &["commit", "-q", "-m", tag]);
        git(&work, &["tag", tag]);
    }
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

fn head(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

const GIT_SOURCE: &str = "git:git.example.test/user/gitpkg";

/// `pi install` of another ref over an existing checkout moves the checkout to that ref
/// and rewrites the settings entry's source while its resource filters stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installing_another_ref_moves_the_checkout_and_keeps_filters() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let first = format!("{GIT_SOURCE}@v1");
        let env = Env::new(
            &server,
            128_000,
            json!({"packages": [{"source": first, "prompts": ["prompts/a.md"]}]}),
        );
        tagged_remote(&env);
        let run = |args: &[&str]| {
            let out = support::ts16::run(&env, program(&wrapper, &env, &registry), args);
            ok(who, args, &out);
        };
        run(&["install", &first]);
        let checkout = env.agent.join("git/git.example.test/user/gitpkg");
        let tag_commit = |tag: &str| {
            let out = Command::new("git")
                .args(["rev-parse", &format!("{tag}^{{commit}}")])
                .current_dir(env.dir.path().join("gitpkg-src"))
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        assert_eq!(head(&checkout), tag_commit("v1"), "{who}");
        let loaded = || prompts(program(&wrapper, &env, &registry), &env, &[]);
        assert_eq!(loaded(), [("a".into(), "a v1".into())], "{who}");

        let second = format!("{GIT_SOURCE}@v2");
        run(&["install", &second]);
        assert_eq!(head(&checkout), tag_commit("v2"), "{who}");
        let settings: Value = serde_json::from_str(
            &std::fs::read_to_string(env.agent.join("settings.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            settings["packages"],
            json!([{"source": second, "prompts": ["prompts/a.md"]}]),
            "{who}"
        );
        assert_eq!(loaded(), [("a".into(), "a v2".into())], "{who}");
    }
}

/// A package installed from an npm range or tag (`@^1.2.0`, `@latest`) loads at the next
/// start as it is: the installed version answers the spec, so pi does not install it
/// again (here the registry is gone, so a reinstall would fail and drop the package).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_ranges_and_tags_load_without_a_reinstall() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        for (name, version) in [
            ("pi-hello", "1.2.0"),
            ("pi-hello", "1.3.0"),
            ("pi-tagged", "2.0.0"),
        ] {
            registry.publish(
                name,
                version,
                json!({"pi": {"prompts": ["./prompts"]}}),
                &[(
                    &format!("prompts/{name}.md"),
                    &prompt_file(&format!("{name} {version}")),
                )],
            );
        }
        let env = Env::new(&server, 128_000, json!({}));
        for source in ["npm:pi-hello@^1.2.0", "npm:pi-tagged@latest"] {
            let args = ["install", source];
            let out = support::ts16::run(&env, program(&wrapper, &env, &registry), &args);
            ok(who, &args, &out);
        }
        let modules = env.agent.join("npm/node_modules");
        assert_eq!(installed_version(&modules.join("pi-hello")), "1.3.0");
        drop(registry);

        let gone = NpmRegistry::start();
        let mut command = program(&wrapper, &env, &gone);
        command.env("npm_config_registry", "http://127.0.0.1:9/");
        assert_eq!(
            prompts(command, &env, &[]),
            [
                ("pi-hello".into(), "pi-hello 1.3.0".into()),
                ("pi-tagged".into(), "pi-tagged 2.0.0".into()),
            ],
            "{who}"
        );
        assert_eq!(installed_version(&modules.join("pi-hello")), "1.3.0");
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// One-run (`-e`) packages go under `<agentDir>/tmp/extensions`, made private to the user
/// (0700), and made private again when it was left readable by others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_run_package_folder_is_private() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        registry.publish(
            "pi-hello",
            "1.0.0",
            json!({"pi": {"prompts": ["./prompts"]}}),
            &[("prompts/hello.md", &prompt_file("hello"))],
        );
        let env = Env::new(&server, 128_000, json!({}));
        let folder = env.agent.join("tmp/extensions");
        let loaded = || {
            prompts(
                program(&wrapper, &env, &registry),
                &env,
                &["-e", "npm:pi-hello"],
            )
        };
        assert_eq!(loaded(), [("hello".into(), "hello".into())], "{who}");
        assert_eq!(mode(&folder), 0o700, "{who}");
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(loaded(), [("hello".into(), "hello".into())], "{who}");
        assert_eq!(mode(&folder), 0o700, "{who}");
    }
}

/// A `setfattr` first on PATH that logs its arguments (one line per call) to `log`.
fn logging_setfattr(env: &Env, log: &Path) -> String {
    let dir = env.dir.path().join("shim");
    write(
        &dir.join("setfattr"),
        &format!("#!/bin/sh\necho \"$*\" >> '{}'\n", log.display()),
    );
    std::fs::set_permissions(dir.join("setfattr"), std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Installs, updates and removals of npm packages with npm's audit and funding on (as a
/// user's npm config may have them): pi's npm runs print no audit or funding advice,
/// install no peer dependencies (neither pi's own host package nor peers two packages want
/// in conflicting versions), remove a package despite the conflict, and mark the npm
/// folder as ignored by cloud sync (`setfattr -n user.com.dropbox.ignored -v 1`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_runs_skip_advice_and_peers_and_mark_the_folder() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        for (name, version) in [
            ("@earendil-works/pi-coding-agent", "1.0.0"),
            ("pi-peer", "1.0.0"),
            ("pi-peer", "2.0.0"),
        ] {
            registry.publish(name, version, json!({}), &[("index.js", "")]);
        }
        let release = |name: &str, version: &str, peers: Value| {
            registry.publish(
                name,
                version,
                json!({
                    "funding": "https://example.test/fund",
                    "peerDependencies": peers,
                    "pi": {"prompts": ["./prompts"]},
                }),
                &[(&format!("prompts/{name}.md"), &prompt_file(name))],
            );
        };
        let host_peer = json!({"@earendil-works/pi-coding-agent": "*", "pi-peer": "1.0.0"});
        release("pi-a", "1.0.0", host_peer.clone());
        release("pi-b", "1.0.0", json!({"pi-peer": "2.0.0"}));
        let env = Env::new(&server, 128_000, json!({}));
        let log = env.dir.path().join("setfattr.log");
        let path = logging_setfattr(&env, &log);
        let run = |args: &[&str]| {
            let mut command = program(&wrapper, &env, &registry);
            command
                .env("PATH", &path)
                .env_remove("npm_config_audit")
                .env_remove("npm_config_fund");
            let out = support::ts16::run(&env, command, args);
            ok(who, args, &out);
            let all = text(&out).to_ascii_lowercase();
            assert!(
                !all.contains("fund") && !all.contains("audit") && !all.contains("vulnerab"),
                "{who} {args:?}: {all}"
            );
        };
        run(&["install", "npm:pi-a"]);
        run(&["install", "npm:pi-b"]);
        release("pi-a", "1.1.0", host_peer);
        run(&["update", "--extensions"]);
        let modules = env.agent.join("npm/node_modules");
        assert_eq!(installed_version(&modules.join("pi-a")), "1.1.0", "{who}");
        run(&["remove", "npm:pi-b"]);
        assert!(!modules.join("pi-b").exists(), "{who}");
        assert!(modules.join("pi-a").exists(), "{who}");
        for peer in ["@earendil-works", "pi-peer"] {
            assert!(!modules.join(peer).exists(), "{who}: {peer} installed");
        }

        let marks = std::fs::read_to_string(&log).unwrap_or_default();
        let expected = format!(
            "-n user.com.dropbox.ignored -v 1 {}",
            env.agent.join("npm").display()
        );
        assert!(!marks.is_empty(), "{who}: no cloud-sync mark");
        assert!(marks.lines().all(|l| l == expected), "{who}: {marks}");
    }
}

/// A bare `pi update` updates pi only (it says packages are skipped and leaves a package
/// behind its registry); `pi update --all` updates the packages too. pi's own update fails
/// in both (1.6.0 cannot reach its release feed here; ours never updates itself).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bare_update_is_self_only_and_all_adds_packages() {
    if !npm_available() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let registry = NpmRegistry::start();
        let release = |version: &str| {
            registry.publish(
                "pi-hello",
                version,
                json!({"pi": {"prompts": ["./prompts"]}}),
                &[("prompts/hello.md", &prompt_file(version))],
            );
        };
        release("1.0.0");
        let env = Env::new(&server, 128_000, json!({}));
        let run =
            |args: &[&str]| support::ts16::run(&env, program(&wrapper, &env, &registry), args);
        let args = ["install", "npm:pi-hello"];
        ok(who, &args, &run(&args));
        release("1.1.0");
        let path = env.agent.join("npm/node_modules/pi-hello");
        let lines = |out: &Output| -> Vec<String> {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| {
                    !l.trim().is_empty() && !l.starts_with("added ") && !l.starts_with("changed ")
                })
                .map(str::to_owned)
                .collect()
        };

        let out = run(&["update"]);
        assert_eq!(out.status.code(), Some(1), "{who}: {}", text(&out));
        assert_eq!(
            lines(&out),
            ["Extensions are skipped. Run pi update --extensions to update extensions."],
            "{who}"
        );
        assert_eq!(installed_version(&path), "1.0.0", "{who}");

        let out = run(&["update", "--all"]);
        assert_eq!(out.status.code(), Some(1), "{who}: {}", text(&out));
        assert_eq!(
            lines(&out),
            [
                "Updating npm:pi-hello...",
                "Updated 1 package:",
                "  npm:pi-hello 1.0.0 -> 1.1.0",
            ],
            "{who}"
        );
        assert_eq!(installed_version(&path), "1.1.0", "{who}");
    }
}
