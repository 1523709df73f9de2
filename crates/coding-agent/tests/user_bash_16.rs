//! User bash commands over RPC as pi 1.6.0 runs them: two commands running at once are both
//! stopped by one `abort_bash` (pi 0.83); colour codes, hyperlinks, other control
//! characters and carriage returns leave the output and its streamed chunks, also a code
//! split across two writes (pi 1.1.0). Our `pi` and pi 1.6.0 (`PI_TS16`) run the same
//! steps.
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

/// A command whose output is coloured, linked, has a backspace and CRLF line ends, and
/// writes half a colour code, then (after a pause, so it is read as another chunk) the rest.
const COLOURED: &str = r"printf '\033[31mred\033[0m \033]8;;http://x\007link\033]8;;\007 b\bs\r\n'; printf 'cut \033[3'; sleep 0.3; printf '2mgreen\033[0m\n'";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_output_loses_escape_codes_even_split_across_chunks_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        let mut rpc = Rpc::start_program(&env, program(&wrapper), &[]);
        let answer = rpc.call("b", json!({"type": "bash", "command": COLOURED}));
        assert_eq!(answer["success"], true, "{who}: {answer}");
        let streamed: String = rpc
            .seen
            .iter()
            .filter(|l| l["type"] == "bash_execution_update")
            .filter_map(|l| l["delta"].as_str())
            .collect();
        seen.push((
            who,
            json!({"output": answer["data"]["output"], "streamed": streamed}),
        ));
        rpc.finish();
    }
    assert_eq!(
        seen[0].1,
        json!({"output": "red link bs\ncut green\n", "streamed": "red link bs\ncut green\n"})
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
}
