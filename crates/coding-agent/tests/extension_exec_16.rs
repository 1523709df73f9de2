//! `pi.exec()` as pi 1.6.0 runs it, seen by an extension command through the binary: the
//! `maxBuffer` cap and the `truncated` result, a bad `maxBuffer` rejected, UTF-8 split
//! between output chunks kept whole, a spawn failure's message on stderr, and SIGKILL 5 s
//! after a SIGTERM the command ignores. The results of ours and of 1.6.0 (`PI_TS16`) must
//! equal each other and what is spelled out here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::Env;
use support::ts16::{run, ts16, ts16_pi};

/// `/exec` runs each case in turn and appends its result (or its rejection) to `$EXEC_LOG`.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const CASES = {
  capped: ["sh", ["-c", "printf abcdef; exec sleep 30"], { maxBuffer: 4 }],
  uncapped: ["sh", ["-c", "printf abcdef; printf xyz >&2"], {}],
  badCap: ["true", [], { maxBuffer: -1 }],
  utf8: ["sh", ["-c", "for i in 1 2 3; do printf '\\303'; sleep 0.05; printf '\\251'; done"], {}],
  missing: ["pi-no-such-command-37", [], {}],
  ignoresTerm: ["sh", ["-c", "trap '' TERM; exec sleep 30"], { timeout: 50 }],
};
export default function (pi) {
  pi.registerCommand("exec", {
    description: "runs pi.exec cases",
    handler: async () => {
      for (const [name, [command, args, options]] of Object.entries(CASES)) {
        const started = Date.now();
        let record;
        try {
          record = { name, result: await pi.exec(command, args, options) };
        } catch (error) {
          record = { name, rejected: error.name, message: error.message };
        }
        record.atLeast5s = Date.now() - started >= 5000;
        appendFileSync(process.env.EXEC_LOG, JSON.stringify(record) + "\n");
      }
    },
  });
}
"#;

/// The records `/exec` logged in print mode through `program`.
async fn records(program: Command, host: Option<PathBuf>) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("exec-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("exec.jsonl");
    let mut program = program;
    program.env("EXEC_LOG", &log);
    if let Some(host) = host {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    tokio::task::spawn_blocking(move || {
        let output = run(&env, program, &["-e", ext.to_str().unwrap(), "-p", "/exec"]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    })
    .await
    .unwrap()
}

fn result(stdout: &str, stderr: &str, code: i64, killed: bool, truncated: bool) -> Value {
    json!({"stdout": stdout, "stderr": stderr, "code": code, "killed": killed, "truncated": truncated})
}

/// What 1.6.0 gives.
fn expected() -> Vec<Value> {
    let max = 2_u64.pow(29) - 24; // node's MAX_STRING_LENGTH on 64-bit
    vec![
        json!({"name": "capped", "result": result("abcd", "", 143, true, true), "atLeast5s": false}),
        json!({"name": "uncapped", "result": result("abcdef", "xyz", 0, false, false), "atLeast5s": false}),
        json!({"name": "badCap", "rejected": "RangeError",
               "message": format!("maxBuffer must be an integer between 0 and {max} bytes"), "atLeast5s": false}),
        json!({"name": "utf8", "result": result("\u{e9}\u{e9}\u{e9}", "", 0, false, false), "atLeast5s": false}),
        json!({"name": "missing", "result": result("", "spawn pi-no-such-command-37 ENOENT", 1, false, false),
               "atLeast5s": false}),
        json!({"name": "ignoresTerm", "result": result("", "", 137, true, false), "atLeast5s": true}),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_caps_decodes_reports_and_kills_as_in_16() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    if let Some(wrapper) = ts16() {
        let their = records(ts16_pi(&wrapper), None).await;
        assert_eq!(their, expected(), "pi 1.6.0 changed");
    }
    let our = records(Command::new(env!("CARGO_BIN_EXE_pi")), Some(host)).await;
    assert_eq!(our, expected());
}
