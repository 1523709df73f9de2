//! RPC `abort` during a manual compaction cancels it, as pi 1.6.0 does (pi 0.85): the
//! `compact` command fails, `compaction_end` says it was aborted, and no compaction entry is
//! written. Our `pi` and pi 1.6.0 (`PI_TS16`) run the same steps against the mock model,
//! whose summary reply stalls for longer than any test runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{ours, ts16, ts16_pi};

/// What one pi did: the `compact` and `abort` answers, the `compaction_end` event, and
/// whether the session file got a compaction entry.
async fn abort_compaction(program: Command) -> (Value, Value, Value, bool) {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer, with some words."));
    server.push(Script::text("Second answer, with more words."));
    let env = Env::new(
        &server,
        128_000,
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 6}}),
    );
    let watcher = server.clone();
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &[]);
        for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.event("agent_settled");
        }
        // The history summary and the turn-prefix summary both stall.
        for _ in 0..2 {
            watcher.push(Script::text("slow summary").with_fault(Fault::stall(1, 3_600_000)));
        }
        let before = watcher.requests().len();
        rpc.send(json!({"id": "c", "type": "compact"}));
        // Abort once the summary request arrived: no timer race decides the outcome.
        let deadline = Instant::now() + Duration::from_secs(30);
        while watcher.requests().len() == before {
            assert!(Instant::now() < deadline, "no summary request");
            std::thread::sleep(Duration::from_millis(5));
        }
        rpc.send(json!({"id": "a", "type": "abort"}));
        let answered = std::cell::Cell::new(0);
        let mut lines = rpc.until("both answers", |l| {
            if l["type"] == "response" && (l["id"] == "c" || l["id"] == "a") {
                answered.set(answered.get() + 1);
            }
            answered.get() == 2
        });
        if !lines.iter().any(|l| l["type"] == "compaction_end") {
            lines.extend(rpc.event("compaction_end"));
        }
        rpc.finish();
        let find = |pred: &dyn Fn(&Value) -> bool| lines.iter().find(|l| pred(l)).cloned().unwrap();
        let compact = find(&|l| l["type"] == "response" && l["id"] == "c");
        let abort = find(&|l| l["type"] == "response" && l["id"] == "a");
        let end = find(&|l| l["type"] == "compaction_end");
        let file = env.session_files().pop().unwrap();
        let compacted = read_jsonl(&file).iter().any(|e| e["type"] == "compaction");
        (compact, abort, end, compacted)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_abort_cancels_a_manual_compaction_as_pi_16() {
    let mut runs = vec![("ours", ours())];
    if let Some(wrapper) = ts16() {
        runs.push(("pi 1.6.0", ts16_pi(&wrapper)));
    }
    for (who, program) in runs {
        let (compact, abort, end, compacted) = abort_compaction(program).await;
        assert_eq!(compact["success"], false, "{who}: {compact}");
        assert_eq!(abort["success"], true, "{who}: {abort}");
        assert_eq!(end["reason"], "manual", "{who}: {end}");
        assert_eq!(end["aborted"], true, "{who}: {end}");
        assert!(!compacted, "{who}: a compaction entry was written");
    }
}
