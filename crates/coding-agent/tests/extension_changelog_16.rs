//! pi 1.6's "Extension Updates": a package that brings an extension and a changelog has its
//! version recorded the first time it loads (`extensionChangelogVersions`, keyed by the
//! package's source and scope); after an update, the next fresh start shows the entries
//! since then, headings prefixed with the package name, or one line each with
//! `collapseChangelog`. Ours and pi 1.6.0 (`PI_TS16`) side by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path, stub_search_tools};

const WAIT: Duration = Duration::from_secs(20);

const V1_LOG: &str = "# Changelog\n\n## [1.0.0] - 2026-10-01\n\n- First release.\n";

/// A package with one extension and a changelog, at `version`.
fn write_package(dir: &Path, version: &str, changelog: &str) {
    std::fs::create_dir_all(dir.join("extensions")).unwrap();
    std::fs::write(
        dir.join("package.json"),
        json!({
            "name": "greeter-pkg",
            "version": version,
            "pi": {"extensions": ["extensions"]}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("extensions/greeter.ts"),
        "export default function (pi: any) {\n  pi.registerCommand(\"greet\", { description: \"Greets\", handler: async () => {} });\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("CHANGELOG.md"), changelog).unwrap();
}

fn settings(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.agent.join("settings.json")).unwrap())
        .unwrap()
}

/// Starts pi, waits for its editor, returns the screen once `ready` holds, and quits.
fn run_once(
    env: &Env,
    name: &str,
    wrapper: &Option<std::path::PathBuf>,
    ready: &dyn Fn(&str) -> bool,
) -> String {
    let pi = program_path(wrapper);
    let host = support::ext_host::host_dir()
        .map(|h| h.display().to_string())
        .unwrap_or_default();
    let vars = [
        ("PI_OFFLINE", "1"),
        ("PI_EXTENSION_HOST_DIR", host.as_str()),
    ];
    let tmux = Tmux::start_program(env, &pi, &vars, &[], 100, 50);
    let screen = tmux.wait(&format!("{name}: started"), WAIT, |s| {
        s.contains("mock-model") && ready(s)
    });
    tmux.keys(&["C-d"]);
    tmux.wait_exit(WAIT);
    screen
}

/// The rows from the first row equal to `first`, up to the next border.
fn block(screen: &str, first: &str) -> Vec<String> {
    let rows: Vec<String> = screen.lines().map(|r| r.trim_end().to_owned()).collect();
    let Some(at) = rows.iter().position(|r| r == first) else {
        return Vec::new();
    };
    rows[at..]
        .iter()
        .take_while(|r| !r.starts_with("────"))
        .cloned()
        .collect()
}

#[test]
fn an_updated_packages_notes_show_once_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        for collapse in [false, true] {
            let env = Env::new(
                &server,
                128_000,
                json!({"tuiMode": "regular", "collapseChangelog": collapse}),
            );
            if wrapper.is_some() {
                stub_search_tools(&env.agent);
            }
            let package = env.dir.path().join("greeter");
            write_package(&package, "1.0.0", V1_LOG);
            let source = package.display().to_string();
            let mut file = settings(&env);
            file["packages"] = json!([source]);
            file["lastChangelogVersion"] = json!("1.6.0");
            std::fs::write(env.agent.join("settings.json"), file.to_string()).unwrap();

            // First sighting: recorded, nothing shown.
            let first = run_once(&env, name, &wrapper, &|s| s.contains("greeter"));
            assert!(!first.contains("Extension Updates"), "{name}: {first}");
            let key = json!({"source": source, "scope": "user"}).to_string();
            assert_eq!(
                settings(&env)["extensionChangelogVersions"][&key],
                "1.0.0",
                "{name}: the version recorded under {key}"
            );

            // Updated: the entries since 1.0.0, once.
            let log = "# Changelog\n\n## [1.2.0] - 2026-11-02\n\n### Added\n\n- Greets in French.\n\n## [1.1.0] - 2026-10-15\n\n- Faster greetings.\n\n## [1.0.0] - 2026-10-01\n\n- First release.\n";
            write_package(&package, "1.2.0", log);
            let updated = run_once(&env, name, &wrapper, &|s| {
                if collapse {
                    s.contains("Updated greeter-pkg")
                } else {
                    s.contains("Faster greetings")
                }
            });
            let shown = if collapse {
                block(&updated, " Updated greeter-pkg to v1.2.0.")
            } else {
                block(&updated, " Extension Updates")
            };
            assert!(!shown.is_empty(), "{name}: {updated}");
            assert!(!updated.contains("What's New"), "{name}: {updated}");
            assert_eq!(
                settings(&env)["extensionChangelogVersions"][&key],
                "1.2.0",
                "{name}"
            );
            let again = run_once(&env, name, &wrapper, &|s| s.contains("greeter"));
            assert!(
                !again.contains("greeter-pkg"),
                "{name}: shown once: {again}"
            );
            seen.push((name, collapse, shown));
        }
    }
    let ours: Vec<_> = seen.iter().filter(|s| s.0 == "ours").collect();
    let theirs: Vec<_> = seen.iter().filter(|s| s.0 != "ours").collect();
    if !theirs.is_empty() {
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a.2, b.2, "collapse {}: the block", a.1);
        }
    }
}
