//! Builds the partial assistant message from provider deltas and emits the matching events.
//!
//! Every provider maps its wire events onto these calls, so block bookkeeping, incremental
//! tool-argument parsing and the `*_end` events are the same everywhere.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Map;

use crate::partial_json::PartialJsonParser;
use crate::types::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent as Event, Model, StopReason,
    TextContent, ThinkingContent, ToolCall,
};

/// The state of one block while it streams.
#[derive(Debug, Default)]
struct BlockState {
    open: bool,
    args: Option<PartialJsonParser>,
}

/// Accumulates an assistant message and queues the events that describe its growth.
#[derive(Debug)]
pub struct Assembler {
    message: Arc<AssistantMessage>,
    blocks: Vec<BlockState>,
    events: VecDeque<Event>,
}

impl Assembler {
    /// An empty message for `model`, stamped now.
    pub fn new(model: &Model) -> Self {
        let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
        // Partial messages say they are still streaming until the end sets the reason.
        message.stop_reason = StopReason::Pending;
        Self {
            message: Arc::new(message),
            blocks: Vec::new(),
            events: VecDeque::new(),
        }
    }

    /// The message so far.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    /// Mutable access; copies the message only if a consumer still holds an older snapshot.
    pub fn message_mut(&mut self) -> &mut AssistantMessage {
        Arc::make_mut(&mut self.message)
    }

    fn snapshot(&self) -> Arc<AssistantMessage> {
        Arc::clone(&self.message)
    }

    /// Takes the queued events, oldest first.
    pub fn drain(&mut self) -> std::collections::vec_deque::Drain<'_, Event> {
        self.events.drain(..)
    }

    /// Queues `start`.
    pub fn start(&mut self) {
        let partial = self.snapshot();
        self.events.push_back(Event::Start { partial });
    }

    fn push_block(&mut self, block: AssistantBlock, args: Option<PartialJsonParser>) -> usize {
        self.message_mut().content.push(block);
        self.blocks.push(BlockState { open: true, args });
        self.message.content.len() - 1
    }

    /// Opens a text block and queues `text_start`; returns its content index.
    pub fn begin_text(&mut self) -> usize {
        self.begin_text_with("")
    }

    /// Opens a text block that already holds `text` (a provider that sends text in the
    /// block's start event) and queues `text_start`; returns its content index.
    pub fn begin_text_with(&mut self, text: &str) -> usize {
        let index = self.push_block(AssistantBlock::Text(TextContent::new(text)), None);
        let partial = self.snapshot();
        self.events.push_back(Event::TextStart {
            content_index: index,
            partial,
        });
        index
    }

    /// Appends to a text block and queues `text_delta`.
    pub fn push_text(&mut self, index: usize, delta: &str) {
        if let Some(AssistantBlock::Text(block)) = self.message_mut().content.get_mut(index) {
            block.text.push_str(delta);
            let partial = self.snapshot();
            self.events.push_back(Event::TextDelta {
                content_index: index,
                delta: delta.to_owned(),
                partial,
            });
        }
    }

    /// Opens a thinking block and queues `thinking_start`; returns its content index.
    pub fn begin_thinking(&mut self, block: ThinkingContent) -> usize {
        let index = self.push_block(AssistantBlock::Thinking(block), None);
        let partial = self.snapshot();
        self.events.push_back(Event::ThinkingStart {
            content_index: index,
            partial,
        });
        index
    }

    /// Appends to a thinking block and queues `thinking_delta`.
    pub fn push_thinking(&mut self, index: usize, delta: &str) {
        if let Some(AssistantBlock::Thinking(block)) = self.message_mut().content.get_mut(index) {
            block.thinking.push_str(delta);
            let partial = self.snapshot();
            self.events.push_back(Event::ThinkingDelta {
                content_index: index,
                delta: delta.to_owned(),
                partial,
            });
        }
    }

    /// Appends to a thinking block's signature (no event, as in the TypeScript pi).
    pub fn push_signature(&mut self, index: usize, signature: &str) {
        if let Some(AssistantBlock::Thinking(block)) = self.message_mut().content.get_mut(index) {
            block
                .thinking_signature
                .get_or_insert_with(String::new)
                .push_str(signature);
        }
    }

    /// Opens a tool-call block and queues `toolcall_start`; returns its content index.
    pub fn begin_tool_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: Map<String, serde_json::Value>,
    ) -> usize {
        let call = ToolCall::new(id, name, arguments);
        let index = self.push_block(
            AssistantBlock::ToolCall(call),
            Some(PartialJsonParser::new()),
        );
        let partial = self.snapshot();
        self.events.push_back(Event::ToolcallStart {
            content_index: index,
            partial,
        });
        index
    }

    /// The tool call at `index`, for providers that learn its id or name late.
    pub fn tool_call_mut(&mut self, index: usize) -> Option<&mut ToolCall> {
        match self.message_mut().content.get_mut(index) {
            Some(AssistantBlock::ToolCall(call)) => Some(call),
            _ => None,
        }
    }

    /// Replaces a tool call's argument text without an event (the provider sent the whole
    /// text at the end).
    pub fn replace_tool_args(&mut self, index: usize, text: &str) {
        let Some(state) = self.blocks.get_mut(index) else {
            return;
        };
        let mut parser = PartialJsonParser::new();
        let mut arguments = Map::new();
        parser.push(text, &mut arguments);
        state.args = Some(parser);
        if let Some(call) = self.tool_call_mut(index) {
            call.arguments = arguments;
        }
    }

    /// Feeds argument JSON to a tool call (updating its best-known arguments in place) and
    /// queues `toolcall_delta`. An empty delta still queues the event, as the TypeScript pi does.
    pub fn push_tool_args(&mut self, index: usize, delta: &str) {
        let Some(state) = self.blocks.get_mut(index) else {
            return;
        };
        let Some(parser) = state.args.as_mut() else {
            return;
        };
        if !delta.is_empty() {
            let message = Arc::make_mut(&mut self.message);
            if let Some(AssistantBlock::ToolCall(call)) = message.content.get_mut(index) {
                parser.push(delta, &mut call.arguments);
            }
        }
        let partial = self.snapshot();
        self.events.push_back(Event::ToolcallDelta {
            content_index: index,
            delta: delta.to_owned(),
            partial,
        });
    }

    /// Closes a block and queues its `*_end` event (once).
    pub fn end_block(&mut self, index: usize) {
        let Some(state) = self.blocks.get_mut(index) else {
            return;
        };
        if !state.open {
            return;
        }
        state.open = false;
        // A finished call's arguments are its whole text, parsed strictly (pi-ai 1.6.0).
        let text = state.args.as_ref().map(|p| p.text().to_owned());
        if let Some(text) = text.filter(|t| !t.trim().is_empty())
            && let Some(call) = self.tool_call_mut(index)
        {
            match crate::tool_arguments::parse_tool_call_arguments(&text) {
                Ok(arguments) => call.arguments = arguments,
                Err(error) => {
                    call.arguments = Map::new();
                    call.arguments_error = Some(error);
                }
            }
        }
        let partial = self.snapshot();
        let event = match self.message.content.get(index) {
            Some(AssistantBlock::Text(b)) => Event::TextEnd {
                content_index: index,
                content: b.text.to_string(),
                partial,
            },
            Some(AssistantBlock::Thinking(b)) => Event::ThinkingEnd {
                content_index: index,
                content: b.thinking.to_string(),
                partial,
            },
            Some(AssistantBlock::ToolCall(call)) => Event::ToolcallEnd {
                content_index: index,
                tool_call: call.clone(),
                partial,
            },
            None => return,
        };
        self.events.push_back(event);
    }

    /// Closes every open block in content order.
    pub fn end_all(&mut self) {
        for index in 0..self.blocks.len() {
            self.end_block(index);
        }
    }

    /// The final event: `done` for stop/length/toolUse, else `error`.
    pub fn finish(&mut self) -> Event {
        // A stream whose provider named no reason ended normally.
        if self.message.stop_reason == StopReason::Pending {
            self.message_mut().stop_reason = StopReason::Stop;
        }
        let reason = self.message.stop_reason;
        if reason.is_failure() {
            let message = self
                .message
                .error_message
                .clone()
                .unwrap_or_else(|| "Provider returned an error stop reason".to_owned());
            return self.fail(reason == StopReason::Aborted, message);
        }
        Event::Done {
            reason,
            message: self.snapshot(),
        }
    }

    /// The final `error` event: the partial content is kept, the reason and text recorded.
    pub fn fail(&mut self, aborted: bool, error_message: String) -> Event {
        let reason = if aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        let message = self.message_mut();
        message.stop_reason = reason;
        message.error_message = Some(error_message);
        Event::Error {
            reason,
            error: self.snapshot(),
        }
    }
}
