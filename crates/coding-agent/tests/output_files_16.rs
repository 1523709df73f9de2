//! The file holding the full output of a truncated bash result is readable by its user
//! only (pi 1.0.3), in ours and in pi 1.6.0 (`PI_TS16`): the model asks for a command with
//! more output than a result keeps, and the file the result names has mode 0600.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

/// The mode of the full-output file a truncated bash result of `program` names.
async fn output_file_mode(server: &MockServer, wrapper: &Option<PathBuf>) -> (PathBuf, u32) {
    server.clear_queue();
    server.push_all([
        Script::tool_call("bash", json!({"command": "seq 1 200000"})),
        Script::text("done"),
    ]);
    let env = Env::new(server, 128_000, json!({}));
    // Output files go to this run's own temp dir.
    let temp = env.dir.path().join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let mut command = program(wrapper);
    command.env("TMPDIR", &temp);
    let (path, env) = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, command, &["--tools", "bash"]);
        rpc.call("p", json!({"type": "prompt", "message": "count"}));
        let lines = rpc.event("agent_end");
        rpc.finish();
        let end: &Value = lines
            .iter()
            .find(|l| l["type"] == "tool_execution_end")
            .expect("the bash tool ran");
        let path = end["result"]["details"]["fullOutputPath"]
            .as_str()
            .unwrap_or_else(|| panic!("no full output file: {end:#}"))
            .to_owned();
        (PathBuf::from(path), env)
    })
    .await
    .unwrap();
    assert!(path.starts_with(&temp), "{}", path.display());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    drop(env);
    (path, mode)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_bash_output_files_are_readable_by_the_user_only() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let (path, mode) = output_file_mode(&server, &wrapper).await;
        assert_eq!(mode, 0o600, "{who}: {} has mode {mode:o}", path.display());
    }
}

/// The file a binary resource of an MCP tool result is saved to is readable by the user
/// only too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_mcp_binary_resources_are_readable_by_the_user_only() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        server.clear_queue();
        server.push_all([
            Script::tool_call("mcp__t__blob", json!({})),
            Script::text("done"),
        ]);
        let env = Env::new(&server, 128_000, json!({}));
        let (test, _) = support::mcp::test_server(
            &env,
            json!({"env": {"TEST_SERVER_BLOB": "1"}, "exposure": "direct"}),
        );
        support::mcp::write_config(&env, json!({ "t": test }));
        let temp = env.dir.path().join("tmp");
        std::fs::create_dir_all(&temp).unwrap();
        let mut command = program(&wrapper);
        command.env("TMPDIR", &temp);
        let (text, env) = tokio::task::spawn_blocking(move || {
            let mut rpc = Rpc::start_program(&env, command, &[]);
            rpc.call("p", json!({"type": "prompt", "message": "blob"}));
            let lines = rpc.event("agent_end");
            rpc.finish();
            let end = lines
                .iter()
                .find(|l| l["type"] == "tool_execution_end")
                .expect("the MCP tool ran")
                .clone();
            (
                end["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                env,
            )
        })
        .await
        .unwrap();
        let at = text
            .find(temp.to_str().unwrap())
            .unwrap_or_else(|| panic!("{who}: no saved file in {text:?}"));
        let path: String = text[at..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ']' && *c != ')')
            .collect();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{who}: {path} has mode {mode:o}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            [0, 1, 2, 3, 4, 5, 6, 7],
            "{who}"
        );
        drop(env);
    }
}
