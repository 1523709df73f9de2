//! A custom entry (`pi.appendEntry`) drawn by its extension's `registerEntryRenderer`, as
//! pi 1.6.0's `CustomEntryComponent`: a blank line over the renderer's component, nothing
//! when the first answer was no component (pi never adds it then); Ctrl+O asks again with
//! `expanded`. The host draws a renderer that throws as pi does (an error line in a box).

use serde_json::{Value, json};

use super::remote::{RemoteView, Slot, SlotState, slot_state};
use super::tool_renderer::ChatExtensions;

/// One custom entry with a renderer.
pub(crate) struct CustomEntryView {
    remote: RemoteView,
    entry: Value,
    slot: Slot,
    /// `expanded` of the last request.
    expanded: Option<bool>,
    /// The first answer was no component: the entry stays out of the chat.
    absent: bool,
}

impl CustomEntryView {
    /// The view of a stored custom entry, or `None` when no extension draws its type.
    pub(crate) fn new(entry: &Value, expanded: bool, ext: Option<&ChatExtensions>) -> Option<Self> {
        let custom_type = entry.get("customType").and_then(Value::as_str)?;
        let ext = ext.filter(|e| e.has_entry_renderer(custom_type))?;
        let mut view = CustomEntryView {
            remote: ext.remote.clone(),
            entry: entry.clone(),
            slot: Slot::default(),
            expanded: None,
            absent: false,
        };
        view.set_expanded(expanded);
        Some(view)
    }

    pub(crate) fn set_expanded(&mut self, expanded: bool) {
        if self.expanded == Some(expanded) || self.absent {
            return;
        }
        if self.expanded.is_some() && matches!(slot_state(&self.slot), SlotState::Fallback) {
            self.absent = true;
            return;
        }
        self.expanded = Some(expanded);
        self.remote.request_renderer(
            "entry_render",
            json!({"entry": self.entry, "expanded": expanded}),
            &self.slot,
            true,
        );
    }

    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        match slot_state(&self.slot) {
            SlotState::Component(id) if !self.absent => {
                let mut lines = vec![String::new()];
                lines.extend(self.remote.chat_lines(id, width));
                lines
            }
            _ => Vec::new(),
        }
    }
}

impl Drop for CustomEntryView {
    fn drop(&mut self) {
        if let SlotState::Component(id) = slot_state(&self.slot) {
            self.remote.dispose(id);
        }
    }
}
