//! Prompt templates expand their arguments as pi 1.6.0 does: quotes only at a word's start,
//! `\"` inside quotes, an empty `""` argument, words split at newlines, and the
//! `${N:-default}` / `${@:-default}` placeholders. The same RPC prompts through ours and
//! through 1.6.0 (`PI_TS16`) send the model the same user messages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::json;

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

const TEMPLATE: &str = "---\ndescription: echo its arguments\n---\n\
first=[$1] second=[$2] all=[$@] rest=[${@:2}] dflt=[${3:-none}] any=[${@:-nothing}]\n";

/// The prompts sent, each expanding the template.
const PROMPTS: [&str; 6] = [
    "/args don't stop",
    "/args say \"hi \\\"there\\\"\" now",
    "/args \"\" second",
    "/args one\ntwo three",
    "/args \"unterminated arg",
    "/args",
];

/// The user message each prompt sent to the model through `program`.
async fn sent(program: Command) -> Vec<String> {
    let server = MockServer::start().await.unwrap();
    for _ in PROMPTS {
        server.push(Script::text("ok"));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    std::fs::create_dir_all(env.agent.join("prompts")).unwrap();
    std::fs::write(env.agent.join("prompts/args.md"), TEMPLATE).unwrap();
    let env = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &[]);
        for (i, prompt) in PROMPTS.iter().enumerate() {
            rpc.call(
                &format!("p{i}"),
                json!({"type": "prompt", "message": prompt}),
            );
            rpc.event("agent_settled");
        }
        rpc.finish();
        env
    })
    .await
    .unwrap();
    drop(env);
    server
        .requests()
        .iter()
        .map(|request| support::rpc::last_user_text(&request.body))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_arguments_expand_as_in_16() {
    let our = sent(ours()).await;
    assert_eq!(our.len(), PROMPTS.len());
    assert_eq!(
        our[0].trim_end(),
        "first=[don't] second=[stop] all=[don't stop] rest=[stop] dflt=[none] any=[don't stop]"
    );
    assert_eq!(
        our[2].trim_end(),
        "first=[] second=[second] all=[ second] rest=[second] dflt=[none] any=[ second]"
    );
    assert_eq!(
        our[5].trim_end(),
        "first=[] second=[] all=[] rest=[] dflt=[none] any=[nothing]"
    );
    if let Some(wrapper) = ts16() {
        let their = sent(ts16_pi(&wrapper)).await;
        assert_eq!(our, their, "ours (left) and pi 1.6.0 (right) differ");
    }
}
