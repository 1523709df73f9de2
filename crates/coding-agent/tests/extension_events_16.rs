//! Extension events that pi 1.6.0 added to 0.73.1's set, seen by an extension that logs
//! every event it gets (type and the shape of each field) through one RPC session: a prompt
//! (`agent_settled`), `set_session_name` (`session_info_changed`), a command that asks the
//! user (`ui_prompt_start` / `ui_prompt_end`) and a compaction whose summary request fails
//! (`session_compact_failed`). The logs of ours and of 1.6.0 (`PI_TS16`) must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

/// Logs each event as `{type, field: value or shape}`, and a command that asks the user.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const LOG = process.env.EVENT_LOG;
const EVENTS = [
  "session_info_changed", "session_before_compact", "session_compact", "session_compact_failed",
  "agent_settled", "ui_prompt_start", "ui_prompt_end",
];
function shape(key, value) {
  if (value === null || typeof value !== "object") return typeof value === "number" ? "number" : value;
  if (Array.isArray(value)) return `array(${value.length})`;
  return `object(${Object.keys(value).sort().join(",")})`;
}
export default function (pi) {
  for (const type of EVENTS) {
    pi.on(type, async (event) => {
      const kept = { type };
      for (const key of Object.keys(event).sort()) {
        if (key !== "type" && event[key] !== undefined) kept[key] = shape(key, event[key]);
      }
      appendFileSync(LOG, JSON.stringify(kept) + "\n");
    });
  }
  pi.registerCommand("ask", {
    description: "asks the user",
    handler: async (_args, ctx) => {
      const yes = await ctx.ui.confirm("Proceed?", "Really?");
      ctx.ui.notify("answered " + yes, "info");
    },
  });
}
"#;

/// Reads the log once it holds an event of type `last`.
fn log_through(log: &Path, last: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let lines: Vec<Value> = std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.iter().any(|l| l["type"] == last) {
            return lines;
        }
        assert!(Instant::now() < deadline, "no {last} in {lines:#?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The events one session through `program` logged.
async fn events(program: Command, host: Option<PathBuf>) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("answered"));
    server.push(Script::http_error(500));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.work.join("record.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("events.jsonl");
    let mut program = program;
    program.env("EVENT_LOG", &log);
    if let Some(host) = host {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
        rpc.call("p1", json!({"type": "prompt", "message": "hello"}));
        rpc.event("agent_settled");
        rpc.call("n1", json!({"type": "set_session_name", "name": "named"}));
        rpc.send(json!({"id": "a1", "type": "prompt", "message": "/ask"}));
        let asked = rpc.until("the confirm dialog", |l| {
            l["type"] == "extension_ui_request" && l["method"] == "confirm"
        });
        let request = asked.last().unwrap()["id"].clone();
        rpc.send(json!({"type": "extension_ui_response", "id": request, "confirmed": true}));
        rpc.until("the notice", |l| {
            l["type"] == "extension_ui_request" && l["method"] == "notify"
        });
        let compacted = rpc.call("c1", json!({"type": "compact"}));
        assert_eq!(compacted["success"], false, "{compacted:#?}");
        let lines = log_through(&log, "session_compact_failed");
        rpc.finish();
        drop(env);
        lines
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_added_since_0_73_reach_extensions_as_in_16() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let their = match ts16() {
        Some(wrapper) => Some(events(ts16_pi(&wrapper), None).await),
        None => None,
    };
    let our = events(Command::new(env!("CARGO_BIN_EXE_pi")), Some(host)).await;
    if let Some(their) = their {
        assert_eq!(
            our, their,
            "ours (left) and pi 1.6.0 (right) differ:\nours {our:#?}\n1.6.0 {their:#?}"
        );
    }
    for kind in [
        "agent_settled",
        "session_info_changed",
        "ui_prompt_start",
        "ui_prompt_end",
        "session_compact_failed",
    ] {
        assert!(our.iter().any(|l| l["type"] == kind), "{kind}: {our:#?}");
    }
}
