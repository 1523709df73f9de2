//! A Responses request to OpenAI with a Sign in with ChatGPT token (not an `sk-` key) leaves
//! out what that endpoint refuses, as pi-ai 1.6 does: the cache retention, the output cap
//! and the temperature. The same request with an API key keeps them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_ai::providers::openai_responses;
use pi_ai::{CacheRetention, Context, Message, StreamOptions, UserMessage};
use serde_json::Value;

fn body(api_key: &str, base_url: &str) -> Value {
    let mut model = pi_ai::get_model("openai", "gpt-5.5").expect("gpt-5.5 is in the catalog");
    model.base_url = base_url.into();
    let context = Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::User(UserMessage::text("hi"))],
        tools: Vec::new(),
        ..Default::default()
    };
    let options = StreamOptions {
        max_tokens: Some(4096),
        temperature: Some(0.5),
        cache_retention: Some(CacheRetention::Long),
        session_id: Some("session-1".into()),
        ..Default::default()
    };
    let request = openai_responses::build_request(&model, &context, &options, api_key).unwrap();
    serde_json::from_slice(request.body.bytes().expect("a short body is whole")).unwrap()
}

#[test]
fn a_chatgpt_token_leaves_out_retention_output_cap_and_temperature() {
    let signed_in = body("eyJhbGciOiJub25lIn0.e30.sig", "https://api.openai.com/v1");
    for field in ["prompt_cache_retention", "max_output_tokens", "temperature"] {
        assert!(signed_in.get(field).is_none(), "{field} in {signed_in:#}");
    }
    assert_eq!(signed_in["prompt_cache_key"], "session-1");
    let keyed = body("sk-test", "https://api.openai.com/v1");
    assert_eq!(keyed["prompt_cache_retention"], "24h", "{keyed:#}");
    assert_eq!(keyed["max_output_tokens"], 4096);
    assert_eq!(keyed["temperature"], 0.5);
    // Another endpoint (a proxy) is not the ChatGPT one, whatever the key.
    let proxied = body("eyJhbGciOiJub25lIn0.e30.sig", "http://127.0.0.1:9/v1");
    assert_eq!(proxied["max_output_tokens"], 4096);
}
