//! `pi mcp` commands as pi 1.6.0 answers them: an `mcp.json` that starts with a UTF-8 BOM
//! is read, added to and removed from; `pi mcp login --help` says that `--timeout` limits
//! the whole sign-in; `login`/`logout` take `-l`. The same steps run through ours and pi
//! 1.6.0 (`PI_TS16`); exit codes and output must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::Env;
use support::ts16::{pis, program, run};

const BOM_CONFIG: &[u8] =
    b"\xef\xbb\xbf{\"mcpServers\":{\"off\":{\"url\":\"http://127.0.0.1:9/mcp\",\"enabled\":false}}}";

/// Each step's exit code, stdout and stderr, for one pi.
fn steps(wrapper: &Option<std::path::PathBuf>) -> Vec<Value> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(env.agent.join("mcp.json"), BOM_CONFIG).unwrap();
    [
        vec!["mcp", "list"],
        vec!["mcp", "add", "extra", "--url", "http://127.0.0.1:9/x"],
        vec!["mcp", "remove", "extra"],
        vec!["mcp", "list"],
        vec!["mcp", "login", "--help"],
        vec!["mcp", "login", "-l", "nosuch"],
        vec!["mcp", "logout", "-l", "nosuch"],
    ]
    .iter()
    .map(|args| {
        let mut command = program(wrapper);
        command.env("PI_OFFLINE", "1");
        let out = run(&env, command, args);
        // The scratch folder differs between the two runs.
        let dir = env.dir.path().display().to_string();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(&dir, "<dir>");
        json!({
            "args": args,
            "code": out.status.code(),
            "stdout": text(&out.stdout),
            "stderr": text(&out.stderr),
        })
    })
    .collect()
}

#[test]
fn mcp_commands_read_bom_configs_and_take_local_as_pi_16() {
    let mut outcomes = Vec::new();
    for (name, wrapper) in pis() {
        outcomes.push((name, steps(&wrapper)));
    }
    let ours = &outcomes[0].1;
    assert!(
        ours[0]["stdout"]
            .as_str()
            .unwrap()
            .starts_with("off: disabled"),
        "{ours:#?}"
    );
    assert_eq!(ours[1]["code"], 0, "{ours:#?}");
    assert_eq!(ours[2]["code"], 0, "{ours:#?}");
    assert!(
        ours[4]["stdout"]
            .as_str()
            .unwrap()
            .contains("whole sign-in"),
        "{}",
        ours[4]["stdout"]
    );
    for (name, theirs) in &outcomes[1..] {
        for (a, b) in ours.iter().zip(theirs) {
            assert_eq!(a, b, "ours, then {name}");
        }
    }
}
