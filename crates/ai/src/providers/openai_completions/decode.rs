//! Decoding the Chat Completions SSE stream into message updates.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;
use sse_stream::Sse;

use crate::assembler::Assembler;
use crate::models::calculate_cost;
use crate::providers::openrouter_cost::{self, ReportedCost};
use crate::sse::{Flow, SseDecoder, parse_json};
use crate::types::{AssistantBlock, Model, StopReason, ThinkingContent, Usage};

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
    #[serde(default)]
    reasoning_details: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct RawUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
    /// Kimi's cache reads, at the top level.
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
    /// The reasoning count some servers put at the top level.
    #[serde(default)]
    reasoning_tokens: Option<u64>,
    /// OpenRouter's billed cost.
    #[serde(flatten)]
    reported: ReportedCost,
}

#[derive(Deserialize, Default)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

/// Normalizes usage as pi-ai 1.6: cache reads from `prompt_tokens_details.cached_tokens`,
/// DeepSeek's `prompt_cache_hit_tokens` or Kimi's top-level `cached_tokens`; cache writes
/// counted apart; `input` is what is left of the prompt.
fn parse_usage(raw: &RawUsage, model: &Model) -> Usage {
    let prompt = raw.prompt_tokens.unwrap_or(0);
    let details = raw.prompt_tokens_details.as_ref();
    let cache_read = details
        .and_then(|d| d.cached_tokens)
        .or(raw.prompt_cache_hit_tokens)
        .or(raw.cached_tokens)
        .unwrap_or(0);
    let cache_write = details.and_then(|d| d.cache_write_tokens).unwrap_or(0);
    let input = prompt.saturating_sub(cache_read.saturating_add(cache_write));
    let mut usage = Usage::from_tokens(
        input,
        raw.completion_tokens.unwrap_or(0),
        cache_read,
        cache_write,
    );
    usage.reasoning = Some(
        raw.completion_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens)
            .filter(|n| *n > 0)
            .or(raw.reasoning_tokens)
            .unwrap_or(0),
    );
    calculate_cost(model, &mut usage);
    if openrouter_cost::is_openrouter(model) {
        openrouter_cost::apply(&mut usage, &raw.reported);
    }
    usage
}

fn map_finish_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "tool_calls" | "function_call" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

/// Per-stream decoding state.
pub struct Decoder {
    model: Model,
    text: Option<usize>,
    thinking: Option<usize>,
    tools_by_index: HashMap<u64, usize>,
    tools_by_id: HashMap<String, usize>,
    /// The stream's `reasoning_details` so far, merged (pi-ai 1.6 keeps them on the
    /// thinking block as its signature).
    details: Vec<Value>,
    saw_finish: bool,
    /// The server sends `finish_reason` (`compat.supportsFinishReason`, default true).
    expects_finish: bool,
}

impl Decoder {
    /// A decoder for a response of `model`.
    pub fn new(model: Model) -> Self {
        let expects_finish = super::compat::resolve(&model).supports_finish_reason;
        Self {
            expects_finish,
            model,
            text: None,
            thinking: None,
            tools_by_index: HashMap::new(),
            tools_by_id: HashMap::new(),
            details: Vec::new(),
            saw_finish: false,
        }
    }

    fn tool_block(&mut self, asm: &mut Assembler, delta: &ToolCallDelta) -> usize {
        let found = delta
            .index
            .and_then(|i| self.tools_by_index.get(&i).copied())
            .or_else(|| {
                delta
                    .id
                    .as_deref()
                    .and_then(|id| self.tools_by_id.get(id).copied())
            });
        let block = match found {
            Some(block) => block,
            None => {
                let id = delta.id.as_deref().unwrap_or("");
                let name = delta
                    .function
                    .as_ref()
                    .and_then(|f| f.name.as_deref())
                    .unwrap_or("");
                asm.begin_tool_call(id, name, serde_json::Map::new())
            }
        };
        if let Some(index) = delta.index {
            self.tools_by_index.entry(index).or_insert(block);
        }
        if let Some(id) = delta.id.as_deref().filter(|id| !id.is_empty()) {
            self.tools_by_id.insert(id.to_owned(), block);
        }
        block
    }

    /// The thinking block, opened with `signature` when there is none yet.
    fn thinking_block(&mut self, asm: &mut Assembler, signature: &str) -> usize {
        match self.thinking {
            Some(i) => i,
            None => {
                let mut block = ThinkingContent::new("");
                block.thinking_signature = Some(signature.to_owned());
                *self.thinking.insert(asm.begin_thinking(block))
            }
        }
    }

    /// Applies one delta in pi-ai 1.6's order: reasoning fields, `reasoning_details`,
    /// text, tool calls (so thinking sent with the answer in one chunk comes first).
    fn apply_delta(&mut self, delta: &Delta, asm: &mut Assembler) {
        // Servers name the reasoning field differently; take the first non-empty one.
        let reasoning = [
            ("reasoning_content", &delta.reasoning_content),
            ("reasoning", &delta.reasoning),
            ("reasoning_text", &delta.reasoning_text),
        ]
        .into_iter()
        .find_map(|(field, value)| {
            value
                .as_deref()
                .filter(|v| !v.is_empty())
                .map(|v| (field, v))
        });
        if let Some((field, text)) = reasoning {
            // OpenCode Go wants its `reasoning` back as `reasoning_content` (pi 0.75.1).
            let field = if self.model.provider == "opencode-go" && field == "reasoning" {
                "reasoning_content"
            } else {
                field
            };
            let index = self.thinking_block(asm, field);
            asm.push_thinking(index, text);
        }
        let mut details_changed = false;
        for detail in delta.reasoning_details.iter().flatten() {
            if super::reasoning_details::is_valid(detail) {
                self.thinking_block(asm, "");
                super::reasoning_details::append(&mut self.details, detail);
                details_changed = true;
            }
        }
        if details_changed
            && let Some(index) = self.thinking
            && let Some(AssistantBlock::Thinking(block)) = asm.message_mut().content.get_mut(index)
        {
            block.thinking_signature = serde_json::to_string(&self.details).ok();
        }
        if let Some(text) = delta.content.as_deref().filter(|t| !t.is_empty()) {
            let index = match self.text {
                Some(i) => i,
                None => *self.text.insert(asm.begin_text()),
            };
            asm.push_text(index, text);
        }
        for call in delta.tool_calls.iter().flatten() {
            let block = self.tool_block(asm, call);
            if let Some(tool) = asm.tool_call_mut(block) {
                if tool.id.is_empty()
                    && let Some(id) = call.id.as_deref()
                {
                    tool.id = id.to_owned();
                }
                if tool.name.is_empty()
                    && let Some(name) = call.function.as_ref().and_then(|f| f.name.as_deref())
                {
                    tool.name = name.to_owned();
                }
            }
            let args = call
                .function
                .as_ref()
                .and_then(|f| f.arguments.as_deref())
                .unwrap_or("");
            asm.push_tool_args(block, args);
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
            return Err(error_text(data));
        }
        let chunk: Chunk = parse_json(data)?;
        if let Some(error) = &chunk.error {
            return Err(api_error_text(error));
        }
        let message = asm.message_mut();
        if message.response_id.is_none() {
            message.response_id = chunk
                .id
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
        }
        if message.response_model.is_none()
            && let Some(m) = chunk
                .model
                .as_deref()
                .filter(|m| !m.is_empty() && *m != self.model.id)
        {
            message.response_model = Some(m.to_owned());
        }
        if let Some(raw) = &chunk.usage {
            asm.message_mut().usage = parse_usage(raw, &self.model);
        }
        let Some(choice) = chunk.choices.as_ref().and_then(|c| c.first()) else {
            return Ok(Flow::Continue);
        };
        if chunk.usage.is_none()
            && let Some(raw) = &choice.usage
        {
            asm.message_mut().usage = parse_usage(raw, &self.model);
        }
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
            self.apply_delta(delta, asm);
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self, asm: &mut Assembler, ended_by_provider: bool) -> Result<(), String> {
        asm.end_all();
        if self.saw_finish {
            return Ok(());
        }
        // A server that sends no `finish_reason` (pi 1.5's compat.supportsFinishReason
        // false): the reply's content decides, however the stream ended.
        if !self.expects_finish {
            let calls = asm
                .message()
                .content
                .iter()
                .any(|b| matches!(b, AssistantBlock::ToolCall(_)));
            asm.message_mut().stop_reason = if calls {
                StopReason::ToolUse
            } else {
                StopReason::Stop
            };
            return Ok(());
        }
        if !ended_by_provider {
            return Err(
                "Connection error: the stream ended before the response was complete (no finish_reason)"
                    .to_owned(),
            );
        }
        Err("Stream ended without finish_reason".to_owned())
    }
}

/// The text of an in-stream `{"error": …}` (the SDK uses its `message`).
fn api_error_text(error: &Value) -> String {
    match error.get("message") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        _ => error.to_string(),
    }
}

fn error_text(data: &str) -> String {
    match serde_json::from_str::<Value>(data) {
        Ok(v) => api_error_text(v.get("error").unwrap_or(&v)),
        Err(_) => data.to_owned(),
    }
}
