//! A local extension loads in a fresh agent dir with no npm and no registry (issue 36,
//! item 7), when pi was installed with its extension host (`scripts/install.sh` puts it in
//! `<prefix>/lib/pi-rs/extension-host`): nothing is installed at first use and nothing is
//! fetched. Without an installed host, the fallback (npm into the agent dir) says clearly
//! that npm is needed. The prefix here is a scratch folder holding this build's `pi` and
//! the test host folder (this build's host files, packages installed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;

use mock_llm::{MockServer, Script};
use support::rpc::{Env, user_texts};

const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerTool({
    name: "upper", label: "Upper", description: "Upper-cases text",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async execute(id, params) { return { content: [{ type: "text", text: params.text.toUpperCase() }], details: {} }; },
  });
};
"#;

/// A prefix with `bin/pi` (this build) and `lib/pi-rs/extension-host` (`host`).
fn installed_prefix(root: &Path, host: &Path) -> PathBuf {
    let prefix = root.join("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::create_dir_all(prefix.join("lib/pi-rs")).unwrap();
    let pi = prefix.join("bin/pi");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_pi"), &pi).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_pi"), &pi).unwrap();
    }
    std::os::unix::fs::symlink(host, prefix.join("lib/pi-rs/extension-host")).unwrap();
    pi
}

/// Runs `pi -p -e upper.ts` with npm missing and the registry unreachable.
fn run_offline(pi: &Path, env: &Env, extension: &Path) -> Output {
    Command::new(pi)
        .args(["-p", "-e"])
        .arg(extension)
        .arg("shout it")
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_NPM", env.dir.path().join("no-npm-here"))
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env_remove("PI_EXTENSION_HOST_DIR")
        .env_remove("PI_EXT_HOST_CACHE")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_loads_offline_with_the_installed_host() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::tool_call("upper", json!({"text": "quiet words"})),
        Script::text("done shouting"),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let extension = env.work.join("upper.ts");
    std::fs::write(&extension, EXTENSION).unwrap();
    let pi = installed_prefix(env.dir.path(), &host);

    let output = run_offline(&pi, &env, &extension);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("done shouting"),
        "{stderr}"
    );
    assert!(!stderr.contains("Installing"), "{stderr}");
    // The extension's tool ran: its result went back to the model.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let body = serde_json::to_string(&requests[1].body).unwrap();
    assert!(body.contains("QUIET WORDS"), "{body}");
    // Nothing was put in the fresh agent dir's host folder; the transform cache went to
    // the agent dir, not into the installed host.
    assert!(!env.agent.join("extension-host").exists());
    assert!(env.agent.join("extension-host-cache").is_dir());
    assert!(!user_texts(&requests[0].body).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_installed_host_the_need_for_npm_is_said() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push_all([Script::text("no tools")]);
    let env = Env::new(&server, 128_000, json!({}));
    let extension = env.work.join("upper.ts");
    std::fs::write(&extension, EXTENSION).unwrap();
    // The build's own binary: no lib/pi-rs beside it.
    let output = run_offline(Path::new(env!("CARGO_BIN_EXE_pi")), &env, &extension);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("npm is needed once to install the extension host's packages"),
        "{stderr}"
    );
}
