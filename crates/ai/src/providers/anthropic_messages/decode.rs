//! Decoding the Messages API SSE stream into message updates.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value};
use sse_stream::Sse;

use crate::assembler::Assembler;
use crate::models::calculate_cost;
use crate::providers::openrouter_cost::{self, ReportedCost};
use crate::sse::{Flow, SseDecoder, parse_json};
use crate::types::{Model, StopReason, ThinkingContent};

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event<'a> {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u64,
        #[serde(borrow)]
        delta: BlockDelta<'a>,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        /// Absent or `null` from proxies that leave it out.
        #[serde(default)]
        usage: Option<RawUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    id: Option<String>,
    /// The model that answered: another one after a server-side fallback.
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: RawUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta<'a> {
    TextDelta {
        #[serde(borrow)]
        text: Cow<'a, str>,
    },
    ThinkingDelta {
        #[serde(borrow)]
        thinking: Cow<'a, str>,
    },
    InputJsonDelta {
        #[serde(borrow)]
        partial_json: Cow<'a, str>,
    },
    SignatureDelta {
        #[serde(borrow)]
        signature: Cow<'a, str>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
    /// Why the provider stopped, e.g. a refusal's `explanation`.
    #[serde(default)]
    stop_details: Option<StopDetails>,
}

/// `stop_details` of a `message_delta`: pi reports a refusal's explanation as its error.
#[derive(Deserialize, Default)]
struct StopDetails {
    #[serde(default)]
    explanation: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    /// The cache writes by lifetime; the one-hour ones are priced apart.
    #[serde(default)]
    cache_creation: Option<CacheCreation>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
    /// OpenRouter's billed cost, when the model is reached through it.
    #[serde(flatten)]
    reported: ReportedCost,
}

#[derive(Deserialize, Default)]
struct CacheCreation {
    #[serde(default)]
    ephemeral_1h_input_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct OutputDetails {
    #[serde(default)]
    thinking_tokens: Option<u64>,
}

impl RawUsage {
    /// The one-hour cache writes, when the provider split them out.
    fn cache_write_1h(&self) -> Option<u64> {
        self.cache_creation
            .as_ref()
            .and_then(|c| c.ephemeral_1h_input_tokens)
    }
}

/// pi-ai 1.6's `mapStopReason`: the stop reason, and for the failing ones the error text
/// (a refusal's `stop_details.explanation` when the provider gave one).
fn map_stop_reason(
    reason: &str,
    details: Option<&StopDetails>,
) -> Result<(StopReason, Option<String>), String> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok((StopReason::Stop, None)),
        "max_tokens" => Ok((StopReason::Length, None)),
        "tool_use" => Ok((StopReason::ToolUse, None)),
        "refusal" => {
            let explanation = details
                .and_then(|d| d.explanation.as_deref())
                .filter(|e| !e.is_empty())
                .unwrap_or("The model refused to complete the request");
            Ok((StopReason::Error, Some(explanation.to_owned())))
        }
        "sensitive" => Ok((
            StopReason::Error,
            Some("Provider stopped with: sensitive".to_owned()),
        )),
        other => Err(format!("Unhandled stop reason: {other}")),
    }
}

/// `model` priced as the fallback `returned` when its `compat.allowedFallbackModels` lists
/// that model for the same provider with a cost (pi-ai 0.84.3); else `None`.
fn fallback_usage_model(model: &Model, returned: &str) -> Option<Model> {
    let listed = model.compat.as_ref()?.allowed_fallback_models.as_ref()?;
    let entry = listed.as_array()?.iter().find(|entry| {
        entry.get("provider").and_then(Value::as_str) == Some(model.provider.as_str())
            && entry.get("model").and_then(Value::as_str) == Some(returned)
    })?;
    let cost = serde_json::from_value(entry.get("cost")?.clone()).ok()?;
    Some(Model {
        id: returned.to_owned(),
        cost,
        ..model.clone()
    })
}

/// Per-stream decoding state.
pub struct Decoder {
    model: Model,
    oauth: bool,
    tool_names: Vec<String>,
    /// Anthropic block index → our content index.
    blocks: HashMap<u64, usize>,
    saw_stop: bool,
    /// The error a failing stop reason carries (a refusal's explanation).
    stop_error: Option<String>,
    /// The model whose prices apply: a server-side fallback's, when the compat lists it.
    usage_model: Option<Model>,
    /// The effort the request ran at, kept on the reply (mid-conversation effort).
    provider_thinking_level: Option<String>,
}

impl Decoder {
    /// A decoder for `model`; with `oauth`, tool names map back from Claude Code's casing.
    pub fn new(model: Model, oauth: bool, tool_names: Vec<String>) -> Self {
        Self {
            model,
            oauth,
            tool_names,
            blocks: HashMap::new(),
            saw_stop: false,
            stop_error: None,
            usage_model: None,
            provider_thinking_level: None,
        }
    }

    /// The effort the request ran at (mid-conversation effort), if any.
    pub fn provider_thinking_level(&self) -> Option<&str> {
        self.provider_thinking_level.as_deref()
    }

    /// Keeps `effort` on the reply as the effort it was made with.
    pub fn with_provider_thinking_level(mut self, effort: Option<String>) -> Self {
        self.provider_thinking_level = effort;
        self
    }

    /// With OAuth the model sees Claude Code's tool casing; map it back to our tool's name.
    fn tool_name(&self, name: &str) -> String {
        if self.oauth
            && let Some(ours) = self
                .tool_names
                .iter()
                .find(|t| t.eq_ignore_ascii_case(name))
        {
            return ours.clone();
        }
        name.to_owned()
    }

    fn start_block(&mut self, index: u64, block: &Value, asm: &mut Assembler) {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let content_index = match kind {
            // The start event may already carry text or thinking (pi-ai 1.6 keeps it).
            "text" => asm.begin_text_with(block.get("text").and_then(Value::as_str).unwrap_or("")),
            "thinking" => {
                let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                let mut thinking = ThinkingContent::new(text);
                let signature = block.get("signature").and_then(Value::as_str).unwrap_or("");
                thinking.thinking_signature = Some(signature.to_owned());
                asm.begin_thinking(thinking)
            }
            "redacted_thinking" => {
                let mut thinking = ThinkingContent::new("[Reasoning redacted]");
                thinking.thinking_signature = Some(
                    block
                        .get("data")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                );
                thinking.redacted = Some(true);
                asm.begin_thinking(thinking)
            }
            "tool_use" => {
                let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                let name = self.tool_name(block.get("name").and_then(Value::as_str).unwrap_or(""));
                let input = match block.get("input") {
                    Some(Value::Object(map)) => map.clone(),
                    _ => Map::new(),
                };
                asm.begin_tool_call(id, &name, input)
            }
            _ => return,
        };
        self.blocks.insert(index, content_index);
    }
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, sse: &Sse, asm: &mut Assembler) -> Result<Flow, String> {
        let Some(data) = sse.data.as_deref() else {
            return Ok(Flow::Continue);
        };
        if sse.event.as_deref() == Some("error") {
            // The TypeScript pi reports the raw error payload.
            return Err(data.to_owned());
        }
        let known = matches!(
            sse.event.as_deref(),
            None | Some(
                "message_start"
                    | "message_delta"
                    | "message_stop"
                    | "content_block_start"
                    | "content_block_delta"
                    | "content_block_stop"
                    | "ping"
            )
        );
        if !known {
            return Ok(Flow::Continue);
        }
        let event: Event = parse_json(data).map_err(|e| {
            format!(
                "Could not parse Anthropic SSE event {}: {e}",
                sse.event.as_deref().unwrap_or("message")
            )
        })?;
        match event {
            Event::MessageStart { message } => {
                let returned = message.model.filter(|id| *id != self.model.id);
                self.usage_model = returned
                    .as_deref()
                    .and_then(|id| fallback_usage_model(&self.model, id));
                let model = self.usage_model.as_ref().unwrap_or(&self.model);
                let m = asm.message_mut();
                if returned.is_some() {
                    m.response_model = returned;
                }
                if self.provider_thinking_level.is_some() {
                    m.provider_thinking_level = self.provider_thinking_level.clone();
                }
                m.response_id = message.id;
                m.usage.input = message.usage.input_tokens.unwrap_or(0);
                m.usage.output = message.usage.output_tokens.unwrap_or(0);
                m.usage.cache_read = message.usage.cache_read_input_tokens.unwrap_or(0);
                m.usage.cache_write = message.usage.cache_creation_input_tokens.unwrap_or(0);
                // pi-ai 1.6 writes the one-hour count from the start, 0 when not split out.
                m.usage.cache_write_1h = Some(message.usage.cache_write_1h().unwrap_or(0));
                m.usage.recompute_total();
                calculate_cost(model, &mut m.usage);
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                // A server-side fallback announces itself before any output; one after
                // output has started is not supported (pi-ai 1.6).
                if content_block.get("type").and_then(Value::as_str) == Some("fallback") {
                    if !asm.message().content.is_empty() {
                        return Err(
                            "Anthropic performed an unsupported mid-output model fallback".into(),
                        );
                    }
                    return Ok(Flow::Continue);
                }
                self.start_block(index, &content_block, asm)
            }
            Event::ContentBlockDelta { index, delta } => {
                let Some(&block) = self.blocks.get(&index) else {
                    return Ok(Flow::Continue);
                };
                match delta {
                    BlockDelta::TextDelta { text } => asm.push_text(block, &text),
                    BlockDelta::ThinkingDelta { thinking } => asm.push_thinking(block, &thinking),
                    BlockDelta::InputJsonDelta { partial_json } => {
                        asm.push_tool_args(block, &partial_json)
                    }
                    BlockDelta::SignatureDelta { signature } => {
                        asm.push_signature(block, &signature)
                    }
                    BlockDelta::Other => {}
                }
            }
            Event::ContentBlockStop { index } => {
                if let Some(block) = self.blocks.remove(&index) {
                    asm.end_block(block);
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason.as_deref() {
                    let (stop, error) = map_stop_reason(reason, delta.stop_details.as_ref())?;
                    let m = asm.message_mut();
                    m.raw_stop_reason = Some(reason.to_owned());
                    m.stop_reason = stop;
                    if error.is_some() {
                        self.stop_error = error;
                    }
                }
                let has_usage = usage.is_some();
                let usage = usage.unwrap_or_default();
                let model = self.usage_model.as_ref().unwrap_or(&self.model);
                let m = asm.message_mut();
                if let Some(v) = usage.input_tokens {
                    m.usage.input = v;
                }
                if let Some(v) = usage.output_tokens {
                    m.usage.output = v;
                }
                if let Some(v) = usage.cache_read_input_tokens {
                    m.usage.cache_read = v;
                }
                if let Some(v) = usage.cache_creation_input_tokens {
                    m.usage.cache_write = v;
                }
                if let Some(v) = usage.cache_write_1h() {
                    m.usage.cache_write_1h = Some(v);
                }
                if let Some(v) = usage
                    .output_tokens_details
                    .as_ref()
                    .and_then(|d| d.thinking_tokens)
                {
                    m.usage.reasoning = Some(v);
                }
                m.usage.recompute_total();
                calculate_cost(model, &mut m.usage);
                if has_usage && openrouter_cost::is_openrouter(&self.model) {
                    openrouter_cost::apply(&mut m.usage, &usage.reported);
                }
            }
            Event::MessageStop => {
                self.saw_stop = true;
                return Ok(Flow::Stop);
            }
            Event::Ping => {}
            Event::Error { error } => return Err(error.to_string()),
        }
        Ok(Flow::Continue)
    }

    fn finish(&mut self, asm: &mut Assembler, _ended_by_provider: bool) -> Result<(), String> {
        if !self.saw_stop {
            return Err("Anthropic stream ended before message_stop".to_owned());
        }
        if asm.message().stop_reason.is_failure() {
            return Err(self
                .stop_error
                .take()
                .unwrap_or_else(|| "An unknown error occurred".to_owned()));
        }
        Ok(())
    }
}
