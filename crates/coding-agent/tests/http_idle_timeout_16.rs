//! `httpIdleTimeoutMs` on an OpenAI-compatible server other than Codex (pi 0.78.1: it was
//! not respected there, e.g. llama.cpp): a reply that stalls 2.5 s mid-stream is cut under a
//! 500 ms limit, and runs to its end with `0` or `"disabled"`. `pi -p` against mock-llm;
//! ours and pi 1.6.0 (`PI_TS16`) must end the same way.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::Env;
use support::ts16::{pis, program, run};

const REPLY: &str = "A reply that stalls halfway and then goes on.";

fn stalled_run(wrapper: &Option<PathBuf>, limit: Value) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(
        Script::text(REPLY)
            .with_chunk_size(8)
            .with_fault(Fault::stall(2, 2_500)),
    );
    let settings = json!({"httpIdleTimeoutMs": limit, "retry": {"enabled": false}});
    let env = Env::new(&server, 128_000, settings);
    let out = run(&env, program(wrapper), &["-p", "hi", "--no-session"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    json!({
        "code": out.status.code(),
        "completed": stdout.trim() == REPLY,
        "requests": server.requests().len(),
    })
}

#[test]
fn the_idle_limit_cuts_a_stalled_stream_and_zero_or_disabled_turns_it_off_as_16() {
    for (name, wrapper) in pis() {
        let cut = stalled_run(&wrapper, json!(500));
        assert_eq!(
            cut,
            json!({"code": 1, "completed": false, "requests": 1}),
            "{name}: a 500 ms limit cuts the stall"
        );
        for off in [json!(0), json!("disabled")] {
            let whole = stalled_run(&wrapper, off.clone());
            assert_eq!(
                whole,
                json!({"code": 0, "completed": true, "requests": 1}),
                "{name}: {off} turns the limit off"
            );
        }
    }
}
