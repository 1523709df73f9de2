//! What the commands pi runs see, compared with pi 1.6.0: the bash tool runs through the
//! `shellPath` setting with its `~` expanded (pi 0.80.6); every child learns it runs under
//! pi (`AI_AGENT=pi`, `PI_CODING_AGENT=true`, pi 0.84); the bash tool's commands get the
//! session's id, file, provider, model and thinking level (pi 0.82), never values pi itself
//! inherited.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

const SESSION_ID: &str = "019a0000-0000-7000-8000-0000000000c3";

/// Prints each variable the command sees, `-` for an unset one; the session file as
/// whether it names the session's id.
const COMMAND: &str = r#"for v in AI_AGENT PI_CODING_AGENT PI_SESSION_ID PI_PROVIDER PI_MODEL PI_REASONING_LEVEL SHIM; do eval "printf '%s=%s\n' $v \"\${$v:--}\""; done; case "$PI_SESSION_FILE" in *"$PI_SESSION_ID".jsonl) echo file=named;; *) echo "file=$PI_SESSION_FILE";; esac"#;

/// Runs `program` once: the model calls bash with [`COMMAND`], then answers. Returns the
/// bash tool's result text.
async fn bash_output(program: Command) -> String {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("bash", json!({"command": COMMAND})));
    server.push(Script::text("Done."));
    let env = Env::new(
        &server,
        128_000,
        json!({"shellPath": "~/bin/shim", "defaultProvider": "mock",
               "defaultModel": "mock-thinker", "defaultThinkingLevel": "low"}),
    );
    // The shell: bash with a marker, found through `~`.
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let shim = bin.join("shim");
    std::fs::write(&shim, "#!/bin/sh\nSHIM=yes exec /bin/bash \"$@\"\n").unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut program = program;
    // Values pi inherits must not reach the command.
    program
        .env("PI_MODEL", "inherited-model")
        .env("PI_SESSION_FILE", "/inherited.jsonl")
        .env_remove("AI_AGENT")
        .env_remove("PI_CODING_AGENT");
    let output = run(
        &env,
        program,
        &[
            "--mode",
            "json",
            "--session-id",
            SESSION_ID,
            "-p",
            "Show me.",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["type"] == "tool_execution_end")
        .and_then(|event| {
            event["result"]["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| panic!("no bash result in:\n{stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_commands_see_pis_environment_as_in_pi_16() {
    let expected = format!(
        "AI_AGENT=pi\nPI_CODING_AGENT=true\nPI_SESSION_ID={SESSION_ID}\nPI_PROVIDER=mock\n\
         PI_MODEL=mock-thinker\nPI_REASONING_LEVEL=low\nSHIM=yes\nfile=named\n"
    );
    let ours_output = bash_output(ours()).await;
    assert_eq!(ours_output, expected);
    if let Some(wrapper) = ts16() {
        assert_eq!(ours_output, bash_output(ts16_pi(&wrapper)).await);
    }
}
