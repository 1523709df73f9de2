//! Amazon Bedrock requests as pi 1.6.0 signs and addresses them: the same print-mode
//! prompt through ours and through 1.6.0 (`PI_TS16`) against the mock, with SigV4 keys in
//! the environment, and the parts of the requests each case is about compared: the
//! region an inference-profile ARN names, custom headers signed with the request, SigV4
//! for a custom model id, and Claude's output cap.
//! Without `PI_TS16` only ours runs, against the values written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::Script;
use support::errors::BEDROCK_SIGV4;
use support::shapes::{Session, compare, model};

/// `Credential=<key>/<date>/<region>/bedrock/aws4_request`: the region, and the signed
/// header names, of a SigV4 `authorization` header.
fn signature_scope(headers: &Value) -> (String, Vec<String>) {
    let auth = headers["authorization"].as_str().unwrap_or_default();
    let field = |name: &str| {
        auth.split([' ', ','])
            .find_map(|part| part.strip_prefix(name))
            .unwrap_or_default()
            .to_owned()
    };
    let region = field("Credential=")
        .split('/')
        .nth(2)
        .unwrap_or_default()
        .to_owned();
    let signed = field("SignedHeaders=")
        .split(';')
        .map(str::to_owned)
        .collect();
    (region, signed)
}

/// A one-prompt session on `model`.
fn one_prompt(model: Value) -> Session<'static> {
    Session {
        wire: &BEDROCK_SIGV4,
        model,
        scripts: vec![Script::text("Signed.")],
        runs: vec![vec!["-p", "Hello."]],
        files: vec![],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inference_profile_arn_signs_for_its_own_region_as_in_16() {
    // AWS_REGION is us-east-1; the ARN names eu-west-1.
    let arn = "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-parity";
    let region = compare(&one_prompt(model(arn, json!({"reasoning": false}))), |r| {
        Value::from(signature_scope(&r[0].0).0)
    })
    .await;
    assert_eq!(region, "eu-west-1");
    // A plain model id signs for the configured region.
    let region = compare(
        &one_prompt(model(
            "anthropic.claude-parity",
            json!({"reasoning": false}),
        )),
        |r| Value::from(signature_scope(&r[0].0).0),
    )
    .await;
    assert_eq!(region, "us-east-1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_headers_reach_the_signed_bedrock_request_as_in_16() {
    let model = model(
        "anthropic.claude-parity",
        json!({"reasoning": false, "headers": {"x-parity-model": "from-model"}}),
    );
    let sent = compare(&one_prompt(model), |r| {
        let headers = &r[0].0;
        let (_, signed) = signature_scope(headers);
        json!({"value": headers["x-parity-model"],
               "signed": signed.iter().any(|h| h == "x-parity-model")})
    })
    .await;
    assert_eq!(sent, json!({"value": "from-model", "signed": true}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_claude_model_is_signed_and_gets_its_output_cap_as_in_16() {
    // A custom model id with ambient keys is signed with SigV4, and Claude is sent its
    // output cap (Bedrock's default would cut replies at 4096 tokens).
    let sent = compare(
        &one_prompt(model(
            "anthropic.claude-parity",
            json!({"reasoning": false}),
        )),
        |r| {
            let (headers, body) = &r[0];
            let auth = headers["authorization"].as_str().unwrap_or_default();
            json!({"sigv4": auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDPARITYEXAMPLE/"),
                   "inferenceConfig": body["inferenceConfig"]})
        },
    )
    .await;
    assert_eq!(
        sent,
        json!({"sigv4": true, "inferenceConfig": {"maxTokens": 16384}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blank_tool_results_and_empty_argument_keys_are_replayed_as_in_16() {
    // Reading an empty file gives a blank tool result; the call's arguments carry empty
    // keys, at the top and nested.
    let call = Script::tool_call(
        "read",
        json!({"path": "/dev/null", "": "top", "opts": {"": 1, "keep": [{"": 2, "k": 3}]}}),
    );
    let session = Session {
        scripts: vec![call, Script::text("Done.")],
        ..one_prompt(model(
            "anthropic.claude-parity",
            json!({"reasoning": false}),
        ))
    };
    let messages = compare(&session, |r| r[1].1["messages"].clone()).await;
    let tool_use = &messages[1]["content"][0]["toolUse"];
    assert_eq!(
        tool_use["input"],
        json!({"path": "/dev/null", "opts": {"keep": [{"k": 3}]}}),
        "{messages:#}"
    );
    assert_eq!(
        messages[2]["content"][0]["toolResult"]["content"],
        json!([{"text": "<empty>"}]),
        "{messages:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_5_models_get_cache_points_as_in_16() {
    for id in ["anthropic.claude-fable-5", "anthropic.claude-sonnet-5"] {
        let cache_points = compare(
            &one_prompt(model(id, json!({"reasoning": false}))),
            |r| {
                let body = &r[0].1;
                json!({"system": body["system"].as_array().map(|s| s.len()),
                       "lastUser": body["messages"][0]["content"].as_array().and_then(|c| c.last()).cloned()})
            },
        )
        .await;
        assert_eq!(
            cache_points["lastUser"],
            json!({"cachePoint": {"type": "default"}}),
            "{id}: {cache_points:#}"
        );
    }
}
