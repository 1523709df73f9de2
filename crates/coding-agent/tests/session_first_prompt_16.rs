//! A new session is written when its first prompt is sent (pi 0.99: sessions were lost when
//! pi exited before the first reply). pi is killed while the model is still answering the
//! first prompt; the session file must hold the prompt, as pi 1.6.0's does (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{ours, ts16, ts16_pi};

/// The entries (`type` or `message:<role>`) of the session files left after pi was killed
/// while the model answered.
async fn killed_during_first_reply(program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("never finished").with_fault(Fault::stall(1, 60_000)));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let server_seen = server.clone();
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &[]);
        rpc.call("p", json!({"type": "prompt", "message": "Remember this."}));
        // The request reached the model: the prompt has been sent.
        let deadline = Instant::now() + Duration::from_secs(30);
        while server_seen.requests().is_empty() {
            assert!(Instant::now() < deadline, "the model got no request");
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(rpc); // kills pi
        let files = env.session_files();
        let entries: Vec<Vec<String>> = files
            .iter()
            .map(|file| {
                read_jsonl(file)
                    .iter()
                    .map(|e| match e["type"].as_str().unwrap_or("?") {
                        "message" => {
                            format!("message:{}", e["message"]["role"].as_str().unwrap_or("?"))
                        }
                        other => other.to_owned(),
                    })
                    .collect()
            })
            .collect();
        json!(entries)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_prompt_is_on_disk_before_the_reply() {
    let ours = killed_during_first_reply(ours()).await;
    assert_eq!(
        ours,
        json!([[
            "session",
            "model_change",
            "thinking_level_change",
            "message:system",
            "message:user"
        ]]),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = killed_during_first_reply(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
