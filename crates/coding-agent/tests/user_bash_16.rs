//! User bash commands over RPC as pi 1.6.0 runs them: two commands running at once are both
//! stopped by one `abort_bash` (pi 0.83). Our `pi` and pi 1.6.0 (`PI_TS16`) run the same
//! steps; each command prints a line, then sleeps for longer than the test may take.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashSet;

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_bash_stops_every_running_command_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        let mut rpc = Rpc::start_program(&env, program(&wrapper), &[]);
        for id in ["b1", "b2"] {
            rpc.send(json!({"id": id, "type": "bash", "command": format!("echo started {id}; sleep 600")}));
        }
        // Both run: each has printed its line.
        let started: std::cell::RefCell<HashSet<String>> = Default::default();
        rpc.until("both commands' output", |l| {
            if l["type"] == "bash_execution_update"
                && let Some(delta) = l["delta"].as_str()
            {
                for id in ["b1", "b2"] {
                    if delta.contains(&format!("started {id}")) {
                        started.borrow_mut().insert(id.to_owned());
                    }
                }
            }
            started.borrow().len() == 2
        });
        let aborted = rpc.call("a", json!({"type": "abort_bash"}));
        assert_eq!(aborted["success"], true, "{who}: {aborted}");
        let mut answers: Vec<Value> = Vec::new();
        for id in ["b1", "b2"] {
            match rpc
                .seen
                .iter()
                .find(|l| l["type"] == "response" && l["id"] == id)
            {
                Some(answer) => answers.push(answer.clone()),
                None => answers.push(rpc.response(id)),
            }
        }
        for answer in answers {
            assert_eq!(answer["success"], true, "{who}: {answer}");
            assert_eq!(answer["data"]["cancelled"], true, "{who}: {answer}");
        }
        rpc.finish();
    }
}
