//! A manual compaction asked for while a threshold auto-compaction is still summarizing
//! (pi 0.84.0 fixed the race): the automatic one is cancelled (`compaction_end` aborted),
//! then the manual one runs and answers. One RPC session through ours and pi 1.6.0
//! (`PI_TS16`) on the same mock; the compaction events and the answer must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, Rpc};
use support::scripts::usage;
use support::ts16::{ours, ts16, ts16_pi};

/// The compaction events of `lines`, with what identifies them.
fn compactions(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "compaction_start" || l["type"] == "compaction_end")
        .map(|l| {
            json!({"type": l["type"], "reason": l["reason"], "aborted": l["aborted"],
                   "errorMessage": l["errorMessage"], "summary": l["result"]["summary"]})
        })
        .collect()
}

async fn race(program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer, with some words.").with_full_usage(usage(100, 20)));
    // Over the threshold (4000 - 1000): a threshold compaction follows this answer.
    server.push(Script::text("Second answer, with more words.").with_full_usage(usage(3_500, 30)));
    // The automatic compaction's summary hangs until it is cancelled.
    server.push(
        Script::text("## Goal\nNever finished.").with_fault(Fault::Stall {
            after_events: 0,
            ms: 120_000,
        }),
    );
    server.push(Script::text("## Goal\nThe manual summary.").with_full_usage(usage(400, 40)));
    server.push(Script::text("## Goal\nThe turn's start.").with_full_usage(usage(300, 10)));
    let env = Env::new(
        &server,
        4_000,
        json!({"retry": {"enabled": false},
               "compaction": {"keepRecentTokens": 6, "reserveTokens": 1_000}}),
    );
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &[]);
        rpc.call(
            "p1",
            json!({"type": "prompt", "message": "First question."}),
        );
        rpc.event("agent_settled");
        rpc.call(
            "p2",
            json!({"type": "prompt", "message": "Second question."}),
        );
        rpc.until("the automatic compaction", |l| {
            l["type"] == "compaction_start" && l["reason"] == "threshold"
        });
        // The hanging summary request has reached the mock: the manual compaction's
        // requests get the scripts after it.
        while server.requests().len() < 3 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let answer = rpc.call("c", json!({"type": "compact"}));
        // The second run settles once its compaction is cancelled: before the answer or
        // after it.
        let settled = |lines: &[Value]| {
            lines
                .iter()
                .filter(|l| l["type"] == "agent_settled")
                .count()
        };
        if settled(&rpc.seen) < 2 {
            rpc.event("agent_settled");
        }
        let lines = std::mem::take(&mut rpc.seen);
        rpc.finish();
        json!({
            "compactions": compactions(&lines),
            "success": answer["success"],
            "summary": answer["data"]["summary"],
            "requests": server.requests().len(),
        })
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manual_compaction_cancels_a_running_automatic_one() {
    let seen = race(ours()).await;
    assert_eq!(seen["success"], true, "{seen:#}");
    let events = seen["compactions"].as_array().unwrap();
    let auto_end = events
        .iter()
        .find(|e| e["type"] == "compaction_end" && e["reason"] == "threshold")
        .unwrap_or_else(|| panic!("{seen:#}"));
    assert_eq!(auto_end["aborted"], true, "{seen:#}");
    let manual_end = events
        .iter()
        .find(|e| e["type"] == "compaction_end" && e["reason"] == "manual")
        .unwrap_or_else(|| panic!("{seen:#}"));
    assert!(
        manual_end["summary"]
            .as_str()
            .is_some_and(|s| s.contains("The manual summary.")),
        "{seen:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = race(ts16_pi(&wrapper)).await;
        assert_eq!(seen, theirs, "ours, then pi 1.6.0");
    }
}
