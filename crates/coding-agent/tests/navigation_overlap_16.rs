//! Session-tree navigations do not overlap with a response or each other, as in pi 1.6.0
//! (pi 1.5.1): while a reply streams, `ctx.navigateTree()` asks to wait for it; while a
//! branch summary runs, another navigation asks to wait for that; and a prompt during a
//! manual compaction is refused. Over RPC, with extension
//! commands that navigate (with a summary) and the mock model stalling the reply or the
//! summary; ours and pi 1.6.0 (`PI_TS16`) must answer the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program_with_host};

/// `/nav <id>` navigates there with a summary and logs how it ended.
const NAVIGATOR: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.NAV_LOG, JSON.stringify(entry) + "\n");
export default function (pi) {
  pi.registerCommand("nav", {
    description: "Navigate with a summary",
    handler: async (args, ctx) => {
      try {
        const result = await ctx.navigateTree(args.trim(), { summarize: true });
        log({ nav: result?.cancelled ? "cancelled" : "done" });
      } catch (error) {
        log({ nav: String(error?.message ?? error) });
      }
    },
  });
  // Starts a navigation with a summary and, a second into it, tries another.
  pi.registerCommand("twice", {
    description: "Navigate twice at once",
    handler: async (args, ctx) => {
      const first = ctx.navigateTree(args.trim(), { summarize: true });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      try {
        await ctx.navigateTree(args.trim(), { summarize: true });
        log({ nav: "second done" });
      } catch (error) {
        log({ nav: String(error?.message ?? error) });
      }
      const result = await first;
      log({ nav: result?.cancelled ? "cancelled" : "done" });
    },
  });
}
"#;

/// A reply that stalls for a second after its first event.
fn stalled(text: &str) -> Script {
    Script::text(text).with_fault(Fault::Stall {
        after_events: 1,
        ms: 3_000,
    })
}

/// The log once it has `count` entries (at most 20 s).
fn logged(log: &Path, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let entries: Vec<Value> = std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if entries.len() >= count {
            return entries;
        }
        assert!(
            Instant::now() < deadline,
            "{count} entries expected: {entries:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Two exchanges, then: `during_summary` false: a third prompt whose reply stalls, and
/// `/nav` to the first reply meanwhile; true: `/twice` to the first reply, whose summary
/// stalls. Returns the log.
async fn overlap(wrapper: &Option<PathBuf>, during_summary: bool) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer."));
    server.push(Script::text("Second answer."));
    if during_summary {
        server.push(stalled("## Goal\nThe branch."));
    } else {
        server.push(stalled("A slow third answer."));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("navigator.ts");
    std::fs::write(&ext, NAVIGATOR).unwrap();
    let log = env.dir.path().join("nav.jsonl");
    let mut command = program_with_host(wrapper);
    command.env("NAV_LOG", &log);
    tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &["-e", ext.to_str().unwrap()]);
        let (_, first_reply) =
            support::nav::exchanges(&mut rpc, &["First question.", "Second question."]);
        let nav = format!("/nav {first_reply}");
        if during_summary {
            let twice = nav.replace("/nav", "/twice");
            rpc.call("n1", json!({"type": "prompt", "message": twice}));
            logged(&log, 2);
        } else {
            rpc.call(
                "p3",
                json!({"type": "prompt", "message": "Third question."}),
            );
            rpc.until("the reply started", |l| {
                l["type"] == "message_start" && l["message"]["role"] == "assistant"
            });
            rpc.call("n1", json!({"type": "prompt", "message": nav}));
            logged(&log, 1);
            if !rpc.seen.iter().any(|l| l["type"] == "agent_settled") {
                rpc.until("the run settled", |l| l["type"] == "agent_settled");
            }
        }
        rpc.finish();
        logged(&log, 0)
    })
}

/// Runs a case through ours and pi 1.6.0, asserts they agree and returns ours.
async fn ours_and_16(during_summary: bool) -> Vec<Value> {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, overlap(&wrapper, during_summary).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours (left) and {who} (right)");
    }
    seen.swap_remove(0).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigation_while_a_reply_streams_asks_to_wait_as_16() {
    let seen = ours_and_16(false).await;
    assert_eq!(
        seen,
        [
            json!({"nav": "Wait for the current response to finish before navigating the session tree."})
        ],
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_summary_holds_off_another_navigation_as_16() {
    let seen = ours_and_16(true).await;
    assert_eq!(
        seen,
        [
            json!({"nav": "Wait for the current compaction or tree navigation to finish before navigating the session tree."}),
            json!({"nav": "done"})
        ],
        "{seen:?}"
    );
}

/// The answer to a prompt sent while a manual compaction's summary stalls.
async fn prompt_while_compacting(wrapper: &Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer, with some words."));
    server.push(Script::text("Second answer, with more words."));
    server.push(stalled("## Goal\nA summary."));
    server.push(stalled("## Goal\nThe turn's start."));
    let env = Env::new(
        &server,
        128_000,
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 6}}),
    );
    let command = program_with_host(wrapper);
    tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &[]);
        for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.until("the run settled", |l| l["type"] == "agent_settled");
        }
        rpc.send(json!({"id": "c", "type": "compact"}));
        rpc.until("the compaction started", |l| {
            l["type"] == "compaction_start"
        });
        let answer = rpc.call(
            "p3",
            json!({"type": "prompt", "message": "Third question."}),
        );
        if !rpc
            .seen
            .iter()
            .any(|l| l["type"] == "response" && l["id"] == "c")
        {
            rpc.response("c");
        }
        rpc.finish();
        json!({"success": answer["success"], "error": answer["error"]})
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_during_a_manual_compaction_is_refused_as_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, prompt_while_compacting(&wrapper).await));
    }
    assert_eq!(
        seen[0].1,
        json!({"success": false, "error":
            "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."}),
        "{seen:?}"
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
}
