//! Scripted model replies that several tests share.
#![allow(dead_code)]

use serde_json::json;

use mock_llm::{Fault, Script, ScriptUsage};

/// Usage with only input and output tokens.
pub fn usage(input: u64, output: u64) -> ScriptUsage {
    ScriptUsage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        reasoning: 0,
    }
}

/// OpenAI's answer that the context is too long (HTTP 400, `context_length_exceeded`).
pub fn context_overflow() -> Script {
    Script::default().with_fault(Fault::HttpError {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        body: Some(
            json!({"error": {"message": "This model's maximum context length is 4000 tokens. However, your messages resulted in 9000 tokens.",
                             "type": "invalid_request_error", "code": "context_length_exceeded"}})
            .to_string(),
        ),
    })
}
