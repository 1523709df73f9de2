//! Extension tools drawn by their own `renderCall` / `renderResult` (running in the
//! extension host): the chat asks `tool_render` whenever the call changes and draws the
//! returned components inside the tool box, as the TypeScript pi's
//! `ToolExecutionComponent` does; a slot without renderer (or whose renderer threw) gets
//! the TypeScript fallback (the tool name; the result's text).

use std::sync::Arc;

use pi_ai::InputBlock;
use serde_json::{Value, json};

use super::remote::{RemoteView, Slot, SlotState, slot_state};
use crate::extensions::ExtensionRuntime;

/// What the chat needs to draw extension renderers.
#[derive(Clone)]
pub(crate) struct ChatExtensions {
    pub remote: RemoteView,
    pub runtime: Arc<ExtensionRuntime>,
}

impl ChatExtensions {
    /// Which renderers (call, result) an extension tool has; `None` when it has none (or
    /// is no extension tool).
    /// With `registerToolRenderer` resolvers the host chooses for every tool (both).
    pub(crate) fn tool_renderers(&self, tool_name: &str) -> Option<(bool, bool)> {
        if self.runtime.is_empty() {
            return None;
        }
        if self.runtime.extensions().iter().any(|e| e.tool_renderers) {
            return Some((true, true));
        }
        self.runtime
            .tool_defs()
            .into_iter()
            .rev()
            .find(|d| d.name == tool_name)
            .map(|d| (d.has_render_call, d.has_render_result))
            .filter(|(call, result)| *call || *result)
    }

    /// Whether an extension draws custom entries of some type.
    pub(crate) fn has_entry_renderers(&self) -> bool {
        !self.runtime.is_empty()
            && self
                .runtime
                .extensions()
                .iter()
                .any(|e| !e.entry_renderers.is_empty())
    }

    /// Whether an extension draws custom entries (`pi.appendEntry`) of this type.
    pub(crate) fn has_entry_renderer(&self, custom_type: &str) -> bool {
        !self.runtime.is_empty()
            && self
                .runtime
                .extensions()
                .iter()
                .any(|e| e.entry_renderers.iter().any(|r| r == custom_type))
    }

    /// Whether an extension draws custom messages of this type.
    pub(crate) fn has_message_renderer(&self, custom_type: &str) -> bool {
        !self.runtime.is_empty() && self.runtime.has_message_renderer(custom_type)
    }
}

/// The state of a tool call a renderer sees (`context` of `tool_render`).
pub(crate) struct ToolRenderState<'a> {
    pub args: &'a Value,
    /// Content and details of the (partial) result, if any.
    pub result: Option<(&'a [InputBlock], Option<&'a Value>)>,
    pub execution_started: bool,
    pub args_complete: bool,
    pub is_partial: bool,
    pub is_error: bool,
    pub expanded: bool,
}

/// The renderers of one extension tool call.
pub(crate) struct ExtToolRender {
    remote: RemoteView,
    tool_name: String,
    call_id: String,
    has_call: bool,
    has_result: bool,
    call: Slot,
    result: Slot,
    /// The last requests sent, so an unchanged call is not asked again.
    sent_call: Option<Value>,
    sent_result: Option<Value>,
}

impl ExtToolRender {
    /// Renderers for this call when the tool has any.
    pub(crate) fn for_tool(ext: &ChatExtensions, tool_name: &str, call_id: &str) -> Option<Self> {
        let (has_call, has_result) = ext.tool_renderers(tool_name)?;
        Some(ExtToolRender {
            remote: ext.remote.clone(),
            tool_name: tool_name.to_owned(),
            call_id: call_id.to_owned(),
            has_call,
            has_result,
            call: Slot::default(),
            result: Slot::default(),
            sent_call: None,
            sent_result: None,
        })
    }

    /// Asks the host to render the call (and result) again if what they see changed.
    pub(crate) fn sync(&mut self, state: &ToolRenderState<'_>) {
        let context = json!({
            "executionStarted": state.execution_started,
            "argsComplete": state.args_complete,
            "isPartial": state.is_partial,
            "expanded": state.expanded,
            "showImages": true,
            "isError": state.is_error,
        });
        let request = |kind: &str| {
            json!({
                "toolName": self.tool_name,
                "toolCallId": self.call_id,
                "kind": kind,
                "args": state.args,
                "context": context,
            })
        };
        if self.has_call {
            let call = request("call");
            if self.sent_call.as_ref() != Some(&call) {
                self.remote
                    .request_renderer("tool_render", call.clone(), &self.call, false);
                self.sent_call = Some(call);
            }
        }
        if self.has_result
            && let Some((content, details)) = state.result
        {
            let mut result = request("result");
            result["result"] = json!({"content": content, "details": details});
            if self.sent_result.as_ref() != Some(&result) {
                self.remote
                    .request_renderer("tool_render", result.clone(), &self.result, false);
                self.sent_result = Some(result);
            }
        }
    }

    /// The lines inside the tool box: the call, then the result (when there is one);
    /// `fallback_*` draw a slot without renderer.
    pub(crate) fn render(
        &self,
        width: usize,
        fallback_call: impl FnOnce() -> Vec<String>,
        fallback_result: Option<Vec<String>>,
    ) -> Vec<String> {
        let mut lines = if self.has_call {
            self.slot_lines(&self.call, width)
                .unwrap_or_else(fallback_call)
        } else {
            fallback_call()
        };
        if let Some(fallback) = fallback_result {
            let result = if self.has_result {
                self.slot_lines(&self.result, width).unwrap_or(fallback)
            } else {
                fallback
            };
            lines.extend(result);
        }
        lines
    }

    /// Whether no renderer drew anything (both answered null): pi's own drawing of the
    /// tool applies, as for a built-in tool a resolver passed on.
    pub(crate) fn is_default(&self) -> bool {
        let fallback = |slot: &Slot| matches!(slot_state(slot), SlotState::Fallback);
        fallback(&self.call) && (self.sent_result.is_none() || fallback(&self.result))
    }

    /// A slot's component lines; nothing while waiting, `None` for the fallback.
    fn slot_lines(&self, slot: &Slot, width: usize) -> Option<Vec<String>> {
        match slot_state(slot) {
            SlotState::Waiting => Some(Vec::new()),
            SlotState::Fallback => None,
            SlotState::Component(id) => Some(self.remote.chat_lines(id, width)),
        }
    }
}

impl Drop for ExtToolRender {
    fn drop(&mut self) {
        self.remote
            .notify("tool_render_dispose", json!({"toolCallId": self.call_id}));
    }
}
