//! An assistant reply: markdown text, italic thinking (or a one-line label) and the error
//! of a failed reply; tool calls are drawn by [`super::ToolExecution`].

use pi_ai::{AssistantBlock, AssistantMessage as AiAssistantMessage, StopReason};
use pi_tui::Component;
use pi_tui::components::markdown::Markdown;

use super::{LineCache, mark_zone, markdown_theme, text_lines};
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// The label shown instead of a hidden thinking block.
pub const HIDDEN_THINKING_LABEL: &str = "Thinking...";

#[derive(Debug, Clone, PartialEq)]
enum PartSpec {
    Spacer,
    Text(String),
    Thinking(String),
    Label(String),
    Error(String),
}

enum Part {
    Spacer,
    Markdown(Box<Markdown>),
    Line(String),
}

/// A (possibly still streaming) assistant message.
pub struct AssistantMessage {
    theme: Theme,
    hide_thinking: bool,
    hidden_label: String,
    message: Option<AiAssistantMessage>,
    specs: Vec<PartSpec>,
    parts: Vec<Part>,
    has_tool_calls: bool,
    cache: LineCache,
}

impl AssistantMessage {
    /// An empty assistant message (fill it with [`Self::update`] while streaming).
    pub fn new(theme: &Theme, hide_thinking: bool) -> Self {
        AssistantMessage {
            theme: theme.clone(),
            hide_thinking,
            hidden_label: HIDDEN_THINKING_LABEL.to_string(),
            message: None,
            specs: Vec::new(),
            parts: Vec::new(),
            has_tool_calls: false,
            cache: LineCache::default(),
        }
    }

    /// A component showing `message`.
    pub fn from_message(message: &AiAssistantMessage, theme: &Theme, hide_thinking: bool) -> Self {
        let mut component = Self::new(theme, hide_thinking);
        component.update(message);
        component
    }

    /// Show the current state of the message (call on every streaming update).
    pub fn update(&mut self, message: &AiAssistantMessage) {
        self.message = Some(message.clone());
        self.rebuild();
    }

    /// Collapse thinking blocks to a one-line label (or show them again).
    pub fn set_hide_thinking(&mut self, hide: bool) {
        if self.hide_thinking != hide {
            self.hide_thinking = hide;
            self.rebuild();
        }
    }

    /// Flip between hidden and shown thinking blocks.
    pub fn toggle_hide_thinking(&mut self) {
        self.set_hide_thinking(!self.hide_thinking);
    }

    /// Whether thinking blocks are collapsed.
    pub fn hide_thinking(&self) -> bool {
        self.hide_thinking
    }

    /// Replace the label shown for hidden thinking (default `Thinking...`).
    pub fn set_hidden_thinking_label(&mut self, label: impl Into<String>) {
        self.hidden_label = label.into();
        self.rebuild();
    }

    /// The last message given.
    pub fn message(&self) -> Option<&AiAssistantMessage> {
        self.message.as_ref()
    }

    /// Whether the message holds tool calls (their errors are shown by the tool views).
    pub fn has_tool_calls(&self) -> bool {
        self.has_tool_calls
    }

    /// Redraw with another theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.specs.clear();
        self.parts.clear();
        self.rebuild();
    }

    fn build_specs(&self, message: &AiAssistantMessage) -> Vec<PartSpec> {
        let visible = |b: &AssistantBlock| match b {
            AssistantBlock::Text(t) => !t.text.trim().is_empty(),
            AssistantBlock::Thinking(t) => !t.thinking.trim().is_empty(),
            AssistantBlock::ToolCall(_) => false,
        };
        let has_visible = message.content.iter().any(visible);
        let mut specs = Vec::new();
        if has_visible {
            specs.push(PartSpec::Spacer);
        }
        for (i, block) in message.content.iter().enumerate() {
            match block {
                AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                    specs.push(PartSpec::Text(t.text.trim().to_string()));
                }
                AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                    if self.hide_thinking {
                        specs.push(PartSpec::Label(self.hidden_label.clone()));
                    } else {
                        specs.push(PartSpec::Thinking(t.thinking.trim().to_string()));
                    }
                    if message.content[i + 1..].iter().any(visible) {
                        specs.push(PartSpec::Spacer);
                    }
                }
                _ => {}
            }
        }
        let has_tool_calls = message.tool_calls().next().is_some();
        if !has_tool_calls {
            match message.stop_reason {
                StopReason::Aborted => {
                    let text = match message.error_message.as_deref() {
                        Some(m) if !m.is_empty() && m != "Request was aborted" => m.to_string(),
                        _ => "Operation aborted".to_string(),
                    };
                    specs.push(PartSpec::Spacer);
                    specs.push(PartSpec::Error(text));
                }
                StopReason::Error => {
                    let text = message
                        .error_message
                        .as_deref()
                        .filter(|m| !m.is_empty())
                        .unwrap_or("Unknown error");
                    specs.push(PartSpec::Spacer);
                    specs.push(PartSpec::Error(format!("Error: {text}")));
                }
                _ => {}
            }
        }
        specs
    }

    fn make_part(&self, spec: &PartSpec) -> Part {
        match spec {
            PartSpec::Spacer => Part::Spacer,
            PartSpec::Text(text) => Part::Markdown(Box::new(Markdown::new(
                text.clone(),
                1,
                0,
                markdown_theme(&self.theme),
            ))),
            PartSpec::Thinking(text) => Part::Markdown(Box::new(
                Markdown::new(text.clone(), 1, 0, markdown_theme(&self.theme))
                    .with_default_style(self.theme.fg(ThemeColor::ThinkingText).italic()),
            )),
            PartSpec::Label(label) => Part::Line(
                self.theme
                    .fg(ThemeColor::ThinkingText)
                    .italic()
                    .paint(label),
            ),
            PartSpec::Error(text) => Part::Line(self.theme.fg(ThemeColor::Error).paint(text)),
        }
    }

    /// Rebuild the parts, reusing markdown views whose kind did not change so streaming
    /// only re-lays out the block that grew.
    fn rebuild(&mut self) {
        self.cache.clear();
        let Some(message) = self.message.take() else {
            return;
        };
        let specs = self.build_specs(&message);
        self.has_tool_calls = message.tool_calls().next().is_some();
        self.message = Some(message);

        let mut parts = Vec::with_capacity(specs.len());
        let mut old_parts = std::mem::take(&mut self.parts).into_iter();
        let old_specs = std::mem::take(&mut self.specs);
        for (i, spec) in specs.iter().enumerate() {
            let old = old_parts.next();
            let same_kind = matches!(
                (old_specs.get(i), spec),
                (Some(PartSpec::Text(_)), PartSpec::Text(_))
                    | (Some(PartSpec::Thinking(_)), PartSpec::Thinking(_))
            );
            match (old, spec) {
                (Some(Part::Markdown(mut md)), PartSpec::Text(t) | PartSpec::Thinking(t))
                    if same_kind =>
                {
                    md.set_text(t.clone());
                    parts.push(Part::Markdown(md));
                }
                _ => parts.push(self.make_part(spec)),
            }
        }
        self.parts = parts;
        self.specs = specs;
    }
}

impl Component for AssistantMessage {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some(lines) = self.cache.get(width, "") {
            return lines;
        }
        let mut lines = Vec::new();
        for part in &mut self.parts {
            match part {
                Part::Spacer => lines.push(String::new()),
                Part::Markdown(md) => lines.extend(md.render(width)),
                Part::Line(text) => lines.extend(text_lines(text, width, 1)),
            }
        }
        if !self.has_tool_calls {
            mark_zone(&mut lines);
        }
        self.cache.store(width, "", &lines);
        lines
    }

    fn invalidate(&mut self) {
        for part in &mut self.parts {
            if let Part::Markdown(md) = part {
                md.invalidate();
            }
        }
        self.cache.clear();
    }
}
