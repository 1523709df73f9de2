//! pi 1.6.0's actionable boundaries, `turn_end` and `agent_before_settle`: handlers
//! propose session entries and a continuation. One RPC session per case through ours and
//! through pi 1.6.0 (`PI_TS16`) on one mock: the run's lifecycle, what each request
//! carried, the session's entries and what the handlers saw must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

/// The extension: `BOUNDARY_CASE` picks what its handlers propose; each handler logs what
/// it saw to `$HOOK_LOG`.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.HOOK_LOG, JSON.stringify(entry) + "\n");
const seen = (event) => ({
  hook: event.type,
  outcome: event.outcome,
  hasEntryId: typeof event.messageEntryId === "string",
  toolResultEntryIds: event.toolResultEntryIds?.length,
  entries: event.entries,
  continue: event.continue,
  canContinue: event.context?.canContinue,
  contextRoles: event.context?.llmMessages?.map((m) => m.role),
  pending: event.context?.pendingMessages?.length,
});
export default function (pi) {
  const which = process.env.BOUNDARY_CASE;
  let done = false;
  pi.on("turn_end", (event) => {
    log(seen(event));
    if (done) return;
    if (which === "replace" && event.outcome === "completed" && event.toolResults.length === 0) {
      done = true;
      return {
        entries: [
          ...event.entries,
          { type: "context_edit", targetId: event.messageEntryId, replacement: null },
          { type: "custom_message", customType: "replacement-instruction", content: "Answer again using the persisted user request.", display: false },
        ],
        continue: true,
      };
    }
    if (which === "stuck") {
      done = true;
      return { continue: true };
    }
    if (which === "invalid") {
      done = true;
      return { entries: [{ type: "context_edit", targetId: "no-such-entry", replacement: null }], continue: true };
    }
    if (which === "note") {
      done = true;
      // pi 1.6.0 appends nothing for a draft of another type (`label`) and says nothing.
      return { entries: [{ type: "custom", customType: "turn-note", data: { turn: event.turnIndex } }, { type: "label", targetId: event.messageEntryId, label: "x" }] };
    }
  });
  let started = 0;
  pi.on("agent_start", () => {
    started += 1;
  });
  pi.on("agent_settled", (_event, ctx) => {
    if (which !== "settled") return;
    log({ hook: "agent_settled#1", idle: ctx.isIdle(), started });
    if (!done) {
      done = true;
      pi.sendUserMessage("again");
    }
  });
  pi.on("agent_settled", (_event, ctx) => {
    if (which !== "settled") return;
    log({ hook: "agent_settled#2", idle: ctx.isIdle(), started });
  });
  pi.on("agent_before_settle", (event) => {
    log(seen(event));
    if (which !== "review" || done) return;
    done = true;
    return {
      entries: [...event.entries, { type: "custom_message", customType: "review-reminder", content: "Review the final diff before replying.", display: false }],
      continue: true,
    };
  });
}
"#;

/// One case: the lifecycle events, extension errors, the user texts and roles of each
/// request, the session's entries (type and custom type) and the handlers' log.
async fn session(mut program: Command, case: &'static str, replies: usize) -> Value {
    let server = MockServer::start().await.unwrap();
    for i in 0..replies {
        server.push(Script::text(format!("answer {i}")));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("boundary-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("hooks.jsonl");
    program.env("BOUNDARY_CASE", case).env("HOOK_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let (events, entries, hooks) = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || {
            let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
            let answer = rpc.call("p", json!({"type": "prompt", "message": "start"}));
            assert_eq!(answer["success"], true, "{answer:#?}");
            // Every run settles once (the case that asks for a second run from
            // `agent_settled` settles twice); counted by the lines read, not by the
            // requests, which a fast second run makes before its line is read.
            let runs = if case == "settled" { 2 } else { 1 };
            let settled = std::cell::Cell::new(0);
            rpc.until("the runs' end", |l| {
                if l["type"] == "agent_settled" {
                    settled.set(settled.get() + 1);
                }
                settled.get() >= runs
            });
            assert!(server.requests().len() >= replies);
            let events: Vec<Value> = rpc
                .seen
                .iter()
                .filter_map(|l| match l["type"].as_str()? {
                    kind @ ("agent_start" | "agent_end" | "agent_settled" | "turn_start") => {
                        Some(Value::from(kind))
                    }
                    "entry_appended" => Some(json!(format!(
                        "entry_appended:{}",
                        l["entry"]["type"].as_str().unwrap_or("?")
                    ))),
                    "extension_error" => Some(json!({"error": l["error"], "event": l["event"]})),
                    _ => None,
                })
                .collect();
            rpc.finish();
            let file = env.session_files().pop().unwrap();
            let entries: Vec<String> = support::rpc::read_jsonl(&file)
                .iter()
                .skip(1)
                .map(|e| {
                    let kind = e["type"].as_str().unwrap_or("?");
                    match (e["customType"].as_str(), e["message"]["role"].as_str()) {
                        (Some(custom), _) => format!("{kind}:{custom}"),
                        (None, Some(role)) => format!("{kind}:{role}"),
                        _ => kind.to_owned(),
                    }
                })
                .filter(|e| !matches!(e.as_str(), "model_change" | "thinking_level_change"))
                .collect();
            let hooks: Vec<Value> = std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            drop(env);
            (events, entries, hooks)
        })
        .await
        .unwrap()
    };
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| {
            let roles: Vec<&str> = r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|m| m["role"].as_str())
                .collect();
            json!({"roles": roles, "texts": support::rpc::user_texts(&r.body)})
        })
        .collect();
    json!({"events": events, "requests": requests, "entries": entries, "hooks": hooks})
}

/// Runs `case` through ours, checks `expect` on it, then compares with pi 1.6.0.
async fn compare(case: &'static str, replies: usize, expect: impl Fn(&Value)) {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = session(Command::new(env!("CARGO_BIN_EXE_pi")), case, replies).await;
    expect(&ours);
    if let Some(wrapper) = ts16() {
        let theirs = session(ts16_pi(&wrapper), case, replies).await;
        for key in ["events", "requests", "entries", "hooks"] {
            assert_eq!(ours[key], theirs[key], "{case} {key}: ours, then pi 1.6.0");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_before_settle_appends_a_reminder_and_continues() {
    compare("review", 2, |ours| {
        assert_eq!(
            ours["requests"][1]["texts"],
            json!(["start", "Review the final diff before replying."]),
            "{ours:#}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_end_replaces_the_reply_and_asks_again() {
    compare("replace", 2, |ours| {
        assert_eq!(
            ours["requests"][1]["roles"],
            json!(["system", "user", "user"]),
            "{ours:#}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_with_nothing_to_answer_is_reported() {
    compare("stuck", 1, |ours| {
        assert_eq!(ours["requests"].as_array().unwrap().len(), 1, "{ours:#}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_entries_are_reported_and_nothing_is_appended() {
    compare("invalid", 1, |ours| {
        assert_eq!(ours["requests"].as_array().unwrap().len(), 1, "{ours:#}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_entry_from_turn_end_is_stored() {
    compare("note", 1, |ours| {
        assert!(
            ours["entries"]
                .as_array()
                .unwrap()
                .contains(&json!("custom:turn-note")),
            "{ours:#}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_asked_for_from_agent_settled_waits_for_every_settled_handler() {
    compare("settled", 2, |ours| {
        let settled: Vec<&Value> = ours["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| {
                h["hook"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("agent_settled")
            })
            .collect();
        assert_eq!(
            settled[..2],
            [
                &json!({"hook": "agent_settled#1", "idle": true, "started": 1}),
                &json!({"hook": "agent_settled#2", "idle": true, "started": 1}),
            ],
            "{ours:#}"
        );
    })
    .await;
}
