//! Small helpers the providers share.

use std::io::Write;
use std::sync::Arc;

use crate::event_stream::AssistantMessageEventStream;
use crate::request_body::{RequestBody, WriteBody};
use crate::types::{AssistantMessage, Context, Model, SimpleStreamOptions, StreamOptions};

/// The API key from the options or the provider's environment variable.
pub fn resolve_api_key(model: &Model, options: &StreamOptions) -> Option<String> {
    options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .or_else(|| crate::env_keys::get_env_api_key(&model.provider))
}

/// A stream that fails because no key is configured.
pub fn missing_key(model: &Model) -> AssistantMessageEventStream {
    let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    message.error_message = Some(format!("No API key for provider: {}", model.provider));
    AssistantMessageEventStream::failed(message)
}

/// The base options of `stream_simple`: `maxTokens` (the model's by default) fitted into
/// what the context window leaves, as pi-ai 1.6's `buildBaseOptions`.
pub fn base_options(
    model: &Model,
    context: &Context,
    options: &SimpleStreamOptions,
) -> StreamOptions {
    let mut base = options.stream.clone();
    let wanted = base
        .max_tokens
        .filter(|m| *m > 0)
        .unwrap_or(model.max_tokens);
    if wanted > 0 {
        base.max_tokens = Some(super::context_fit::clamp_max_tokens_to_context(
            model, context, wanted,
        ));
    }
    base
}

/// Serializes a request body, passing it through the payload hook when one is set.
pub fn encode_body<T: serde::Serialize>(
    model: &Model,
    body: &T,
    options: &StreamOptions,
) -> Result<crate::request_body::RequestBody, String> {
    let encoded = match options.payload_hook() {
        None => to_vec_exact(body),
        Some(hook) => serde_json::to_value(body).and_then(|mut value| {
            hook(model, &mut value);
            to_vec_exact(&value)
        }),
    };
    encoded
        .map(crate::request_body::RequestBody::from)
        .map_err(|e| format!("Could not encode the request: {e}"))
}

/// Writes a request body's JSON from what it is built of.
pub type WriteJson<P> = fn(&P, &mut dyn Write) -> serde_json::Result<()>;

/// The body `write` makes from `parts`, which own what it borrows: a long one is written
/// while it is sent (see [`RequestBody`]), so the transcript is not copied into a buffer.
/// With a payload hook the body is built whole, as JSON the hook can change.
pub fn written_body<P: Send + Sync + 'static>(
    model: &Model,
    options: &StreamOptions,
    parts: P,
    write: WriteJson<P>,
) -> Result<RequestBody, String> {
    let failed = |e: &dyn std::fmt::Display| format!("Could not encode the request: {e}");
    if let Some(hook) = options.payload_hook() {
        let mut bytes = Vec::new();
        write(&parts, &mut bytes).map_err(|e| failed(&e))?;
        let mut value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| failed(&e))?;
        drop(bytes);
        hook(model, &mut value);
        return to_vec_exact(&value)
            .map(RequestBody::from)
            .map_err(|e| failed(&e));
    }
    let parts = Arc::new(parts);
    let writer: WriteBody = Arc::new(move |out| write(&parts, out).map_err(std::io::Error::from));
    RequestBody::from_writer(writer).map_err(|e| failed(&e))
}

/// The system prompt and tools of a context, without its messages: what a body built from
/// prepared messages still reads of it.
pub fn frame_of(context: &Context) -> Context {
    Context {
        system_prompt: context.system_prompt.clone(),
        messages: Vec::new(),
        tools: context.tools.clone(),
        system_messages: context.system_messages.clone(),
    }
}

/// The JSON of `body` in a buffer of exactly its size: measured in a first pass, so that a
/// body carrying a whole transcript is not grown by doubling (copies, and a peak of one
/// and a half times its size).
fn to_vec_exact<T: serde::Serialize>(body: &T) -> Result<Vec<u8>, serde_json::Error> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let (measured, left_out) =
        crate::types::stored_text::measuring(|| serde_json::to_writer(&mut count, body));
    measured?;
    let mut out = Vec::with_capacity(count.0 + left_out);
    serde_json::to_writer(&mut out, body)?;
    Ok(out)
}

/// Joins a base URL and a path with exactly one slash.
pub fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// The longest `prompt_cache_key` OpenAI accepts, in characters.
const PROMPT_CACHE_KEY_LIMIT: usize = 64;

/// A session id as a `prompt_cache_key`: its first 64 characters, OpenAI's limit (pi-ai
/// 1.6's `clampOpenAIPromptCacheKey`), so a long `--session-id` is not rejected.
pub fn clamp_prompt_cache_key(key: &str) -> &str {
    match key.char_indices().nth(PROMPT_CACHE_KEY_LIMIT) {
        Some((end, _)) => &key[..end],
        None => key,
    }
}

/// Adds `diagnostic` to the diagnostics of a final event's message (pi-ai 1.6's
/// `appendAssistantMessageDiagnostic`); other events are left alone.
pub(crate) fn attach_diagnostic(
    event: &mut crate::types::AssistantMessageEvent,
    diagnostic: serde_json::Value,
) {
    use crate::types::AssistantMessageEvent;
    let message = match event {
        AssistantMessageEvent::Done { message, .. } => message,
        AssistantMessageEvent::Error { error, .. } => error,
        _ => return,
    };
    let message = Arc::make_mut(message);
    match &mut message.diagnostics {
        Some(serde_json::Value::Array(list)) => list.push(diagnostic),
        _ => message.diagnostics = Some(serde_json::Value::Array(vec![diagnostic])),
    }
}

#[cfg(test)]
mod tests {
    use super::clamp_prompt_cache_key;

    #[test]
    fn prompt_cache_keys_keep_64_characters_not_bytes() {
        assert_eq!(clamp_prompt_cache_key("short"), "short");
        let long = "é".repeat(70);
        let clamped = clamp_prompt_cache_key(&long);
        assert_eq!(clamped.chars().count(), 64);
        assert!(long.starts_with(clamped));
        let exact = "a".repeat(64);
        assert_eq!(clamp_prompt_cache_key(&exact), exact);
    }
}
