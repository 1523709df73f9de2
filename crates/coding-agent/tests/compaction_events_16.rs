//! What extensions see of a compaction, as pi 1.6.0 shows it: `session_before_compact` and
//! `session_compact` carry `reason` (`manual`, `threshold`, `overflow`) and `willRetry`
//! (pi 0.79.10) for manual, threshold and overflow compactions; and a summary cut off at
//! the output limit is not kept, for a compaction and for a `/tree` branch summary (pi
//! 0.84.3). The same RPC sessions run through ours and pi 1.6.0 (`PI_TS16`) against the mock
//! model with one logging extension; what each logged and kept must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script, ScriptUsage, StopReason};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program_with_host};

/// Logs the compaction events' fields and offers `/nav <id>`, a tree navigation with a
/// summary whose outcome (or error) it logs too.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.COMPACT_LOG, JSON.stringify(entry) + "\n");
export default function (pi) {
  for (const type of ["session_before_compact", "session_compact"]) {
    pi.on(type, (event) => {
      log({ type, reason: event.reason ?? null, willRetry: event.willRetry ?? null,
            fromExtension: event.fromExtension ?? null,
            customInstructions: event.customInstructions ?? null,
            hasPreparation: event.preparation !== undefined,
            entry: event.compactionEntry?.type ?? null });
    });
  }
  pi.registerCommand("nav", {
    description: "Go to an entry of the tree, with a summary",
    handler: async (args, ctx) => {
      try {
        const result = await ctx.navigateTree(args.trim(), { summarize: true });
        log({ type: "nav", cancelled: result?.cancelled ?? null });
      } catch (error) {
        log({ type: "nav", error: String(error?.message ?? error) });
      }
    },
  });
}
"#;

fn usage(input: u64, output: u64) -> ScriptUsage {
    ScriptUsage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        reasoning: 0,
    }
}

/// How a session ends up compacting.
#[derive(Clone, Copy)]
enum Case {
    /// Two prompts, then the RPC `compact` command with instructions.
    Manual,
    /// The second reply's usage passes the threshold but not the window.
    Threshold,
    /// The second reply is cut short at the length limit: compacted and retried.
    OverflowRetried,
    /// The second reply completed with a usage over the window: compacted, no retry.
    OverflowCompleted,
    /// A manual compaction whose summary stops at the output limit.
    TruncatedCompaction,
    /// A branch summary (`/nav` to the first reply) that stops at the output limit.
    TruncatedBranchSummary,
}

/// The scripts of one case, in request order.
fn scripts(case: Case) -> Vec<Script> {
    let first = Script::text("First answer, with some words.").with_full_usage(usage(100, 20));
    let summary = || Script::text("## Goal\nA summary.").with_full_usage(usage(400, 40));
    let cut = || {
        Script::text("## Goal\nA summary cut")
            .with_stop_reason(StopReason::Length)
            .with_full_usage(usage(400, 40))
    };
    match case {
        Case::Manual => vec![
            first,
            Script::text("Ok.").with_full_usage(usage(200, 30)),
            summary(),
        ],
        Case::Threshold => vec![
            first,
            Script::text("Ok.").with_full_usage(usage(120_000, 30)),
            summary(),
            summary(),
        ],
        Case::OverflowRetried => vec![
            first,
            Script::text("Cut off mid")
                .with_stop_reason(StopReason::Length)
                .with_full_usage(usage(300, 4)),
            summary(),
            summary(),
            Script::text("The whole second answer.").with_full_usage(usage(150, 20)),
        ],
        Case::OverflowCompleted => vec![
            first,
            Script::text("Ok.").with_full_usage(usage(200_000, 30)),
            summary(),
            summary(),
        ],
        Case::TruncatedCompaction => vec![
            first,
            Script::text("Ok.").with_full_usage(usage(200, 30)),
            cut(),
        ],
        Case::TruncatedBranchSummary => vec![
            first,
            Script::text("Ok.").with_full_usage(usage(200, 30)),
            cut(),
        ],
    }
}

/// Runs one case and returns what the extension logged, the compact command's answer (for
/// manual cases) and the kinds of summary entries kept.
async fn run_case(wrapper: &Option<PathBuf>, case: Case) -> Value {
    let server = MockServer::start().await.unwrap();
    for script in scripts(case) {
        server.push(script);
    }
    let env = Env::new(
        &server,
        128_000,
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 5}}),
    );
    let ext = env.dir.path().join("compact-log.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("compact.jsonl");
    let mut command = program_with_host(wrapper);
    command.env("COMPACT_LOG", &log);
    let (answer, file) = tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &["-e", ext.to_str().unwrap()]);
        for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.until("the run settled", |l| l["type"] == "agent_settled");
        }
        let file = rpc.call("s", json!({"type": "get_state"}))["data"]["sessionFile"]
            .as_str()
            .map(PathBuf::from)
            .unwrap();
        let answer = match case {
            Case::Manual | Case::TruncatedCompaction => {
                let answer = rpc.call(
                    "c",
                    json!({"type": "compact", "customInstructions": "Mind the plan."}),
                );
                json!({"success": answer["success"], "error": answer["error"]})
            }
            Case::TruncatedBranchSummary => {
                let first_reply = read_jsonl(&file)
                    .into_iter()
                    .find(|e| e["message"]["role"] == "assistant")
                    .unwrap();
                let id = first_reply["id"].as_str().unwrap().to_owned();
                rpc.call(
                    "n",
                    json!({"type": "prompt", "message": format!("/nav {id}")}),
                );
                // The command's outcome is logged once navigation ends.
                wait_for_line(&log, "nav");
                Value::Null
            }
            _ => Value::Null,
        };
        rpc.finish();
        (answer, file)
    });
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kept: Vec<Value> = read_jsonl(&file)
        .iter()
        .filter(|e| e["type"] == "compaction" || e["type"] == "branch_summary")
        .map(|e| e["type"].clone())
        .collect();
    json!({"logged": logged, "answer": answer, "kept": kept})
}

/// Waits (at most 20 s) until the log has a line of type `kind`.
fn wait_for_line(log: &std::path::Path, kind: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .any(|l| l.contains(&format!("\"type\":\"{kind}\"")))
    {
        assert!(std::time::Instant::now() < deadline, "no {kind} logged");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs `case` through ours and pi 1.6.0, asserts they agree and returns ours.
async fn ours_and_16(case: Case) -> Value {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, run_case(&wrapper, case).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(
            &seen[0].1, theirs,
            "ours (left) and {who} (right) differ:\nours {:#}\n{who} {theirs:#}",
            seen[0].1
        );
    }
    seen.swap_remove(0).1
}

/// The `(type, reason, willRetry)` of each logged compaction event.
fn reasons(seen: &Value) -> Vec<(String, Value, Value)> {
    seen["logged"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["type"] != "nav")
        .map(|l| {
            (
                l["type"].as_str().unwrap().to_owned(),
                l["reason"].clone(),
                l["willRetry"].clone(),
            )
        })
        .collect()
}

fn pair(reason: &str, retry: bool) -> Vec<(String, Value, Value)> {
    ["session_before_compact", "session_compact"]
        .iter()
        .map(|t| ((*t).to_owned(), json!(reason), json!(retry)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manual_compaction_tells_extensions_its_reason_as_16() {
    let seen = ours_and_16(Case::Manual).await;
    assert_eq!(reasons(&seen), pair("manual", false), "{seen:#}");
    assert_eq!(
        seen["logged"][0]["customInstructions"], "Mind the plan.",
        "{seen:#}"
    );
    assert_eq!(seen["logged"][1]["entry"], "compaction", "{seen:#}");
    assert_eq!(seen["logged"][1]["fromExtension"], false, "{seen:#}");
    assert_eq!(seen["kept"], json!(["compaction"]), "{seen:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threshold_compaction_tells_extensions_its_reason_as_16() {
    let seen = ours_and_16(Case::Threshold).await;
    assert_eq!(reasons(&seen), pair("threshold", false), "{seen:#}");
    assert_eq!(seen["kept"], json!(["compaction"]), "{seen:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overflow_compactions_tell_extensions_whether_they_retry_as_16() {
    let retried = ours_and_16(Case::OverflowRetried).await;
    assert_eq!(reasons(&retried), pair("overflow", true), "{retried:#}");
    let completed = ours_and_16(Case::OverflowCompleted).await;
    assert_eq!(
        reasons(&completed),
        pair("overflow", false),
        "{completed:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_cut_at_the_output_limit_is_not_kept_as_16() {
    let compaction = ours_and_16(Case::TruncatedCompaction).await;
    assert_eq!(compaction["answer"]["success"], false, "{compaction:#}");
    assert!(
        compaction["answer"]["error"]
            .as_str()
            .unwrap()
            .contains("generation hit the token cap and the summary is incomplete"),
        "{compaction:#}"
    );
    assert_eq!(compaction["kept"], json!([]), "{compaction:#}");
    // The extension saw the compaction start but never one kept.
    assert_eq!(
        reasons(&compaction),
        pair("manual", false)[..1].to_vec(),
        "{compaction:#}"
    );

    let branch = ours_and_16(Case::TruncatedBranchSummary).await;
    let nav = branch["logged"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["type"] == "nav")
        .cloned()
        .unwrap();
    assert_eq!(
        nav["error"],
        "Branch summarization failed: generation hit the token cap and the summary is incomplete",
        "{branch:#}"
    );
    assert_eq!(branch["kept"], json!([]), "{branch:#}");
}
