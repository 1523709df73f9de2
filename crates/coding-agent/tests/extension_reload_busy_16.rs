//! `ctx.reload()` while a response or a compaction is running, as pi 1.6.0 answers it (pi
//! 1.5.1): the reload is refused with a request to wait, and the extensions are not
//! replaced (no `session_shutdown` for the reload). An extension command calls it over RPC
//! while the mock model stalls a reply or a summary; ours and pi 1.6.0 (`PI_TS16`) must log
//! the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program_with_host};

/// `/rl` reloads and logs the outcome; `session_shutdown` is logged with its reason.
const RELOADER: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.RELOAD_LOG, JSON.stringify(entry) + "\n");
export default function (pi) {
  pi.on("session_shutdown", (event) => log({ shutdown: event.reason ?? null }));
  pi.registerCommand("rl", {
    description: "Reload",
    handler: async (_args, ctx) => {
      try {
        await ctx.reload();
        log({ reload: "done" });
      } catch (error) {
        log({ reload: String(error?.message ?? error) });
      }
    },
  });
}
"#;

/// A reply that stalls for a second after its first event.
fn stalled(text: &str) -> Script {
    Script::text(text).with_fault(Fault::Stall {
        after_events: 1,
        ms: 1_000,
    })
}

/// The log's entries once it has one with a `reload` field (at most 20 s).
fn reload_logged(log: &Path) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let entries: Vec<Value> = std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if entries.iter().any(|e| e.get("reload").is_some()) {
            return entries;
        }
        assert!(Instant::now() < deadline, "no reload logged: {entries:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Reloads during a stalled reply (`compaction` false) or a stalled compaction summary;
/// returns what the extension logged by the time the reload answered.
async fn reload_while_busy(wrapper: &Option<PathBuf>, compaction: bool) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    if compaction {
        server.push(Script::text("First answer, with some words."));
        server.push(Script::text("Second answer, with more words."));
        server.push(stalled("## Goal\nA summary."));
        server.push(stalled("## Goal\nThe turn's start."));
    } else {
        server.push(stalled("A slow answer."));
    }
    let env = Env::new(
        &server,
        128_000,
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 6}}),
    );
    let ext = env.dir.path().join("reloader.ts");
    std::fs::write(&ext, RELOADER).unwrap();
    let log = env.dir.path().join("reload.jsonl");
    let mut command = program_with_host(wrapper);
    command.env("RELOAD_LOG", &log);
    tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &["-e", ext.to_str().unwrap()]);
        if compaction {
            for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
                rpc.call(id, json!({"type": "prompt", "message": text}));
                rpc.until("the run settled", |l| l["type"] == "agent_settled");
            }
            rpc.send(json!({"id": "c", "type": "compact"}));
            rpc.until("the compaction started", |l| {
                l["type"] == "compaction_start"
            });
        } else {
            rpc.call("p", json!({"type": "prompt", "message": "Go."}));
            rpc.until("the reply started", |l| {
                l["type"] == "message_start" && l["message"]["role"] == "assistant"
            });
        }
        rpc.call("r", json!({"type": "prompt", "message": "/rl"}));
        let entries = reload_logged(&log);
        // What was busy ends (its end may have come before the command's answer).
        let end = move |l: &Value| {
            if compaction {
                l["type"] == "response" && l["id"] == "c"
            } else {
                l["type"] == "agent_settled"
            }
        };
        if !rpc.seen.iter().any(end) {
            rpc.until("the busy work's end", end);
        }
        rpc.finish();
        entries
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_during_a_response_or_compaction_asks_to_wait_as_16() {
    for (compaction, text) in [
        (
            false,
            "Wait for the current response to finish before reloading.",
        ),
        (true, "Wait for compaction to finish before reloading."),
    ] {
        let mut seen = Vec::new();
        for (who, wrapper) in pis() {
            seen.push((who, reload_while_busy(&wrapper, compaction).await));
        }
        assert_eq!(seen[0].1, [json!({"reload": text})], "{seen:?}");
        for (who, theirs) in &seen[1..] {
            assert_eq!(&seen[0].1, theirs, "ours and {who}");
        }
    }
}
