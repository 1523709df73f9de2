//! Decoding Mistral's chat completion chunks (`data: {…}` … `data: [DONE]`) into message
//! updates: text as strings or `text` chunks, reasoning as `thinking` chunks, tool calls
//! usually whole in one delta.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use sse_stream::Sse;

use super::ids::derive_tool_call_id;
use crate::assembler::Assembler;
use crate::models::calculate_cost;
use crate::sse::{Flow, SseDecoder, parse_json};
use crate::types::{Model, StopReason, ThinkingContent, Usage};

/// One streamed `chat.completion.chunk`, or an error object (`{"object":"error",…}`).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    object: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<UsageInfo>,
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    /// Error objects only.
    #[serde(default)]
    message: Option<Value>,
    /// Error objects only (`{"detail": …}` of a validation error).
    #[serde(default)]
    detail: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<DeltaContent<'a>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

/// `delta.content`: a string, or an array of content chunks.
enum DeltaContent<'a> {
    Text(Cow<'a, str>),
    Items(Vec<ContentItem<'a>>),
}

/// One element of a content array: a chunk object (or, leniently, a bare string).
enum ContentItem<'a> {
    Text(Cow<'a, str>),
    Chunk(ContentChunk<'a>),
}

/// A content chunk; only `text` and `thinking` chunks carry anything pi keeps.
#[derive(Deserialize)]
struct ContentChunk<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Vec<ThinkingPart<'a>>>,
}

/// A part of a thinking chunk: text (or a reference, which has none).
#[derive(Deserialize)]
struct ThinkingPart<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Arguments<'a>>,
}

/// `function.arguments`: JSON text (a piece of it when streamed), or an object.
enum Arguments<'a> {
    Text(Cow<'a, str>),
    Json(Value),
}

#[derive(Deserialize, Default)]
struct UsageInfo {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    /// Where Mistral servers report the prompt tokens read from the cache, in the spellings
    /// pi-ai 1.6 reads (`getMistralCachedPromptTokens`), first present wins.
    #[serde(default, rename = "promptTokensDetails")]
    prompt_tokens_details_camel: Option<CachedDetails>,
    #[serde(default)]
    prompt_tokens_details: Option<CachedDetails>,
    #[serde(default, rename = "promptTokenDetails")]
    prompt_token_details_camel: Option<CachedDetails>,
    #[serde(default)]
    prompt_token_details: Option<CachedDetails>,
    #[serde(default, rename = "numCachedTokens")]
    num_cached_tokens_camel: Option<Value>,
    #[serde(default)]
    num_cached_tokens: Option<Value>,
}

/// A usage detail object holding cached prompt tokens.
#[derive(Deserialize, Default)]
struct CachedDetails {
    #[serde(default, rename = "cachedTokens")]
    cached_tokens_camel: Option<Value>,
    #[serde(default)]
    cached_tokens: Option<Value>,
}

impl CachedDetails {
    fn value(&self) -> Option<&Value> {
        let camel = self.cached_tokens_camel.as_ref().filter(|v| !v.is_null());
        camel.or(self.cached_tokens.as_ref().filter(|v| !v.is_null()))
    }
}

impl UsageInfo {
    /// The cached prompt tokens, at most `prompt` (0 when absent or not a number).
    fn cached_tokens(&self, prompt: u64) -> u64 {
        let present = |v: &Option<Value>| v.as_ref().filter(|v| !v.is_null()).cloned();
        let detail = |d: &Option<CachedDetails>| d.as_ref().and_then(|d| d.value()).cloned();
        let raw = detail(&self.prompt_tokens_details_camel)
            .or_else(|| detail(&self.prompt_tokens_details))
            .or_else(|| detail(&self.prompt_token_details_camel))
            .or_else(|| detail(&self.prompt_token_details))
            .or_else(|| present(&self.num_cached_tokens_camel))
            .or_else(|| present(&self.num_cached_tokens));
        let cached = raw
            .and_then(|v| v.as_f64())
            .filter(|f| f.is_finite())
            .map_or(0, |f| f.max(0.0) as u64);
        cached.min(prompt)
    }
}

/// A value that is a string or, for some types, an array or an object.
trait StrOrStructured<'de>: Sized {
    fn from_text(text: Cow<'de, str>) -> Self;

    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        let _ = seq;
        Err(de::Error::invalid_type(de::Unexpected::Seq, &"a string"))
    }

    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        let _ = map;
        Err(de::Error::invalid_type(de::Unexpected::Map, &"a string"))
    }
}

/// The visitor of a [`StrOrStructured`] value (borrows strings without escapes).
struct StrOr<T>(PhantomData<T>);

impl<'de, T: StrOrStructured<'de>> Visitor<'de> for StrOr<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, an array or an object")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<T, E> {
        Ok(T::from_text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok(T::from_text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<T, E> {
        Ok(T::from_text(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::from_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

fn str_or<'de, D: Deserializer<'de>, T: StrOrStructured<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(StrOr(PhantomData))
}

impl<'de: 'a, 'a> StrOrStructured<'de> for DeltaContent<'a> {
    fn from_text(text: Cow<'de, str>) -> Self {
        DeltaContent::Text(text)
    }

    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(DeltaContent::Items)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for DeltaContent<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        str_or(deserializer)
    }
}

impl<'de: 'a, 'a> StrOrStructured<'de> for ContentItem<'a> {
    fn from_text(text: Cow<'de, str>) -> Self {
        ContentItem::Text(text)
    }

    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        ContentChunk::deserialize(de::value::MapAccessDeserializer::new(map))
            .map(ContentItem::Chunk)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ContentItem<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        str_or(deserializer)
    }
}

impl<'de: 'a, 'a> StrOrStructured<'de> for Arguments<'a> {
    fn from_text(text: Cow<'de, str>) -> Self {
        Arguments::Text(text)
    }

    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Arguments::Json)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Arguments<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        str_or(deserializer)
    }
}

/// Mistral usage as pi-ai 1.6 reads it: `prompt_tokens` counts all input, of which the
/// cached part is reported as cache reads (Mistral's prompt caching writes for free).
fn parse_usage(raw: &UsageInfo, model: &Model) -> Usage {
    let prompt = raw.prompt_tokens.unwrap_or(0);
    let cached = raw.cached_tokens(prompt);
    let output = raw.completion_tokens.unwrap_or(0);
    let mut usage = Usage::from_tokens(prompt - cached, output, cached, 0);
    if let Some(total) = raw.total_tokens.filter(|t| *t > 0) {
        usage.total_tokens = total;
    }
    calculate_cost(model, &mut usage);
    usage
}

/// Maps `finish_reason` as pi-ai 1.6 does: `error` is a server error (retried as one), and
/// a reason it does not know stops with an error naming it.
fn map_finish_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" => (StopReason::Stop, None),
        "length" | "model_length" => (StopReason::Length, None),
        "tool_calls" => (StopReason::ToolUse, None),
        "error" => (
            StopReason::Error,
            Some("Provider stopped with: error (server error)".to_owned()),
        ),
        other => (
            StopReason::Error,
            Some(format!("Provider stopped with: {other}")),
        ),
    }
}

/// The block text and thinking deltas currently go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text(usize),
    Thinking(usize),
}

impl Open {
    fn index(self) -> usize {
        match self {
            Open::Text(i) | Open::Thinking(i) => i,
        }
    }
}

/// Per-stream decoding state.
pub struct Decoder {
    model: Model,
    current: Option<Open>,
    /// Tool-call blocks by `(id, index)`, as pi's TS provider keys them.
    tools: HashMap<(String, u64), usize>,
    /// The latest tool-call block of each index, for continuation deltas without an id.
    tools_by_index: HashMap<u64, usize>,
    saw_finish: bool,
}

impl Decoder {
    /// A decoder for a response of `model`.
    pub fn new(model: Model) -> Self {
        Self {
            model,
            current: None,
            tools: HashMap::new(),
            tools_by_index: HashMap::new(),
            saw_finish: false,
        }
    }

    fn close_current(&mut self, asm: &mut Assembler) {
        if let Some(open) = self.current.take() {
            asm.end_block(open.index());
        }
    }

    fn push_text(&mut self, asm: &mut Assembler, text: &str) {
        if text.is_empty() {
            return;
        }
        let index = match self.current {
            Some(Open::Text(i)) => i,
            _ => {
                self.close_current(asm);
                let i = asm.begin_text();
                self.current = Some(Open::Text(i));
                i
            }
        };
        asm.push_text(index, text);
    }

    fn push_thinking(&mut self, asm: &mut Assembler, parts: &[ThinkingPart]) {
        let text: Cow<str> = match parts {
            [one] => one.text.as_deref().map_or(Cow::Borrowed(""), Cow::Borrowed),
            _ => Cow::Owned(
                parts
                    .iter()
                    .filter_map(|p| p.text.as_deref())
                    .collect::<String>(),
            ),
        };
        if text.is_empty() {
            return;
        }
        let index = match self.current {
            Some(Open::Thinking(i)) => i,
            _ => {
                self.close_current(asm);
                let i = asm.begin_thinking(ThinkingContent::new(""));
                self.current = Some(Open::Thinking(i));
                i
            }
        };
        asm.push_thinking(index, &text);
    }

    fn apply_content(&mut self, asm: &mut Assembler, content: &DeltaContent) {
        match content {
            DeltaContent::Text(text) => self.push_text(asm, text),
            DeltaContent::Items(items) => {
                for item in items {
                    match item {
                        ContentItem::Text(text) => self.push_text(asm, text),
                        ContentItem::Chunk(chunk) => match chunk.kind.as_deref() {
                            Some("thinking") => {
                                if let Some(parts) = &chunk.thinking {
                                    self.push_thinking(asm, parts);
                                }
                            }
                            Some("text") => {
                                if let Some(text) = &chunk.text {
                                    self.push_text(asm, text);
                                }
                            }
                            _ => {}
                        },
                    }
                }
            }
        }
    }

    fn apply_tool_call(&mut self, asm: &mut Assembler, call: &ToolCallDelta) {
        self.close_current(asm);
        let index = call.index.unwrap_or(0);
        let given = call
            .id
            .as_deref()
            .filter(|id| !id.is_empty() && *id != "null");
        let id = match given {
            Some(id) => id.to_owned(),
            None => derive_tool_call_id(&format!("toolcall:{index}"), 0),
        };
        let key = (id, index);
        let found = self.tools.get(&key).copied().or_else(|| {
            // A continuation without its id belongs to the call streaming at that index.
            given
                .is_none()
                .then(|| self.tools_by_index.get(&index).copied())
                .flatten()
        });
        let block = match found {
            Some(block) => block,
            None => {
                let name = call
                    .function
                    .as_ref()
                    .and_then(|f| f.name.as_deref())
                    .unwrap_or("");
                let block = asm.begin_tool_call(&key.0, name, serde_json::Map::new());
                self.tools.insert(key, block);
                block
            }
        };
        self.tools_by_index.insert(index, block);
        match call.function.as_ref().and_then(|f| f.arguments.as_ref()) {
            Some(Arguments::Text(text)) => asm.push_tool_args(block, text),
            Some(Arguments::Json(value)) => asm.push_tool_args(block, &value.to_string()),
            None => asm.push_tool_args(block, ""),
        }
    }
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: &Sse, asm: &mut Assembler) -> Result<Flow, String> {
        let Some(data) = event.data.as_deref() else {
            return Ok(Flow::Continue);
        };
        if data.trim() == "[DONE]" {
            return Ok(Flow::Stop);
        }
        if event.event.as_deref() == Some("error") {
            return Err(stream_error_text(data));
        }
        let chunk: Chunk = parse_json(data)?;
        if chunk.choices.is_none()
            && (chunk.object.as_deref() == Some("error")
                || chunk.message.is_some()
                || chunk.detail.is_some())
        {
            return Err(error_object_text(&chunk));
        }
        let message = asm.message_mut();
        if message.response_id.is_none()
            && let Some(id) = chunk.id.as_deref().filter(|id| !id.is_empty())
        {
            message.response_id = Some(id.to_owned());
        }
        if let Some(raw) = &chunk.usage {
            asm.message_mut().usage = parse_usage(raw, &self.model);
        }
        let Some(choice) = chunk.choices.as_ref().and_then(|c| c.first()) else {
            return Ok(Flow::Continue);
        };
        if let Some(reason) = choice.finish_reason.as_deref() {
            self.saw_finish = true;
            let (stop, error) = map_finish_reason(reason);
            let message = asm.message_mut();
            message.raw_stop_reason = Some(reason.to_owned());
            message.stop_reason = stop;
            if error.is_some() {
                message.error_message = error;
            }
        }
        if let Some(delta) = &choice.delta {
            if let Some(content) = &delta.content {
                self.apply_content(asm, content);
            }
            for call in delta.tool_calls.iter().flatten() {
                self.apply_tool_call(asm, call);
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self, asm: &mut Assembler, ended_by_provider: bool) -> Result<(), String> {
        // The open text or thinking block ends first, then the tool calls, as in pi's TS.
        self.close_current(asm);
        asm.end_all();
        if !ended_by_provider && !self.saw_finish {
            return Err(
                "Connection error: the stream ended before the response was complete (no finish_reason)"
                    .to_owned(),
            );
        }
        Ok(())
    }
}

/// The text of an in-stream error object: `Mistral API error: <message>`.
fn error_object_text(chunk: &Chunk) -> String {
    let detail = match (&chunk.message, &chunk.detail) {
        (Some(Value::String(m)), _) if !m.is_empty() => m.clone(),
        (Some(m), _) if !m.is_null() => m.to_string(),
        (_, Some(d)) => d.to_string(),
        _ => "unknown error".to_owned(),
    };
    format!("Mistral API error: {detail}")
}

fn stream_error_text(data: &str) -> String {
    match serde_json::from_str::<Chunk>(data) {
        Ok(chunk) if chunk.message.is_some() || chunk.detail.is_some() => error_object_text(&chunk),
        _ => format!("Mistral API error: {}", data.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantBlock, AssistantMessageEvent, InputKind, ModelCost, api};

    fn model() -> Model {
        Model {
            id: "magistral-medium-latest".into(),
            name: "Magistral".into(),
            api: api::MISTRAL_CONVERSATIONS.into(),
            provider: "mistral".into(),
            base_url: "https://api.mistral.ai".into(),
            reasoning: true,
            thinking_level_map: None,
            input: vec![InputKind::Text],
            cost: ModelCost {
                input: 2.0,
                output: 5.0,
                cache_read: 0.0,
                cache_write: 0.0,
                tiers: None,
            },
            context_window: 128_000,
            max_tokens: 16_384,
            headers: None,
            compat: None,
            extras: Default::default(),
        }
    }

    fn run(frames: &[&str]) -> (Assembler, Result<(), String>, Vec<AssistantMessageEvent>) {
        let model = model();
        let mut decoder = Decoder::new(model.clone());
        let mut asm = Assembler::new(&model);
        let mut events = Vec::new();
        let mut ended = false;
        for data in frames {
            let event = Sse::default().data(*data);
            match decoder.on_event(&event, &mut asm) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Stop) => {
                    ended = true;
                    break;
                }
                Err(e) => {
                    events.extend(asm.drain());
                    return (asm, Err(e), events);
                }
            }
        }
        let result = decoder.finish(&mut asm, ended);
        events.extend(asm.drain());
        (asm, result, events)
    }

    #[test]
    fn thinking_chunks_then_string_text() {
        let (asm, result, events) = run(&[
            r#"{"id":"abc","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"id":"abc","choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Let me "}]}]},"finish_reason":null}]}"#,
            r#"{"id":"abc","choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"see."}],"closed":true}]},"finish_reason":null}]}"#,
            r#"{"id":"abc","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
            r#"{"id":"abc","choices":[{"index":0,"delta":{"content":[{"type":"text","text":" there"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14}}"#,
            "[DONE]",
        ]);
        assert!(result.is_ok());
        let message = asm.message();
        assert_eq!(message.content.len(), 2, "{message:?}");
        let AssistantBlock::Thinking(t) = &message.content[0] else {
            panic!()
        };
        assert_eq!(t.thinking, "Let me see.");
        assert_eq!(message.content[1].as_text(), Some("Hi there"));
        assert_eq!(message.response_id.as_deref(), Some("abc"));
        assert_eq!(message.usage.total_tokens, 14);
        assert!((message.usage.cost.total - (10.0 * 2.0 + 4.0 * 5.0) / 1e6).abs() < 1e-15);
        let kinds: Vec<_> = events.iter().map(AssistantMessageEvent::kind).collect();
        assert_eq!(
            kinds,
            [
                "thinking_start",
                "thinking_delta",
                "thinking_delta",
                "thinking_end",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end"
            ]
        );
    }

    #[test]
    fn whole_and_id_less_continuation_tool_calls() {
        let (asm, result, _) = run(&[
            r#"{"id":"x","choices":[{"index":0,"delta":{"content":"Reading."},"finish_reason":null}]}"#,
            r#"{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"id":"AbCdEf123","function":{"name":"read","arguments":{"path":"a.txt"}},"index":0},{"id":"WrItE0001","function":{"name":"write","arguments":"{\"pa"},"index":1}]},"finish_reason":null}]}"#,
            r#"{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"","arguments":"th\":\"b\"}"},"index":1}]},"finish_reason":null}]}"#,
            r#"{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"id":"null","function":{"name":"ls","arguments":"{}"},"index":2}]},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert!(result.is_ok(), "{result:?}");
        let message = asm.message();
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        let calls: Vec<_> = message.tool_calls().collect();
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].id, "AbCdEf123");
        assert_eq!(calls[0].arguments["path"], "a.txt");
        assert_eq!(calls[1].id, "WrItE0001");
        assert_eq!(calls[1].name, "write");
        assert_eq!(calls[1].arguments["path"], "b");
        // No id: derived from the index, as pi's TS provider does.
        assert_eq!(calls[2].id, "toolcall2");
    }

    #[test]
    fn finish_reasons() {
        assert_eq!(map_finish_reason("model_length").0, StopReason::Length);
        assert_eq!(map_finish_reason("length").0, StopReason::Length);
        assert_eq!(map_finish_reason("tool_calls").0, StopReason::ToolUse);
        assert_eq!(
            map_finish_reason("something_new"),
            (
                StopReason::Error,
                Some("Provider stopped with: something_new".to_owned())
            )
        );
        let (asm, result, _) = run(&[
            r#"{"id":"e","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"error"}]}"#,
            "[DONE]",
        ]);
        assert!(result.is_ok());
        assert_eq!(asm.message().stop_reason, StopReason::Error);
        assert_eq!(
            asm.message().error_message.as_deref(),
            Some("Provider stopped with: error (server error)")
        );
    }

    #[test]
    fn error_objects_and_truncated_streams() {
        let (_, result, _) = run(&[
            r#"{"object":"error","message":"Service unavailable","type":"internal_server_error","param":null,"code":"1000"}"#,
        ]);
        assert_eq!(
            result.unwrap_err(),
            "Mistral API error: Service unavailable"
        );
        let (_, result, _) = run(&[
            r#"{"id":"t","choices":[{"index":0,"delta":{"content":"cut"},"finish_reason":null}]}"#,
        ]);
        assert!(result.unwrap_err().starts_with("Connection error"));
    }
}
