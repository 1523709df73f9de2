//! Byte-level framing: CRLF line endings and tiny writes decode to the same events.

mod common;

use common::{anthropic_request, fetch_raw, openai_request, parse_sse};
use mock_llm::{Item, LineEnding, MockServer, Script};
use serde_json::json;

fn script() -> Script {
    Script::new(vec![
        Item::thinking("ünïcødé thinking 🧠"),
        Item::text("multi-byte: é, 中文, 🎉 done"),
        Item::ToolCall {
            id: Some("call_fixed".into()),
            name: "write".into(),
            arguments: json!({"path": "f", "content": "ß∂ƒ"}),
        },
    ])
    .with_chunk_size(3)
    .with_response_id("fixed")
}

fn strip_created(text: &str) -> String {
    // `created` may differ between responses by a second; blank it out.
    let events = parse_sse(text);
    events
        .iter()
        .map(|e| {
            let mut json: serde_json::Value = match serde_json::from_str(&e.data) {
                Ok(json) => json,
                Err(_) => return e.data.clone(),
            };
            if let Some(obj) = json.as_object_mut() {
                obj.remove("created");
            }
            format!("{:?}|{json}", e.event)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn crlf_and_small_writes_decode_identically() {
    let server = MockServer::start().await.unwrap();
    for (url, request) in [
        (
            format!("{}/chat/completions", server.openai_base_url()),
            openai_request("q"),
        ),
        (
            format!("{}/v1/messages", server.anthropic_base_url()),
            anthropic_request("q"),
        ),
    ] {
        server.push(script());
        server.push(
            script()
                .with_line_ending(LineEnding::Crlf)
                .with_write_chunk_bytes(1),
        );
        server.push(
            script()
                .with_line_ending(LineEnding::Crlf)
                .with_write_chunk_bytes(7),
        );
        let (plain, _) = fetch_raw(&url, &request).await;
        let (crlf_1, chunks_1) = fetch_raw(&url, &request).await;
        let (crlf_7, _) = fetch_raw(&url, &request).await;

        let plain = String::from_utf8(plain).unwrap();
        assert!(!plain.contains('\r'));
        let crlf_1 = String::from_utf8(crlf_1).unwrap();
        assert!(crlf_1.contains("\r\n\r\n"));
        assert_eq!(crlf_1.matches('\n').count(), crlf_1.matches("\r\n").count());
        assert_eq!(crlf_1.replace("\r\n", "\n").len(), plain.len());
        assert!(chunks_1 > 1, "body arrived in several chunks");
        let crlf_7 = String::from_utf8(crlf_7).unwrap();

        assert_eq!(strip_created(&plain), strip_created(&crlf_1));
        assert_eq!(strip_created(&plain), strip_created(&crlf_7));
    }
}
