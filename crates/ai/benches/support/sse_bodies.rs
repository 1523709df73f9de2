//! Recorded-shape SSE bodies shared by the throughput benchmark and the side-by-side
//! comparison client: a long assistant turn (~64 KB of text in ~12-byte deltas, then a
//! `write` call carrying a 48 KB file in ~8-byte argument fragments).

/// The model both sides stream as (prices set so costs are computed).
pub fn bench_model(api: &str, base_url: &str) -> pi_ai::Model {
    pi_ai::Model {
        id: "bench-model".into(),
        name: "Bench".into(),
        api: api.into(),
        provider: "bench".into(),
        base_url: base_url.into(),
        reasoning: false,
        thinking_level_map: None,
        input: vec![pi_ai::InputKind::Text],
        cost: pi_ai::ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        },
        context_window: 200_000,
        max_tokens: 32_000,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

/// Deterministic prose split into `piece`-byte deltas (on char boundaries).
pub fn pieces(total: usize, piece: usize) -> Vec<String> {
    let words = [
        "stream ", "token ", "delta ", "agent ", "über ", "naïve ", "tool ", "model ",
    ];
    let mut text = String::new();
    let mut i = 0;
    while text.len() < total {
        text.push_str(words[i % words.len()]);
        i += 1;
    }
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if current.len() >= piece {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// An OpenAI Chat Completions body: text deltas, then one tool call with large arguments.
pub fn openai_body(text: &[String], args: &[String]) -> Vec<u8> {
    let mut out = String::new();
    let head = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"bench-model","choices":["#;
    out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n"));
    for piece in text {
        out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"content\":{}}},\"finish_reason\":null}}]}}\n\n", json_str(piece)));
    }
    out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{{\"name\":\"write\",\"arguments\":\"\"}}}}]}},\"finish_reason\":null}}]}}\n\n"));
    for piece in args {
        out.push_str(&format!("data: {head}{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":{}}}}}]}},\"finish_reason\":null}}]}}\n\n", json_str(piece)));
    }
    out.push_str(&format!(
        "data: {head}{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"
    ));
    out.push_str("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":5000,\"total_tokens\":6000}}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

/// An Anthropic Messages body with the same content.
pub fn anthropic_body(text: &[String], args: &[String]) -> Vec<u8> {
    let mut out = String::new();
    let mut event =
        |name: &str, data: String| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    event("message_start", r#"{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}"#.into());
    event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .into(),
    );
    for piece in text {
        event(
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{}}}}}"#,
                json_str(piece)
            ),
        );
    }
    event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    );
    event("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}"#.into());
    for piece in args {
        event(
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
                json_str(piece)
            ),
        );
    }
    event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":1}"#.into(),
    );
    event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5000}}"#.into());
    event("message_stop", r#"{"type":"message_stop"}"#.into());
    out.into_bytes()
}

/// The argument fragments of the `write` call.
pub fn write_call_fragments() -> Vec<String> {
    let content = pieces(48 * 1024, 40).concat();
    let args_json = serde_json::json!({"path": "src/generated.rs", "content": content}).to_string();
    let mut args = Vec::new();
    let mut current = String::new();
    for ch in args_json.chars() {
        current.push(ch);
        if current.len() >= 8 {
            args.push(std::mem::take(&mut current));
        }
    }
    args.push(current);
    args
}

/// The text deltas.
pub fn text_fragments() -> Vec<String> {
    pieces(64 * 1024, 12)
}
