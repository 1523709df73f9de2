//! A custom message (`pi.sendMessage` with `display`) in the chat, as the TypeScript
//! pi's `CustomMessageComponent`: the component of the extension's message renderer for
//! its `customType` when there is one, else a box in the custom-message colors with a
//! `[customType]` label over the markdown content.

use pi_agent_core::{AgentMessage, CustomMessage};
use pi_tui::Component;
use pi_tui::components::markdown::Markdown;
use serde_json::{Value, json};

use super::remote::{RemoteView, Slot, SlotState, slot_state};
use super::tool_renderer::ChatExtensions;
use crate::modes::interactive::components::{LineCache, boxed, inner_width, markdown_theme};
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};

/// The extension renderer of a message and what it answered.
struct Renderer {
    remote: RemoteView,
    slot: Slot,
    /// `expanded` of the last request.
    expanded: Option<bool>,
}

/// One custom message.
pub(crate) struct CustomMessageView {
    message: CustomMessage,
    theme: Theme,
    expanded: bool,
    renderer: Option<Renderer>,
    markdown: Option<Markdown>,
    cache: LineCache,
}

impl CustomMessageView {
    /// The view of a message; `ext` gives its renderer when the type has one.
    pub(crate) fn new(
        message: &CustomMessage,
        theme: &Theme,
        expanded: bool,
        ext: Option<&ChatExtensions>,
    ) -> Self {
        let custom_type = message
            .get("customType")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let renderer = ext
            .filter(|e| e.has_message_renderer(custom_type))
            .map(|e| Renderer {
                remote: e.remote.clone(),
                slot: Slot::default(),
                expanded: None,
            });
        let mut view = CustomMessageView {
            message: message.clone(),
            theme: theme.clone(),
            expanded,
            renderer,
            markdown: None,
            cache: LineCache::default(),
        };
        view.request();
        view
    }

    /// Asks the renderer for a component when `expanded` changed since the last ask.
    fn request(&mut self) {
        let Some(renderer) = &mut self.renderer else {
            return;
        };
        if renderer.expanded == Some(self.expanded) {
            return;
        }
        renderer.expanded = Some(self.expanded);
        let message =
            serde_json::to_value(AgentMessage::Custom(self.message.clone())).unwrap_or(Value::Null);
        renderer.remote.request_renderer(
            "message_render",
            json!({"message": message, "expanded": self.expanded}),
            &renderer.slot,
            true,
        );
    }

    pub(crate) fn set_expanded(&mut self, expanded: bool) {
        if self.expanded != expanded {
            self.expanded = expanded;
            self.cache.clear();
            self.request();
        }
    }

    pub(crate) fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.markdown = None;
        self.cache.clear();
    }

    /// The text of the content (a string, or the text blocks joined by new lines).
    fn text(&self) -> String {
        match self.message.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }

    fn default_lines(&mut self, width: usize) -> Vec<String> {
        if let Some(lines) = self.cache.get(width, "") {
            return lines;
        }
        let custom_type = self
            .message
            .get("customType")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let label = self
            .theme
            .fg(ThemeColor::CustomMessageLabel)
            .paint(&format!("\x1b[1m[{custom_type}]\x1b[22m"));
        let text = self.text();
        let theme = self.theme.clone();
        let markdown = self.markdown.get_or_insert_with(|| {
            Markdown::new(text, 0, 0, markdown_theme(&theme))
                .with_default_style(theme.fg(ThemeColor::CustomMessageText))
        });
        let inner = inner_width(width, 1);
        let mut body = vec![label, String::new()];
        body.extend(markdown.render(inner));
        let mut lines = vec![String::new()];
        lines.extend(boxed(
            body,
            width,
            1,
            1,
            Some(self.theme.bg(ThemeBg::CustomMessageBg)),
        ));
        self.cache.store(width, "", &lines);
        lines
    }

    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        let state = self.renderer.as_ref().map(|r| slot_state(&r.slot));
        match (state, &self.renderer) {
            (Some(SlotState::Component(id)), Some(renderer)) => {
                let mut lines = vec![String::new()];
                lines.extend(renderer.remote.chat_lines(id, width));
                lines
            }
            (Some(SlotState::Waiting), _) => vec![String::new()],
            _ => self.default_lines(width),
        }
    }
}

impl Drop for CustomMessageView {
    fn drop(&mut self) {
        if let Some(renderer) = &self.renderer
            && let SlotState::Component(id) = slot_state(&renderer.slot)
        {
            renderer.remote.dispose(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::components::strip_ansi;
    use pi_tui::ColorMode;

    #[test]
    fn without_renderer_a_labelled_box() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let mut fields = serde_json::Map::new();
        fields.insert("customType".into(), "note".into());
        fields.insert("content".into(), "Hello **there**".into());
        fields.insert("display".into(), true.into());
        let message = CustomMessage::new("custom", fields);
        let mut view = CustomMessageView::new(&message, &theme, false, None);
        let lines: Vec<String> = view
            .render(30)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_owned())
            .collect();
        assert_eq!(lines, ["", "", " [note]", "", " Hello there", ""]);
    }
}
