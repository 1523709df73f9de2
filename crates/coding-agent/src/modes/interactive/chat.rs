//! The chat history as components, with the bookkeeping that ties streaming events to
//! them (the streaming reply, tool calls by id, the running `!` command).
//!
//! Items before the first one that can still change are rendered once per width and
//! kept, so a streamed token re-renders only the live tail.

use std::collections::HashMap;

use pi_agent_core::{AgentMessage, AgentToolResult};
use pi_ai::{AssistantBlock, Message, StopReason};
use pi_tui::Component;
use pi_tui::components::select_list::SelectListTheme;
use pi_tui::components::text::Text;
use pi_tui::width::truncate_to_width;
use serde_json::Value;

use super::components::{
    AssistantMessage, BashExecution, ChangelogLayout, ChangelogView, ImageDisplay, Notice,
    SummaryMessage, ToolExecution, UserMessage,
};
use super::extension_ui::custom_entry::CustomEntryView;
use super::extension_ui::custom_message::CustomMessageView;
use super::extension_ui::tool_renderer::{ChatExtensions, ExtToolRender};
use super::theme::{Theme, ThemeColor};
use crate::agent_session::BashResult;

mod history;
use history::history_start;

pub(crate) use super::components::NoticeKind;

/// One thing in the history.
enum Item {
    /// Pre-rendered lines (the hotkeys table), cut to the width.
    Lines(Vec<String>),
    /// Wrapped text with one column of padding after a blank line.
    Text(Text),
    User(UserMessage),
    Assistant(AssistantMessage),
    Tool(ToolExecution),
    Bash(BashExecution),
    Summary(SummaryMessage),
    Notice(Notice),
    /// Release notes (`/changelog`, the startup "What's New").
    Changelog(Box<ChangelogView>),
    /// The loaded-resources listing: compact lines, the expanded ones (Ctrl+O), and which
    /// is shown.
    Resources(Vec<String>, Vec<String>, bool),
    /// A custom message (`pi.sendMessage`), drawn by its extension renderer if any.
    Custom(CustomMessageView),
    /// A custom entry (`pi.appendEntry`) drawn by its extension's entry renderer.
    Entry(CustomEntryView),
    /// A host component (an extension's header, `ctx.ui.setHeader`).
    Remote(ChatExtensions, u64),
}

impl Item {
    fn render(&mut self, width: usize) -> Vec<String> {
        match self {
            Item::Lines(lines) => {
                let mut out = vec![String::new()];
                out.extend(lines.iter().map(|l| truncate_to_width(l, width, "", false)));
                out
            }
            Item::Text(t) => {
                let mut out = vec![String::new()];
                out.extend(t.render(width));
                out
            }
            Item::User(c) => c.render(width),
            Item::Assistant(c) => c.render(width),
            Item::Tool(c) => c.render(width),
            Item::Bash(c) => c.render(width),
            Item::Summary(c) => c.render(width),
            Item::Notice(c) => c.render(width),
            Item::Changelog(c) => c.render(width),
            Item::Resources(compact, expanded, shown) => {
                let lines = if *shown { expanded } else { compact };
                // Padded to the width, as pi's text components are.
                lines
                    .iter()
                    .map(|l| truncate_to_width(l, width, "", true))
                    .collect()
            }
            Item::Custom(c) => c.render(width),
            Item::Entry(e) => e.render(width),
            Item::Remote(ext, id) => {
                let mut out = vec![String::new()];
                out.extend(ext.remote.chat_lines(*id, width));
                out
            }
        }
    }

    fn set_theme(&mut self, theme: &Theme) {
        match self {
            Item::Lines(_)
            | Item::Text(_)
            | Item::Remote(..)
            | Item::Resources(..)
            | Item::Entry(_) => {}
            Item::Custom(c) => c.set_theme(theme),
            Item::User(c) => c.set_theme(theme),
            Item::Assistant(c) => c.set_theme(theme),
            Item::Tool(c) => c.set_theme(theme),
            Item::Bash(c) => c.set_theme(theme),
            Item::Summary(c) => c.set_theme(theme),
            Item::Notice(c) => c.set_theme(theme),
            Item::Changelog(c) => c.set_theme(theme),
        }
    }
}

/// Lines of the settled items, for one width.
struct Settled {
    width: usize,
    items: usize,
    lines: Vec<String>,
}

/// The history view.
pub(crate) struct Chat {
    /// Startup header and notices; kept when the history is rebuilt.
    header_len: usize,
    /// pi's startup header, compact and expanded.
    header_variants: Option<(String, String)>,
    items: Vec<Item>,
    tools: HashMap<String, usize>,
    streaming: Option<usize>,
    bash: Option<usize>,
    theme: Theme,
    tools_expanded: bool,
    images: ImageDisplay,
    hide_thinking: bool,
    /// The label of hidden thinking blocks (`ctx.ui.setHiddenThinkingLabel`).
    hidden_thinking_label: Option<String>,
    settled: Option<Settled>,
    /// Extension renderers (tools, custom messages) once the extensions are known.
    ext: Option<ChatExtensions>,
    /// pi's own header while an extension's replaces it.
    builtin_header: Option<Item>,
}

impl Chat {
    pub(crate) fn new(theme: &Theme, hide_thinking: bool) -> Self {
        Chat {
            header_len: 0,
            header_variants: None,
            items: Vec::new(),
            tools: HashMap::new(),
            streaming: None,
            bash: None,
            theme: theme.clone(),
            tools_expanded: false,
            images: ImageDisplay::default(),
            hide_thinking,
            hidden_thinking_label: None,
            settled: None,
            ext: None,
            builtin_header: None,
        }
    }

    /// Lets extension renderers draw tools and custom messages from now on.
    pub(crate) fn set_extensions(&mut self, ext: ChatExtensions) {
        self.ext = Some(ext);
    }

    /// Drops the cached lines (a host component in the history changed).
    pub(crate) fn invalidate_cache(&mut self) {
        self.settled = None;
    }

    /// Replaces the header by an extension's component (`None`: pi's own again).
    pub(crate) fn set_header_component(&mut self, component: Option<u64>) {
        let custom = match (component, &self.ext) {
            (Some(id), Some(ext)) => Some(Item::Remote(ext.clone(), id)),
            _ => None,
        };
        let has_custom = self.builtin_header.is_some();
        match custom {
            Some(item) if has_custom || self.header_len > 0 => {
                let old = std::mem::replace(&mut self.items[0], item);
                if !has_custom {
                    self.builtin_header = Some(old);
                }
            }
            Some(item) => {
                // No header (quiet startup): the extension's goes first.
                self.items.insert(0, item);
                self.header_len += 1;
                self.builtin_header = Some(Item::Lines(Vec::new()));
                self.shift_indices(1);
            }
            None => {
                let Some(builtin) = self.builtin_header.take() else {
                    return;
                };
                if matches!(&builtin, Item::Lines(lines) if lines.is_empty()) {
                    self.items.remove(0);
                    self.header_len -= 1;
                    self.shift_indices(-1);
                } else {
                    self.items[0] = builtin;
                }
            }
        }
        self.settled = None;
    }

    /// Moves the item indices kept for live items after an insert / removal at the top.
    fn shift_indices(&mut self, by: isize) {
        let shift = |i: &mut usize| *i = i.saturating_add_signed(by);
        self.tools.values_mut().for_each(shift);
        self.streaming.iter_mut().for_each(shift);
        self.bash.iter_mut().for_each(shift);
    }

    /// `ctx.ui.setHiddenThinkingLabel`: the label of hidden thinking blocks.
    pub(crate) fn set_hidden_thinking_label(&mut self, label: Option<String>) {
        self.hidden_thinking_label = label;
        let text = self.thinking_label();
        for item in &mut self.items {
            if let Item::Assistant(a) = item {
                a.set_hidden_thinking_label(text.clone());
            }
        }
        self.settled = None;
    }

    fn thinking_label(&self) -> String {
        self.hidden_thinking_label.clone().unwrap_or_else(|| {
            super::components::assistant_message::HIDDEN_THINKING_LABEL.to_owned()
        })
    }

    /// Whether tool output is expanded.
    pub(crate) fn tools_expanded(&self) -> bool {
        self.tools_expanded
    }

    /// A tool call view, with the extension's renderers when the tool has any.
    fn new_tool(&self, name: &str, id: &str, args: Value) -> ToolExecution {
        let mut tool = ToolExecution::new(name.to_owned(), id.to_owned(), args, &self.theme);
        tool.set_expanded(self.tools_expanded);
        tool.set_image_display(self.images);
        if let Some(renderer) = self
            .ext
            .as_ref()
            .and_then(|ext| ExtToolRender::for_tool(ext, name, id))
        {
            tool.set_extension_renderer(renderer);
        }
        tool
    }

    /// The header shown above the history (startup help): compact, or the full help while
    /// tool output is expanded (Ctrl+O), as pi 1.6's header follows that state. A blank
    /// line follows it.
    pub(crate) fn add_header(&mut self, compact: &str, expanded: &str) {
        self.header_variants = Some((compact.to_owned(), expanded.to_owned()));
        if let Some(item) = self.header_item() {
            self.items.push(item);
        }
        self.items.push(Item::Lines(Vec::new()));
        self.header_len = self.items.len();
    }

    /// pi's own header in the current expansion state.
    fn header_item(&self) -> Option<Item> {
        let (compact, expanded) = self.header_variants.as_ref()?;
        let text = if self.tools_expanded {
            expanded
        } else {
            compact
        };
        Some(Item::Text(Text::new(text).with_padding(1, 0)))
    }

    /// Adds a notice. A status (`Info`) right after another status replaces it, as pi's
    /// `showStatus` rewrites its last status line.
    pub(crate) fn add_notice(&mut self, kind: NoticeKind, text: &str) {
        let notice = Notice::new(kind, text, &self.theme);
        if kind == NoticeKind::Info
            && let Some(Item::Notice(last)) = self.items.last_mut()
            && last.kind() == NoticeKind::Info
        {
            *last = notice;
            let index = self.items.len() - 1;
            self.touch(index);
            return;
        }
        self.push(Item::Notice(notice));
    }

    /// An accent-colored confirmation (`✓ New session started`).
    pub(crate) fn add_success(&mut self, text: &str) {
        let painted = self.theme.fg(ThemeColor::Accent).paint(text);
        self.push(Item::Text(Text::new(&painted).with_padding(1, 0)));
    }

    /// Text with a blank line above and below it (pi's `Text(…, 1, 1)`).
    pub(crate) fn add_padded_text(&mut self, text: &str) {
        self.push(Item::Text(Text::new(text).with_padding(1, 1)));
    }

    pub(crate) fn add_text_block(&mut self, text: &str) {
        self.push(Item::Text(Text::new(text).with_padding(1, 0)));
    }

    /// New header text (the theme changed): the shown header is redrawn with it.
    pub(crate) fn set_header_variants(&mut self, compact: &str, expanded: &str) {
        if self.header_variants.is_none() {
            return;
        }
        self.header_variants = Some((compact.to_owned(), expanded.to_owned()));
        if let Some(header) = self.header_item() {
            if self.builtin_header.is_some() {
                self.builtin_header = Some(header);
            } else if self.header_len > 0 {
                self.items[0] = header;
            }
        }
        self.settled = None;
    }

    /// New listing lines (the theme changed), where the listing is shown.
    pub(crate) fn set_resources(&mut self, compact: Vec<String>, expanded: Vec<String>) {
        for item in &mut self.items[..self.header_len] {
            if let Item::Resources(c, e, _) = item {
                *c = compact;
                *e = expanded;
                self.settled = None;
                return;
            }
        }
    }

    /// The loaded-resources listing under the header (kept when the history is rebuilt).
    pub(crate) fn add_resources(&mut self, compact: Vec<String>, expanded: Vec<String>) {
        let shown = self.tools_expanded;
        self.items.push(Item::Resources(compact, expanded, shown));
        self.header_len = self.items.len();
    }

    /// Release notes between borders, in one of pi's layouts.
    /// Startup's notes: pi's own (may be empty) and the updated extension packages'.
    pub(crate) fn add_startup_notes(
        &mut self,
        markdown: &str,
        extensions: Vec<crate::modes::interactive::components::ExtensionUpdate>,
        layout: ChangelogLayout,
    ) {
        self.push(Item::Changelog(Box::new(
            ChangelogView::with_extension_updates(markdown, extensions, layout, &self.theme),
        )));
    }

    pub(crate) fn add_changelog(&mut self, markdown: &str, layout: ChangelogLayout) {
        self.push(Item::Changelog(Box::new(ChangelogView::new(
            markdown,
            layout,
            &self.theme,
        ))));
    }

    pub(crate) fn add_lines(&mut self, lines: Vec<String>) {
        self.push(Item::Lines(lines));
    }

    fn push(&mut self, item: Item) {
        self.items.push(item);
    }

    /// Marks item `index` changed: drops the settled lines if it is among them.
    fn touch(&mut self, index: usize) {
        if self.settled.as_ref().is_some_and(|s| index < s.items) {
            self.settled = None;
        }
    }

    /// Whether custom entries can show (an extension registered an entry renderer).
    pub(crate) fn draws_entries(&self) -> bool {
        self.ext
            .as_ref()
            .is_some_and(ChatExtensions::has_entry_renderers)
    }

    /// Replaces the history with `messages` (start, resume, tree, fork, compaction) and the
    /// custom entries in context, each after its number of messages (pi 1.6.0 renders the
    /// session's entries in order). A very long history shows its newest part; a line
    /// says how much is left out.
    pub(crate) fn rebuild(&mut self, messages: &[AgentMessage], entries: &[(usize, Value)]) {
        self.items.truncate(self.header_len);
        self.tools.clear();
        self.streaming = None;
        self.bash = None;
        self.settled = None;
        let start = history_start(messages);
        if start > 0 {
            let note = format!(
                "··· {start} earlier messages not shown (/tree browses them, /export shows all)"
            );
            let painted = self.theme.fg(ThemeColor::Dim).paint(&note);
            self.push(Item::Text(Text::new(&painted).with_padding(1, 0)));
        }
        let mut entries = entries.iter().filter(|(at, _)| *at >= start).peekable();
        for (index, message) in messages.iter().enumerate().skip(start) {
            while let Some((_, entry)) = entries.next_if(|(at, _)| *at <= index) {
                self.add_custom_entry(entry);
            }
            match message {
                AgentMessage::Llm(Message::Assistant(a)) => {
                    let mut component =
                        AssistantMessage::from_message(a, &self.theme, self.hide_thinking);
                    component.set_hide_thinking(self.hide_thinking);
                    if self.hidden_thinking_label.is_some() {
                        component.set_hidden_thinking_label(self.thinking_label());
                    }
                    self.push(Item::Assistant(component));
                    self.add_tool_calls(a, true);
                }
                AgentMessage::Llm(Message::ToolResult(result)) => {
                    if let Some(index) = self.tools.remove(&result.tool_call_id)
                        && let Some(Item::Tool(tool)) = self.items.get_mut(index)
                    {
                        tool.finish_with_message(result);
                    }
                }
                other => self.add_message(other),
            }
        }
        for (_, entry) in entries {
            self.add_custom_entry(entry);
        }
        // Calls without results (an interrupted run) stay as they are.
        self.tools.clear();
    }

    /// A custom entry (`pi.appendEntry`, as stored) when an extension draws its type:
    /// above the reply being streamed, if any, else at the end (pi 1.6.0).
    pub(crate) fn add_custom_entry(&mut self, entry: &Value) {
        let Some(view) = CustomEntryView::new(entry, self.tools_expanded, self.ext.as_ref()) else {
            return;
        };
        match self.streaming {
            Some(at) if at < self.items.len() => {
                self.items.insert(at, Item::Entry(view));
                let shift = |i: &mut usize| {
                    if *i >= at {
                        *i += 1;
                    }
                };
                self.tools.values_mut().for_each(shift);
                self.streaming.iter_mut().for_each(shift);
                self.bash.iter_mut().for_each(shift);
                self.touch(at);
            }
            _ => self.push(Item::Entry(view)),
        }
    }

    /// A user or custom message.
    pub(crate) fn add_message(&mut self, message: &AgentMessage) {
        match message {
            AgentMessage::Llm(Message::User(user)) => {
                self.push(Item::User(UserMessage::new(
                    user.text_content(),
                    &self.theme,
                )));
            }
            AgentMessage::Custom(custom) => match custom.role.as_str() {
                "bashExecution" => {
                    if let Some(mut bash) = BashExecution::from_custom(custom, &self.theme) {
                        bash.set_expanded(self.tools_expanded);
                        self.push(Item::Bash(bash));
                    }
                }
                "compactionSummary" | "branchSummary" => {
                    if let Some(summary) = SummaryMessage::from_custom(custom, &self.theme) {
                        self.push(Item::Summary(summary));
                    }
                }
                _ => {
                    let display = custom.data.get("display").and_then(Value::as_bool);
                    if display == Some(true) {
                        let view = CustomMessageView::new(
                            custom,
                            &self.theme,
                            self.tools_expanded,
                            self.ext.as_ref(),
                        );
                        self.push(Item::Custom(view));
                    }
                }
            },
            AgentMessage::Llm(_) => {}
        }
    }

    fn add_tool_calls(&mut self, message: &pi_ai::AssistantMessage, complete: bool) {
        for block in &message.content {
            let AssistantBlock::ToolCall(call) = block else {
                continue;
            };
            match self.tools.get(&call.id) {
                Some(&index) => {
                    self.touch(index);
                    if let Some(Item::Tool(tool)) = self.items.get_mut(index) {
                        tool.update_args(Value::Object(call.arguments.clone()));
                    }
                }
                None => {
                    let mut tool =
                        self.new_tool(&call.name, &call.id, Value::Object(call.arguments.clone()));
                    if complete {
                        tool.set_args_complete();
                    }
                    self.tools.insert(call.id.clone(), self.items.len());
                    self.push(Item::Tool(tool));
                }
            }
        }
    }

    pub(crate) fn start_assistant(&mut self, message: &pi_ai::AssistantMessage) {
        let mut component = AssistantMessage::new(&self.theme, self.hide_thinking);
        if self.hidden_thinking_label.is_some() {
            component.set_hidden_thinking_label(self.thinking_label());
        }
        component.update(message);
        self.streaming = Some(self.items.len());
        self.push(Item::Assistant(component));
    }

    pub(crate) fn update_assistant(&mut self, message: &pi_ai::AssistantMessage) {
        if let Some(index) = self.streaming {
            self.touch(index);
            if let Some(Item::Assistant(c)) = self.items.get_mut(index) {
                c.update(message);
            }
        }
        self.add_tool_calls(message, false);
    }

    pub(crate) fn end_assistant(&mut self, message: &pi_ai::AssistantMessage) {
        let mut message = message.clone();
        if message.stop_reason == StopReason::Aborted && message.error_message.is_none() {
            message.error_message = Some("Operation aborted".into());
        }
        if let Some(index) = self.streaming.take() {
            self.touch(index);
            if let Some(Item::Assistant(c)) = self.items.get_mut(index) {
                c.update(&message);
            }
        }
        self.add_tool_calls(&message, true);
        let failed = matches!(message.stop_reason, StopReason::Aborted | StopReason::Error);
        let error = message
            .error_message
            .clone()
            .unwrap_or_else(|| "Error".into());
        let pending: Vec<usize> = self.tools.values().copied().collect();
        for index in pending {
            self.touch(index);
            if let Some(Item::Tool(tool)) = self.items.get_mut(index) {
                if failed && !tool.is_finished() {
                    tool.finish(&error_result(&error), true);
                } else {
                    tool.set_args_complete();
                }
            }
        }
        if failed {
            self.tools.clear();
        }
    }

    pub(crate) fn tool_started(&mut self, id: &str, name: &str, args: &Value) {
        let index = match self.tools.get(id) {
            Some(&index) => index,
            None => {
                let mut tool = self.new_tool(name, id, args.clone());
                tool.set_args_complete();
                self.tools.insert(id.to_owned(), self.items.len());
                self.push(Item::Tool(tool));
                self.items.len() - 1
            }
        };
        self.touch(index);
        if let Some(Item::Tool(tool)) = self.items.get_mut(index) {
            tool.mark_started();
        }
    }

    pub(crate) fn tool_updated(&mut self, id: &str, partial: &AgentToolResult) {
        if let Some(&index) = self.tools.get(id) {
            self.touch(index);
            if let Some(Item::Tool(tool)) = self.items.get_mut(index) {
                tool.update_partial(partial);
            }
        }
    }

    pub(crate) fn tool_ended(&mut self, id: &str, result: &AgentToolResult, is_error: bool) {
        if let Some(index) = self.tools.remove(id) {
            self.touch(index);
            if let Some(Item::Tool(tool)) = self.items.get_mut(index) {
                tool.finish(result, is_error);
            }
        }
    }

    /// The run ended: drop a reply that never got a message_end.
    pub(crate) fn end_run(&mut self) {
        if let Some(index) = self.streaming.take() {
            self.touch(index);
            if index + 1 == self.items.len() {
                self.items.pop();
            }
        }
        self.tools.clear();
    }

    /// A `!` command started; its output streams into the history.
    pub(crate) fn start_bash(&mut self, command: &str, exclude: bool) {
        let mut bash = BashExecution::new(command, exclude, &self.theme);
        bash.set_expanded(self.tools_expanded);
        self.bash = Some(self.items.len());
        self.push(Item::Bash(bash));
    }

    pub(crate) fn bash_output(&mut self, chunk: &str) {
        if let Some(index) = self.bash {
            self.touch(index);
            if let Some(Item::Bash(bash)) = self.items.get_mut(index) {
                bash.append_output(chunk);
            }
        }
    }

    pub(crate) fn end_bash(&mut self, result: Result<BashResult, String>) {
        let Some(index) = self.bash.take() else {
            return;
        };
        self.touch(index);
        match result {
            Ok(result) => {
                if let Some(Item::Bash(bash)) = self.items.get_mut(index) {
                    bash.set_complete(
                        result.exit_code,
                        result.cancelled,
                        result.truncated,
                        result.full_output_path,
                    );
                }
            }
            Err(error) => {
                if let Some(Item::Bash(bash)) = self.items.get_mut(index) {
                    bash.set_complete(None, false, false, None);
                }
                self.add_notice(NoticeKind::Error, &error);
            }
        }
    }

    pub(crate) fn is_bash_running(&self) -> bool {
        self.bash.is_some()
    }

    /// Advances the running command's spinner.
    pub(crate) fn tick(&mut self) {
        if let Some(index) = self.bash {
            self.touch(index);
            if let Some(Item::Bash(bash)) = self.items.get_mut(index) {
                bash.tick();
            }
        }
    }

    pub(crate) fn toggle_tools_expanded(&mut self) {
        self.tools_expanded = !self.tools_expanded;
        let expanded = self.tools_expanded;
        if let Some(header) = self.header_item() {
            if self.builtin_header.is_some() {
                self.builtin_header = Some(header);
            } else if self.header_len > 0 {
                self.items[0] = header;
            }
        }
        for item in &mut self.items {
            match item {
                Item::Tool(t) => t.set_expanded(expanded),
                Item::Bash(b) => b.set_expanded(expanded),
                Item::Summary(s) => s.set_expanded(expanded),
                Item::Custom(c) => c.set_expanded(expanded),
                Item::Entry(e) => e.set_expanded(expanded),
                Item::Resources(_, _, shown) => *shown = expanded,
                _ => {}
            }
        }
        self.settled = None;
    }

    /// Whether thinking blocks are collapsed.
    pub(crate) fn thinking_hidden(&self) -> bool {
        self.hide_thinking
    }

    pub(crate) fn toggle_thinking_hidden(&mut self) {
        self.hide_thinking = !self.hide_thinking;
        let hide = self.hide_thinking;
        for item in &mut self.items {
            if let Item::Assistant(a) = item {
                a.set_hide_thinking(hide);
            }
        }
        self.settled = None;
    }

    /// Draws tool results' images inline or as text from now on (`/settings`).
    pub(crate) fn set_image_display(&mut self, display: ImageDisplay) {
        if self.images == display {
            return;
        }
        self.images = display;
        for item in &mut self.items {
            if let Item::Tool(tool) = item {
                tool.set_image_display(display);
            }
        }
        self.settled = None;
    }

    pub(crate) fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        for item in &mut self.items {
            item.set_theme(theme);
        }
        self.settled = None;
    }

    /// Index of the first item that can still change.
    fn first_live(&self) -> usize {
        self.tools
            .values()
            .copied()
            .chain(self.streaming)
            .chain(self.bash)
            .min()
            .unwrap_or(self.items.len())
            .min(self.items.len())
    }

    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        self.rows(width).to_vec()
    }

    /// The rows at `width`, the settled ones borrowed from the cache.
    pub(crate) fn rows(&mut self, width: usize) -> super::chat_rows::ChatRows<'_> {
        let live = self.first_live();
        let reuse = self
            .settled
            .as_ref()
            .is_some_and(|s| s.width == width && s.items <= live);
        if !reuse {
            self.settled = Some(Settled {
                width,
                items: 0,
                lines: Vec::new(),
            });
        }
        if let Some(settled) = self.settled.as_mut() {
            for item in &mut self.items[settled.items..live] {
                settled.lines.extend(item.render(width));
            }
            settled.items = live;
        }
        let mut fresh = Vec::new();
        for item in &mut self.items[live..] {
            fresh.extend(item.render(width));
        }
        super::chat_rows::ChatRows {
            settled: self.settled.as_ref().map_or(&[][..], |s| &s.lines),
            live: fresh,
        }
    }
}

fn error_result(text: &str) -> AgentToolResult {
    AgentToolResult {
        content: vec![pi_ai::InputBlock::text(text)],
        details: None,
        terminate: None,
        is_error: false,
        structured_content: None,
    }
}

/// Styles of a select list drawn with the theme.
pub(crate) fn select_theme(theme: &Theme) -> SelectListTheme {
    SelectListTheme {
        selected: theme.fg(ThemeColor::Accent),
        normal: theme.fg(ThemeColor::Text),
        description: theme.fg(ThemeColor::Muted),
        scroll_info: theme.fg(ThemeColor::Dim),
        no_match: theme.fg(ThemeColor::Muted),
    }
}
